#include "kernels/model/pretokenizer.h"

#include "kernels/model/unicode.h"

namespace ispsim::model {

namespace {

const char* kGpt2Regex = R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";
const char* kLlama3Regex =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
const char* kQwen2Regex =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

bool is_crlf(char32_t c) { return c == '\r' || c == '\n'; }
bool is_other(char32_t c) { return !is_whitespace(c) && !is_letter(c) && !is_number(c); }

template <typename Pred>
size_t run(const std::u32string& s, size_t j, Pred pred) {
  while (j < s.size() && pred(s[j])) ++j;
  return j;
}

// 's 't 're 've 'm 'll 'd; returns the length matched or 0.
size_t match_contraction(const std::u32string& s, size_t i, bool ignore_case) {
  if (s[i] != '\'') return 0;
  static const char* kSuffixes[] = {"s", "t", "re", "ve", "m", "ll", "d"};
  for (const char* suffix : kSuffixes) {
    size_t k = 0;
    for (; suffix[k]; ++k) {
      if (i + 1 + k >= s.size()) break;
      char32_t c = s[i + 1 + k];
      if (ignore_case && c >= 'A' && c <= 'Z') c += 'a' - 'A';
      if (c != static_cast<char32_t>(suffix[k])) break;
    }
    if (!suffix[k]) return 1 + k;
  }
  return 0;
}

// \s+(?!\S) then \s+ for a whitespace run [i, e): the run minus its last
// character when a non-space follows (that one joins the next piece).
size_t match_whitespace_tail(const std::u32string& s, size_t i, size_t e) {
  return (e == s.size() || e - i == 1) ? e - i : e - 1 - i;
}

size_t match_gpt2(const std::u32string& s, size_t i) {
  if (size_t len = match_contraction(s, i, false)) return len;
  const size_t j = i + (s[i] == ' ' ? 1 : 0);
  if (j < s.size()) {
    if (is_letter(s[j])) return run(s, j, is_letter) - i;
    if (is_number(s[j])) return run(s, j, is_number) - i;
    if (is_other(s[j])) return run(s, j, is_other) - i;
  }
  return match_whitespace_tail(s, i, run(s, i, is_whitespace));
}

size_t match_llama3(const std::u32string& s, size_t i, size_t max_digits) {
  if (size_t len = match_contraction(s, i, true)) return len;
  const char32_t c = s[i];
  if (!is_crlf(c) && !is_letter(c) && !is_number(c) && i + 1 < s.size() && is_letter(s[i + 1]))
    return run(s, i + 1, is_letter) - i;
  if (is_letter(c)) return run(s, i, is_letter) - i;
  if (is_number(c)) {
    size_t j = i;
    while (j < s.size() && j - i < max_digits && is_number(s[j])) ++j;
    return j - i;
  }
  const size_t j = i + (c == ' ' ? 1 : 0);
  if (j < s.size() && is_other(s[j])) return run(s, run(s, j, is_other), is_crlf) - i;
  const size_t e = run(s, i, is_whitespace);
  for (size_t p = e; p > i; --p)
    if (is_crlf(s[p - 1])) return p - i;  // \s*[\r\n]+ ends after the run's last CR/LF
  return match_whitespace_tail(s, i, e);
}

}  // namespace

bool split_pattern_from_regex(const std::string& regex, SplitPattern& out) {
  if (regex == kGpt2Regex) { out = SplitPattern::kGpt2; return true; }
  if (regex == kLlama3Regex) { out = SplitPattern::kLlama3; return true; }
  if (regex == kQwen2Regex) { out = SplitPattern::kQwen2; return true; }
  return false;
}

size_t match_pattern(const std::u32string& text, size_t i, SplitPattern pattern) {
  size_t len = 0;
  switch (pattern) {
    case SplitPattern::kGpt2: len = match_gpt2(text, i); break;
    case SplitPattern::kLlama3: len = match_llama3(text, i, 3); break;
    case SplitPattern::kQwen2: len = match_llama3(text, i, 1); break;
  }
  return len > 0 ? len : 1;  // every character belongs to some class; never stall
}

void split_by_pattern(const std::u32string& text, Span span, SplitPattern pattern, std::vector<Span>& out) {
  // Matching on the sub-string keeps lookahead and end-of-text at the span's end, as the
  // regex engine sees each piece separately.
  const std::u32string piece = text.substr(span.first, span.second - span.first);
  for (size_t i = 0; i < piece.size();) {
    size_t len = match_pattern(piece, i, pattern);
    out.emplace_back(span.first + i, span.first + i + len);
    i += len;
  }
}

void split_digits(const std::u32string& text, Span span, bool individual, std::vector<Span>& out) {
  auto digit = [](char32_t c) { return c >= '0' && c <= '9'; };
  for (size_t i = span.first; i < span.second;) {
    size_t j = i + 1;
    if (digit(text[i])) {
      if (!individual)
        while (j < span.second && digit(text[j])) ++j;
    } else {
      while (j < span.second && !digit(text[j])) ++j;
    }
    out.emplace_back(i, j);
    i = j;
  }
}

}  // namespace ispsim::model
