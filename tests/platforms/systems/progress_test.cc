// systems::Progress: the work each op counts for, the line it draws (figures
// with units, ETA from the rate of work so far) and its silence when stderr is
// not a terminal.
#include "platforms/systems/progress.h"

#include <gtest/gtest.h>

#include "platforms/systems/child_process.h"

namespace ispsim::systems {
namespace {

trace::Op attention_over(std::vector<std::pair<uint64_t, uint64_t>> spans) {
  trace::Op op;
  for (const auto& [begin, end] : spans) {
    trace::KvSpan* span = op.mutable_attention()->add_kv();
    span->mutable_tokens()->set_begin(begin);
    span->mutable_tokens()->set_end(end);
  }
  return op;
}

TEST(Progress, WorkIsOnePerOpPlusItsKvPagesWhenStreamedPageByPage) {
  // 130 tokens x 1024 bytes = 133120 bytes = 8.125 pages of 16 KiB: 9 pages.
  const trace::Op attention = attention_over({{0, 100}, {100, 130}});
  EXPECT_EQ(op_work(attention, 1024, 16384), 1u + 9u);
  EXPECT_EQ(op_work(attention, 1024, 0), 1u);  // aggregated streams: the op only
  // Three row chunks stream 3 x 133120 bytes = 24.375 pages: 25.
  EXPECT_EQ(op_work(attention, 1024, 16384, 3), 1u + 25u);
  trace::Op append;
  append.mutable_kv_append()->set_bytes(3 * 16384);
  EXPECT_EQ(op_work(append, 1024, 16384), 1u + 3u);
  trace::Op load;
  load.mutable_kv_load()->set_bytes(1);
  EXPECT_EQ(op_work(load, 1024, 16384), 1u + 1u);
  trace::Op gemm;
  gemm.mutable_gemm()->set_m(4096);
  EXPECT_EQ(op_work(gemm, 1024, 16384), 1u);
}

TEST(Progress, LineHasOpsWorkSharePhaseSimulatedTimeAndEta) {
  // 2500 of 10000 work in 30 s: the other 7500 take 90 s at the same rate.
  EXPECT_EQ(Progress::line("MemLLM", {250, 1000, 2500, 10000, 12'345'000'000'000}, "decode", 30.0),
            "MemLLM: 250 of 1000 ops, 25.0 % of the work, simulated 12.345 s, decode, ETA 1m30s");
  EXPECT_EQ(Progress::line("GPU", {1, 3, 1, 3, 0}, "", 3600.0),
            "GPU: 1 of 3 ops, 33.3 % of the work, simulated 0.000 s, ETA 2h00m");
}

TEST(Progress, EtaFollowsTheWorkNotTheOps) {
  // 10 % of the ops but 90 % of the work after 9 s: 1 s left (by ops: 81 s).
  EXPECT_EQ(Progress::line("x", {10, 100, 900, 1000, 0}, "", 9.0),
            "x: 10 of 100 ops, 90.0 % of the work, simulated 0.000 s, ETA 1s");
}

TEST(Progress, NoEtaBeforeTheFirstOpOrAfterTheLast) {
  EXPECT_EQ(Progress::line("x", {0, 10, 0, 10, 0}, "", 5.0), "x: 0 of 10 ops, 0.0 % of the work, simulated 0.000 s");
  EXPECT_EQ(Progress::line("x", {10, 10, 10, 10, 1'000'000'000'000}, "", 5.0),
            "x: 10 of 10 ops, 100.0 % of the work, simulated 1.000 s");
}

TEST(Progress, CompletedOpsAddTheirOwnWork) {
  ProgressSlot slot;
  Progress p("x", {1, 5, 10}, false, &slot);
  EXPECT_EQ(slot.total_work.load(), 16u);
  p.completed(1, 0);
  EXPECT_EQ(slot.done_work.load(), 5u);
  p.completed(0, 0);
  EXPECT_EQ(slot.done_work.load(), 6u);
}

TEST(Progress, QuietWhenStderrIsNotATerminal) {
  // ctest runs with stderr on a pipe; nothing may be drawn even when enabled.
  testing::internal::CaptureStderr();
  {
    Progress p("x", std::vector<uint64_t>(10, 1), true);
    for (size_t i = 0; i < 10; ++i) p.completed(i, i);
  }
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
}

TEST(CompareProgress, LineCountsFinishedPlatformsAndShowsTheRunningOnes) {
  // Shares 1 (done), 0.5 and 0.25 (running), -1 (not started): mean 1.75 / 4 =
  // 0.4375 after 35 s, so 35 * 0.5625 / 0.4375 = 45 s remain.
  EXPECT_EQ(CompareProgress::line({"gpu", "memllm", "aif", "base"}, {1.0, 0.5, 0.25, -1.0}, 35.0),
            "compare: 1 of 4 platforms done; memllm 50.0 %, aif 25.0 %, ETA 45s");
  EXPECT_EQ(CompareProgress::line({"a", "b"}, {-1.0, -1.0}, 3.0), "compare: 0 of 2 platforms done");
  EXPECT_EQ(CompareProgress::line({"a", "b"}, {1.0, 1.0}, 3.0), "compare: 2 of 2 platforms done");
}

TEST(SharedProgress, ChildrenWriteWhereTheParentReads) {
  SharedProgress slots(3);
  std::vector<std::function<std::string()>> tasks;
  for (uint64_t i = 0; i < 3; ++i)
    tasks.push_back([&slots, i] {
      Progress p("child", std::vector<uint64_t>(10 * (i + 1), 2), false, &slots[i]);
      for (uint64_t op = 0; op < 7 * (i + 1); ++op) p.completed(op, 0);
      return std::string();
    });
  size_t ticks = 0;
  run_in_children(tasks, 2, {}, [&] { ++ticks; });
  for (uint64_t i = 0; i < 3; ++i) {
    EXPECT_EQ(slots[i].total_work.load(), 2 * 10 * (i + 1));
    EXPECT_EQ(slots[i].done_work.load(), 2 * 7 * (i + 1));
  }
}

}  // namespace
}  // namespace ispsim::systems
