/* SPDX-License-Identifier: MIT */
/* Architecture selection: one header per CPU, a generic __atomic fallback. */
#ifndef LTX_ARCH_H
#define LTX_ARCH_H

#if defined(__x86_64__)
#include "x86_64.h"
#endif
#include "generic.h"

#define ltx_likely(x)	__builtin_expect(!!(x), 1)
#define ltx_unlikely(x) __builtin_expect(!!(x), 0)

/* The article's unit of conflict detection: one cache line. */
#define LTX_LINE_SHIFT 6
#define LTX_LINE_SIZE  (1u << LTX_LINE_SHIFT)
#define LTX_LINE_MASK  ((uintptr_t)LTX_LINE_SIZE - 1)

#endif /* LTX_ARCH_H */
