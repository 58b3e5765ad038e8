// CRC-32C (Castagnoli, polynomial 0x1EDC6F41 reflected 0x82F63B78), the checksum
// of iSCSI, ext4 and trace format 1.2. Check value: crc32c("123456789") = 0xE3069283.
#pragma once

#include <cstddef>
#include <cstdint>

namespace ispsim {

// Continues `crc` (0 to start) over `size` bytes.
uint32_t crc32c(const void* data, size_t size, uint32_t crc = 0);

}  // namespace ispsim
