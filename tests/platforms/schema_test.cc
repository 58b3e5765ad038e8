// The documentation rule, made enforceable: every parameter reachable from
// Platform carries unit, meaning, default (or is required) and source, and the
// defaults themselves parse and lie inside their ranges.
#include <gtest/gtest.h>

#include <set>

#include "common/error.h"

#include "schema/defaults.h"
#include "schema/field_text.h"
#include "schema/parameter_doc.h"
#include "schema/parameter_table.h"
#include "schema/platform.pb.h"
#include "schema/resolve.h"
#include "schema/validation.h"

namespace {

using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;
using ispsim::schema::ParameterDoc;
using ispsim::schema::Platform;

// Every message type reachable from `root`, each once.
void collect_types(const Descriptor* root, std::set<const Descriptor*>& seen) {
  if (!seen.insert(root).second) return;
  for (int i = 0; i < root->field_count(); ++i) {
    if (root->field(i)->message_type()) collect_types(root->field(i)->message_type(), seen);
  }
}

std::set<const Descriptor*> all_types() {
  std::set<const Descriptor*> types;
  collect_types(Platform::descriptor(), types);
  return types;
}

Platform platform_with_defaults() {
  Platform p;
  p.set_name("defaults");
  p.set_program(Platform::MICROBENCHMARK);
  ispsim::schema::apply_defaults(p);
  return p;
}

TEST(Schema, ReachesEveryComponent) {
  std::set<std::string> names;
  for (const Descriptor* type : all_types()) names.insert(type->full_name());
  // An ISP accelerator's own parameter message is a group inside IspParams
  // (docs/adding-a-module.md): reached, and not listed here one by one.
  const Descriptor* isp = ispsim::schema::IspParams::descriptor();
  for (int i = 0; i < isp->field_count(); ++i) {
    if (isp->field(i)->cpp_type() != FieldDescriptor::CPPTYPE_MESSAGE) continue;
    EXPECT_EQ(names.erase(isp->field(i)->message_type()->full_name()), 1u) << isp->field(i)->name();
  }
  EXPECT_EQ(names, (std::set<std::string>{
                       "ispsim.schema.Platform", "ispsim.schema.ModuleSelection",
                       "ispsim.schema.NandParams", "ispsim.schema.NandStreamParams", "ispsim.schema.SsdParams",
                       "ispsim.schema.IspParams", "ispsim.schema.FlashCoordinatorParams", "ispsim.schema.FtlParams",
                       "ispsim.schema.LinkParams", "ispsim.schema.PlacementParams", "ispsim.schema.HostParams",
                       "ispsim.schema.CimParams", "ispsim.schema.NpuParams", "ispsim.schema.HostCpuParams",
                       "ispsim.schema.Ddr5Params", "ispsim.schema.CimArrayParams", "ispsim.schema.CimControllerParams",
                       "ispsim.schema.InternalBusParams"}));
}

TEST(Schema, EveryFieldIsDocumented) {
  for (const Descriptor* type : all_types()) {
    for (int i = 0; i < type->field_count(); ++i) {
      const FieldDescriptor& field = *type->field(i);
      const ParameterDoc doc = ispsim::schema::parameter_doc(field);
      SCOPED_TRACE(field.full_name());
      EXPECT_FALSE(doc.doc.empty()) << "no (doc)";
      // The loader handles singular fields only (defaults, --set, ranges).
      EXPECT_FALSE(field.is_repeated()) << "repeated fields are not supported by the loader yet";
      EXPECT_EQ(field.real_containing_oneof(), nullptr) << "oneofs are not supported by the loader yet";
      if (field.cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) continue;  // a group

      EXPECT_FALSE(doc.unit.empty()) << "no (unit)";
      EXPECT_FALSE(doc.source.empty()) << "no (source)";
      EXPECT_NE(doc.source.rfind("TODO", 0), 0u) << "a TODO is not a source: " << doc.source;
      EXPECT_TRUE(doc.has_default != doc.required)
          << "needs exactly one of (default_value) and (required)";
      EXPECT_TRUE(field.has_presence()) << "must be 'optional' (unset must differ from zero)";

      const bool numeric = field.cpp_type() == FieldDescriptor::CPPTYPE_INT32 ||
                           field.cpp_type() == FieldDescriptor::CPPTYPE_INT64 ||
                           field.cpp_type() == FieldDescriptor::CPPTYPE_UINT32 ||
                           field.cpp_type() == FieldDescriptor::CPPTYPE_UINT64 ||
                           field.cpp_type() == FieldDescriptor::CPPTYPE_DOUBLE ||
                           field.cpp_type() == FieldDescriptor::CPPTYPE_FLOAT;
      if (numeric) {
        EXPECT_TRUE(doc.min && doc.max) << "numeric parameters need (min) and (max)";
        if (doc.min && doc.max) {
          EXPECT_LE(*doc.min, *doc.max);
        }
        EXPECT_NE(doc.unit, "enum");
        EXPECT_NE(doc.unit, "text");
      } else {
        EXPECT_FALSE(doc.min || doc.max) << "(min)/(max) only apply to numbers";
      }
      if (field.cpp_type() == FieldDescriptor::CPPTYPE_ENUM) {
        EXPECT_EQ(doc.unit, "enum");
        EXPECT_EQ(field.enum_type()->value(0)->number(), 0);
        EXPECT_NE(field.enum_type()->value(0)->name().find("UNSPECIFIED"), std::string::npos)
            << "value 0 must be the *_UNSPECIFIED placeholder";
      }
      if (field.cpp_type() == FieldDescriptor::CPPTYPE_BOOL) {
        EXPECT_EQ(doc.unit, "flag");
      }
      if (field.cpp_type() == FieldDescriptor::CPPTYPE_STRING) {
        EXPECT_EQ(doc.unit, "text");
      }
    }
  }
}

TEST(Schema, DefaultsParseAndLieInTheirRanges) {
  const Platform p = platform_with_defaults();
  EXPECT_NO_THROW(ispsim::schema::validate_parameters(p, "schema defaults"));
  // Every parameter now has a value, equal to its default's text.
  for (const auto& row : ispsim::schema::parameter_rows(*Platform::descriptor(), &p)) {
    SCOPED_TRACE(row.path);
    ASSERT_FALSE(row.value.empty());
    if (row.doc.required) continue;
    const bool is_string = row.value.front() == '"';
    EXPECT_EQ(row.value, is_string ? "\"" + row.doc.default_value + "\"" : row.doc.default_value);
  }
}

TEST(Schema, StreamAndModuleDefaults) {
  const Platform p = platform_with_defaults();
  EXPECT_EQ(p.stream().read_mode(), ispsim::schema::NandStreamParams::PIPELINED);
  EXPECT_EQ(p.stream().consumer_ns_per_page(), 64.0);
  EXPECT_EQ(p.stream().scratchpad_buffers_per_channel(), 2u);
  EXPECT_EQ(p.modules().isp_accelerator(), "elastic_simd");
  EXPECT_EQ(p.description(), "");
}

TEST(Schema, DefaultsDoNotOverwriteSetValues) {
  Platform p;
  p.mutable_nand()->set_channels(3);
  p.mutable_stream()->set_consumer_ns_per_page(0);  // zero is a value, not "unset"
  ispsim::schema::apply_defaults(p);
  EXPECT_EQ(p.nand().channels(), 3u);
  EXPECT_EQ(p.stream().consumer_ns_per_page(), 0.0);
  EXPECT_TRUE(p.nand().has_t_read_us());
}

TEST(Schema, RequiredFieldsAreReported) {
  Platform p;
  ispsim::schema::apply_defaults(p);
  try {
    ispsim::schema::validate_parameters(p, "x.textproto");
    FAIL() << "no error for a platform without name";
  } catch (const ispsim::BadInput& e) {
    EXPECT_EQ(std::string(e.what()).rfind("x.textproto: 'name' is required", 0), 0u) << e.what();
  }
}

// What a range cannot say is checked by the same validation, with the file and
// the parameter path (models no longer check parameters themselves).
TEST(Schema, ConstraintsBeyondRangesNameTheFileAndTheParameter) {
  auto error_of = [](const Platform& p) -> std::string {
    try {
      ispsim::schema::validate_parameters(p, "x.textproto");
    } catch (const ispsim::BadInput& e) {
      return e.what();
    }
    return "";
  };
  Platform p;
  p.set_name("x");
  p.set_program(ispsim::schema::Platform::MICROBENCHMARK);
  ispsim::schema::apply_defaults(p);
  EXPECT_EQ(error_of(p), "");
  Platform narrow = p;
  narrow.mutable_nand()->set_channel_width_bits(12);
  EXPECT_EQ(error_of(narrow), "x.textproto: nand.channel_width_bits = 12 bits is not a whole number of bytes");
  Platform full = p;
  full.mutable_flash_coordinator()->set_q_buffer_bytes(p.flash_coordinator().global_sram_bytes());
  EXPECT_EQ(error_of(full), "x.textproto: flash_coordinator.q_buffer_bytes = " +
                                std::to_string(p.flash_coordinator().global_sram_bytes()) +
                                " bytes leaves no O reduction buffer in flash_coordinator.global_sram_bytes = " +
                                std::to_string(p.flash_coordinator().global_sram_bytes()) + " bytes");
}

// resolved() = defaults + validation; require_resolved() tells a message that
// skipped it (a programming error, not bad input).
TEST(Schema, ResolvedMessagesAreCompleteAndUnresolvedOnesAreRefused) {
  ispsim::schema::NandParams raw;
  raw.set_channels(3);
  EXPECT_THROW(ispsim::schema::require_resolved(raw, "test"), std::logic_error);
  const ispsim::schema::NandParams nand = ispsim::schema::resolved(raw, "nand");
  EXPECT_EQ(nand.channels(), 3u);
  EXPECT_NO_THROW(ispsim::schema::require_resolved(nand, "test"));
  raw.set_channels(0);
  EXPECT_THROW(ispsim::schema::resolved(raw, "nand"), ispsim::BadInput);
  try {
    ispsim::schema::require_resolved(ispsim::schema::NandParams(), "nand::FlashConfig");
  } catch (const std::logic_error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("nand::FlashConfig: NandParams is not resolved ('channels' is unset)", 0), 0u)
        << e.what();
  }
}

}  // namespace
