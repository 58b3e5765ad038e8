// The system registry: every platform in the tree is run by exactly one system
// of the registry (the microbenchmark by none: `ispsim run` reports it as text),
// and a program no system runs is bad input naming the platform file.
#include <gtest/gtest.h>

#include <string>

#include "common/error.h"
#include "platforms/systems/system_registry.h"

namespace ispsim::systems {
namespace {

TEST(SystemRegistry, EveryPlatformHasExactlyOneSystem) {
  for (const auto& entry : schema::list_platform_files()) {
    SCOPED_TRACE(entry.name);
    const schema::LoadedPlatform loaded = schema::load_platform_file(entry.file);
    int systems = 0;
    for (const SystemKind& kind : system_kinds()) systems += kind.runs(loaded.platform) ? 1 : 0;
    EXPECT_EQ(systems, loaded.platform.program() == schema::Platform::MICROBENCHMARK ? 0 : 1);
  }
  EXPECT_EQ(std::string(system_for(schema::load_platform("memllm")).name), "llm_inference");
  EXPECT_EQ(std::string(system_for(schema::load_platform("b1")).name), "cim_decode");
  EXPECT_TRUE(system_for(schema::load_platform("s2")).decode_only);
}

TEST(SystemRegistry, AProgramNoSystemRunsIsBadInputNamingTheFile) {
  const schema::LoadedPlatform nand = schema::load_platform("nand_stream");
  try {
    system_for(nand);
    ADD_FAILURE() << "a system claimed the microbenchmark";
  } catch (const BadInput& e) {
    EXPECT_NE(std::string(e.what()).find(nand.file), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("MICROBENCHMARK"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace ispsim::systems
