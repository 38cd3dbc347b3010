#!/bin/sh
# SPDX-License-Identifier: MIT
# ltxstat(1) end to end: counts match the program's own, -p follows a live
# process, and each kind of bad input gets its documented exit status.
set -u
B=${abs_top_builddir:-$(cd .. && pwd)}
LTXSTAT="$B/tools/ltxstat/ltxstat"
LIFO="$B/tools/examples/lifo"
LIB="$B/src/.libs/libltx.so.0"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# 1. Run mode: the committed transactions the program counted itself.
"$LTXSTAT" --lib "$LIB" --json -o "$T/j" -- "$LIFO" 2 5000 >"$T/out" ||
	fail "ltxstat -- lifo exited $?"
want=$(sed -n 's/^lifo: \([0-9]*\) transactions committed$/\1/p' "$T/out")
got=$(sed -n 's/.*"commits":\([0-9]*\),.*/\1/p' "$T/j" | head -1)
[ -n "$want" ] && [ "$want" = "$got" ] || fail "commits: lifo $want, ltxstat $got"
"$LTXSTAT" --lib "$LIB" -o "$T/txt" -- "$LIFO" 2 2000 >/dev/null ||
	fail "text summary"
grep -q ' 8,000  commits' "$T/txt" || fail "text summary lacks the commits"
# lifo's 4 workers run transactions, its main thread none: 4 threads (not
# their descriptors, nor the twins they keep for signal handlers).
"$LTXSTAT" --lib "$LIB" --json -o "$T/j4" -- "$LIFO" 4 2000 >/dev/null ||
	fail "ltxstat -- lifo 4"
grep -q '"threads":4,' "$T/j4" || fail "lifo 4: threads $(grep -o '"threads":[0-9]*' "$T/j4")"

# 1b. Every abort is in exactly one row of the breakdown: the rows under
# "aborts" add up to it, in both modes, with aborts of every kind there
# (conflicts found by LT, LTX/ST, VALIDATE and COMMIT).
rows_add_up() { # FILE: the indented rows below "aborts" sum to its count
	awk '
	function num(s) { gsub(/,/, "", s); return s + 0 }
	/^ +[0-9,]+  aborts / { total = num($1); inrows = 1; next }
	inrows && /^ +[0-9,]+    [^ ]/ { sum += num($1); rows++; next }
	inrows { inrows = 0 }
	END {
		if (total == 0 || rows == 0 || sum != total) {
			printf "aborts %d, %d rows summing to %d\n", total, rows, sum
			exit 1
		}
	}' "$1"
}
for mode in invisible visible; do
	LTX_MODE=$mode "$LTXSTAT" --lib "$LIB" -o "$T/rows" -- \
		"$B/tools/examples/bank" 4 200000 4 >/dev/null ||
		fail "ltxstat -- bank ($mode) exited $?"
	rows_add_up "$T/rows" || { cat "$T/rows"; fail "$mode: the abort rows do not add up"; }
done

# 1c. The invisible mode does not count T_READ, T_RFO and write-backs
# (only its counted path does, with LTX_CAPACITY): beside its BUSY answers
# they show as not counted, with the reason, not as 0; counted, they show.
"$LTXSTAT" --lib "$LIB" -o "$T/bus" -- "$B/tools/examples/bank" 4 200000 4 \
	>/dev/null
grep -q '^ *[1-9][0-9,]*  bus BUSY ' "$T/bus" || { cat "$T/bus"; fail "invisible: no BUSY"; }
for req in T_READ T_RFO write-backs; do
	grep -q "^ *not counted  bus $req" "$T/bus" ||
		{ cat "$T/bus"; fail "invisible: bus $req not shown as not counted"; }
done
grep -q 'the invisible mode counts these only while' "$T/bus" ||
	fail "invisible: no reason for the requests not counted"
for env in LTX_MODE=visible LTX_CAPACITY=100000; do
	env $env "$LTXSTAT" --lib "$LIB" -o "$T/bus" -- \
		"$B/tools/examples/bank" 4 200000 4 >/dev/null
	grep -q '^ *[1-9][0-9,]*  bus T_RFO ' "$T/bus" ||
		{ cat "$T/bus"; fail "$env: bus T_RFO not counted"; }
	! grep -q 'not counted' "$T/bus" || fail "$env: said not counted"
done

# 2. Exit status passthrough.
"$LTXSTAT" --lib "$LIB" -- sh -c 'exit 3' 2>/dev/null
[ $? -eq 3 ] || fail "exit status not passed through"

# 3. -p on a running program (LTX_STATS=1 publishes the segment).
LTX_STATS=1 LTX_STATS_FILE=/dev/null "$B/tools/examples/bank" 1 100000000 64 \
	>/dev/null &
pid=$!
sleep 1
"$LTXSTAT" -p $pid 1 2 >"$T/p" || fail "ltxstat -p exited $?"
kill $pid 2>/dev/null
wait $pid 2>/dev/null
[ "$(grep -c '^ *[0-9]' "$T/p")" -ge 1 ] || fail "ltxstat -p printed no line"
rates=$(awk 'NR>1 { print $1 }' "$T/p" | head -1)
[ "${rates:-0}" -gt 0 ] 2>/dev/null || fail "ltxstat -p saw no commits"

# 4. Bad input: each a distinct documented status.
"$LTXSTAT" --bogus 2>/dev/null; [ $? -eq 2 ] || fail "unknown option"
"$LTXSTAT" 2>/dev/null; [ $? -eq 2 ] || fail "no program"
"$LTXSTAT" -p 2147483646 2>/dev/null; [ $? -eq 3 ] || fail "no such pid"
"$LTXSTAT" -p $$ 2>/dev/null; [ $? -eq 4 ] || fail "process without ltx"
"$LTXSTAT" -- /nonexistent/prog 2>/dev/null; [ $? -eq 127 ] || fail "not found"
"$LTXSTAT" -- "$T" 2>/dev/null; [ $? -eq 126 ] || fail "not executable"
# A corrupt and a foreign-version segment of a live process (this shell).
printf 'garbage' >/dev/shm/ltx.$$
"$LTXSTAT" -p $$ 2>"$T/e"; st=$?
rm -f /dev/shm/ltx.$$
[ $st -eq 5 ] || fail "corrupt segment: status $st"
grep -q 'ltxstat: ' "$T/e" || fail "no message for a corrupt segment"
echo "ltxstat-test: OK"
