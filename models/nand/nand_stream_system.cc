#include "models/nand/nand_stream_system.h"

#include <algorithm>

#include "common/error.h"

namespace ispsim::nand {

namespace {

const char* const kWhere = "kv ops";

// Pages of one layer that hold tokens [begin, end) when a token takes `bytes_per_token`.
struct TileRange {
  uint64_t first = 0, last = 0;  // [first, last)
};

TileRange tiles_of(uint64_t begin, uint64_t end, uint64_t bytes_per_token, uint64_t page_bytes) {
  if (bytes_per_token <= page_bytes) {
    const uint64_t per_page = page_bytes / bytes_per_token;
    return {begin / per_page, (end + per_page - 1) / per_page};
  }
  const uint64_t pages_per_token = (bytes_per_token + page_bytes - 1) / page_bytes;
  return {begin * pages_per_token, end * pages_per_token};
}

}  // namespace

NandStreamSystem::NandStreamSystem(sc_core::sc_module_name name, const schema::NandParams& nand,
                                   const schema::NandStreamParams& stream)
    : sc_core::sc_module(name),
      flash_("nand", FlashConfig::from_params(nand)),
      reader_("reader", flash_, StreamConfig::from_params(stream)),
      appender_("appender", flash_),
      layout_(flash_.config()) {}

KvRunResult NandStreamSystem::run(const std::vector<KvOp>& ops) {
  const FlashConfig& fc = flash_.config();
  // Validate and size the KV region first, so bad input fails before simulating.
  std::vector<TileRange> tiles(ops.size());
  uint64_t stride = 0, layers = 0;
  for (size_t i = 0; i < ops.size(); ++i) {
    const KvOp& op = ops[i];
    const std::string where = "op " + std::to_string(i);
    if (op.bytes == 0) throw BadInput(kWhere, where + ": 0 bytes");
    if (op.kind != KvOp::kLoad) continue;
    if (op.token_end <= op.token_begin) {
      throw BadInput(kWhere, where + ": empty token range [" + std::to_string(op.token_begin) + ", " +
                                 std::to_string(op.token_end) + ")");
    }
    const uint64_t tokens = op.token_end - op.token_begin;
    if (op.bytes % tokens != 0) {
      throw BadInput(kWhere, where + ": " + std::to_string(op.bytes) + " bytes is not a whole number of bytes for each of " +
                                 std::to_string(tokens) + " tokens");
    }
    tiles[i] = tiles_of(op.token_begin, op.token_end, op.bytes / tokens, fc.page_bytes);
    stride = std::max(stride, tiles[i].last);
    layers = std::max<uint64_t>(layers, uint64_t(op.layer) + 1);
  }
  const uint64_t kv_region = stride * layers;
  uint64_t append_bytes = 0;
  for (const KvOp& op : ops) {
    if (op.kind == KvOp::kAppend) append_bytes += op.bytes;
  }
  const uint64_t append_pages = (append_bytes + fc.page_bytes - 1) / fc.page_bytes;
  if (kv_region + append_pointer_ + append_pages > layout_.capacity_pages()) {
    throw BadInput(kWhere, "KV region of " + std::to_string(kv_region) + " pages plus " +
                               std::to_string(append_pointer_ + append_pages) +
                               " appended pages exceed the flash capacity of " +
                               std::to_string(layout_.capacity_pages()) + " pages");
  }

  KvRunResult result;
  const sc_core::sc_time run_start = sc_core::sc_time_stamp();
  uint64_t pending_bytes = 0;  // appended bytes not yet filling a page

  auto program = [&](uint64_t count, const char* what) {
    std::vector<PageAddress> pages(count);
    for (uint64_t k = 0; k < count; ++k) pages[k] = layout_.address(kv_region + append_pointer_ + k, kWhere);
    append_pointer_ += count;
    KvStepResult step{what, sc_core::sc_time_stamp(), sc_core::sc_time_stamp(), count};
    appender_.start(std::move(pages), kWhere);
    sc_core::sc_start();
    step.end = appender_.finished_at();
    result.append_time += step.end - step.start;
    result.pages_programmed += count;
    result.steps.push_back(step);
  };

  for (size_t i = 0; i < ops.size(); ++i) {
    const KvOp& op = ops[i];
    result.bytes_requested += op.bytes;
    if (op.kind == KvOp::kLoad) {
      std::vector<PageAddress> pages;
      pages.reserve(tiles[i].last - tiles[i].first);
      for (uint64_t t = tiles[i].first; t < tiles[i].last; ++t) {
        pages.push_back(layout_.address(uint64_t(op.layer) * stride + t, kWhere));
      }
      KvStepResult step{"load", sc_core::sc_time_stamp(), sc_core::sc_time_stamp(), pages.size()};
      reader_.start(std::move(pages), kWhere);
      sc_core::sc_start();
      step.end = reader_.finished_at();
      result.read_time += step.end - step.start;
      result.pages_read += step.pages;
      result.steps.push_back(step);
    } else {
      pending_bytes += op.bytes;
      const uint64_t full = pending_bytes / fc.page_bytes;
      pending_bytes %= fc.page_bytes;
      program(full, "append");
    }
  }
  if (pending_bytes > 0) program(1, "flush");

  result.total_time = sc_core::sc_time_stamp() - run_start;
  result.bytes_read = result.pages_read * fc.page_bytes;
  result.bytes_programmed = result.pages_programmed * fc.page_bytes;
  if (result.read_time > sc_core::SC_ZERO_TIME) {
    result.read_gbps = double(result.bytes_read) / result.read_time.to_seconds() / 1e9;
  }
  if (result.append_time > sc_core::SC_ZERO_TIME) {
    result.append_gbps = double(result.bytes_programmed) / result.append_time.to_seconds() / 1e9;
  }
  return result;
}

void NandStreamSystem::trace(vcd::Writer& writer) {
  flash_.trace(writer);
  reader_.trace(writer);
}

}  // namespace ispsim::nand
