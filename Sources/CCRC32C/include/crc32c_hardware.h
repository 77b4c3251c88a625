#ifndef CCRC32C_HARDWARE_H
#define CCRC32C_HARDWARE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/// Whether this processor has a CRC-32C instruction that `sj_crc32c_hardware` uses.
bool sj_crc32c_hardware_available(void);

/// Continues the CRC-32C register `crc` (already inverted, as the table-driven code keeps it) over
/// `count` bytes at `bytes` with the processor's CRC-32C instruction. Call only when
/// `sj_crc32c_hardware_available()` returned true.
uint32_t sj_crc32c_hardware(uint32_t crc, const void *bytes, size_t count);

#endif
