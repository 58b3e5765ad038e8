// docs/adding-a-module.md against the code: every code block announced by
// "<!-- snippet: <path> -->" appears verbatim in that file, the files its
// worked example names exist, and the accelerator it adds is registered.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "models/isp/page_compute.h"
#include "models/isp/register_all.h"
#include "tests/support/files.h"

namespace ispsim::isp {
namespace {

const std::string kDoc = std::string(ISPSIM_SOURCE_DIR) + "/docs/adding-a-module.md";

TEST(AddingAModule, DocumentationSnippetsMatchTheCode) {
  std::ifstream doc(kDoc);
  ASSERT_TRUE(doc) << kDoc;
  const std::string marker = "<!-- snippet: ";
  int snippets = 0;
  for (std::string line; std::getline(doc, line);) {
    if (line.rfind(marker, 0) != 0) continue;
    const std::string path = line.substr(marker.size(), line.find(" -->") - marker.size());
    ASSERT_TRUE(std::getline(doc, line) && line.rfind("```", 0) == 0) << "no code block after " << path;
    std::string block;
    while (std::getline(doc, line) && line.rfind("```", 0) != 0) block += line + "\n";
    const std::string source = ispsim::testing::read_text(std::string(ISPSIM_SOURCE_DIR) + "/" + path);
    ASSERT_FALSE(source.empty()) << path;
    EXPECT_NE(source.find(block), std::string::npos) << "snippet not found verbatim in " << path << ":\n" << block;
    ++snippets;
  }
  EXPECT_GE(snippets, 8);
}

TEST(AddingAModule, TheWorkedExampleExistsAndIsRegistered) {
  const std::string text = ispsim::testing::read_text(kDoc);
  // The files of the example's commit (the "git show --stat" block).
  for (const char* path : {"models/isp/systolic_pair.h", "models/isp/systolic_pair.cc",
                           "schema/isp_systolic_pair.proto", "tests/models/isp/systolic_pair_test.cc",
                           "models/isp/register_all.cc", "schema/isp.proto"}) {
    EXPECT_NE(text.find(std::string(" ") + path + " "), std::string::npos) << path;
    EXPECT_TRUE(std::filesystem::exists(std::string(ISPSIM_SOURCE_DIR) + "/" + path)) << path;
  }
  register_all();
  EXPECT_TRUE(accelerators().contains("systolic_pair"));
  EXPECT_NE(text.find("--set modules.isp_accelerator=systolic_pair"), std::string::npos);
}

}  // namespace
}  // namespace ispsim::isp
