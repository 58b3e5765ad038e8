// HKVD masks held once per distinct mask. Every decode attention op of a layer
// carries that layer's mask (context_tokens / 8 bytes), so a long request's ops
// hold layers x decode steps copies of what are only about `layers` distinct
// masks; a program simulated from memory keeps its ops without their masks and
// looks each op's mask up here instead.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string_view>
#include <utility>
#include <vector>

#include "traces/trace.pb.h"

namespace ispsim::trace {

class HkvdMasks {
 public:
  // Moves the HKVD mask of `op` (op number `index` of its program), if it has
  // one, into the table: a copy of an earlier mask is dropped for that one.
  void take(size_t index, Op& op);
  // The mask op `index` carried, or null. The pointer stays valid as long as
  // the table, or a copy of it, lives.
  const BitVector* of(size_t index) const;
  // `op`, op `index` as stored, with its mask put back.
  Op with_mask(size_t index, Op op) const;
  size_t distinct() const { return distinct_.size(); }

 private:
  const BitVector* intern(BitVector mask);

  // Shared and immutable: a copy of the table shares them, and pointers to
  // them survive growth, moves and copies.
  std::vector<std::shared_ptr<const BitVector>> distinct_;
  std::map<std::pair<uint64_t, std::string_view>, const BitVector*> by_content_;  // (bit_length, bits) of distinct_
  std::vector<const BitVector*> by_op_;                                        // by op index; null: no mask
};

// A program's ops without their HKVD masks, and the masks.
struct InternedOps {
  std::vector<Op> ops;
  HkvdMasks masks;
  // Appends `op`, its mask moved into `masks`.
  void add(Op op);
};

InternedOps intern_hkvd_masks(std::vector<Op> ops);

}  // namespace ispsim::trace
