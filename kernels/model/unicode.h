// Unicode character classes needed by the pre-tokenizer regexes (\p{L}, \p{N},
// \s). The letter and number ranges are generated (gen_unicode_tables.py → unicode_tables.cc).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace ispsim::model {

struct CodeRange {
  uint32_t first, last;  // inclusive
};

extern const CodeRange kLetterRanges[];
extern const size_t kLetterRangesCount;
extern const CodeRange kNumberRanges[];
extern const size_t kNumberRangesCount;

bool is_letter(uint32_t cp);      // general category L*
bool is_number(uint32_t cp);      // general category N*
bool is_whitespace(uint32_t cp);  // Unicode White_Space property (regex \s)

// UTF-8 <-> code points. decode_utf8 returns false (and the byte offset of the
// first bad sequence) for invalid UTF-8, overlong forms and surrogates.
bool decode_utf8(const std::string& text, std::u32string& out, size_t& bad_offset);
void append_utf8(uint32_t cp, std::string& out);

}  // namespace ispsim::model
