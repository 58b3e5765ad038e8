#include "platforms/systems/serving_store.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "common/error.h"
#include "models/isp/tiling.h"
#include "traces/gen/program_builder.h"

namespace ispsim::systems {

DocumentFootprint document_footprint(const trace::ModelShape& shape, uint32_t page_bytes, uint64_t tokens, bool text) {
  DocumentFootprint f;
  if (text) {
    f.bytes = tokens * kTextBytesPerToken;
    f.pages = (f.bytes + page_bytes - 1) / page_bytes;
    return f;
  }
  const uint32_t per_page = isp::tokens_per_tile(page_bytes, shape, "document store");
  f.pages = uint64_t{shape.layers()} * isp::pages_for_tokens(tokens, per_page, shape.kv_heads());
  f.bytes = uint64_t{shape.layers()} * tokens * isp::kv_bytes_per_token(shape);
  return f;
}

DocumentStore::DocumentStore(uint64_t first_lpn, uint64_t pages, uint64_t corpus_documents)
    : first_lpn_(first_lpn), capacity_(pages), corpus_(corpus_documents) {}

std::vector<DocumentStore::Run> DocumentStore::runs(uint64_t offset, uint64_t pages) const {
  if (pages == 0) return {};
  const uint64_t first = std::min(pages, capacity_ - offset);
  std::vector<Run> out{{first_lpn_ + offset, first}};
  if (pages > first) out.push_back({first_lpn_, pages - first});
  return out;
}

std::vector<DocumentStore::Run> DocumentStore::ingest(uint64_t id, uint64_t pages) {
  if (used_ + pages > capacity_)
    throw std::logic_error("document store: document " + std::to_string(id) + " of " + std::to_string(pages) +
                           " pages does not fit the " + std::to_string(capacity_ - used_) + " pages left");
  held_.push_back({id, head_, pages});
  used_ += pages;
  if (pages > 0) head_ = (head_ + pages) % capacity_;
  return runs(held_.back().offset, pages);
}

std::vector<DocumentStore::Run> DocumentStore::evict(uint64_t id, const std::string& where) {
  if (id < corpus_) return {};
  if (held_.empty() || held_.front().id != id)
    throw BadInput(where, "document " + std::to_string(id) + " is evicted before the older ingested document " +
                              (held_.empty() ? std::string("(none held)") : std::to_string(held_.front().id)) +
                              ": the store evicts the oldest first");
  const Document d = held_.front();
  held_.pop_front();
  used_ -= d.pages;
  return runs(d.offset, d.pages);
}

std::vector<trace::Op> document_precompute_ops(const trace::ModelShape& shape, uint64_t tokens) {
  if (tokens < 2) throw std::logic_error("document_precompute_ops: a document of fewer than 2 tokens");
  tracegen::BlendRequest request;
  request.model = shape;
  request.doc_tokens = {tokens - 1};  // the program's prompt is documents + query: together the document
  request.query_tokens = 1;
  const uint32_t last = shape.layers() - 1;
  const auto needed = [last](const trace::Op& op) {
    const bool gpu_kind = op.has_gemm() || op.has_attention() || op.has_nonlinear();
    const bool before_last_kv = op.layer() < last || op.label() == "input_norm" || op.label() == "qkv_proj" ||
                                op.label() == "rope";
    return gpu_kind && op.has_layer() && before_last_kv;
  };
  std::vector<trace::Op> ops;
  tracegen::emit_programs([&](const trace::Op& op) { if (needed(op)) ops.push_back(op); }, request,
                          {trace::FULL_PREFILL});
  return ops;
}

}  // namespace ispsim::systems
