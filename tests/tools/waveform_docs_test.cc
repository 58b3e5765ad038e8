// The README tables of waveform roles and value names are the code's tables:
// each table follows a "<!-- vcd roles -->" or "<!-- encoding NAME -->" line.
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "models/core/vcd.h"
#include "models/isp/attention_engine.h"
#include "models/isp/elastic_simd.h"
#include "models/nand/channel.h"
#include "models/nand/die.h"
#include "models/ssd/ssd.h"
#include "tests/support/files.h"

namespace ispsim {
namespace {

std::string trim(std::string s) {
  const char* blank = " \t`";
  s.erase(0, s.find_first_not_of(blank));
  s.erase(s.find_last_not_of(blank) + 1);
  return s;
}

// The first two cells of each row of the table after `marker` in `readme`
// (header and separator rows skipped); empty if there is no such table.
std::vector<std::pair<std::string, std::string>> table_after(const std::string& readme, const std::string& marker) {
  std::istringstream in(testing::read_text(std::string(ISPSIM_SOURCE_DIR) + "/" + readme));
  std::vector<std::pair<std::string, std::string>> rows;
  bool found = false;
  int row = 0;
  for (std::string line; std::getline(in, line);) {
    if (!found) {
      found = trim(line) == marker;
      continue;
    }
    line = trim(line);
    if (line.empty() || line[0] != '|') {
      if (row == 0) continue;  // blank lines between the marker and its table
      break;
    }
    if (row++ < 2) continue;
    std::vector<std::string> cells;
    std::istringstream cell_text(line.substr(1));
    for (std::string cell; std::getline(cell_text, cell, '|');) cells.push_back(trim(cell));
    rows.push_back({cells.size() > 0 ? cells[0] : "", cells.size() > 1 ? cells[1] : ""});
  }
  return rows;
}

std::vector<std::pair<std::string, std::string>> rows_of(const vcd::Encoding& encoding) {
  std::vector<std::pair<std::string, std::string>> rows;
  for (const auto& [value, name] : encoding.values) rows.push_back({std::to_string(value), name});
  return rows;
}

TEST(WaveformDocs, RolesTableInTheReadme) {
  std::vector<std::pair<std::string, std::string>> code;
  for (const vcd::RoleInfo& r : vcd::roles()) code.push_back({r.name, r.meaning});
  EXPECT_EQ(table_after("docs/user-guide.md", "<!-- vcd roles -->"), code);
}

TEST(WaveformDocs, DieStatesInTheNandReadme) {
  EXPECT_EQ(table_after("models/nand/README.md", "<!-- encoding die_state -->"), rows_of(nand::Die::state_encoding()));
}

TEST(WaveformDocs, ChannelOwnerInTheNandReadme) {
  // The README gives the rule; the code builds it for the channel's dies.
  EXPECT_EQ(table_after("models/nand/README.md", "<!-- encoding channel_owner -->"),
            (std::vector<std::pair<std::string, std::string>>{{"0", "free"}, {"1 + d", "die<d>"}}));
  EXPECT_EQ(rows_of(nand::Channel::owner_encoding(3)),
            (std::vector<std::pair<std::string, std::string>>{{"0", "free"}, {"1", "die0"}, {"2", "die1"}, {"3", "die2"}}));
}

TEST(WaveformDocs, GcStatesInTheSsdReadme) {
  EXPECT_EQ(table_after("models/ssd/README.md", "<!-- encoding gc_state -->"), rows_of(ssd::Ssd::gc_encoding()));
}

TEST(WaveformDocs, SimdModesInTheIspReadme) {
  // The default accelerator's modes; the statistics of the modes are named from the same table.
  const isp::ElasticSimd simd{isp::IspConfig::defaults()};
  const vcd::Encoding encoding = isp::AttentionEngine::simd_mode_encoding(simd);
  EXPECT_EQ(table_after("models/isp/README.md", "<!-- encoding simd_mode -->"), rows_of(encoding));
  EXPECT_EQ(encoding.name_of(isp::AttentionEngine::simd_mode_value(isp::ElasticSimd::kBroadsideMode)), "broadside");
  EXPECT_EQ(encoding.name_of(isp::AttentionEngine::simd_mode_value(isp::ElasticSimd::kCascadedMode)), "cascaded");
}

}  // namespace
}  // namespace ispsim
