// Byte-level BPE: pre-tokenizer splits against the regexes' semantics, merges,
// added tokens, round trips and rejection of unsupported tokenizers.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/error.h"
#include "kernels/model/pretokenizer.h"
#include "kernels/model/tokenizer.h"
#include "kernels/model/unicode.h"
#include "tests/kernels/model/test_model.h"

namespace ispsim::model {
namespace {

using testing::byte_level_tokenizer_json;
using testing::temp_dir;
using testing::write_file;

std::vector<std::string> split(const std::string& text, SplitPattern p) {
  std::u32string cps;
  size_t bad;
  EXPECT_TRUE(decode_utf8(text, cps, bad));
  std::vector<Span> spans;
  split_by_pattern(cps, {0, cps.size()}, p, spans);
  std::vector<std::string> out;
  for (const Span& s : spans) {
    std::string piece;
    for (size_t i = s.first; i < s.second; ++i) append_utf8(cps[i], piece);
    out.push_back(piece);
  }
  return out;
}

using Pieces = std::vector<std::string>;

TEST(ModelPretokenizer, Gpt2PatternSplits) {
  const SplitPattern p = SplitPattern::kGpt2;
  EXPECT_EQ(split("Hello world", p), (Pieces{"Hello", " world"}));
  EXPECT_EQ(split("don't stop", p), (Pieces{"don", "'t", " stop"}));
  EXPECT_EQ(split("DON'T", p), (Pieces{"DON", "'", "T"}));  // contractions are case-sensitive here
  EXPECT_EQ(split("a  b", p), (Pieces{"a", " ", " b"}));  // \s+(?!\S) leaves the last space to " b"
  EXPECT_EQ(split("x\n\ny", p), (Pieces{"x", "\n", "\n", "y"}));
  EXPECT_EQ(split("123abc", p), (Pieces{"123", "abc"}));
  EXPECT_EQ(split("end.  ", p), (Pieces{"end", ".", "  "}));
  EXPECT_EQ(split("caf\u00e9 \u03a9 ?!", p), (Pieces{"caf\u00e9", " \u03a9", " ?!"}));
}

TEST(ModelPretokenizer, Llama3AndQwen2PatternSplits) {
  const SplitPattern p = SplitPattern::kLlama3;
  EXPECT_EQ(split("Hello world", p), (Pieces{"Hello", " world"}));
  EXPECT_EQ(split("DON'T it's", p), (Pieces{"DON", "'T", " it", "'s"}));  // (?i) contractions
  EXPECT_EQ(split("12345", p), (Pieces{"123", "45"}));
  EXPECT_EQ(split("12345", SplitPattern::kQwen2), (Pieces{"1", "2", "3", "4", "5"}));
  EXPECT_EQ(split("x\n\ny", p), (Pieces{"x", "\n\n", "y"}));
  EXPECT_EQ(split("a  \n b", p), (Pieces{"a", "  \n", " b"}));
  EXPECT_EQ(split("hi!!\n\nok", p), (Pieces{"hi", "!!\n\n", "ok"}));
  EXPECT_EQ(split("(abc", p), (Pieces{"(abc"}));
  EXPECT_EQ(split("a\tb", p), (Pieces{"a", "\tb"}));
}

TEST(ModelPretokenizer, RecognisesExactlyTheKnownRegexes) {
  SplitPattern p;
  EXPECT_TRUE(split_pattern_from_regex(R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)", p));
  EXPECT_EQ(p, SplitPattern::kGpt2);
  EXPECT_FALSE(split_pattern_from_regex(R"(\w+|\s+)", p));
}

TEST(ModelUnicode, ClassesAndUtf8) {
  EXPECT_TRUE(is_letter(U'\u00e9'));
  EXPECT_TRUE(is_letter(U'\u65e5'));   // CJK ideograph
  EXPECT_FALSE(is_letter(U'\u2014'));  // em dash
  EXPECT_TRUE(is_number(U'\u0663'));   // Arabic-Indic three
  EXPECT_TRUE(is_number(U'\u00bd'));   // vulgar fraction one half (No)
  EXPECT_TRUE(is_whitespace(U'\u3000'));
  EXPECT_FALSE(is_whitespace(U'\u200b'));  // zero width space is not White_Space
  std::u32string out;
  size_t bad = 0;
  EXPECT_FALSE(decode_utf8("ab\xC3", out, bad));
  EXPECT_EQ(bad, 2u);
  EXPECT_FALSE(decode_utf8("\xC0\xAF", out, bad));  // overlong
  EXPECT_FALSE(decode_utf8("\xED\xA0\x80", out, bad));  // surrogate
}

const std::vector<std::pair<std::string, std::string>> kMerges = {
    {"\xC4\xA0", "t"}, {"h", "e"}, {"\xC4\xA0t", "he"}, {"i", "n"}, {"in", "g"}};

Tokenizer load(const std::string& json, const std::string& name) {
  std::string dir = temp_dir(name);
  write_file(dir + "/tokenizer.json", json);
  return Tokenizer(dir + "/tokenizer.json");
}

TEST(ModelTokenizer, AppliesMergesByRankInBothMergeForms) {
  // ids: bytes 0..255, then Ġt=256, he=257, Ġthe=258, in=259, ing=260, <|endoftext|>=261
  for (bool arrays : {false, true}) {
    Tokenizer tok = load(byte_level_tokenizer_json(kMerges, arrays), arrays ? "arr" : "str");
    EXPECT_EQ(tok.encode("the thing"), (std::vector<int>{'t', 257, 256, 'h', 260}));
    EXPECT_EQ(tok.encode(" the"), (std::vector<int>{258}));
    EXPECT_EQ(tok.encode("<|endoftext|>the"), (std::vector<int>{261, 't', 257}));
    EXPECT_EQ(tok.vocab_size(), 262);
  }
}

TEST(ModelTokenizer, DecodeInvertsEncode) {
  Tokenizer tok = load(byte_level_tokenizer_json(kMerges), "roundtrip");
  for (const std::string s : {"the thing", "  leading and trailing  ", "na\u00efve caf\u00e9 \u2014 \u65e5\u672c \U0001F642",
                              "tabs\tand\nnewlines\r\n", "don't 12345 <|endoftext|> end", ""}) {
    EXPECT_EQ(tok.decode(tok.encode(s)), s) << s;
  }
}

TEST(ModelTokenizer, SplitPreTokenizerChangesMergeBoundaries) {
  const std::vector<std::pair<std::string, std::string>> merges = {{"3", "4"}, {"1", "2"}, {"12", "3"}, {"4", "5"}};
  // ids: 34=256, 12=257, 123=258, 45=259
  Tokenizer gpt2 = load(byte_level_tokenizer_json(merges), "digits_gpt2");
  EXPECT_EQ(gpt2.encode("12345"), (std::vector<int>{257, 256, '5'}));
  const std::string llama3_pre =
      R"({"type":"Sequence","pretokenizers":[{"type":"Split","pattern":{"Regex":"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"},"behavior":"Isolated","invert":false},{"type":"ByteLevel","add_prefix_space":false,"trim_offsets":true,"use_regex":false}]})";
  Tokenizer llama3 = load(byte_level_tokenizer_json(merges, false, llama3_pre), "digits_llama3");
  EXPECT_EQ(llama3.encode("12345"), (std::vector<int>{258, 259}));
  const std::string digits_pre =
      R"({"type":"Sequence","pretokenizers":[{"type":"Digits","individual_digits":true},{"type":"ByteLevel","add_prefix_space":false,"trim_offsets":true,"use_regex":true}]})";
  Tokenizer smol = load(byte_level_tokenizer_json(merges, false, digits_pre), "digits_individual");
  EXPECT_EQ(smol.encode("12345"), (std::vector<int>{'1', '2', '3', '4', '5'}));
}

TEST(ModelTokenizer, AddPrefixSpaceAddsOneSpace) {
  const std::string pre = R"({"type":"ByteLevel","add_prefix_space":true,"trim_offsets":true,"use_regex":true})";
  Tokenizer tok = load(byte_level_tokenizer_json(kMerges, false, pre), "prefix");
  EXPECT_EQ(tok.encode("the"), (std::vector<int>{258}));
  EXPECT_EQ(tok.encode(" the"), (std::vector<int>{258}));
}

void expect_bad(const std::string& json, const std::string& name, const std::string& fragment) {
  std::string dir = temp_dir(name);
  write_file(dir + "/tokenizer.json", json);
  try {
    Tokenizer tok(dir + "/tokenizer.json");
    ADD_FAILURE() << "no error for " << name;
  } catch (const BadInput& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find(dir + "/tokenizer.json: "), std::string::npos) << msg;
    EXPECT_NE(msg.find(fragment), std::string::npos) << msg;
  }
}

TEST(ModelTokenizer, RejectsUnsupportedTokenizersNamingTheField) {
  std::string base = byte_level_tokenizer_json(kMerges);
  auto replace = [&](const std::string& from, const std::string& to) {
    std::string s = base;
    s.replace(s.find(from), from.size(), to);
    return s;
  };
  expect_bad(replace("\"type\":\"BPE\"", "\"type\":\"Unigram\""), "unigram", "model.type 'Unigram' is not supported");
  expect_bad(replace("\"type\":\"BPE\"", "\"type\":\"WordPiece\""), "wordpiece", "model.type 'WordPiece' is not supported");
  expect_bad(replace("\"byte_fallback\":false", "\"byte_fallback\":true"), "fallback", "byte_fallback");
  expect_bad(replace(R"("pre_tokenizer":{"type":"ByteLevel")", R"("pre_tokenizer":{"type":"Metaspace")"), "metaspace",
             "pre_tokenizer type 'Metaspace' is not supported");
  expect_bad(replace(R"("pre_tokenizer":{"type":"ByteLevel","add_prefix_space":false,"trim_offsets":true,"use_regex":true})",
                     R"("pre_tokenizer":{"type":"Split","pattern":{"Regex":"\\w+"},"behavior":"Isolated","invert":false})"),
             "regex", "is not one of the supported");
  expect_bad(replace("\"merges\":[\"", "\"merges\":[\"zz q\",\""), "merge", "'zz' is not in the vocabulary");
  expect_bad("{\"model\": 3", "json", "invalid JSON");
}

TEST(ModelTokenizer, InvalidUtf8InputNamesTheSourceAndOffset) {
  Tokenizer tok = load(byte_level_tokenizer_json(kMerges), "utf8");
  try {
    tok.encode("abc\xFF", "notes.txt");
    ADD_FAILURE();
  } catch (const BadInput& e) {
    EXPECT_STREQ(e.what(), "notes.txt: invalid UTF-8 at byte 3");
  }
}

}  // namespace
}  // namespace ispsim::model

namespace ispsim::model {
namespace {

TEST(ModelTokenizer, IgnoreMergesTakesWholeWordsFromTheVocabulary) {
  // Llama-3 sets ignore_merges: a pre-token found in the vocabulary is one token
  // even when no merge sequence builds it.
  std::string json = byte_level_tokenizer_json({{"a", "b"}});  // ab=256, <|endoftext|>=257
  json.replace(json.find("\"<|endoftext|>\":257"), 19, "\"<|endoftext|>\":257,\"abc\":258");
  Tokenizer plain = load(json, "no_ignore");
  EXPECT_EQ(plain.encode("abc"), (std::vector<int>{256, 'c'}));
  json.replace(json.find("\"byte_fallback\":false"), 21, "\"byte_fallback\":false,\"ignore_merges\":true");
  Tokenizer ignoring = load(json, "ignore");
  EXPECT_EQ(ignoring.encode("abc"), (std::vector<int>{258}));
  EXPECT_EQ(ignoring.encode("abd"), (std::vector<int>{256, 'd'}));
}

}  // namespace
}  // namespace ispsim::model
