// Byte-level BPE tokenizer read from a Hugging Face tokenizer.json.
//
// Supported (anything else is rejected with BadInput naming the field):
//   model        type "BPE"; merges as "a b" strings or [a, b] arrays; ignore_merges;
//                no byte_fallback, dropout, continuing_subword_prefix or end_of_word_suffix
//   normalizer   null, or NFC — treated as the identity, which is exact for text
//                already in NFC (ASCII and almost all text); we do not compose
//   pre_tokenizer ByteLevel (use_regex: GPT-2 regex; add_prefix_space), Split with
//                the GPT-2, Llama-3 or Qwen2 regex (behavior Isolated, invert false),
//                Digits, or a Sequence of these (see pretokenizer.h)
//   decoder      ByteLevel (or null)
//   added_tokens matched verbatim in the input before pre-tokenisation; the
//                lstrip/rstrip/single_word options are honoured only when false
//   post_processor TemplateProcessing whose single template starts with a special
//                token (e.g. Llama-3's <|begin_of_text|>) gives bos_id(); others ignored
// Decoding returns the raw bytes (a token boundary may split a UTF-8 sequence).
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include <boost/json/fwd.hpp>

#include "kernels/model/pretokenizer.h"

namespace ispsim::model {

class Tokenizer {
 public:
  // Reads and validates <path>; throws BadInput(path, ...).
  explicit Tokenizer(const std::string& path);

  // Token ids of UTF-8 text, without any added BOS. Invalid UTF-8 throws
  // BadInput(source, "invalid UTF-8 at byte N").
  std::vector<int> encode(const std::string& text, const std::string& source = "input text") const;
  std::string decode(const std::vector<int>& ids) const;
  std::string decode_token(int id) const;

  int vocab_size() const { return static_cast<int>(tokens_.size()); }
  // Every id this tokenizer can produce (vocabulary, added tokens, BOS) must
  // have an embedding row: BadInput naming this file otherwise, at load time
  // rather than deep in the engine. `model_file` names where `model_vocab` came from.
  void check_fits(int model_vocab, const std::string& model_file) const;
  // The special token the post-processor puts first, or -1.
  int bos_id() const { return bos_id_; }

 private:
  struct PreStep {
    enum Kind { kPattern, kDigits, kPrefixSpace } kind;
    SplitPattern pattern = SplitPattern::kGpt2;
    bool individual_digits = false;
  };
  struct Merge {
    int rank;
    int result;
  };
  struct AddedToken {
    std::u32string content;
    int id;
  };

  void parse_model(const boost::json::object& model);
  void parse_pre_tokenizer(const boost::json::value& pre);
  void parse_added_tokens(const boost::json::value& added);
  void parse_post_processor(const boost::json::value& post);
  void encode_segment(const std::u32string& text, size_t begin, size_t end, std::vector<int>& out) const;
  void encode_piece(const std::string& utf8, std::vector<int>& out) const;

  std::string path_;
  std::vector<std::string> tokens_;                // id -> byte-level string (UTF-8)
  std::unordered_map<std::string, int> vocab_;     // byte-level string -> id
  std::unordered_map<uint64_t, Merge> merges_;     // (left id, right id) -> rank, merged id
  int byte_token_[256] = {};                          // raw byte -> id of its byte-level symbol
  uint8_t char_to_byte_[324] = {};                    // byte-level code point -> raw byte
  bool ignore_merges_ = false;
  std::vector<PreStep> pre_steps_;
  std::vector<AddedToken> added_;                  // longest first
  std::unordered_map<int, std::string> added_text_;  // id -> content, for decoding
  int bos_id_ = -1;
};

}  // namespace ispsim::model
