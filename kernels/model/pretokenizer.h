// Pre-tokenizer splits of the byte-level BPE tokenizers we support. The regexes
// are not interpreted: each known pattern is implemented by hand (same
// leftmost-first alternation and backtracking results as the regex engine).
//
//   kGpt2    's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
//   kLlama3  (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|
//            ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
//   kQwen2   as kLlama3 with \p{N} instead of \p{N}{1,3}
//
// Classes: \p{L}, \p{N} = Unicode general categories L*, N* (unicode.h);
// \s = Unicode White_Space; (?i) on the contractions folds ASCII case only.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace ispsim::model {

enum class SplitPattern { kGpt2, kLlama3, kQwen2 };

using Span = std::pair<size_t, size_t>;  // [begin, end) in code points

// Recognises the regex string of a tokenizer.json Split pre-tokenizer.
bool split_pattern_from_regex(const std::string& regex, SplitPattern& out);

// Length in code points of the pattern's match starting at text[i] (>= 1).
size_t match_pattern(const std::u32string& text, size_t i, SplitPattern pattern);

// Splits text[span] into consecutive matches of the pattern ("Isolated").
void split_by_pattern(const std::u32string& text, Span span, SplitPattern pattern, std::vector<Span>& out);

// HF Digits pre-tokenizer: ASCII digits isolated, one per piece when
// individual, else as runs; everything between them stays one piece.
void split_digits(const std::u32string& text, Span span, bool individual, std::vector<Span>& out);

}  // namespace ispsim::model
