// common/data_dir: an install tree is recognised beside its binary and may be
// moved; a binary elsewhere (this test's, in the build tree) uses the source tree.
#include "common/data_dir.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "tests/support/files.h"

namespace ispsim {
namespace {

namespace fs = std::filesystem;

TEST(DataDir, AnInstallTreeIsFoundRelativeToItsBinaryWhereverItIs) {
  const fs::path prefix = testing::scratch_dir() / "prefix";
  fs::create_directories(prefix / "bin");
  fs::create_directories(prefix / "share/ispsim/platforms");
  std::ofstream(prefix / "bin/ispsim") << "";
  EXPECT_EQ(installed_data_dir((prefix / "bin/ispsim").string()), (prefix / "share/ispsim").string());

  const fs::path moved = testing::scratch_dir() / "moved";
  fs::rename(prefix, moved);
  EXPECT_EQ(installed_data_dir((moved / "bin/ispsim").string()), (moved / "share/ispsim").string());
}

TEST(DataDir, NoPlatformsBesideTheBinaryMeansNotInstalled) {
  const fs::path prefix = testing::scratch_dir() / "bare";
  fs::create_directories(prefix / "bin");
  fs::create_directories(prefix / "share/ispsim");
  EXPECT_EQ(installed_data_dir((prefix / "bin/ispsim").string()), "");
}

TEST(DataDir, ABinaryOfTheBuildTreeUsesTheSourceTreeNotTheWorkingDirectory) {
  const fs::path elsewhere = testing::scratch_dir();
  fs::current_path(elsewhere);
  EXPECT_EQ(data_dir(), ISPSIM_SOURCE_DIR);
  EXPECT_EQ(data_path("platforms/memllm.textproto"), std::string(ISPSIM_SOURCE_DIR) + "/platforms/memllm.textproto");
  EXPECT_TRUE(fs::is_regular_file(data_path("assets/brown-llama/config.json")));
}

}  // namespace
}  // namespace ispsim
