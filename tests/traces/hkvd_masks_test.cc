#include "traces/hkvd_masks.h"

#include <gtest/gtest.h>

namespace ispsim::trace {
namespace {

BitVector mask(uint64_t bit_length, std::string bits) {
  BitVector m;
  m.set_bit_length(bit_length);
  m.set_bits(std::move(bits));
  return m;
}

Op attention_with(const BitVector* hkvd_mask) {
  Op op;
  op.mutable_attention()->set_query_rows(1);
  if (hkvd_mask) *op.mutable_attention()->mutable_hkvd_mask() = *hkvd_mask;
  return op;
}

TEST(HkvdMasks, OpsWithEqualMasksShareOneStoredMask) {
  const BitVector a = mask(8, "\x03"), b = mask(8, "\x05");
  const InternedOps interned = intern_hkvd_masks(
      {attention_with(&a), attention_with(&b), attention_with(&a), attention_with(nullptr), attention_with(&a)});
  EXPECT_EQ(interned.masks.distinct(), 2u);
  EXPECT_EQ(interned.masks.of(0), interned.masks.of(2));
  EXPECT_EQ(interned.masks.of(0), interned.masks.of(4));
  EXPECT_NE(interned.masks.of(0), interned.masks.of(1));
  EXPECT_EQ(interned.masks.of(3), nullptr);
  EXPECT_EQ(interned.masks.of(5), nullptr) << "past the last op";
  EXPECT_EQ(interned.masks.of(1)->SerializeAsString(), b.SerializeAsString());
  EXPECT_EQ(interned.masks.of(4)->SerializeAsString(), a.SerializeAsString());
}

TEST(HkvdMasks, TheStoredOpsCarryNoMask) {
  const BitVector a = mask(8, "\x03");
  InternedOps interned;
  interned.add(attention_with(&a));
  interned.add(attention_with(&a));
  ASSERT_EQ(interned.ops.size(), 2u);
  for (const Op& op : interned.ops) {
    EXPECT_FALSE(op.attention().has_hkvd_mask());
    EXPECT_EQ(op.attention().query_rows(), 1u);
  }
}

TEST(HkvdMasks, MasksOfEqualBytesButOtherLengthsStayApart) {
  const BitVector seven = mask(7, "\x03"), eight = mask(8, "\x03");
  const InternedOps interned = intern_hkvd_masks({attention_with(&seven), attention_with(&eight)});
  EXPECT_EQ(interned.masks.distinct(), 2u);
  EXPECT_EQ(interned.masks.of(0)->bit_length(), 7u);
  EXPECT_EQ(interned.masks.of(1)->bit_length(), 8u);
}

TEST(HkvdMasks, MaskPointersSurviveAMoveOfTheTable) {
  const BitVector a = mask(16, std::string(2, '\x7f'));
  InternedOps interned = intern_hkvd_masks({attention_with(&a)});
  const BitVector* before = interned.masks.of(0);
  const HkvdMasks moved = std::move(interned.masks);
  EXPECT_EQ(moved.of(0), before);
  EXPECT_EQ(moved.of(0)->bits(), a.bits());
}

}  // namespace
}  // namespace ispsim::trace
