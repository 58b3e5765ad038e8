// Named implementations of a pluggable role (the ISP accelerator, the host
// compute device, ...), chosen by name from the platform configuration.
//
// Registration is explicit: every area offers a `register_all()` that adds its
// implementations to the factories of the roles they fill, and the code that
// assembles a platform calls it before creating modules. Self-registration
// through static initialiser objects is deliberately not used: the linker takes
// an object file out of a static library only when something references it, so
// an implementation that nothing names would silently disappear from the
// binary unless every executable linked with --whole-archive. An explicit call
// is a real reference and cannot be dropped.
//
// See docs/adding-a-module.md for a worked example (the ISP accelerator role,
// models/isp/page_compute.h) and models/core/examples for the smallest role.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "common/error.h"

namespace ispsim::core {

// A factory of `Role` implementations constructed from `CtorArgs...`
// (typically the SystemC instance name and the parameter message).
template <class Role, class... CtorArgs>
class Factory {
 public:
  using Creator = std::function<std::unique_ptr<Role>(CtorArgs...)>;

  // `role` names the role in error messages, e.g. "ISP accelerator".
  explicit Factory(std::string role) : role_(std::move(role)) {}

  // Registers `name`. Throws std::logic_error (a programming error) on an
  // empty name or description, a missing creator, or a name registered twice.
  void add(const std::string& name, const std::string& description, Creator creator) {
    if (name.empty()) throw std::logic_error(role_ + ": implementation with an empty name");
    if (description.empty()) throw std::logic_error(role_ + " " + name + ": empty description");
    if (!creator) throw std::logic_error(role_ + " " + name + ": no creator");
    if (!implementations_.emplace(name, Implementation{description, std::move(creator)}).second)
      throw std::logic_error(role_ + " " + name + ": registered twice");
  }

  // Creates the implementation called `name`. Throws BadInput naming the role,
  // the unknown name and the known names when there is no such implementation.
  std::unique_ptr<Role> create(const std::string& name, CtorArgs... args) const {
    const auto it = implementations_.find(name);
    if (it == implementations_.end()) {
      std::string known;
      for (const auto& kv : implementations_) known += (known.empty() ? "" : ", ") + kv.first;
      throw BadInput(role_, "unknown implementation '" + name + "' (known: " +
                                (known.empty() ? "none registered" : known) + ")");
    }
    return it->second.creator(std::forward<CtorArgs>(args)...);
  }

  bool contains(const std::string& name) const { return implementations_.count(name) != 0; }

  // Registered names in alphabetical order.
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const auto& kv : implementations_) out.push_back(kv.first);
    return out;
  }

  // The description given at add(); throws std::out_of_range for an unknown name.
  const std::string& description(const std::string& name) const { return implementations_.at(name).description; }

  const std::string& role() const { return role_; }

 private:
  struct Implementation {
    std::string description;
    Creator creator;
  };
  std::string role_;
  std::map<std::string, Implementation> implementations_;
};

}  // namespace ispsim::core
