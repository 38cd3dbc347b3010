#!/bin/sh
# SPDX-License-Identifier: MIT
# The STAMP-shaped kernels of bench_apps.c under GCC's libitm and under ltx.
#
# Usage: tests/itm/bench-apps.sh [-s SIZE] [-t "THREADS..."] [-a "APPS..."]
#                                [LIBLTX.so [RUNS]]
# Builds bench_apps.c once with gcc -fgnu-tm, then runs the same binary
# side by side: under libitm's default method, under libitm's ml_wt, and
# with LD_PRELOAD=libltx.so (default settings), for each application
# (vacation, kmeans, bayes) at each thread count (default 1 2).  The runs
# of one round alternate between the runtimes, so load from other
# processes hits them alike.  Prints the median over RUNS rounds (default
# 5) of the seconds the parallel phase took, and libitm's time over ltx's
# (above 1: ltx is faster).  SIZE is tiny, small or bench (the default).
set -eu

here=$(cd "$(dirname "$0")" && pwd)
size=bench
threads="1 2"
apps="vacation kmeans bayes"
while getopts s:t:a: opt; do
	case $opt in
	s) size=$OPTARG ;;
	t) threads=$OPTARG ;;
	a) apps=$OPTARG ;;
	*) echo "usage: $0 [-s SIZE] [-t THREADS] [-a APPS] [LIBLTX.so [RUNS]]" >&2
	   exit 2 ;;
	esac
done
shift $((OPTIND - 1))
lib=${1:-$here/../../build/src/.libs/libltx.so}
runs=${2:-5}
: "${CC:=gcc}"
if [ ! -f "$lib" ]; then
	echo "$0: no $lib (build ltx first, or name the library)" >&2
	exit 2
fi
bin=${TMPDIR:-/tmp}/bench_apps.$$
trap 'rm -f "$bin" "$bin".*' EXIT
$CC -O2 -fgnu-tm -pthread -I"$here" "$here/bench_apps.c" -o "$bin"

median() {
	sort -n | awk '{ v[NR] = $1 } END {
		if (NR % 2) print v[(NR + 1) / 2];
		else printf "%.6f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# One run: its time, or the failure on stderr and a non-zero exit.
run() {
	if ! "$@" >"$bin.out" 2>"$bin.err"; then
		echo "$0: failed: $*" >&2
		cat "$bin.err" >&2
		exit 1
	fi
	sed -n 's/^time: //p' "$bin.err"
}

# libitm's default for more than one thread is htm (hardware TM with a
# serial fallback) on a CPU with RTM, else ml_wt; for one thread it is
# serialirr: say which ran.
if grep -qw rtm /proc/cpuinfo 2>/dev/null; then
	echo "note: this CPU has RTM: libitm's multi-thread default is htm"
else
	echo "note: no RTM: libitm's multi-thread default is ml_wt"
fi
# Name the CPU: a virtual machine's model name may be only a brand.
cpu=$(awk -F': *' '
	/^model name/ && !n { n = $2 }
	/^cpu family/ && f == "" { f = $2 }
	/^model\t/ && m == "" { m = $2 }
	END { s = n != "" ? n : "unknown CPU"
	      if (f != "" && m != "") s = s ", family " f " model " m
	      print s }' /proc/cpuinfo 2>/dev/null)
echo "CPU: $(getconf _NPROCESSORS_ONLN) x ${cpu:-unknown CPU}"
echo "size $size, median of $runs rounds; load before: $(uptime)"
printf '%-9s %3s %10s %10s %10s %9s %9s\n' app thr libitm ml_wt ltx \
	libitm/ltx ml_wt/ltx
for app in $apps; do
	for t in $threads; do
		: >"$bin.itm"; : >"$bin.ml"; : >"$bin.ltx"
		i=0
		while [ $i -lt "$runs" ]; do
			run "$bin" "$app" "$t" "$size" >>"$bin.itm"
			ITM_DEFAULT_METHOD=ml_wt run "$bin" "$app" "$t" \
				"$size" >>"$bin.ml"
			LD_PRELOAD=$lib run "$bin" "$app" "$t" "$size" \
				>>"$bin.ltx"
			i=$((i + 1))
		done
		a=$(median <"$bin.itm"); b=$(median <"$bin.ml")
		c=$(median <"$bin.ltx")
		printf '%-9s %3d %10.4f %10.4f %10.4f %9.2f %9.2f\n' "$app" \
			"$t" "$a" "$b" "$c" \
			"$(echo "$a $c" | awk '{ print $1 / $2 }')" \
			"$(echo "$b $c" | awk '{ print $1 / $2 }')"
	done
done
echo "load after: $(uptime)"
