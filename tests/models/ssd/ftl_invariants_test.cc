// Invariants of the FTL under a random mix of writes, overwrites and TRIMs,
// checked against a model of the flash built only from the operations the
// FTL reports: every program goes to an erased page, GC copies what it read,
// and every mapped logical page reads back its latest write.
#include <gtest/gtest.h>

#include <deque>
#include <map>
#include <random>

#include "common/error.h"
#include "models/ssd/ftl/ftl.h"
#include "tests/models/ssd/ftl_test_support.h"

namespace ispsim::ftl {
namespace {

using testing::SmallDrive;

struct Page {
  int64_t lpn = -1;  // -1: erased
  uint64_t version = 0;
};

// The flash as the reported operations leave it.
class FlashModel {
 public:
  explicit FlashModel(const Geometry& g) : g_(g), pages_(g.physical_pages()) {}

  // Applies `ops` of one host write of [lpn, ...) at `version`.
  void apply(const std::vector<FlashOp>& ops, uint64_t lpn, uint64_t version) {
    std::deque<Page> copied;
    for (const FlashOp& op : ops) {
      if (op.kind == OpKind::kErase) {
        for (uint64_t page = 0; page < g_.pages_per_block; ++page) pages_[page_of(op.first, page)] = Page{};
        continue;
      }
      for (uint64_t ppn = op.first; ppn < op.first + op.count; ++ppn) {
        if (op.kind == OpKind::kRead) {
          ASSERT_GE(pages_[ppn].lpn, 0) << "GC read an erased page " << ppn;
          copied.push_back(pages_[ppn]);
          continue;
        }
        ASSERT_EQ(pages_[ppn].lpn, -1) << "program of page " << ppn << " that is not erased";
        if (op.cause == OpCause::kHost) {
          pages_[ppn] = Page{int64_t(lpn++), version};
        } else {
          ASSERT_FALSE(copied.empty()) << "GC programs a page it did not read";
          pages_[ppn] = copied.front();
          copied.pop_front();
        }
      }
    }
    EXPECT_TRUE(copied.empty());
  }
  const Page& at(uint64_t ppn) const { return pages_[ppn]; }

 private:
  uint64_t page_of(uint64_t block, uint64_t page) const {
    const uint64_t line = block / g_.units(), unit = block % g_.units();
    return line * g_.line_pages() + page * g_.units() + unit;
  }
  Geometry g_;
  std::vector<Page> pages_;
};

void check_state(const Ftl& ftl, const FlashModel& flash, const std::vector<int64_t>& latest) {
  const Geometry& g = ftl.geometry();
  std::map<uint64_t, uint64_t> owner;  // ppn -> lpn
  std::vector<uint32_t> valid(g.blocks(), 0);
  for (uint64_t lpn = 0; lpn < ftl.logical_pages(); ++lpn) {
    const std::optional<uint64_t> ppn = ftl.lookup(lpn);
    if (latest[lpn] < 0) {
      ASSERT_FALSE(ppn) << "trimmed or unwritten logical page " << lpn << " reads physical page " << *ppn;
      continue;
    }
    ASSERT_TRUE(ppn) << "written logical page " << lpn << " is unmapped";
    ASSERT_TRUE(owner.emplace(*ppn, lpn).second) << "physical page " << *ppn << " holds two logical pages";
    ASSERT_EQ(flash.at(*ppn).lpn, int64_t(lpn)) << "logical page " << lpn << " reads another page's data";
    ASSERT_EQ(flash.at(*ppn).version, uint64_t(latest[lpn])) << "logical page " << lpn << " reads stale data";
    const Ftl::LineState state = ftl.line_state(g.line_of(*ppn));
    ASSERT_TRUE(state == Ftl::LineState::kOpen || state == Ftl::LineState::kClosed);
    ++valid[g.block_of(*ppn)];
  }
  uint64_t erases = 0;
  for (uint64_t block = 0; block < g.blocks(); ++block) {
    ASSERT_EQ(ftl.valid_pages(block), valid[block]) << "valid count of block " << block;
    erases += ftl.erase_count(block);
  }
  EXPECT_EQ(erases, ftl.counters().block_erases);
  EXPECT_EQ(ftl.mapping().mapped_pages(), owner.size());
}

void run_random_mix(SmallDrive d, uint64_t operations) {
  Ftl ftl(testing::config(d));
  FlashModel flash(ftl.geometry());
  const uint64_t u = ftl.logical_pages(), line = ftl.geometry().line_pages();
  std::vector<int64_t> latest(u, -1);
  std::mt19937_64 rng(11);
  uint64_t version = 0, erase_ops = 0;
  for (uint64_t i = 0; i < operations; ++i) {
    const uint64_t lpn = rng() % u, count = std::min<uint64_t>(u - lpn, 1 + rng() % (2 * line));
    if (rng() % 5 == 0) {
      ftl.trim(lpn, count);
      std::fill(latest.begin() + lpn, latest.begin() + lpn + count, -1);
    } else {
      std::vector<FlashOp> ops;
      ftl.write(lpn, count, &ops);
      ++version;
      flash.apply(ops, lpn, version);
      std::fill(latest.begin() + lpn, latest.begin() + lpn + count, version);
      for (const FlashOp& op : ops) erase_ops += op.kind == OpKind::kErase;
    }
    if (i % 50 == 0) check_state(ftl, flash, latest);
    if (::testing::Test::HasFatalFailure()) return;
  }
  check_state(ftl, flash, latest);
  EXPECT_EQ(erase_ops, ftl.counters().block_erases);
  EXPECT_GT(ftl.counters().gc_pages, 0u);  // GC copied data, so the check covered it
}

TEST(FtlInvariants, RandomMixGreedy) { run_random_mix(SmallDrive{}, 3000); }

TEST(FtlInvariants, RandomMixCostBenefitWithWearLevelling) {
  SmallDrive d;
  d.policy = schema::FtlParams::COST_BENEFIT;
  d.wear_threshold = 2;  // wear levelling moves data too
  d.foreground_ratio = 0.05;
  run_random_mix(d, 3000);
}

TEST(FtlInvariants, RangesPastTheCapacityAreRefused) {
  Ftl ftl(testing::config(SmallDrive{}));
  const uint64_t u = ftl.logical_pages();
  EXPECT_THROW(ftl.write(u - 1, 2), BadInput);
  EXPECT_THROW(ftl.trim(u, 1), BadInput);
  EXPECT_THROW(ftl.write(1, UINT64_MAX), BadInput);
  EXPECT_FALSE(ftl.lookup(u));
}

}  // namespace
}  // namespace ispsim::ftl
