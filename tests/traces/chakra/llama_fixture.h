// A decoder inference as the Chakra PyTorch converter lays one out (one COMP_NODE
// per aten operator, input shapes as Python list literals), built by hand for
// Llama-3.2-1B (16 layers, hidden 2048, 32 heads and 8 KV heads of 64, FFN 8192,
// vocab 128256): a prefill of `prompt` tokens, then `steps` decode steps, then
// one all_reduce. Per layer: rms_norm, q/k/v linear, mul (RoPE), SDPA, o linear,
// add, rms_norm, gate/up linear, silu, mul (SwiGLU), down linear, add; per pass
// an embedding first and a final rms_norm and LM head (last row only) after the
// layers. Each node depends on the one before; ids start at 1000 and step by 3.
#pragma once

#include <string>

#include "traces/chakra/chakra_io.h"

namespace ispsim::testing {

inline void write_llama_inference(const std::string& path, uint64_t prompt, uint64_t steps, bool cycle = false) {
  chakra::GlobalMetadata metadata;
  metadata.set_version("1.0.0");
  chakra::ChakraWriter writer(path, metadata);
  uint64_t id = 1000;
  auto node = [&](const std::string& name, const std::string& shapes, chakra::NodeType type = chakra::COMP_NODE) {
    chakra::Node n;
    n.set_id(id);
    n.set_name(name);
    n.set_type(type);
    if (id > 1000) n.add_data_deps(id - 3);
    if (cycle && id == 1000) n.add_ctrl_deps(1003);
    n.mutable_inputs()->set_shapes(shapes);
    n.mutable_inputs()->set_types("['Tensor(c10::Half)', 'Tensor(c10::Half)']");
    writer.write(n);
    id += 3;
  };
  auto dims = [](std::initializer_list<uint64_t> d) {
    std::string s = "[";
    for (uint64_t v : d) s += (s.size() > 1 ? ", " : "") + std::to_string(v);
    return s + "]";
  };
  for (uint64_t pass = 0; pass <= steps; ++pass) {
    const uint64_t t = pass == 0 ? prompt : 1, kv = pass == 0 ? prompt : prompt + pass;
    const std::string x = dims({1, t, 2048}), h = dims({1, t, 8192});
    node("aten::embedding", "[" + dims({128256, 2048}) + ", " + dims({1, t}) + "]");
    for (int layer = 0; layer < 16; ++layer) {
      node("aten::rms_norm", "[" + x + ", [2048], [], []]");
      node("aten::linear", "[" + x + ", [2048, 2048]]");
      node("aten::linear", "[" + x + ", [512, 2048]]");
      node("aten::linear", "[" + x + ", [512, 2048]]");
      node("aten::mul", "[" + dims({1, 32, t, 64}) + ", " + dims({1, 1, t, 64}) + "]");
      node("aten::scaled_dot_product_attention",
           "[" + dims({1, 32, t, 64}) + ", " + dims({1, 8, kv, 64}) + ", " + dims({1, 8, kv, 64}) + ", [], 0.0]");
      node("aten::linear", "[" + x + ", [2048, 2048]]");
      node("aten::add", "[" + x + ", " + x + "]");
      node("aten::rms_norm", "[" + x + ", [2048], [], []]");
      node("aten::linear", "[" + x + ", [8192, 2048]]");
      node("aten::linear", "[" + x + ", [8192, 2048]]");
      node("aten::silu", "[" + h + "]");
      node("aten::mul", "[" + h + ", " + h + "]");
      node("aten::linear", "[" + h + ", [2048, 8192]]");
      node("aten::add_", "[" + x + ", " + x + "]");
    }
    node("aten::rms_norm", "[" + x + ", [2048], [], []]");
    node("aten::linear", "[" + dims({1, 1, 2048}) + ", [128256, 2048]]");
  }
  node("all_reduce", "[]", chakra::COMM_COLL_NODE);
  writer.close();
}

}  // namespace ispsim::testing
