"""Minimal safetensors reader/writer (the `safetensors` package is not in Debian 12).

Format: 8-byte little-endian header length N, then N bytes of JSON
{"name": {"dtype": "F32", "shape": [...], "data_offsets": [begin, end]}, ..., "__metadata__": {...}}
(offsets relative to the end of the header), then the raw little-endian tensor bytes.
We pad the header with spaces to a multiple of 8 bytes and store tensors in sorted name order,
each starting right after the previous one.
"""
import json
import os
import struct

import numpy as np
import torch

# dtype name -> (torch dtype, numpy dtype used to move the raw bytes)
DTYPES = {
    "F32": (torch.float32, np.float32),
    "F16": (torch.float16, np.float16),
    "BF16": (torch.bfloat16, np.int16),  # numpy has no bfloat16: move its bits as int16
    "I64": (torch.int64, np.int64),
    "I32": (torch.int32, np.int32),
}


def _raw_bytes(tensor, dtype_name):
    torch_dtype, np_dtype = DTYPES[dtype_name]
    t = tensor.detach().to(torch_dtype).contiguous().cpu()
    if dtype_name == "BF16":
        t = t.view(torch.int16)
    return t.numpy().astype(np_dtype, copy=False).tobytes()


def save(path, tensors, dtype_of=None, metadata=None):
    """Write {name: tensor}. dtype_of(name, tensor) -> "F32"/"F16"/"BF16"/"I64"/"I32"
    (default: keep floats as F32, integers as I64)."""
    def default_dtype(_name, t):
        return "I64" if not t.is_floating_point() else "F32"

    dtype_of = dtype_of or default_dtype
    header = {}
    blobs = []
    offset = 0
    for name in sorted(tensors):
        t = tensors[name]
        dtype_name = dtype_of(name, t)
        blob = _raw_bytes(t, dtype_name)
        header[name] = {"dtype": dtype_name, "shape": list(t.shape),
                        "data_offsets": [offset, offset + len(blob)]}
        blobs.append(blob)
        offset += len(blob)
    if metadata:
        header["__metadata__"] = {str(k): str(v) for k, v in metadata.items()}
    text = json.dumps(header, separators=(",", ":")).encode("utf-8")
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(path + ".tmp", "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for blob in blobs:
            f.write(blob)
    os.replace(path + ".tmp", path)


def load(path):
    """{name: tensor} in the stored dtype, plus the metadata dict."""
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    metadata = header.pop("__metadata__", {})
    body = data[8 + n:]
    out = {}
    for name, info in header.items():
        torch_dtype, np_dtype = DTYPES[info["dtype"]]
        begin, end = info["data_offsets"]
        arr = np.frombuffer(body[begin:end], dtype=np_dtype).copy()
        t = torch.from_numpy(arr)
        if info["dtype"] == "BF16":
            t = t.view(torch.bfloat16)
        out[name] = t.reshape(info["shape"])
    return out, metadata
