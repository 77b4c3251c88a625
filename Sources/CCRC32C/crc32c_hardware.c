// CRC-32C with the processor's own instruction: SSE 4.2 `crc32` on x86-64, the CRC extension's
// `crc32c` on 64-bit ARM. Elsewhere, or when the processor lacks it, the Swift table-driven code runs.

#include "crc32c_hardware.h"

#include <string.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))

#include <nmmintrin.h>

bool sj_crc32c_hardware_available(void) {
    __builtin_cpu_init();
    return __builtin_cpu_supports("sse4.2");
}

__attribute__((target("sse4.2")))
uint32_t sj_crc32c_hardware(uint32_t crc, const void *bytes, size_t count) {
    const unsigned char *next = bytes;
    uint64_t wide = crc;
    while (count >= 8) {
        uint64_t word;
        memcpy(&word, next, 8);
        wide = _mm_crc32_u64(wide, word);
        next += 8;
        count -= 8;
    }
    crc = (uint32_t)wide;
    while (count > 0) {
        crc = _mm_crc32_u8(crc, *next);
        next += 1;
        count -= 1;
    }
    return crc;
}

#elif defined(__aarch64__) && defined(__ARM_FEATURE_CRC32)

#include <arm_acle.h>

bool sj_crc32c_hardware_available(void) { return true; }

uint32_t sj_crc32c_hardware(uint32_t crc, const void *bytes, size_t count) {
    const unsigned char *next = bytes;
    while (count >= 8) {
        uint64_t word;
        memcpy(&word, next, 8);
        crc = __crc32cd(crc, word);
        next += 8;
        count -= 8;
    }
    while (count > 0) {
        crc = __crc32cb(crc, *next);
        next += 1;
        count -= 1;
    }
    return crc;
}

#else

bool sj_crc32c_hardware_available(void) { return false; }

uint32_t sj_crc32c_hardware(uint32_t crc, const void *bytes, size_t count) {
    (void)bytes;
    (void)count;
    return crc;
}

#endif
