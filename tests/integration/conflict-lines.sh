#!/bin/sh
# SPDX-License-Identifier: MIT
# conflict-lines.sh: ltxstat says which lines conflict, and why (issue 19).
#
# 1. conflict_lines's three cases under ltxstat, in both modes: two threads
#    updating one word (true sharing), each its own word of one line
#    (false sharing), each its own line, the two lines sharing an orec at
#    LTX_OREC_BITS=4 (aliasing).  Each case: at least 90 % of its conflict
#    aborts in its class, none as true sharing where no byte is shared, the
#    classes adding up to the aborts of the conflict rows, the line named,
#    and the advice (align; raise LTX_OREC_BITS to the bits that separate
#    the two lines, which the program works out itself).  How many
#    conflicts there are depends on the machine's load: only their shares
#    are asserted, once there are enough (the case runs longer if not).
#    The program's main thread runs a transaction first, so that the
#    workers' descriptor ids are not their reader slots: a visible-mode
#    holder looked up by the wrong one is found wrong (the requester
#    itself: true sharing where none is) or not at all (unknown).
#    The cases run with LTX_SERIAL_AFTER=0: a transaction that became
#    irrevocable after 16 aborts dooms the holder in its way, and such a
#    conflict is unknown by design -- the victim's abort has no line
#    ("doomed", "commit" rows), and a holder doomed between its LTX and
#    its ST never stores, so the aborts pending on its bytes stay unknown
#    (on a loaded machine, or under ASan, a holder descheduled in that
#    window made groups of 15-16 such aborts, its status DOOMED at every
#    look: up to 60 % of a run).  The worked example below keeps the
#    default.
# 2. The worked example of ltx(7): its program, as printed, reports false
#    sharing on its counters with the advice _Alignas(64); with the fix the
#    page shows, it aborts no more.
set -u
B=${abs_top_builddir:-$(cd .. && pwd)}
S=${srcdir:-.}
LTXSTAT="$B/tools/ltxstat/ltxstat"
LIB="$B/src/.libs/libltx.so.0"
PROG=./conflict_lines
[ -x "$PROG" ] || PROG="$B/tests/conflict_lines"
LIBOPT=
[ -f "$LIB" ] && LIBOPT="--lib $LIB"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
MIN=20 # conflicts needed before shares mean anything

# key FILE KEY: the number after "KEY": in a one-line JSON report.
key() {
	sed -n "s/.*\"$2\":\([0-9][0-9]*\).*/\1/p" "$1" | head -n 1
}
classes() { # FILE: the conflict_classes object
	sed -n 's/.*"conflict_classes":{\([^}]*\)}.*/\1/p' "$1"
}
class() { # FILE CLASS
	classes "$1" | sed -n "s/.*\"$2\":\([0-9]*\).*/\1/p"
}
total() { # FILE: all conflict aborts classified
	classes "$1" | tr ',' '\n' | sed 's/.*://' | awk '{ s += $1 } END { print s + 0 }'
}
rows() { # FILE: the aborts of the conflict rows
	sed -n 's/.*"abort_rows":{\([^}]*\)}.*/\1/p' "$1" | tr ',' '\n' |
		awk -F: '$1 ~ /"(conflict_lt|conflict_st|upgrade|validate|commit|doomed)"/ { s += $2 }
			 END { print s + 0 }'
}

# run NAME ENV CASE: ltxstat --json of conflict_lines CASE into $T/NAME,
# longer until it had MIN conflicts.
run() {
	for n in 100000 1000000 5000000; do
		env LTX_SERIAL_AFTER=0 $2 "$LTXSTAT" $LIBOPT --json -o "$T/$1" -- "$PROG" "$3" $n \
			>"$T/$1.out" || fail "$1: ltxstat -- conflict_lines $3 $n: $?"
		[ "$(total "$T/$1")" -ge $MIN ] && return 0
	done
	fail "$1: fewer than $MIN conflicts even with $n iterations"
}

# check NAME CLASS WHAT ADVICE: the shares of a run, its top line.
check() {
	j=$T/$1 all=$(total "$T/$1") got=$(class "$T/$1" "$2")
	[ "$all" -eq "$(rows "$j")" ] ||
		fail "$1: classes add up to $all, the conflict rows to $(rows "$j")"
	[ $((got * 100)) -ge $((all * 90)) ] ||
		fail "$1: $got of $all conflicts as $2 ($(classes "$j"))"
	[ "$2" = true_sharing ] || [ "$(class "$j" true_sharing)" -eq 0 ] ||
		fail "$1: true sharing reported where nothing is shared ($(classes "$j"))"
	top=$(sed -n 's/.*"lines":\[//p' "$j" | sed 's/\("advice":"[^"]*"\).*/\1/')
	echo "$top" | grep -q "\"class\":\"$2\"" ||
		fail "$1: the top line is not $2: $top"
	echo "$top" | grep -q "\"what\":\"$3" ||
		fail "$1: the top line is not named $3: $top"
	echo "$top" | grep -q "\"advice\":\"[^\"]*$4" ||
		fail "$1: no advice '$4': $top"
	echo "PASS: $1: $got of $all conflicts as $2"
}

for mode in invisible visible; do
	run true-$mode LTX_MODE=$mode true
	check true-$mode true_sharing "shared_word " "use the same bytes"
	run false-$mode LTX_MODE=$mode false
	check false-$mode false_sharing "one_line " \
		"one_line+0x8 starts a line of its own (_Alignas(64))"
	run alias-$mode "LTX_MODE=$mode LTX_OREC_BITS=4" alias
	bits=$(sed -n 's/^separating bits: //p' "$T/alias-$mode.out")
	[ -n "$bits" ] || fail "alias-$mode: no separating bits"
	check alias-$mode aliasing "many" \
		"raise LTX_OREC_BITS to $bits (now 4)"
	grep -q "\"orec_bits_needed\":$bits" "$T/alias-$mode" ||
		fail "alias-$mode: orec_bits_needed is not $bits"
	grep -q '"shares_record_with":{"addr":"0x[0-9a-f]*","what":"many' \
		"$T/alias-$mode" || fail "alias-$mode: the other line not named"
done

# The text summary says the same as the JSON.
"$LTXSTAT" $LIBOPT -o "$T/text" -- "$PROG" false 1000000 >/dev/null ||
	fail "text summary: $?"
grep -q '^  conflict aborts by class (of [0-9,]*):$' "$T/text" &&
	grep -q '^ *[0-9,]*  false sharing  *# *[0-9.]* %$' "$T/text" &&
	grep -q '^ *bytes 8-15  *one_line+0x8 (conflict_lines)$' "$T/text" &&
	grep -q '^ *advice: pad or align the data so that one_line+0x8' "$T/text" ||
	{ cat "$T/text"; fail "text summary: no conflict lines"; }

# 2. The worked example of ltx(7).
awk '/^\.Sh EXAMPLES/ { ex = 1; next } /^\.Sh / { ex = 0 }
     ex && /^\.Bd -literal/ { n++; inb = 1; next } ex && /^\.Ed/ { inb = 0; next }
     ex && inb { gsub(/\\e/, "\\"); gsub(/\\&/, ""); print > ("'"$T"'/ex-" n) }' \
	"$S/../man/ltx.7"
prog=$(grep -l '^int main(' "$T"/ex-* | head -n 1)
fix=$(grep -l '^struct counters {' "$T"/ex-* | grep -v "$prog" | head -n 1)
[ -n "$prog" ] && [ -n "$fix" ] || fail "ltx(7): no worked example (program and fix)"
LIBTOOL=${LIBTOOL:-$B/libtool}
# With the build's CFLAGS and LDFLAGS (make check exports them): a
# sanitizer build's static libltx needs its runtime in the program too.
build() { # SRC OUT
	$LIBTOOL --mode=link --tag=CC ${CC:-cc} -O2 ${CFLAGS:-} \
		-I"$S/../include" -o "$2" "$1" "$B/src/libltx.la" \
		${LDFLAGS:-} -lpthread >"$2.log" 2>&1 ||
		{ cat "$2.log"; fail "ltx(7) example: does not build"; }
}
cp "$prog" "$T/counters.c"
build "$T/counters.c" "$T/counters"
# The fix: the page's struct in place of the program's.
awk -v fix="$fix" '/^struct counters {/ { while ((getline l < fix) > 0) print l; skip = 1; next }
	skip && /^};/ { skip = 0; next } !skip' "$prog" >"$T/fixed.c"
grep -q '_Alignas(64)' "$T/fixed.c" || fail "ltx(7): the fix was not applied"
build "$T/fixed.c" "$T/fixed"
for mode in invisible visible; do
	for try in 1 2 3; do
		LTX_MODE=$mode "$LTXSTAT" $LIBOPT --json -o "$T/ex-$mode" -- \
			"$T/counters" >"$T/ex.out" || fail "ltx(7) example ($mode): $?"
		[ "$(total "$T/ex-$mode")" -ge $MIN ] && break
	done
	[ "$(total "$T/ex-$mode")" -ge $MIN ] ||
		fail "ltx(7) example ($mode): fewer than $MIN conflicts"
	check ex-$mode false_sharing "counters " \
		"counters+0x8 starts a line of its own (_Alignas(64))"
	LTX_MODE=$mode "$LTXSTAT" $LIBOPT --json -o "$T/fx" -- "$T/fixed" \
		>"$T/fx.out" || fail "ltx(7) fixed example ($mode): $?"
	[ "$(key "$T/fx" aborts)" = 0 ] ||
		fail "ltx(7) fixed example ($mode): $(key "$T/fx" aborts) aborts"
	echo "PASS: ltx(7) example ($mode): false sharing, then no abort with _Alignas(64)"
done
exit 0
