#!/bin/sh
# calls.sh DIR: instructions per call of the pieces of a transaction, one
# thread, counted by callgrind (see calls.c), next to issue 14's targets.
#
# DIR holds txcost-calls built out of line (calls) and with LTX_INLINE
# (calls-inline).  Each probe runs N times (N=10000 unless set) inside
# measure(), the only counted function; a figure is the inclusive Ir of
# the arc from a probe to a call (or from measure() to the probe: the
# whole probe, its return included) divided by N.
set -e
DIR=${1:?usage: calls.sh DIR}
N=${N:-10000}
HERE=$(dirname "$0")

# shellcheck disable=SC2034 # common.sh's messages name it
ME=calls.sh
. "$HERE/common.sh"

for build in calls calls-inline; do
	if ! valgrind --tool=callgrind --toggle-collect=measure \
		--compress-strings=no --compress-pos=no \
		--callgrind-out-file="$TMP/cg.$build" "$DIR/$build" "$N" \
		>"$TMP/out.$build" 2>"$TMP/err.$build"; then
		echo "calls.sh: $DIR/$build failed:" >&2
		tail -5 "$TMP/err.$build" >&2
		exit 1
	fi
	awk -f "$HERE/arcs.awk" "$TMP/cg.$build" | sort >"$TMP/arcs.$build"
done

awk -v n="$N" -v tmp="$TMP" '
function load(build,    line, f) {
	while ((getline line < (tmp "/arcs." build)) > 0) {
		split(line, f, " ")
		ir[build, f[1], f[2]] = f[4]
		if (f[1] == "measure")
			calls[build, f[2]] = f[3]
		callees[build, f[1]] = callees[build, f[1]] " " f[2]
	}
}
# Per probe call: the inclusive Ir of caller -> callee over N.  A missing
# arc (a function this build does not have) is "", printed "-".
function per(build, caller, callee) {
	if (!((build, caller, callee) in ir))
		return ""
	if (calls[build, caller == "measure" ? callee : caller] != n) {
		printf("calls.sh: %s ran %s %d times, not %d\n", build,
		       caller == "measure" ? callee : caller,
		       calls[build, caller == "measure" ? callee : caller],
		       n) > "/dev/stderr"
		exit 1
	}
	return ir[build, caller, callee] / n
}
function minus(a, b) { return a == "" || b == "" ? "" : a - b }
function row(what, incl, x, target) {
	printf("| %s | %s | %s | %s | %s |\n", what, incl,
	       x == "" ? "-" : sprintf("%.0f", x),
	       target == "" ? "" : "<= " target,
	       target == "" || x == "" ? "" : \
	       sprintf("%.0f", x) + 0 <= target ? "met" : "not met")
}
BEGIN {
	load("calls")
	load("calls-inline")
	printf("| per call, one thread | what is counted | instructions |")
	printf(" target (issue 14) | |\n|---|---|--:|---|---|\n")
	whole = per("calls", "measure", "probe_block_ro")
	lt = per("calls", "probe_block_ro", "tm_lt")
	row("`TM_ATOMIC` read-only block of one `tm_lt`, whole",
	    "the block alone in a function: its frame, begin, restart " \
	    "point, the `tm_lt`, end, return", whole, "")
	row("`TM_ATOMIC` begin + end of that block",
	    "the same minus the `tm_lt` call\047s inclusive cost", \
	    minus(whole, lt), 45)
	split(callees["calls", "probe_block_ro"], c, " ")
	rest = whole
	for (i = 1; i in c; i++) {
		x = per("calls", "probe_block_ro", c[i])
		row("&nbsp;&nbsp;of which `" c[i] "`", "inclusive, per block", \
		    x, "")
		rest = minus(rest, x)
	}
	row("&nbsp;&nbsp;of which the block\047s function itself",
	    "frame, restart point, calls, return", rest, "")
	row("`TM_ATOMIC` read-only block of one `tm_lt`, `LTX_INLINE`",
	    "as above, the `tm_lt` inlined", \
	    per("calls-inline", "measure", "probe_block_ro"), "")
	row("a whole transaction of one `tm_lt` and `tm_commit`",
	    "both calls alone in a function, its return included", \
	    per("calls", "measure", "probe_lt_commit"), "")
	row("`tm_commit` of a 1-line update", "inclusive", \
	    per("calls", "probe_commit1", "tm_commit"), 50)
	row("`tm_commit` of a 2-line update", "inclusive", \
	    per("calls", "probe_commit2", "tm_commit"), 50)
	# The block\047s end: tm__block_end (x86-64), else tm__atomic_end.
	endfn = ("calls", "probe_block_upd1", "tm__block_end") in ir ? \
	    "tm__block_end" : "tm__atomic_end"
	row("`TM_ATOMIC` end of a 1-line update block",
	    "`" endfn "`, inclusive (the block\047s commit)", \
	    per("calls", "probe_block_upd1", endfn), 50)
	row("`TM_ATOMIC` end of a 2-line update block",
	    "`" endfn "`, inclusive", \
	    per("calls", "probe_block_upd2", endfn), 50)
	row("`tm_malloc(64)` in a transaction", "inclusive; the block " \
	    "is freed 64 transactions later", \
	    per("calls", "probe_malloc", "tm_malloc"), 60)
	row("`tm_malloc(64)` of a block the transaction then frees",
	    "inclusive", per("calls", "probe_free_same", "tm_malloc"), 60)
	row("`tm_free` of a block an earlier transaction allocated",
	    "inclusive", per("calls", "probe_free_committed", "tm_free"), 80)
	row("&nbsp;&nbsp;`tm_commit` of that transaction",
	    "inclusive (deferred reclamation included)", \
	    per("calls", "probe_free_committed", "tm_commit"), "")
	row("`tm_free_sized` of a block an earlier transaction allocated",
	    "inclusive", \
	    per("calls", "probe_free_sized", "tm_free_sized"), 80)
	row("`tm_free` of a block the same transaction allocated",
	    "inclusive", per("calls", "probe_free_same", "tm_free"), 80)
	row("`tm_lt` of a word the transaction wrote (out of line)",
	    "inclusive", per("calls", "probe_raw", "tm_lt"), 20)
	row("`tm_lt` of a word the transaction wrote, `LTX_INLINE`",
	    "in the caller: the inlined code and any call out", \
	    minus(per("calls-inline", "probe_raw", "load_probe"), 1), 20)
	row("first `tm_lt`, beginning the transaction (out of line)",
	    "inclusive", per("calls", "probe_first", "tm_lt"), 20)
	row("first `tm_lt`, beginning the transaction, `LTX_INLINE`",
	    "in the caller: the inlined code and any call out", \
	    minus(per("calls-inline", "probe_first", "load_probe"), 1), 12)
}'
