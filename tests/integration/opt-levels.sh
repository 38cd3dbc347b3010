#!/bin/sh
# SPDX-License-Identifier: MIT
# opt-levels.sh: a program that uses <ltx/tm.h> (TM_ATOMIC, the load and
# store forms, read after write, misaligned words) builds warning-free and
# runs right at every optimization level a user may pick (-O0, -Og, -O1,
# -O2, -O3, -Os), with and without LTX_INLINE, whose inline paths are
# compiled into it (opt_levels.c).  Unoptimized, the inline header used
# to stop the build ("impossible constraint in asm").
# Environment: srcdir (tests/), CC, CFLAGS, LDFLAGS, LIBTOOL and
# top_builddir (to link against the libltx.la of this build).
set -u
: "${srcdir:=.}"
: "${CC:=cc}"
: "${top_builddir:=..}"
: "${LIBTOOL:=$top_builddir/libtool}"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ltx-opt.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail=0
for opt in -O0 -Og -O1 -O2 -O3 -Os; do
	for def in "" -DLTX_INLINE; do
		what="$opt${def:+ $def}"
		prog=$tmp/opt$opt$def
		# shellcheck disable=SC2086 # CFLAGS and LDFLAGS split on purpose
		if ! $LIBTOOL --mode=link --tag=CC $CC ${CFLAGS:-} $opt $def \
			-Wall -Wextra -Werror -pthread -I"$srcdir/../include" \
			${LDFLAGS:-} -o "$prog" "$srcdir/integration/opt_levels.c" \
			"$top_builddir/src/libltx.la" >"$tmp/err" 2>&1; then
			echo "FAIL: $what: does not build:"
			sed 's/^/    /' "$tmp/err"
			fail=1
			continue
		fi
		if timeout 120 "$prog" >"$tmp/out" 2>&1 &&
			grep -q '^ok: ' "$tmp/out"; then
			echo "PASS: $what: $(cat "$tmp/out")"
		else
			echo "FAIL: $what: the program failed:"
			sed 's/^/    /' "$tmp/out"
			fail=1
		fi
	done
done
exit $fail
