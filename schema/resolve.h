// Resolving a parameter message: its schema defaults applied (defaults.h), then
// its ranges and cross-parameter constraints checked (validation.h).
//
// This happens once. The platform loader resolves a whole platform; models read
// resolved messages only, and their from_params() functions convert units and
// types without applying a default or checking a range again, so a default or
// a range lives in the schema alone. Code that builds a message by hand (tests,
// benchmarks, `ispsim describe`) resolves it with resolved().
#pragma once

#include <google/protobuf/message.h>

#include <string>

#include "schema/defaults.h"
#include "schema/validation.h"

namespace ispsim::schema {

// `params` with its defaults applied; BadInput(where, ...) for the first problem.
template <class Params>
Params resolved(Params params, const std::string& where) {
  apply_defaults(params);
  validate_parameters(params, where);
  return params;
}

// A programming error (std::logic_error naming `user` and the parameter) when
// `message` was not resolved: some parameter is unset. What a from_params()
// checks instead of applying the defaults again, so that a message built by
// hand and not resolved fails loudly rather than reading zeros.
void require_resolved(const google::protobuf::Message& message, const std::string& user);

}  // namespace ispsim::schema
