#include "schema/overrides.h"

#include <vector>

#include "common/error.h"
#include "schema/field_text.h"

namespace ispsim::schema {

using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;
using google::protobuf::Message;

namespace {

std::vector<std::string> split_path(const std::string& path) {
  std::vector<std::string> parts;
  std::string::size_type start = 0;
  while (true) {
    const auto dot = path.find('.', start);
    parts.push_back(path.substr(start, dot - start));
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  return parts;
}

std::string field_names(const Descriptor& type) {
  std::string names;
  for (int i = 0; i < type.field_count(); ++i) {
    if (i) names += ", ";
    names += type.field(i)->name();
  }
  return names;
}

}  // namespace

const FieldDescriptor* find_parameter(const Descriptor& root, const std::string& path,
                                      std::string* problem) {
  const Descriptor* type = &root;
  std::string walked;
  const std::vector<std::string> parts = split_path(path);
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (parts[i].empty()) {
      *problem = "the path '" + printable(path) + "' has an empty name between dots";
      return nullptr;
    }
    const FieldDescriptor* field = type->FindFieldByName(parts[i]);
    const std::string here = walked.empty() ? parts[i] : walked + "." + parts[i];
    if (!field) {
      *problem = "unknown parameter '" + printable(here) + "' (" + type->name() + " has: " +
                 field_names(*type) + ")";
      return nullptr;
    }
    const bool is_group = field->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE;
    const bool last = i + 1 == parts.size();
    if (last && is_group) {
      *problem = "'" + here + "' is a group of parameters, not a single value; use " + here +
                 ".<parameter> (" + field_names(*field->message_type()) + ")";
      return nullptr;
    }
    if (!last && !is_group) {
      *problem = "'" + here + "' is a single parameter and has no '" + printable(parts[i + 1]) + "'";
      return nullptr;
    }
    if (last) return field;
    type = field->message_type();
    walked = here;
  }
  return nullptr;
}

std::string apply_override(Message& root, const std::string& assignment,
                           const std::string& where) {
  const auto fail = [&](const std::string& problem) {
    throw BadInput(where, "--set " + printable(assignment) + ": " + problem);
  };
  const auto equals = assignment.find('=');
  if (equals == std::string::npos) fail("expected path=value, e.g. nand.t_read_us=20");
  const std::string path = assignment.substr(0, equals);
  const std::string value = assignment.substr(equals + 1);
  if (path.empty()) fail("the parameter path before '=' is empty");

  std::string problem;
  const FieldDescriptor* field = find_parameter(*root.GetDescriptor(), path, &problem);
  if (!field) fail(problem);

  // Walk again, now creating the sub-messages on the way.
  Message* owner = &root;
  const std::vector<std::string> parts = split_path(path);
  for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
    const FieldDescriptor* group = owner->GetDescriptor()->FindFieldByName(parts[i]);
    owner = owner->GetReflection()->MutableMessage(owner, group);
  }
  if (field->is_repeated()) fail("'" + path + "' is a list; --set takes single values only");
  if (auto bad = set_field_from_text(*owner, *field, value)) fail(*bad);
  return path;
}

}  // namespace ispsim::schema
