#!/bin/sh
# SPDX-License-Identifier: MIT
# ltxstat(1) end to end: counts match the program's own, -p follows a live
# process, and each kind of bad input gets its documented exit status.
set -u
B=${abs_top_builddir:-$(cd .. && pwd)}
LTXSTAT="$B/tools/ltxstat/ltxstat"
LIFO="$B/tools/examples/lifo"
LIB="$B/src/.libs/libltx.so.0"
# Preload the shared library where there is one (a --disable-shared build
# links the programs with ltx itself).
LIBOPT=
[ -f "$LIB" ] && LIBOPT="--lib $LIB"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# 1. Run mode: the committed transactions the program counted itself.
"$LTXSTAT" $LIBOPT --json -o "$T/j" -- "$LIFO" 2 5000 >"$T/out" ||
	fail "ltxstat -- lifo exited $?"
want=$(sed -n 's/^lifo: \([0-9]*\) transactions committed$/\1/p' "$T/out")
got=$(sed -n 's/.*"commits":\([0-9]*\),.*/\1/p' "$T/j" | head -1)
[ -n "$want" ] && [ "$want" = "$got" ] || fail "commits: lifo $want, ltxstat $got"
"$LTXSTAT" $LIBOPT -o "$T/txt" -- "$LIFO" 2 2000 >/dev/null ||
	fail "text summary"
grep -q ' 8,000  commits' "$T/txt" || fail "text summary lacks the commits"
# lifo's 4 workers run transactions, its main thread none: 4 threads (not
# their descriptors, nor the twins they keep for signal handlers).
"$LTXSTAT" $LIBOPT --json -o "$T/j4" -- "$LIFO" 4 2000 >/dev/null ||
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
	LTX_MODE=$mode "$LTXSTAT" $LIBOPT -o "$T/rows" -- \
		"$B/tools/examples/bank" 4 200000 4 >/dev/null ||
		fail "ltxstat -- bank ($mode) exited $?"
	rows_add_up "$T/rows" || { cat "$T/rows"; fail "$mode: the abort rows do not add up"; }
done

# 1c. The invisible mode does not count T_READ, T_RFO and write-backs
# (only its counted path does, with LTX_CAPACITY): beside its BUSY answers
# they show as not counted, with the reason, not as 0; counted, they show.
"$LTXSTAT" $LIBOPT -o "$T/bus" -- "$B/tools/examples/bank" 4 200000 4 \
	>/dev/null
grep -q '^ *[1-9][0-9,]*  bus BUSY ' "$T/bus" || { cat "$T/bus"; fail "invisible: no BUSY"; }
for req in T_READ T_RFO write-backs; do
	grep -q "^ *not counted  bus $req" "$T/bus" ||
		{ cat "$T/bus"; fail "invisible: bus $req not shown as not counted"; }
done
grep -q 'the invisible mode counts these only while' "$T/bus" ||
	fail "invisible: no reason for the requests not counted"
for env in LTX_MODE=visible LTX_CAPACITY=100000; do
	env $env "$LTXSTAT" $LIBOPT -o "$T/bus" -- \
		"$B/tools/examples/bank" 4 200000 4 >/dev/null
	grep -q '^ *[1-9][0-9,]*  bus T_RFO ' "$T/bus" ||
		{ cat "$T/bus"; fail "$env: bus T_RFO not counted"; }
	! grep -q 'not counted' "$T/bus" || fail "$env: said not counted"
done

# 2. Exit status passthrough.
"$LTXSTAT" $LIBOPT -- sh -c 'exit 3' 2>/dev/null
[ $? -eq 3 ] || fail "exit status not passed through"

# 3. -p on a running program (LTX_STATS=1 publishes the segment).
LTX_STATS=1 LTX_STATS_FILE=/dev/null "$B/tools/examples/bank" 1 100000000 64 \
	>/dev/null &
pid=$!
sleep 1
"$LTXSTAT" -p $pid 1 2 >"$T/p" || fail "ltxstat -p exited $?"
# Its segment removed from /dev/shm while it runs: said so.
rm -f /dev/shm/ltx.$pid.*
"$LTXSTAT" -p $pid 2>"$T/e"; st=$?
[ $st -eq 4 ] && grep -q 'segment was removed' "$T/e" ||
	{ cat "$T/e"; fail "removed segment: status $st"; }
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

# 5. Segments no one can spoof.  A process of this user that publishes
# none (a sleep), with segments planted under its names: a well-formed one
# with invented figures, a FIFO, a directory.  ltxstat -p trusts only the
# file the process maps: it says none is published, at once, and names
# what it ignored; it never shows the invented figures nor waits on the
# FIFO.
HELPER=./statseg_helper
[ -x "$HELPER" ] || HELPER="$B/tests/statseg_helper"
sleep 60 &
victim=$!
"$HELPER" plant "/dev/shm/ltx.$victim" $victim || fail "plant"
mkfifo "/dev/shm/ltx.$victim.fe"
mkdir "/dev/shm/ltx.$victim.d"
timeout 10 "$LTXSTAT" -p $victim >"$T/o" 2>"$T/e"; st=$?
rm -rf "/dev/shm/ltx.$victim" "/dev/shm/ltx.$victim.fe" "/dev/shm/ltx.$victim.d"
kill $victim
[ $st -eq 4 ] || { cat "$T/e"; fail "planted segments: status $st, not 4"; }
grep -q "is not its segment: ignored" "$T/e" || { cat "$T/e"; fail "planted: not named"; }
! grep -q '123,456,789' "$T/o" || fail "planted: invented figures shown"

# Processes that do map a hostile segment as their own: one whose header
# names another process, a 16 GiB sparse file (refused from its size,
# fast, in bounded memory).  Each refusal has its own status.
serve() { # MODE [legacy]: start a helper serving it; sets $server
	rm -f "$T/ready"
	"$HELPER" serve "$@" >"$T/ready" &
	server=$!
	for _ in 1 2 3 4 5 6 7 8 9 10; do
		grep -q ready "$T/ready" 2>/dev/null && return 0
		sleep 0.2
	done
	fail "helper serve $*: not ready"
}
unserve() {
	kill $server
	wait $server 2>/dev/null
	rm -f "/dev/shm/ltx.$server" "/dev/shm/ltx.$server.0123456789abcdef"
}
serve otherpid
"$LTXSTAT" -p $server 2>"$T/e"; st=$?
unserve
[ $st -eq 11 ] || { cat "$T/e"; fail "a segment naming another pid: status $st, not 11"; }
grep -q 'written for another process: refused' "$T/e" || { cat "$T/e"; fail "otherpid: message"; }
serve huge legacy
timeout 20 "$HELPER" measure "$LTXSTAT" -p $server >"$T/m" 2>"$T/e"
unserve
grep -q '^status=9 ' "$T/m" || { cat "$T/m" "$T/e"; fail "a 16 GiB segment: not status 9"; }
grep -q 'larger than any statistics segment' "$T/e" || { cat "$T/e"; fail "huge: message"; }
rss=$(sed -n 's/.*maxrss_kb=\([0-9]*\).*/\1/p' "$T/m")
ms=$(sed -n 's/.* ms=\([0-9]*\).*/\1/p' "$T/m")
[ "$rss" -lt 65536 ] && [ "$ms" -lt 5000 ] ||
	fail "a 16 GiB segment: ${rss} KiB, $ms ms (want < 64 MiB, < 5 s)"
if [ "$(id -u)" = 0 ]; then
	# One owned by another user than the process's (root only).
	serve nobody
	"$LTXSTAT" -p $server 2>"$T/e"; st=$?
	unserve
	[ $st -eq 11 ] || { cat "$T/e"; fail "a segment owned by nobody: status $st"; }
	grep -q 'owned by another user than the process' "$T/e" || fail "nobody: message"
fi

# -f reads a segment file, but only a regular file of a segment's size:
# a FIFO, a directory and a 16 GiB sparse file are refused at once.
"$HELPER" plant "$T/seg" 4242
"$LTXSTAT" -f "$T/seg" >"$T/o" || fail "-f on a segment: status $?"
grep -q '123,456,789  commits' "$T/o" || fail "-f: no figures"
mkfifo "$T/fifo"
timeout 10 "$LTXSTAT" -f "$T/fifo" 2>/dev/null; st=$?
[ $st -eq 8 ] || fail "-f FIFO: status $st, not 8"
"$LTXSTAT" -f "$T" 2>/dev/null; st=$?
[ $st -eq 8 ] || fail "-f directory: status $st, not 8"
truncate -s 16G "$T/huge"
timeout 20 "$HELPER" measure "$LTXSTAT" -f "$T/huge" >"$T/m" 2>/dev/null
grep -q '^status=9 ' "$T/m" || { cat "$T/m"; fail "-f 16 GiB: not status 9"; }
printf 'garbage' >"$T/garbage"
"$LTXSTAT" -f "$T/garbage" 2>"$T/e"; st=$?
[ $st -eq 10 ] || fail "-f garbage: status $st, not 10"
grep -q 'ltxstat: ' "$T/e" || fail "no message for a corrupt segment"
ln -s "$T/seg" "$T/link"
"$LTXSTAT" -f "$T/link" 2>/dev/null; st=$?
[ $st -eq 8 ] || fail "-f symbolic link: status $st, not 8"

# 6. A process killed with SIGKILL leaves its segment; the next process
# that creates one removes it (its pid is dead).
segment_of() { # PID: true if a segment of PID is in /dev/shm
	for f in /dev/shm/ltx.$1 /dev/shm/ltx.$1.*; do
		[ -e "$f" ] && return 0
	done
	return 1
}
LTX_STATS=1 "$B/tools/examples/bank" 1 100000000 64 >/dev/null &
killed=$!
for _ in 1 2 3 4 5 6 7 8 9 10; do
	segment_of $killed && break
	sleep 0.2
done
kill -9 $killed
wait $killed 2>/dev/null
segment_of $killed || fail "no segment left by a killed process"
LTX_STATS=1 LTX_STATS_FILE=/dev/null "$LIFO" 1 10 >/dev/null
! segment_of $killed || fail "a dead process's segment stayed"

# 7. ltxstat's own interface: each mistake its message and status 2.
expect_usage() { # WHAT PATTERN CMD...: status 2, and PATTERN said
	what=$1 pat=$2
	shift 2
	"$@" >/dev/null 2>"$T/e"; st=$?
	[ $st -eq 2 ] || { cat "$T/e"; fail "$what: status $st, not 2"; }
	grep -q -- "$pat" "$T/e" || { cat "$T/e"; fail "$what: no '$pat'"; }
}
expect_usage "LTX_STATS=garbage" 'LTX_STATS="garbage" is invalid' \
	env LTX_STATS=garbage "$LTXSTAT" $LIBOPT -- "$LIFO" 1 10
expect_usage "--lib /nonexistent.so" '/nonexistent.so: No such file' \
	"$LTXSTAT" --lib /nonexistent.so -- "$LIFO" 1 10
expect_usage "-p alone" 'option -p needs an argument' "$LTXSTAT" -p
expect_usage "-o alone" 'option -o needs an argument' "$LTXSTAT" -o
expect_usage "-p PID -1" "bad INTERVAL '-1'" "$LTXSTAT" -p $$ -1
"$LTXSTAT" --help >"$T/o" 2>"$T/e" || fail "--help: status $?"
grep -q '^usage: ltxstat' "$T/o" && [ ! -s "$T/e" ] || fail "--help not on stdout"
"$LTXSTAT" --version >"$T/o" || fail "--version: status $?"
grep -q '^ltxstat (ltx) [0-9]' "$T/o" || fail "--version: $(cat "$T/o")"
# A program that does not use ltx and exits 0: status 4, said.
"$LTXSTAT" $LIBOPT -- /bin/true 2>"$T/e"; st=$?
[ $st -eq 4 ] || fail "ltxstat -- /bin/true: status $st, not 4"
grep -q 'ran no transaction\|published no ltx statistics' "$T/e" || fail "/bin/true: message"
# A program that runs its transactions only in a process it starts (as
# ltxbench does): that process prints its own summary, and ltxstat, which
# reads the process it started, says why it has none.
"$LTXSTAT" $LIBOPT -- sh -c '"$0" 2 100; exit $?' "$LIFO" >/dev/null 2>"$T/e"; st=$?
[ $st -eq 4 ] || fail "ltxstat -- sh -c lifo: status $st, not 4"
grep -q 'Transaction statistics for' "$T/e" || fail "sh -c lifo: the child's summary is missing"
grep -q 'not follow the processes it starts\|only in processes it starts, which ltxstat does not follow' "$T/e" ||
	fail "sh -c lifo: message: $(tail -1 "$T/e")"
# SIGINT, SIGTERM sent to ltxstat go to the program, which ends; ltxstat
# reports its last figures and its status.
for sig in INT:2 TERM:15; do
	num=${sig#*:}
	sig=${sig%:*}
	# (sigdfl: as from a terminal; sh starts it with SIGINT ignored)
	"$HELPER" sigdfl "$LTXSTAT" $LIBOPT -o "$T/sig" -- \
		"$B/tools/examples/bank" 1 100000000 64 >/dev/null &
	l=$!
	sleep 1
	kill -$sig $l
	for _ in 1 2 3 4 5 6 7 8 9 10; do
		kill -0 $l 2>/dev/null || break
		sleep 0.5
	done
	if kill -0 $l 2>/dev/null; then
		kill -9 $(ps -o pid= --ppid $l) $l
		fail "SIG$sig to ltxstat: the program did not end"
	fi
	wait $l; st=$?
	want=$((128 + num))
	[ $st -eq $want ] || fail "SIG$sig: status $st, not $want"
	grep -q ' commits ' "$T/sig" || fail "SIG$sig: no summary"
done
# 8. Abort sites: without line information, function+offset, so that two
# sites in one function differ; and the summary the program prints at exit
# (no ltxstat) names them as ltxstat does, with or without -g.  Needs the
# shared library (sites are found by unwinding out of it).
sites() { # FILE: the names of the abort sites of a summary, sorted
	sed -n '/top abort sites/,$s/^ *[0-9,]*  *[0-9.]* %  .\{19\} //p' "$1" | sort
}
REAL="$B/tests/.libs/stats_sites"
[ -x "$REAL" ] || REAL="$B/tests/.libs/lt-stats_sites"
if [ -f "$LIB" ] && [ -x "$REAL" ] && command -v objcopy >/dev/null; then
	cp "$REAL" "$T/nodebug"
	objcopy --strip-debug "$T/nodebug"
	for prog in "$REAL" "$T/nodebug"; do
		LD_LIBRARY_PATH="$B/src/.libs" "$LTXSTAT" $LIBOPT \
			-o "$T/s1" -- "$prog" || fail "ltxstat -- stats_sites: $?"
		LD_LIBRARY_PATH="$B/src/.libs" LTX_STATS=1 \
			LTX_STATS_FILE="$T/s2" "$prog" || fail "stats_sites: $?"
		sites "$T/s1" >"$T/n1"
		sites "$T/s2" >"$T/n2"
		[ "$(wc -l <"$T/n1")" -eq 3 ] && [ "$(sort -u "$T/n1" | wc -l)" -eq 3 ] ||
			{ cat "$T/s1"; fail "$prog: not 3 distinct sites"; }
		cmp -s "$T/n1" "$T/n2" ||
			{ diff "$T/n1" "$T/n2"; fail "$prog: exit summary and ltxstat name sites differently"; }
	done
	# Without debug information: function+offset in the object.
	grep -c '^two_sites+0x[0-9a-f]* (nodebug)$' "$T/n1" | grep -qx 2 ||
		{ cat "$T/n1"; fail "no line information: not function+offset"; }
	# With it (if the build has -g): the file and line.
	if objdump -h "$REAL" 2>/dev/null | grep -q debug_line; then
		LD_LIBRARY_PATH="$B/src/.libs" "$LTXSTAT" $LIBOPT \
			-o "$T/s1" -- "$REAL"
		sites "$T/s1" | grep -c '^two_sites at stats_sites.c:[0-9]*$' | grep -qx 2 ||
			{ cat "$T/s1"; fail "-g: sites not at file:line"; }
	fi
fi
echo "ltxstat-test: OK"
