#include "models/core/registry.h"

#include <gtest/gtest.h>

#include <memory>
#include <stdexcept>
#include <string>

#include "common/error.h"

namespace ispsim::core {
namespace {

// A toy role: something that scales a number.
struct Scaler {
  virtual ~Scaler() = default;
  virtual double apply(double x) const = 0;
};

struct Times : Scaler {
  explicit Times(double k) : k(k) {}
  double apply(double x) const override { return k * x; }
  double k;
};

struct Plus : Scaler {
  Plus(double k, const std::string& tag) : k(k), tag(tag) {}
  double apply(double x) const override { return x + k; }
  double k;
  std::string tag;
};

using ScalerFactory = Factory<Scaler, double, const std::string&>;

ScalerFactory make_factory() {
  ScalerFactory f("scaler");
  f.add("times", "multiplies by the parameter",
        [](double k, const std::string&) { return std::make_unique<Times>(k); });
  f.add("plus", "adds the parameter",
        [](double k, const std::string& tag) { return std::make_unique<Plus>(k, tag); });
  return f;
}

TEST(Registry, CreatesTheNamedImplementationWithItsArguments) {
  const ScalerFactory f = make_factory();
  const auto times = f.create("times", 3.0, "unused");
  EXPECT_EQ(times->apply(2.0), 6.0);
  const auto plus = f.create("plus", 3.0, "tagged");
  EXPECT_EQ(plus->apply(2.0), 5.0);
  EXPECT_EQ(dynamic_cast<const Plus&>(*plus).tag, "tagged");
}

TEST(Registry, NamesAreSortedAndDescribed) {
  const ScalerFactory f = make_factory();
  EXPECT_EQ(f.names(), (std::vector<std::string>{"plus", "times"}));
  EXPECT_EQ(f.description("plus"), "adds the parameter");
  EXPECT_TRUE(f.contains("times"));
  EXPECT_FALSE(f.contains("minus"));
  EXPECT_EQ(f.role(), "scaler");
}

TEST(Registry, UnknownNameIsBadInputListingTheKnownNames) {
  const ScalerFactory f = make_factory();
  try {
    f.create("minus", 1.0, "");
    FAIL() << "expected BadInput";
  } catch (const BadInput& e) {
    EXPECT_EQ(std::string(e.what()), "scaler: unknown implementation 'minus' (known: plus, times)");
  }
  const ScalerFactory empty("scaler");
  try {
    empty.create("times", 1.0, "");
    FAIL() << "expected BadInput";
  } catch (const BadInput& e) {
    EXPECT_EQ(std::string(e.what()), "scaler: unknown implementation 'times' (known: none registered)");
  }
}

TEST(Registry, RegistrationMistakesAreLogicErrors) {
  ScalerFactory f = make_factory();
  auto creator = [](double k, const std::string&) { return std::make_unique<Times>(k); };
  EXPECT_THROW(f.add("times", "again", creator), std::logic_error);
  EXPECT_THROW(f.add("", "no name", creator), std::logic_error);
  EXPECT_THROW(f.add("other", "", creator), std::logic_error);
  EXPECT_THROW(f.add("other", "no creator", nullptr), std::logic_error);
  EXPECT_EQ(f.names().size(), 2u);
}

}  // namespace
}  // namespace ispsim::core
