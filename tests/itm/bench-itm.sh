#!/bin/sh
# SPDX-License-Identifier: MIT
# Throughput of -fgnu-tm integer sets under GCC's libitm and under ltx.
#
# Usage: tests/itm/bench-itm.sh [LIBLTX.so [RUNS [MS]]]
# Builds bench_intset.c once with gcc -fgnu-tm, then runs the same binary
# side by side: under libitm's default method, under libitm's ml_wt (its
# default for several threads on a CPU without RTM), and
# with LD_PRELOAD=libltx.so, for the linked list and the red-black tree
# (256 keys, range 512, 20% updates) at 1 and 2 threads.  The runs of one
# round alternate between the runtimes, so load from other processes hits
# them alike.  Prints the median of RUNS (default 5) runs of MS ms each
# (default 1000), in million operations per second, and ltx's ratios to
# both.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
lib=${1:-$here/../../build/src/.libs/libltx.so}
runs=${2:-5}
ms=${3:-1000}
: "${CC:=gcc}"
bin=${TMPDIR:-/tmp}/bench_intset.$$
trap 'rm -f "$bin" "$bin".*' EXIT
$CC -O2 -fgnu-tm -pthread -I"$here" "$here/bench_intset.c" -o "$bin"

median() {
	sort -n | awk '{ v[NR] = $1 } END {
		if (NR % 2) print v[(NR + 1) / 2];
		else printf "%.3f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# libitm's default for more than one thread is htm (hardware TM with a
# serial fallback) on a CPU with RTM, else ml_wt: say which one ran.
if grep -qw rtm /proc/cpuinfo 2>/dev/null; then
	echo "note: this CPU has RTM: libitm's 2-thread default is htm"
else
	echo "note: no RTM: libitm's 2-thread default is ml_wt"
fi
printf '%-7s %3s %10s %10s %10s %8s %8s\n' set thr libitm ml_wt ltx \
	ltx/libitm ltx/ml_wt
for set in list rbtree; do
	for t in 1 2; do
		: >"$bin.itm"; : >"$bin.ml"; : >"$bin.ltx"
		i=0
		while [ $i -lt "$runs" ]; do
			"$bin" $set $t "$ms" | awk '{ print $3 }' >>"$bin.itm"
			ITM_DEFAULT_METHOD=ml_wt "$bin" $set $t "$ms" |
				awk '{ print $3 }' >>"$bin.ml"
			LD_PRELOAD=$lib "$bin" $set $t "$ms" |
				awk '{ print $3 }' >>"$bin.ltx"
			i=$((i + 1))
		done
		a=$(median <"$bin.itm"); b=$(median <"$bin.ml")
		c=$(median <"$bin.ltx")
		printf '%-7s %3d %10s %10s %10s %8.2f %8.2f\n' $set $t "$a" \
			"$b" "$c" "$(echo "$c $a" | awk '{ print $1 / $2 }')" \
			"$(echo "$c $b" | awk '{ print $1 / $2 }')"
	done
done
