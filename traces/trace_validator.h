// Semantic checks of a trace, applied while it streams: the header once, then
// every op in file order. The reader, the writer and the text loader all use it,
// so no tool can write a trace that the reader would reject.
//
// Memory: one 8-byte id per op already seen (kept per program, sorted because ids
// increase), needed to prove that each dependency names an earlier op of the same
// program. Everything else is O(1) per op.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "traces/trace.pb.h"

namespace ispsim::trace {

// Format version this code writes and reads (see FormatVersion in trace.proto).
constexpr uint32_t kFormatMajor = 1;
constexpr uint32_t kFormatMinor = 2;
// First minor version whose records carry a CRC-32C (trace.proto, Header.crc32c).
constexpr uint32_t kChecksumMinor = 2;

// Sanity limits that catch corrupt or negative-turned-huge values (a negative
// int64 stored into a uint64 field reads back as ~1.8e19).
constexpr uint64_t kMaxTokens = uint64_t{1} << 40;    // token counts and positions
constexpr uint64_t kMaxElements = uint64_t{1} << 50;  // elements, bytes, GEMM dims
constexpr uint32_t kMaxModelDim = uint32_t{1} << 24;  // layers, hidden, heads, vocab, ...

// Storage bits of one element; 0 for DTYPE_UNSPECIFIED.
uint32_t dtype_bits(DType dtype);
// Bits per dense KV element of a format; 0 for KV_DICTIONARY and unspecified.
uint32_t kv_format_bits(KvFormat format);
// Sum of the documents' tokens (the context the HKVD masks cover).
uint64_t context_tokens(const Request& request);
// Bytes of one token's KV in one layer for a dense format.
uint64_t dense_kv_bytes_per_token(const ModelShape& model, KvParts parts, uint32_t bits);
// Number of set bits of a bit vector (its byte size is not checked here).
uint64_t popcount(const BitVector& bits);
// Tokens a KV transfer moves: the range length, or the set bits of its token_mask.
uint64_t moved_tokens(const KvTransfer& kv);

// The KV an attention reads, in tokens: precomputed spans, appended spans, and
// the HKVD tokens (set mask bits), whose recomputed KV is read among the
// appended entries.
struct AttentionReads {
  uint64_t precomputed = 0;
  uint64_t precomputed_end = 0;  // the end of the last precomputed span
  uint64_t appended = 0;
  uint64_t hkvd = 0;
};
AttentionReads attention_reads(const Attention& attention);
// The same with the HKVD mask given apart (null: none), for ops whose mask is
// held elsewhere (traces/hkvd_masks.h).
AttentionReads attention_reads(const Attention& attention, const BitVector* hkvd_mask);
// What the runtime relies on when an attention runs (platforms/systems/runtime.cc
// checks the same): its precomputed KV lies within the context, the appended KV
// it reads (appended spans + HKVD tokens) was appended to its layer before it
// (`appended_before`: tokens of the earlier kv_append ops of its program and
// layer), and its query rows, the last appended entries, are among them.
// Empty when fine, else the problem.
std::string attention_kv_problem(const Attention& attention, uint64_t context_tokens, uint64_t appended_before);
std::string attention_kv_problem(const Attention& attention, const BitVector* hkvd_mask, uint64_t context_tokens,
                                 uint64_t appended_before);

class TraceValidator {
 public:
  // `where` names the file in every error: BadInput(where, "op 12: ...").
  explicit TraceValidator(std::string where);
  // Changes the location named in later errors (the text loader points at each op's line).
  void set_where(std::string where) { where_ = std::move(where); }

  // Version, model shape, request, producer and program list.
  void check_header(const Header& header);
  // One op in file order (after check_header).
  void check_op(const Op& op);
  // End of the trace: each program's op count matches the header where declared.
  // `counts_required` demands a declared count for every program (binary files).
  void check_end(bool counts_required) const;

  const Header& header() const { return header_; }
  uint64_t ops_seen() const { return ops_seen_; }
  // Ops seen so far per declared program.
  uint64_t ops_of(Program program) const;

 private:
  [[noreturn]] void fail_header(const std::string& problem) const;
  [[noreturn]] void fail_op(const Op& op, const std::string& problem) const;
  void check_kind(const Op& op) const;
  void check_mask(const Op& op, const BitVector& mask, uint64_t expected_bits,
                  const std::string& name) const;
  // Context + query + answer tokens: every token position lies below this.
  uint64_t request_positions() const;
  void check_positions(const Op& op, const TokenRange& range, const std::string& name) const;
  void check_kv_transfer(const Op& op, const KvTransfer& kv, const std::string& name) const;
  // The data flow the host runtime relies on (platforms/systems/runtime.cc):
  // appended KV reaches the attention that reads it, HKVD masks agree with the
  // selection.
  void check_kv_dataflow(const Op& op);
  // attention_kv_problem for every attention, counting the appends before it
  // (but in the decode-only programs, whose KV cache predates the trace).
  void check_attention_reads(const Op& op);

  std::string where_;
  Header header_;
  bool have_header_ = false;
  bool have_previous_id_ = false;
  uint64_t previous_id_ = 0;
  uint64_t ops_seen_ = 0;
  // The ids of one program, as runs of consecutive ids [first, last]: a
  // program's ops are written together, so this stays a few runs however long
  // the trace (a vector of every id grew by 8-16 B per op).
  class IdRuns {
   public:
    void add(uint64_t id);  // greater than every id added before
    bool contains(uint64_t id) const;
    uint64_t size() const { return count_; }

   private:
    std::vector<std::pair<uint64_t, uint64_t>> runs_;
    uint64_t count_ = 0;
  };
  // Ids seen per declared program (for dependency checks).
  std::map<Program, IdRuns> ids_;
  // kv_append ops of a (program, layer, phase) whose attention can run on the
  // SSD, not yet read by an attention of that key; bounded by one layer's ops.
  struct PendingAppends {
    std::vector<uint64_t> ids;
    uint64_t tokens = 0;
  };
  std::map<std::tuple<Program, uint32_t, Phase>, PendingAppends> pending_appends_;
  // Tokens appended so far per (program, layer), for attention_kv_problem.
  std::map<std::pair<Program, uint32_t>, uint64_t> appended_by_layer_;
  // selected_tokens of the latest hkvd_select per program.
  std::map<Program, uint64_t> selected_tokens_;
};

}  // namespace ispsim::trace
