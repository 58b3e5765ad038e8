// The record framing of binary traces (trace.proto), shared with other
// streaming files (traces/workload): a varint length prefix, and a CRC-32C
// trailer as field 100 (fixed32) over the record's bytes before it.
#pragma once

#include <cstdint>
#include <string>

namespace ispsim::trace {

void append_record_checksum(std::string& record);
bool record_checksum_matches(const std::string& record);
void append_record_length(std::string& out, uint64_t length);

}  // namespace ispsim::trace
