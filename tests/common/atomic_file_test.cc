#include "common/atomic_file.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <functional>
#include <fstream>
#include <sstream>

#include "common/crc32c.h"
#include "common/error.h"
#include "common/input_file.h"
#include "common/output_files.h"
#include "common/termination.h"
#include "tests/support/files.h"

namespace fs = std::filesystem;

namespace {

// One directory per test, so that the suite also passes run as one process.
fs::path scratch(const std::string& name) {
  const fs::path dir =
      ispsim::testing::scratch_dir() / ::testing::UnitTest::GetInstance()->current_test_info()->name();
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

// A legal name of up to NAME_MAX bytes is written: the temporary name beside it
// is cut to fit instead of failing with ENAMETOOLONG.
TEST(AtomicFile, ANameOfNameMaxBytesIsWritten) {
  for (const size_t length : {size_t{240}, size_t{250}, size_t{255}}) {
    SCOPED_TRACE(length);
    const fs::path p = scratch(std::string(length - 4, 'n') + ".txt");
    {
      ispsim::AtomicFile f(p.string());
      f.stream() << "long";
      f.commit();
    }
    EXPECT_EQ(slurp(p), "long");
    fs::remove(p);
    EXPECT_TRUE(fs::is_empty(p.parent_path()));
  }
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

// ---- hardening: what an output must never replace ----

namespace {

void write_file(const fs::path& p, const std::string& text) {
  std::ofstream out(p, std::ios::binary);
  out << text;
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const ispsim::BadInput& e) {
    return e.what();
  }
  return "(no error)";
}

bool no_temporaries(const fs::path& dir) {
  for (const auto& entry : fs::directory_iterator(dir))
    if (entry.path().string().find(".tmp.") != std::string::npos) return false;
  return true;
}

}  // namespace

TEST(AtomicFile, FailedRunKeepsTheExistingFileAndItsMode) {
  const fs::path p = scratch("kept.json");
  write_file(p, "old contents");
  fs::permissions(p, fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
  { ispsim::AtomicFile f(p.string()); f.stream() << "new but abandoned"; }
  EXPECT_EQ(slurp(p), "old contents");
  {
    ispsim::AtomicFile f(p.string());
    f.stream() << "new";
    f.commit();
  }
  EXPECT_EQ(slurp(p), "new");
  EXPECT_EQ(fs::status(p).permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
  EXPECT_TRUE(no_temporaries(p.parent_path()));
}

TEST(AtomicFile, CharacterDeviceIsWrittenThroughNotReplaced) {
  ispsim::AtomicFile f("/dev/null");
  EXPECT_TRUE(f.writes_through());
  f.stream() << "discarded";
  f.commit();
  EXPECT_TRUE(fs::is_character_file("/dev/null"));
}

TEST(AtomicFile, WriteErrorIsBadInputNamingThePath) {
  const std::string e = error_of([] {
    ispsim::AtomicFile f("/dev/full");
    f.stream() << std::string(1 << 17, 'x');
    f.commit();
  });
  EXPECT_EQ(e, "/dev/full: write failed: No space left on device");
  EXPECT_TRUE(fs::is_character_file("/dev/full"));
}

TEST(AtomicFile, FifoWithoutReaderIsRefusedAtOnce) {
  const fs::path p = scratch("fifo");
  ASSERT_EQ(::mkfifo(p.c_str(), 0600), 0);
  EXPECT_EQ(error_of([&] { ispsim::AtomicFile f(p.string()); }), p.string() + ": is a FIFO with no reader");
  EXPECT_TRUE(fs::is_fifo(p));
}

TEST(AtomicFile, FifoWithReaderIsWrittenThrough) {
  const fs::path p = scratch("fifo_read");
  ASSERT_EQ(::mkfifo(p.c_str(), 0600), 0);
  const int reader = ::open(p.c_str(), O_RDONLY | O_NONBLOCK);
  ASSERT_GE(reader, 0);
  {
    ispsim::AtomicFile f(p.string());
    EXPECT_TRUE(f.writes_through());
    EXPECT_FALSE(f.seekable());
    f.stream() << "through";
    f.commit();
  }
  char buffer[16] = {};
  EXPECT_EQ(::read(reader, buffer, sizeof buffer), 7);
  EXPECT_EQ(std::string(buffer), "through");
  ::close(reader);
  EXPECT_TRUE(fs::is_fifo(p));
}

TEST(AtomicFile, SymlinkIsFollowedAndStaysALink) {
  const fs::path target = scratch("target.csv");
  const fs::path link = scratch("link.csv");
  write_file(target, "old");
  fs::create_symlink(target, link);
  {
    ispsim::AtomicFile f(link.string());
    f.stream() << "new";
    f.commit();
  }
  EXPECT_TRUE(fs::is_symlink(link));
  EXPECT_EQ(slurp(target), "new");
  EXPECT_TRUE(no_temporaries(target.parent_path()));
}

TEST(AtomicFile, DanglingSymlinkIsRefused) {
  const fs::path link = scratch("dangling.csv");
  fs::create_symlink(scratch("missing-dir") / "x.csv", link);
  EXPECT_NE(error_of([&] { ispsim::AtomicFile f(link.string()); }).find(link.string() + ": is a symlink to a missing"),
            std::string::npos);
  EXPECT_TRUE(fs::is_symlink(link));
}

TEST(AtomicFile, SignalRemovesTheTemporaryAndKeepsTheOldFile) {
  const fs::path p = scratch("interrupted.json");
  write_file(p, "finished earlier");
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ispsim::termination::install_handlers();
    ispsim::termination::become_child(::getppid());  // quiet: no line on stderr
    ispsim::AtomicFile f(p.string());
    f.stream() << "partial";
    f.stream().flush();
    ::raise(SIGTERM);
    ::_exit(0);  // not reached
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 143);
  EXPECT_EQ(slurp(p), "finished earlier");
  EXPECT_TRUE(no_temporaries(p.parent_path()));
}

TEST(OutputFiles, CommitPublishesEveryFileAndAnEmptyPathNamesNone) {
  const fs::path a = scratch("a.json"), b = scratch("b.json");
  {
    ispsim::OutputFiles outputs;
    EXPECT_EQ(outputs.open(""), nullptr);
    outputs.open(a.string())->stream() << "first";
    outputs.open(b.string())->stream() << "second";
    EXPECT_FALSE(fs::exists(a));
    EXPECT_FALSE(fs::exists(b));
    outputs.commit();
  }
  EXPECT_EQ(slurp(a), "first");
  EXPECT_EQ(slurp(b), "second");
  EXPECT_EQ(std::distance(fs::directory_iterator(a.parent_path()), fs::directory_iterator()), 2);
}

TEST(OutputFiles, ABadPathFailsAtOpenAndAFailedRunCommitsNone) {
  const fs::path kept = scratch("kept.json"), fresh = scratch("fresh.json");
  { std::ofstream(kept) << "old"; }
  try {
    ispsim::OutputFiles outputs;
    outputs.open(kept.string())->stream() << "new";
    outputs.open(fresh.string())->stream() << "new";
    outputs.open("/nonexistent-dir/out.json");
    FAIL() << "expected BadInput";
  } catch (const ispsim::BadInput& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent-dir/out.json"), std::string::npos);
  }
  EXPECT_EQ(slurp(kept), "old");
  EXPECT_FALSE(fs::exists(fresh));
  EXPECT_EQ(std::distance(fs::directory_iterator(kept.parent_path()), fs::directory_iterator()), 1);
}

TEST(Crc32c, CheckValueAndIncrementalUse) {
  EXPECT_EQ(ispsim::crc32c("123456789", 9), 0xE3069283u);
  EXPECT_EQ(ispsim::crc32c("6789", 4, ispsim::crc32c("12345", 5)), 0xE3069283u);
  EXPECT_EQ(ispsim::crc32c("", 0), 0u);
  // Longer than one 8-byte step, odd tail: the SSE4.2 and table paths agree.
  const std::string text(1000, 'a');
  uint32_t by_byte = 0;
  for (char c : text) by_byte = ispsim::crc32c(&c, 1, by_byte);
  EXPECT_EQ(ispsim::crc32c(text.data(), text.size()), by_byte);
}

TEST(InputFile, OnlyRegularFilesUpToTheCap) {
  const fs::path fifo = scratch("in_fifo");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  // No writer: must not hang in open().
  EXPECT_EQ(error_of([&] { ispsim::read_input_file(fifo.string()); }),
            fifo.string() + ": is a FIFO, not a regular input file");
  EXPECT_EQ(error_of([] { ispsim::read_input_file("/dev/zero"); }),
            "/dev/zero: is a character device, not a regular input file");
  EXPECT_EQ(error_of([&] { ispsim::read_input_file(fifo.parent_path().string()); }),
            fifo.parent_path().string() + ": is a directory, not a regular input file");
  const fs::path big = scratch("big.txt");
  write_file(big, std::string(100, 'x'));
  EXPECT_EQ(error_of([&] { ispsim::read_input_file(big.string(), 99); }),
            big.string() + ": larger than the limit of 99 bytes for this input");
  EXPECT_EQ(ispsim::read_input_file(big.string(), 100).size(), 100u);
  EXPECT_EQ(error_of([&] { ispsim::read_input_file(scratch("nope").string()); }), scratch("nope").string() + ": no such file");
}

TEST(InputFile, SameFileThroughLinksAndRelativePaths) {
  const fs::path a = scratch("same_a");
  write_file(a, "x");
  fs::create_symlink(a, scratch("same_link"));
  EXPECT_TRUE(ispsim::same_file(a.string(), scratch("same_link").string()));
  EXPECT_TRUE(ispsim::same_file(a.string(), (a.parent_path() / "." / "same_a").string()));
  EXPECT_FALSE(ispsim::same_file(a.string(), scratch("other").string()));
  // Neither exists yet: the same directory entry.
  EXPECT_TRUE(ispsim::same_file(scratch("new1").string(), (scratch("new1").parent_path() / "./new1").string()));
}
