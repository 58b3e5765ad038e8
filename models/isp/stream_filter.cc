#include "models/isp/stream_filter.h"

#include <algorithm>
#include <cmath>

#include "common/error.h"

namespace ispsim::isp {

namespace {

bool bit(const trace::BitVector& v, uint64_t i) {
  return (uint8_t(v.bits()[i / 8]) >> (i % 8)) & 1u;
}

}  // namespace

StreamFilter::StreamFilter(const IspConfig& config, const FilterContext& context, const std::string& where)
    : config_(config), context_(context), set_positions_(set_positions(context, where)) {}

std::shared_ptr<const std::vector<uint64_t>> StreamFilter::set_positions(const FilterContext& context,
                                                                         const std::string& where) {
  auto positions = std::make_shared<std::vector<uint64_t>>();
  const trace::BitVector* mask = context.hkvd_mask;
  if (mask == nullptr) return positions;
  if (mask->bit_length() != context.context_tokens) {
    throw BadInput(where, "HKVD mask has " + std::to_string(mask->bit_length()) + " bits, expected one per context token (" +
                              std::to_string(context.context_tokens) + ")");
  }
  if (mask->bits().size() != (mask->bit_length() + 7) / 8) {
    throw BadInput(where, "HKVD mask has " + std::to_string(mask->bits().size()) + " bytes for " +
                              std::to_string(mask->bit_length()) + " bits");
  }
  for (uint64_t i = mask->bit_length(); i < mask->bits().size() * 8; ++i) {
    if (bit(*mask, i)) throw BadInput(where, "HKVD mask has a set bit past its length");
  }
  // Byte by byte, set bits lowest first (bit i is bit i % 8 of byte i / 8); none past the length.
  const std::string& bytes = mask->bits();
  for (size_t b = 0; b < bytes.size(); ++b) {
    for (unsigned v = uint8_t(bytes[b]); v != 0; v &= v - 1) positions->push_back(b * 8 + __builtin_ctz(v));
  }
  return positions;
}

uint64_t StreamFilter::position_of_appended(uint64_t append_index) const {
  const uint64_t h = set_positions_->size();
  return append_index < h ? (*set_positions_)[append_index] : context_.context_tokens + (append_index - h);
}

bool StreamFilter::is_substituted(uint64_t position) const {
  return context_.hkvd_mask != nullptr && position < context_.context_tokens && bit(*context_.hkvd_mask, position);
}

bool StreamFilter::visible(uint64_t position) const {
  return !context_.causal || position <= context_.max_row_position;
}

uint64_t StreamFilter::visible_entries(trace::KvRegion region, uint64_t end) const {
  if (!context_.causal) return end;
  const uint64_t max = context_.max_row_position;
  if (region == trace::KV_REGION_PRECOMPUTED) return std::min(end, max + 1);  // entry i is position i
  const uint64_t C = context_.context_tokens;
  const uint64_t substitutes =
      std::upper_bound(set_positions_->begin(), set_positions_->end(), max) - set_positions_->begin();
  return std::min(end, max < C ? substitutes : set_positions_->size() + (max - C + 1));
}

uint64_t StreamFilter::kept_as_read_end(trace::KvRegion region, uint64_t first, uint64_t end) const {
  const std::vector<uint64_t>& set = *set_positions_;
  uint64_t stop = visible_entries(region, end);
  if (region == trace::KV_REGION_PRECOMPUTED) {  // entry i is position i; the next set bit is substituted
    const auto next_set = std::lower_bound(set.begin(), set.end(), first);
    if (next_set != set.end()) stop = std::min(stop, *next_set);
  } else if (first < set.size()) {  // the first H appended entries are forwarded
    stop = first;
  }
  return std::max(first, stop);
}

uint64_t StreamFilter::cycles(uint32_t entries) const {
  return uint64_t(std::ceil(double(entries) / config_.stream_filter_tokens_per_cycle - 1e-9));
}

// The counts without the tokens, in closed form: visible positions are a
// prefix of the page, substitutes counted among the mask's set positions.
template <typename Rank>
FilterResult StreamFilter::precomputed_counts(uint64_t first_position, uint32_t entries, Rank rank) const {
  FilterResult r;
  r.cycles = cycles(entries);
  const uint64_t end = first_position + entries;
  const uint64_t visible_end = visible_before(first_position, end);
  r.kept = uint32_t(visible_end - first_position);
  r.dropped = entries - r.kept;
  if (r.kept > 0) {
    const uint64_t before = rank(first_position);  // ascending calls: a cursor may serve
    r.substituted = uint32_t(rank(visible_end) - before);
  }
  return r;
}

FilterResult StreamFilter::precomputed_counts(uint64_t first_position, uint32_t entries, size_t& cursor) const {
  const std::vector<uint64_t>& set = *set_positions_;
  return precomputed_counts(first_position, entries, [&](uint64_t p) {
    // Not ascending after all, or a first call past set bits: search.
    if ((cursor > 0 && set[cursor - 1] >= p) || (cursor == 0 && !set.empty() && set[0] < p))
      cursor = size_t(std::lower_bound(set.begin(), set.end(), p) - set.begin());
    while (cursor < set.size() && set[cursor] < p) ++cursor;
    return uint64_t(cursor);
  });
}

uint64_t StreamFilter::visible_before(uint64_t begin, uint64_t end) const {
  if (!context_.causal) return end;
  return std::min(end, std::max(begin, context_.max_row_position + 1));
}

FilterResult StreamFilter::precomputed_page(uint64_t first_position, uint32_t entries, bool with_tokens) const {
  if (!with_tokens) {
    return precomputed_counts(first_position, entries, [&](uint64_t p) {
      return uint64_t(std::lower_bound(set_positions_->begin(), set_positions_->end(), p) - set_positions_->begin());
    });
  }
  FilterResult r;
  r.cycles = cycles(entries);
  for (uint64_t p = first_position; p < first_position + entries; ++p) {
    if (!visible(p)) {
      ++r.dropped;
      continue;
    }
    ++r.kept;
    const bool sub = is_substituted(p);
    if (sub) ++r.substituted;
    if (with_tokens) {
      FilteredToken t;
      t.position = p;
      t.substituted = sub;
      if (sub) {
        // Append index of a substitute = its rank among the mask's set bits.
        t.append_index = uint64_t(std::lower_bound(set_positions_->begin(), set_positions_->end(), p) -
                                  set_positions_->begin());
      }
      r.tokens.push_back(t);
    }
  }
  return r;
}

FilterResult StreamFilter::appended_page(uint64_t first_append_index, uint32_t entries, bool with_tokens) const {
  FilterResult r;
  r.cycles = cycles(entries);
  const uint64_t h = set_positions_->size();
  if (!with_tokens) {  // own entries k >= H sit at positions C + k - H, ascending
    const uint64_t end = first_append_index + entries;
    const uint64_t own = std::min(std::max(first_append_index, h), end);
    r.forwarded = uint32_t(own - first_append_index);
    uint64_t visible_end = end;  // append indexes [own, visible_end) are visible
    if (own < end) {
      const uint64_t first_position = position_of_appended(own);
      visible_end = own + (visible_before(first_position, first_position + (end - own)) - first_position);
    }
    r.kept = uint32_t(visible_end - own);
    r.dropped = uint32_t(end - visible_end);
    return r;
  }
  for (uint64_t k = first_append_index; k < first_append_index + entries; ++k) {
    if (k < h) {
      ++r.forwarded;
      continue;
    }
    const uint64_t p = position_of_appended(k);
    if (!visible(p)) {
      ++r.dropped;
      continue;
    }
    ++r.kept;
    if (with_tokens) {
      FilteredToken t;
      t.position = p;
      t.appended = true;
      t.append_index = k;
      r.tokens.push_back(t);
    }
  }
  return r;
}

}  // namespace ispsim::isp
