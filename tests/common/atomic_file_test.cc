#include "common/atomic_file.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/error.h"

namespace fs = std::filesystem;

namespace {

fs::path scratch(const std::string& name) {
  fs::path dir = fs::temp_directory_path() / ("ispsim_atomic_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  return dir / name;
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

TEST(AtomicFile, CommitPublishesContent) {
  const fs::path p = scratch("out.txt");
  {
    ispsim::AtomicFile f(p.string());
    f.stream() << "hello";
    EXPECT_FALSE(fs::exists(p));
    f.commit();
  }
  EXPECT_EQ(slurp(p), "hello");
  EXPECT_EQ(std::distance(fs::directory_iterator(p.parent_path()), fs::directory_iterator()), 1);
}

TEST(AtomicFile, AbandonedWriteLeavesNothing) {
  const fs::path p = scratch("abandoned.txt");
  { ispsim::AtomicFile f(p.string()); f.stream() << "partial"; }
  EXPECT_FALSE(fs::exists(p));
  EXPECT_TRUE(fs::is_empty(p.parent_path()));
}

TEST(AtomicFile, UnwritableDirectoryIsBadInput) {
  try {
    ispsim::AtomicFile f("/nonexistent-dir/out.json");
    FAIL() << "expected BadInput";
  } catch (const ispsim::BadInput& e) {

    EXPECT_NE(std::string(e.what()).find("/nonexistent-dir/out.json"), std::string::npos);
  }
}

TEST(AtomicFile, ExistingDirectoryIsBadInputAndLeavesNoTemporary) {
  const fs::path dir = scratch("a_directory.json");
  fs::create_directories(dir);
  try {
    ispsim::AtomicFile f(dir.string());
    FAIL() << "expected BadInput";
  } catch (const ispsim::BadInput& e) {
    EXPECT_EQ(std::string(e.what()), dir.string() + ": is a directory, not an output file");
  }
  EXPECT_TRUE(fs::is_empty(dir));
  for (const auto& entry : fs::directory_iterator(dir.parent_path()))
    EXPECT_EQ(entry.path().string().find(".tmp."), std::string::npos) << entry.path();
}
