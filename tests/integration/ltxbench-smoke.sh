#!/bin/sh
# SPDX-License-Identifier: MIT
# ltxbench smoke test: every workload on every implementation, in tiny
# checked runs at 1 and 2 threads; and a miscount must fail loudly.
set -u
# The benchmark's run children exit without freeing their data sets (an
# integer set does not reclaim deleted nodes during a run, for every
# implementation alike): no leak check for them; the library's own leak
# checks are in check_mem and check_fault.
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
export ASAN_OPTIONS
builddir=${top_builddir:-..}/tools/ltxbench
bench=$builddir/ltxbench
LTXBENCH_GNUTM=$builddir/ltxbench-gnutm
LTXBENCH_LIBLTX=${top_builddir:-..}/src/.libs/libltx.so
export LTXBENCH_GNUTM LTXBENCH_LIBLTX
tmp=${TMPDIR:-/tmp}/ltxbench-smoke.$$
trap 'rm -f "$tmp".*' EXIT
fail() { echo "FAIL: $*"; exit 1; }

"$bench" -d 0.03 -r 1 -t 1,2 --csv --no-progress >"$tmp.csv" 2>"$tmp.err" ||
	{ cat "$tmp.err"; fail "the sweep exited with status $?"; }
cat "$tmp.csv"
workloads=$("$bench" -l | sed -n '/^workloads/,/^implementations/p' |
	sed -n 's/^  \([a-z0-9-]*\) .*/\1/p')
[ -n "$workloads" ] || fail "ltxbench -l lists no workloads"
rows=0
for w in $workloads; do
	grep -q "^$w,seq,1,1,[0-9]" "$tmp.csv" || fail "$w: no seq figure"
	for i in ltx-invisible mutex spin; do
		for t in 1 2; do
			grep -q "^$w,$i,$t,1,[0-9]" "$tmp.csv" ||
				fail "$w: no $i figure at $t threads"
			rows=$((rows + 1))
		done
	done
done
# Every row names the machine (CPUs online, the CPU, quoted).
head -1 "$tmp.csv" | grep -q ',note,cpus,cpu$' ||
	fail "the CSV header does not end with the machine's columns"
cpus=$(getconf _NPROCESSORS_ONLN)
if sed 1d "$tmp.csv" | grep -v ",$cpus,\"[^\"]*\"\$" | grep -q .; then
	fail "a CSV row does not end with $cpus CPUs and the CPU"
fi
# Every run that reported a figure had its invariant checked.
ran=$(grep -c '^[^,]*,[^,]*,[0-9]*,1,[0-9]' "$tmp.csv")
grep -q "^ltxbench: $ran runs, each one's invariant checked" "$tmp.err" ||
	fail "$ran runs reported, but not as checked: $(cat "$tmp.err")"
echo "ok: $ran checked runs ($rows required ones)"

# A broken count must be caught and reported, with a non-zero status.
for w in counter intset-list hm93-fifo; do
	if LTXBENCH_TEST_MISCOUNT=1 "$bench" -w $w -i ltx-invisible -t 2 \
		-d 0.03 -r 1 --no-progress >/dev/null 2>"$tmp.err"; then
		fail "$w: a miscount went unnoticed"
	fi
	grep -q "INVARIANT BROKEN" "$tmp.err" ||
		fail "$w: the failure was not loud: $(cat "$tmp.err")"
done
echo "ok: miscounts are reported"

# Bad options: a one-line error, the usage, status 2.
"$bench" --threads 0 >/dev/null 2>"$tmp.err"
[ $? -eq 2 ] || fail "a bad thread count did not exit 2"
head -1 "$tmp.err" | grep -q "^ltxbench: bad thread count" ||
	fail "no one-line error for a bad thread count"
grep -q "^usage: ltxbench" "$tmp.err" || fail "no usage after the error"

# The machine is named by its CPU's family and model where /proc/cpuinfo
# gives them (x86), in the table and in the JSON.
fam=$(sed -n 's/^cpu family[[:space:]]*: *//p' /proc/cpuinfo 2>/dev/null | head -1)
mod=$(sed -n 's/^model[[:space:]]*: *//p' /proc/cpuinfo 2>/dev/null | head -1)
if [ -n "$fam" ] && [ -n "$mod" ]; then
	"$bench" -w counter -i seq -t 1 -d 0.01 -r 1 --no-progress \
		>"$tmp.txt" 2>/dev/null || fail "the table run failed"
	grep -q "^# [0-9]* CPUs (.*, family $fam model $mod, [no ]*RTM)" \
		"$tmp.txt" || fail "the table does not name the CPU: $(cat "$tmp.txt")"
	"$bench" -w counter -i seq -t 1 -d 0.01 -r 1 --no-progress --json \
		>"$tmp.json" 2>/dev/null || fail "the JSON run failed"
	grep -q "\"family\": $fam, \"model_number\": $mod, \"rtm\": [a-z]*," \
		"$tmp.json" || fail "the JSON does not name the CPU: $(cat "$tmp.json")"
	echo "ok: the CPU is named (family $fam model $mod)"
fi
exit 0
