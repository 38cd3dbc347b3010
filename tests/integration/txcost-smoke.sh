#!/bin/sh
# SPDX-License-Identifier: MIT
# txcost smoke test: the whole-transaction builds (tools/txcost/whole.c) run
# the same operations of every workload, none aborting, and refuse bad
# arguments; with valgrind, make -C tools txcost's tables come out whole:
# every row there, every figure a number, ltx above seq.
set -u
# The workloads' data sets are never freed (as in ltxbench-smoke.sh).
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
export ASAN_OPTIONS
dir=${top_builddir:-..}/tools/txcost
src=${srcdir:-.}/../tools/txcost
tmp=${TMPDIR:-/tmp}/txcost-smoke.$$
trap 'rm -f "$tmp".*' EXIT
fail() { echo "FAIL: $*"; exit 1; }

n=300
for impl in seq ltx ltx-inline atomic atomic-inline; do
	"$dir/whole-$impl" $n >"$tmp.$impl" 2>&1 ||
		{ cat "$tmp.$impl"; fail "whole-$impl exited with status $?"; }
	cmp -s "$tmp.seq" "$tmp.$impl" || {
		diff "$tmp.seq" "$tmp.$impl"
		fail "whole-$impl ran other operations than whole-seq"
	}
done
cat "$tmp.seq"
for w in intset-list intset-rbtree intset-skiplist intset-hash bank; do
	grep -q "^$w params " "$tmp.seq" || fail "$w did not run"
	grep -q "^$w aborts 0$" "$tmp.seq" || fail "$w: aborts on one thread"
done
# The counted operations of each workload, by kind, add up to N.
awk -v n=$n '$2 != "params" && $2 != "aborts" { c[$1] += $3 }
END {
	for (w in c)
		if (c[w] != n) {
			print w ": " c[w] " operations counted, not " n
			bad = 1
		}
	exit bad
}' "$tmp.seq" || fail "operations miscounted"

for args in "" 9 "$n nosuch" "$n lifo" "$n intset-list:600:512" \
	"$n bank:2:3" "$n intset-hash:12x" "$n intset-hash:0"; do
	# shellcheck disable=SC2086 # split on purpose
	"$dir/whole-seq" $args >/dev/null 2>"$tmp.err"
	st=$?
	[ $st = 2 ] && [ -s "$tmp.err" ] ||
		fail "whole-seq $args: status $st, not 2 with a message"
done
"$dir/whole-seq" $n intset-list:16:64 bank:8 >"$tmp.shape" ||
	fail "whole-seq with shapes failed"
grep -q '^intset-list params 16 64 20$' "$tmp.shape" &&
	grep -q '^bank params 8 0 95$' "$tmp.shape" ||
	fail "the shapes given were not the shapes run"
"$dir/calls" 50 && "$dir/calls-inline" 50 || fail "txcost-calls failed"

if ! command -v valgrind >/dev/null 2>&1; then
	echo "no valgrind: the tables are not checked"
	exit 0
fi
if grep -q __asan_init "$dir/whole-seq"; then
	echo "an ASan build: valgrind cannot run it, the tables are not checked"
	exit 0
fi
# A valgrind that cannot read the build's debug information gives up on
# every run (valgrind 3.19 and clang's DWARF 5, which configure avoids
# unless CFLAGS asks for it): a fault of the tools, not of ltx.
if ! valgrind -q --tool=none "$dir/whole-seq" 10 >/dev/null 2>"$tmp.vg"; then
	cat "$tmp.vg"
	if grep -q 'debuginfo' "$tmp.vg"; then
		echo "valgrind cannot read this build's debug information" \
			"(CFLAGS=-gdwarf-4 can help): the tables are not checked"
		exit 0
	fi
	fail "whole-seq failed under valgrind"
fi
N=200 SETS="intset-hash bank" SAVE="$tmp.tsv" "$src/whole.sh" "$dir" \
	>"$tmp.whole" || fail "whole.sh failed"
cat "$tmp.whole"
# Two tables of 7 rows (4 for the set, 3 for bank): seq, ltx, inline and
# the overheads are numbers, and ltx costs more than seq.
awk -F'|' '/^\| (intset-hash|bank),/ {
	rows++
	for (i = 5; i <= 11; i++)
		if ($i !~ /^ [0-9.]+ $/)
			bad = bad "\n" $0
	if ($6 + 0 <= $5 + 0 || $7 + 0 <= $5 + 0)
		bad = bad "\n" $0
}
END {
	if (rows != 14 || bad != "") {
		print rows " rows; bad:" bad
		exit 1
	}
}' "$tmp.whole" || fail "whole.sh's tables are not whole"
saved=$(wc -l <"$tmp.tsv")
[ "$saved" -eq 35 ] || fail "whole.sh saved $saved figures, not 35"
# The arcs add up: everything collected in the txcost_* functions is the
# operations' cost plus those functions' own few instructions (whole.c).
all=$(valgrind --tool=callgrind --toggle-collect='txcost_*' \
	--callgrind-out-file=/dev/null "$dir/whole-atomic" 200 intset-hash 2>&1 |
	sed -n 's/.*Collected : \([0-9]*\).*/\1/p')
per=$(awk -F'\t' '$1 ~ /^intset-hash:/ && $2 == "all" &&
	$3 == "atomic" { print $4 }' "$tmp.tsv")
awk -v all="$all" -v per="$per" 'BEGIN {
	own = (all - per * 200) / 200
	print "txcost_* functions: " own " instructions of their own per call"
	exit !(all > 0 && per > 0 && own >= 0 && own < 30)
}' || fail "whole.sh's figure ($per) does not add up to callgrind's ($all)"
N=50 "$src/calls.sh" "$dir" >"$tmp.calls" || fail "calls.sh failed"
cat "$tmp.calls"
# Every figure of the per-call table is a number.
awk -F'|' 'NR > 2 { rows++; if ($4 !~ /^ [0-9]+ $/) bad = bad "\n" $0 }
END {
	if (rows < 20 || bad != "") {
		print rows " rows; bad:" bad
		exit 1
	}
}' "$tmp.calls" || fail "calls.sh's table is not whole"
echo "txcost: all checks passed"
