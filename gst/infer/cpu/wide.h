/* cudabatchinfer: CBI_CPU_WIDE, the CPU backend's loops built for wider
 * vectors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

/* CBI_CPU_WIDE: a loop built for AVX-512 and AVX2 as well as the
 * baseline, the one the CPU has picked when the library loads (GCC's and
 * clang's function multiversioning): the plugin itself is built for any
 * x86-64. Not under AddressSanitizer, whose runtime is not up yet when
 * the loader resolves the clones (GCC says so by __SANITIZE_ADDRESS__,
 * clang by __has_feature). */
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CBI_CPU_SANITIZED 1
#endif
#endif
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__SANITIZE_ADDRESS__) \
    && !defined(CBI_CPU_SANITIZED)
#define CBI_CPU_WIDE __attribute__ ((target_clones ("avx512f", "avx2", \
            "default")))
#else
#define CBI_CPU_WIDE
#endif
