#include "models/nand/nand_stream_system.h"

#include <algorithm>

#include "common/error.h"

namespace ispsim::nand {

namespace {

const char* const kWhere = "kv ops";

// Pages of one layer that hold tokens [begin, end) when a token takes `bytes_per_token`.
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

namespace {

// The KV region the loads of `ops` read: one stride of pages per layer, each
// op's pages within it. Throws BadInput for an op that makes no sense.
struct KvRegion {
  std::vector<TileRange> tiles;  // by op (loads only)
  uint64_t stride = 0;
  uint64_t pages = 0;
};

KvRegion region_of(const std::vector<KvOp>& ops, uint64_t page_bytes) {
  KvRegion region;
  region.tiles.resize(ops.size());
  uint64_t layers = 0;
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
    region.tiles[i] = tiles_of(op.token_begin, op.token_end, op.bytes / tokens, page_bytes);
    region.stride = std::max(region.stride, region.tiles[i].last);
    layers = std::max<uint64_t>(layers, uint64_t(op.layer) + 1);
  }
  region.pages = region.stride * layers;
  return region;
}

}  // namespace

KvRunResult NandStreamSystem::run(const std::vector<KvOp>& ops) {
  const FlashConfig& fc = flash_.config();
  // Validate and size the KV region first, so bad input fails before simulating.
  const KvRegion region = region_of(ops, fc.page_bytes);
  uint64_t append_bytes = 0;
  for (const KvOp& op : ops) {
    if (op.kind == KvOp::kAppend) append_bytes += op.bytes;
  }
  const uint64_t append_pages = (append_bytes + fc.page_bytes - 1) / fc.page_bytes;
  if (region.pages + append_pointer_ + append_pages > layout_.capacity_pages()) {
    throw BadInput(kWhere, "KV region of " + std::to_string(region.pages) + " pages plus " +
                               std::to_string(append_pointer_ + append_pages) +
                               " appended pages exceed the flash capacity of " +
                               std::to_string(layout_.capacity_pages()) + " pages");
  }

  KvRunResult result;
  const sc_core::sc_time run_start = sc_core::sc_time_stamp();
  uint64_t pending_bytes = 0;  // appended bytes not yet filling a page
  for (size_t i = 0; i < ops.size(); ++i) {
    const KvOp& op = ops[i];
    result.bytes_requested += op.bytes;
    if (op.kind == KvOp::kLoad) {
      load(uint64_t(op.layer) * region.stride, region.tiles[i], result);
    } else {
      pending_bytes += op.bytes;
      const uint64_t full = pending_bytes / fc.page_bytes;
      pending_bytes %= fc.page_bytes;
      program(region.pages, full, "append", result);
    }
  }
  if (pending_bytes > 0) program(region.pages, 1, "flush", result);

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

void NandStreamSystem::load(uint64_t layer_first_page, const TileRange& tiles, KvRunResult& result) {
  std::vector<PageAddress> pages;
  pages.reserve(tiles.last - tiles.first);
  for (uint64_t t = tiles.first; t < tiles.last; ++t) pages.push_back(layout_.address(layer_first_page + t, kWhere));
  KvStepResult step{"load", sc_core::sc_time_stamp(), sc_core::sc_time_stamp(), pages.size()};
  reader_.start(std::move(pages), kWhere);
  sc_core::sc_start();
  step.end = reader_.finished_at();
  result.read_time += step.end - step.start;
  result.pages_read += step.pages;
  result.steps.push_back(step);
}

void NandStreamSystem::program(uint64_t region_pages, uint64_t count, const char* what, KvRunResult& result) {
  std::vector<PageAddress> pages(count);
  for (uint64_t k = 0; k < count; ++k) pages[k] = layout_.address(region_pages + append_pointer_ + k, kWhere);
  append_pointer_ += count;
  KvStepResult step{what, sc_core::sc_time_stamp(), sc_core::sc_time_stamp(), count};
  appender_.start(std::move(pages), kWhere);
  sc_core::sc_start();
  step.end = appender_.finished_at();
  result.append_time += step.end - step.start;
  result.pages_programmed += count;
  result.steps.push_back(step);
}

void NandStreamSystem::trace(vcd::Writer& writer) {
  flash_.trace(writer);
  reader_.trace(writer);
}

}  // namespace ispsim::nand
