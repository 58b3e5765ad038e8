// RecentOutcomes: equal keys find their outcome; a bounded store whose entry
// least recently found or kept goes first.
#include "common/recent_outcomes.h"

#include <gtest/gtest.h>

#include <string>

namespace ispsim {
namespace {

TEST(RecentOutcomes, FindsTheOutcomeOfAnEqualKey) {
  RecentOutcomes<std::string, int, 2> kept;
  EXPECT_EQ(kept.find("a"), nullptr);
  kept.insert("a", 1);
  ASSERT_NE(kept.find("a"), nullptr);
  EXPECT_EQ(*kept.find("a"), 1);
  EXPECT_EQ(kept.find("b"), nullptr);
}

// Three keys through two places: the one found since its keeping stays, the
// other goes; without the find, the first kept goes.
TEST(RecentOutcomes, TheEntryLeastRecentlyUsedGoesFirst) {
  RecentOutcomes<std::string, int, 2> found, untouched;
  for (auto* kept : {&found, &untouched}) {
    kept->insert("a", 1);
    kept->insert("b", 2);
  }
  ASSERT_NE(found.find("a"), nullptr);
  found.insert("c", 3);
  untouched.insert("c", 3);
  EXPECT_NE(found.find("a"), nullptr);
  EXPECT_EQ(found.find("b"), nullptr);
  EXPECT_EQ(untouched.find("a"), nullptr);
  EXPECT_NE(untouched.find("b"), nullptr);
  EXPECT_EQ(*found.find("c"), 3);
}

// `usable` passes over an entry of an equal key it refuses.
TEST(RecentOutcomes, FindsTheFirstUsableOutcome) {
  RecentOutcomes<std::string, int, 4> kept;
  kept.insert("a", 1);
  kept.insert("a", 2);
  const int* usable = kept.find("a", [](int outcome) { return outcome == 2; });
  ASSERT_NE(usable, nullptr);
  EXPECT_EQ(*usable, 2);
  EXPECT_EQ(kept.find("a", [](int outcome) { return outcome == 3; }), nullptr);
}

}  // namespace
}  // namespace ispsim
