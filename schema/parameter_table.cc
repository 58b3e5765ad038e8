#include "schema/parameter_table.h"

#include <algorithm>

#include "schema/field_text.h"

namespace ispsim::schema {

using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;
using google::protobuf::Message;

std::vector<ParameterRow> parameter_rows(const Descriptor& type, const Message* values,
                                         const std::string& prefix) {
  std::vector<ParameterRow> rows;
  for (int i = 0; i < type.field_count(); ++i) {
    const FieldDescriptor& field = *type.field(i);
    const std::string path = prefix + field.name();
    if (field.cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE && !field.is_repeated()) {
      const Message* sub =
          values ? &values->GetReflection()->GetMessage(*values, &field) : nullptr;
      auto nested = parameter_rows(*field.message_type(), sub, path + ".");
      rows.insert(rows.end(), nested.begin(), nested.end());
      continue;
    }
    ParameterRow row;
    row.path = path;
    row.accepts = accepted_values(field);
    row.doc = parameter_doc(field);
    if (values && (field.is_repeated() || values->GetReflection()->HasField(*values, &field))) {
      row.value = field_value_text(*values, field);
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

std::vector<std::string> set_parameter_paths(const Message& message, const std::string& prefix) {
  std::vector<std::string> paths;
  const auto* reflection = message.GetReflection();
  std::vector<const FieldDescriptor*> fields;
  reflection->ListFields(message, &fields);  // only fields that are set
  for (const FieldDescriptor* field : fields) {
    const std::string path = prefix + field->name();
    if (field->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE && !field->is_repeated()) {
      auto nested = set_parameter_paths(reflection->GetMessage(message, field), path + ".");
      paths.insert(paths.end(), nested.begin(), nested.end());
    } else {
      paths.push_back(path);
    }
  }
  return paths;
}

std::string aligned_table(const std::vector<std::vector<std::string>>& rows) {
  std::vector<std::size_t> widths;
  for (const auto& row : rows) {
    if (widths.size() < row.size()) widths.resize(row.size(), 0);
    for (std::size_t c = 0; c < row.size(); ++c) widths[c] = std::max(widths[c], row[c].size());
  }
  std::string text;
  for (const auto& row : rows) {
    std::string line;
    for (std::size_t c = 0; c < row.size(); ++c) {
      line += row[c];
      if (c + 1 < row.size()) line += std::string(widths[c] - row[c].size() + 2, ' ');
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    text += line + "\n";
  }
  return text;
}

}  // namespace ispsim::schema
