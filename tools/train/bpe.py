"""Byte-level BPE tokenizer (GPT-2 style), trained and applied in plain Python.

Conventions, identical to Hugging Face `tokenizers` with a ByteLevel pre-tokenizer
(add_prefix_space false, use_regex true) and a BPE model:
  * text -> UTF-8 bytes; each byte is shown as one printable unicode character (GPT-2's
    bytes_to_unicode map), so every token is a string over those 256 characters;
  * the text is first split by the GPT-2 pre-tokenizer regex; merges never cross pieces;
  * within a piece, the adjacent pair with the lowest merge rank is merged until none applies.
Ids: 0..255 are the single bytes in byte order, then one id per new token in merge order, then
the special tokens (<|endoftext|>).
"""
import collections
import json
import re
import sys
import unicodedata

SPECIAL_TOKENS = ["<|endoftext|>"]


def bytes_to_unicode():
    """GPT-2's reversible map from the 256 byte values to printable unicode characters:
    printable Latin-1 bytes map to themselves, the rest to U+0100 onwards in byte order."""
    printable = (list(range(ord("!"), ord("~") + 1)) + list(range(ord("\u00a1"), ord("\u00ac") + 1))
                 + list(range(ord("\u00ae"), ord("\u00ff") + 1)))
    mapping = {}
    extra = 0
    for b in range(256):
        if b in printable:
            mapping[b] = chr(b)
        else:
            mapping[b] = chr(256 + extra)
            extra += 1
    return mapping


BYTE_TO_CHAR = bytes_to_unicode()
CHAR_TO_BYTE = {c: b for b, c in BYTE_TO_CHAR.items()}


def _category_class(prefix):
    """A regex character class of every code point whose Unicode general category starts with
    `prefix` ("L" letters, "N" numbers), built from Python's unicodedata tables. Python's `re`
    has no \\p{L} / \\p{N}; this class is the exact equivalent for the Unicode version of the
    running Python (3.11: Unicode 14)."""
    ranges = []
    start = None
    for cp in range(sys.maxunicode + 1):
        inside = unicodedata.category(chr(cp)).startswith(prefix)
        if inside and start is None:
            start = cp
        elif not inside and start is not None:
            ranges.append((start, cp - 1))
            start = None
    if start is not None:
        ranges.append((start, sys.maxunicode))
    parts = []
    for lo, hi in ranges:
        parts.append(re.escape(chr(lo)) if lo == hi else f"{re.escape(chr(lo))}-{re.escape(chr(hi))}")
    return "".join(parts)


_L = _category_class("L")
_N = _category_class("N")
# GPT-2: 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
PRETOKENIZE = re.compile(
    rf"'s|'t|'re|'ve|'m|'ll|'d| ?[{_L}]+| ?[{_N}]+| ?[^\s{_L}{_N}]+|\s+(?!\S)|\s+")


def pretokenize(text):
    """Pieces of `text` as byte-level strings (each UTF-8 byte mapped through BYTE_TO_CHAR)."""
    return ["".join(BYTE_TO_CHAR[b] for b in piece.encode("utf-8"))
            for piece in PRETOKENIZE.findall(text)]


def train(texts, vocab_size, log=print):
    """Learn merges from an iterable of texts so that bytes + merges + specials == vocab_size.
    Deterministic: ties in pair frequency go to the pair whose (left, right) token strings sort
    first."""
    n_merges = vocab_size - 256 - len(SPECIAL_TOKENS)
    piece_counts = collections.Counter()
    for text in texts:
        piece_counts.update(pretokenize(text))
    pieces = sorted(piece_counts)  # fixed order for determinism
    freqs = [piece_counts[p] for p in pieces]
    words = [list(p) for p in pieces]  # symbols are token strings

    pair_counts = collections.Counter()
    pair_where = collections.defaultdict(set)
    for i, w in enumerate(words):
        for a, b in zip(w, w[1:]):
            pair_counts[(a, b)] += freqs[i]
            pair_where[(a, b)].add(i)

    merges = []
    known = {BYTE_TO_CHAR[b] for b in range(256)}
    # Two different pairs can spell the same token ("ab"+"c", "a"+"bc"): such a merge is kept
    # (it changes how text splits) but adds no vocabulary entry, as in HF's trainer.
    while len(known) < 256 + n_merges:
        if not pair_counts:
            break
        # Highest count; among equals the lexicographically smallest pair (negate by sorting key).
        best_count = max(pair_counts.values())
        best = min(p for p, c in pair_counts.items() if c == best_count)
        a, b = best
        merged = a + b
        merges.append(best)
        known.add(merged)
        for i in sorted(pair_where.pop(best)):
            w = words[i]
            f = freqs[i]
            for pair in zip(w, w[1:]):
                pair_counts[pair] -= f
                if pair_counts[pair] <= 0:
                    del pair_counts[pair]
            new_w = []
            j = 0
            while j < len(w):
                if j + 1 < len(w) and w[j] == a and w[j + 1] == b:
                    new_w.append(merged)
                    j += 2
                else:
                    new_w.append(w[j])
                    j += 1
            words[i] = new_w
            for pair in zip(new_w, new_w[1:]):
                pair_counts[pair] += f
                pair_where[pair].add(i)
        pair_counts.pop(best, None)
        if len(merges) % 500 == 0:
            log(f"bpe: {len(merges)} merges, {len(known)} tokens, last {merged!r} count {best_count}")
    return Tokenizer(merges)


class Tokenizer:
    def __init__(self, merges):
        self.merges = list(merges)
        self.ranks = {pair: r for r, pair in enumerate(self.merges)}
        tokens = [BYTE_TO_CHAR[b] for b in range(256)]
        seen = set(tokens)
        for a, b in self.merges:
            if a + b not in seen:  # a token spelled by two different merges gets one id
                seen.add(a + b)
                tokens.append(a + b)
        self.n_regular = len(tokens)
        tokens += SPECIAL_TOKENS
        self.id_to_token = tokens
        self.token_to_id = {t: i for i, t in enumerate(tokens)}
        self._cache = {}

    @property
    def vocab_size(self):
        return len(self.id_to_token)

    @property
    def eos_id(self):
        return self.token_to_id["<|endoftext|>"]

    def _bpe(self, piece):
        cached = self._cache.get(piece)
        if cached is not None:
            return cached
        symbols = list(piece)
        while len(symbols) > 1:
            best_rank, best_at = None, None
            for j in range(len(symbols) - 1):
                r = self.ranks.get((symbols[j], symbols[j + 1]))
                if r is not None and (best_rank is None or r < best_rank):
                    best_rank, best_at = r, j
            if best_rank is None:
                break
            a, b = self.merges[best_rank]
            # Merge every occurrence of the best pair, left to right (HF semantics).
            merged = []
            j = 0
            while j < len(symbols):
                if j + 1 < len(symbols) and symbols[j] == a and symbols[j + 1] == b:
                    merged.append(a + b)
                    j += 2
                else:
                    merged.append(symbols[j])
                    j += 1
            symbols = merged
        ids = [self.token_to_id[s] for s in symbols]
        self._cache[piece] = ids
        return ids

    def encode(self, text):
        """Token ids of `text`. As HF tokenizers does with added tokens, a special-token string
        inside the text ("<|endoftext|>") becomes its id; the text between is pre-tokenized and
        BPE-encoded separately."""
        special = re.compile("(" + "|".join(re.escape(t) for t in SPECIAL_TOKENS) + ")")
        ids = []
        for part in special.split(text):
            if part in SPECIAL_TOKENS:
                ids.append(self.token_to_id[part])
                continue
            for piece in pretokenize(part):
                ids.extend(self._bpe(piece))
        return ids

    def decode(self, ids):
        data = bytearray()
        for i in ids:
            tok = self.id_to_token[i]
            if tok in SPECIAL_TOKENS:
                data.extend(tok.encode("utf-8"))
            else:
                data.extend(CHAR_TO_BYTE[c] for c in tok)
        return data.decode("utf-8", errors="replace")

    def to_hf_json(self):
        """The tokenizer in Hugging Face tokenizer.json layout."""
        n_regular = self.n_regular
        added = [{"id": n_regular + k, "content": t, "single_word": False, "lstrip": False,
                  "rstrip": False, "normalized": False, "special": True}
                 for k, t in enumerate(SPECIAL_TOKENS)]
        vocab = {t: i for i, t in enumerate(self.id_to_token[:n_regular])}
        return {
            "version": "1.0",
            "truncation": None,
            "padding": None,
            "added_tokens": added,
            "normalizer": None,
            "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True,
                              "use_regex": True},
            "post_processor": None,
            "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True,
                        "use_regex": True},
            "model": {"type": "BPE", "dropout": None, "unk_token": None,
                      "continuing_subword_prefix": None, "end_of_word_suffix": None,
                      "fuse_unk": False, "byte_fallback": False,
                      "vocab": vocab, "merges": [f"{a} {b}" for a, b in self.merges]},
        }

    def save(self, path):
        with open(path, "w", encoding="utf-8") as f:
            json.dump(self.to_hf_json(), f, ensure_ascii=False, indent=1)
            f.write("\n")

    @classmethod
    def load(cls, path):
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
        merges = [tuple(m.split(" ")) for m in data["model"]["merges"]]
        tok = cls(merges)
        # The file must agree with the ids we derive from the merge order.
        for t, i in data["model"]["vocab"].items():
            if tok.token_to_id.get(t) != i:
                raise ValueError(f"{path}: vocab entry {t!r} -> {i} disagrees with merge order")
        return tok
