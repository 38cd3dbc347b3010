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

/*
 * Unoptimized (-O0), GCC keeps the branches that an inlined call's
 * constant size rules out, and warns of the copies there (16 or 32 bytes
 * copied into a word: the vector barriers' size reaching a word's path):
 * false alarms, silenced between these two in the fast paths' code.
 */
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 11 &&              \
	!defined(__OPTIMIZE__)
#define LTX_SIZED_COPIES_BEGIN                                                 \
	_Pragma("GCC diagnostic push") _Pragma(                                \
		"GCC diagnostic ignored \"-Wstringop-overread\"")              \
		_Pragma("GCC diagnostic ignored \"-Wstringop-overflow\"")
#define LTX_SIZED_COPIES_END _Pragma("GCC diagnostic pop")
#else
#define LTX_SIZED_COPIES_BEGIN
#define LTX_SIZED_COPIES_END
#endif

#endif /* LTX_ARCH_H */
