#!/bin/sh
# SPDX-License-Identifier: MIT
# clock-alone.sh [LIBLTX.so]: fail unless the global version clock
# (ltx_clock, cd/orec.c) has its 128 bytes to itself in the library's data.
# Every update commit writes the clock; a variable on its line costs each
# of its readers a cache miss per commit of another thread.  (When only
# its start was aligned, tx/stats.c's child_pending, read at every commit
# with LTX_STATS on, sat 56 bytes after it.)
set -u

lib=${1:-../src/.libs/libltx.so}
if ! command -v nm >/dev/null 2>&1; then
	echo "clock-alone.sh: no nm: skipped"
	exit 77
fi
if [ ! -f "$lib" ]; then
	echo "clock-alone.sh: no $lib (a build without the shared library): skipped"
	exit 77
fi
# Data symbols with sizes: address, size, type, name (hex without 0x).
nm -S "$lib" | awk '
	# mawk has no strtonum: hex by hand (addresses fit a double).
	function hex(h,	v, i) {
		v = 0
		for (i = 1; i <= length(h); i++)
			v = v * 16 + index("0123456789abcdef", substr(tolower(h), i, 1)) - 1
		return v
	}
	NF == 4 && $3 ~ /^[bBdD]$/ {
		a = hex($1); s = hex($2)
		if ($4 == "ltx_clock") { ca = a; cs = s; found = 1; next }
		addr[++n] = a; size[n] = s; name[n] = $4
	}
	END {
		if (!found) { print "clock-alone.sh: no ltx_clock in the library"; exit 1 }
		bad = 0
		if (ca % 128 != 0) { printf "ltx_clock at 0x%x: not 128-aligned\n", ca; bad = 1 }
		if (cs < 128) { printf "ltx_clock: %d bytes, not 128\n", cs; bad = 1 }
		for (i = 1; i <= n; i++)
			if (addr[i] < ca + 128 && addr[i] + size[i] > ca) {
				printf "%s (0x%x, %d bytes) shares ltx_clock'"'"'s 128 bytes (0x%x)\n",
				       name[i], addr[i], size[i], ca
				bad = 1
			}
		if (!bad) printf "ltx_clock at 0x%x has its 128 bytes alone\n", ca
		exit bad
	}'
