// Reading back files a test wrote, and where a test writes them.
#pragma once

#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

namespace ispsim::testing {

// This process's scratch folder, removed when it exits. Named by pid and start
// time: a pid is reused, and a folder a killed test left behind (a store made by
// an older build, say) must never be taken for this run's.
inline std::filesystem::path scratch_dir() {
  struct Scratch {
    std::filesystem::path dir;
    Scratch() {
      const auto now = std::chrono::steady_clock::now().time_since_epoch();
      dir = std::filesystem::temp_directory_path() /
            ("ispsim_test_" + std::to_string(::getpid()) + "_" +
             std::to_string(std::chrono::duration_cast<std::chrono::nanoseconds>(now).count()));
    }
    ~Scratch() {
      std::error_code ignored;
      std::filesystem::remove_all(dir, ignored);
    }
  };
  static const Scratch scratch;
  std::filesystem::create_directories(scratch.dir);
  return scratch.dir;
}

// The whole file as bytes ("" when it cannot be opened).
inline std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// name -> value of a statistics CSV (`run --stats F.csv`: name,value,unit,description).
inline std::map<std::string, double> read_stats_csv(const std::filesystem::path& path) {
  std::map<std::string, double> stats;
  std::istringstream in(read_text(path));
  std::string line;
  std::getline(in, line);  // header
  while (std::getline(in, line)) {
    const size_t a = line.find(','), b = line.find(',', a + 1);
    stats[line.substr(0, a)] = std::stod(line.substr(a + 1, b - a - 1));
  }
  return stats;
}

inline bool file_exists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

}  // namespace ispsim::testing
