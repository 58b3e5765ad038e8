// The documents a request stream ingests while it is served (serving_blend.h):
// where each one's data goes on the SSD and what it costs to write.
//
// DocumentStore keeps the ingested documents in a ring of logical pages past
// the SSD's KV space (ssd::KvSpace::store_pages): a document takes the next
// pages (at most two runs, when it wraps around), and the store evicts the
// oldest document first, whose pages are then TRIMmed. The corpus stored
// before the stream has no pages here: its precomputed KV is the SSD's
// precomputed region that every request reads, so evicting a corpus document
// frees nothing.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "traces/trace.pb.h"

namespace ispsim::systems {

// Text bytes per token of a document that a recompute platform stores instead
// of its KV: about 4 characters of English text per token for BPE tokenizers
// (OpenAI's tokenizer guidance: one token is about four characters), one byte
// per character in UTF-8.
constexpr uint64_t kTextBytesPerToken = 4;

// What storing one document writes.
struct DocumentFootprint {
  uint64_t pages = 0;  // logical pages
  uint64_t bytes = 0;  // bytes from the host
};

// A document of `tokens` tokens: its precomputed KV, laid out as the SSD lays
// out KV (layers x ceil(tokens / T) tiles x KV heads pages, T tokens of one
// head per page; layers x tokens x K and V bytes of every head), or, with
// `text`, its text (tokens x kTextBytesPerToken bytes in whole pages).
DocumentFootprint document_footprint(const trace::ModelShape& shape, uint32_t page_bytes, uint64_t tokens, bool text);

// The GPU ops that precompute the KV of a document of `tokens` (>= 2) tokens
// on a platform that stores KV: the FULL_PREFILL program's forward pass over
// them, up to the last layer's K and V (its QKV projection), without that
// layer's attention and FFN or the LM head, which the KV does not need.
std::vector<trace::Op> document_precompute_ops(const trace::ModelShape& shape, uint64_t tokens);

class DocumentStore {
 public:
  struct Run {
    uint64_t lpn = 0, count = 0;
  };
  // A ring of `pages` logical pages from `first_lpn` on; documents with ids
  // below `corpus_documents` are the corpus.
  DocumentStore(uint64_t first_lpn, uint64_t pages, uint64_t corpus_documents);

  // The pages document `id` is written to (std::logic_error when the ring is full).
  std::vector<Run> ingest(uint64_t id, uint64_t pages);
  // The pages to TRIM for evicting document `id`: none for a corpus document;
  // BadInput (naming `where`) for an ingested document that is not the oldest held.
  std::vector<Run> evict(uint64_t id, const std::string& where);
  uint64_t used_pages() const { return used_; }

 private:
  struct Document {
    uint64_t id = 0, offset = 0, pages = 0;  // offset: its first page in the ring
  };
  std::vector<Run> runs(uint64_t offset, uint64_t pages) const;

  uint64_t first_lpn_, capacity_, corpus_;
  uint64_t head_ = 0, used_ = 0;  // next free page in the ring; pages held
  std::deque<Document> held_;     // oldest first
};

}  // namespace ispsim::systems
