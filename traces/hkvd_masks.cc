#include "traces/hkvd_masks.h"

namespace ispsim::trace {

void HkvdMasks::take(size_t index, Op& op) {
  if (!op.has_attention() || !op.attention().has_hkvd_mask()) return;
  if (by_op_.size() <= index) by_op_.resize(index + 1, nullptr);
  by_op_[index] = intern(std::move(*op.mutable_attention()->mutable_hkvd_mask()));
  op.mutable_attention()->clear_hkvd_mask();
}

const BitVector* HkvdMasks::intern(BitVector mask) {
  const auto found = by_content_.find({mask.bit_length(), mask.bits()});
  if (found != by_content_.end()) return found->second;
  const BitVector* kept = distinct_.emplace_back(std::make_shared<const BitVector>(std::move(mask))).get();
  by_content_.emplace(std::make_pair(kept->bit_length(), std::string_view(kept->bits())), kept);
  return kept;
}

const BitVector* HkvdMasks::of(size_t index) const { return index < by_op_.size() ? by_op_[index] : nullptr; }

Op HkvdMasks::with_mask(size_t index, Op op) const {
  if (const BitVector* mask = of(index)) *op.mutable_attention()->mutable_hkvd_mask() = *mask;
  return op;
}

void InternedOps::add(Op op) {
  masks.take(ops.size(), op);
  ops.push_back(std::move(op));
}

InternedOps intern_hkvd_masks(std::vector<Op> ops) {
  InternedOps interned;
  interned.ops = std::move(ops);
  for (size_t i = 0; i < interned.ops.size(); ++i) interned.masks.take(i, interned.ops[i]);
  return interned;
}

}  // namespace ispsim::trace
