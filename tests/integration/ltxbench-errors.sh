#!/bin/sh
# SPDX-License-Identifier: MIT
# ltxbench's error paths: what cannot run is said, before running when it
# can be known then, with a readable message and the documented status:
#   - --plot to a path that cannot be written, or with an extension other
#     than .png or .svg, fails before any run;
#   - a missing -fgnu-tm helper or libltx.so, or a workload an
#     implementation lacks, is named; nothing run means status 1;
#   - a failing gnuplot is reported by its exit status, not a raw wait
#     status, and leaves no empty plot file behind;
#   - a single-point plot draws without gnuplot warnings, PNG and SVG;
#   - --help describes every option; --progress shows the time left.
set -u
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
export ASAN_OPTIONS
: "${srcdir:=.}"
builddir=${top_builddir:-..}/tools/ltxbench
bench=$builddir/ltxbench
LTXBENCH_GNUTM=$builddir/ltxbench-gnutm
LTXBENCH_LIBLTX=${top_builddir:-..}/src/.libs/libltx.so
export LTXBENCH_GNUTM LTXBENCH_LIBLTX
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ltxbench-errors.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
tiny="-t 1 -r 1 -d 0.02 --no-progress"
fail=0
pass() { echo "PASS: $*"; }
bad() {
	echo "FAIL: $*"
	sed 's/^/    /' "$tmp/err"
	fail=1
}

# expect STATUS PATTERN DESCRIPTION -- ARGS: run ltxbench with ARGS; its
# status must be STATUS and its standard error must match PATTERN.
expect() {
	want=$1 pattern=$2 what=$3
	shift 4
	"$bench" "$@" >"$tmp/out" 2>"$tmp/err"
	got=$?
	if [ $got -ne "$want" ]; then
		bad "$what: status $got, not $want"
	elif ! grep -q -E -- "$pattern" "$tmp/err"; then
		bad "$what: no message matching '$pattern'"
	else
		pass "$what"
	fi
}

# Nothing may run before a --plot problem is reported.
ran_nothing() {
	if grep -q "runs, each one's invariant checked" "$tmp/err" ||
		[ -s "$tmp/out" ]; then
		bad "$1: the benchmark ran before the error"
	fi
}

expect 1 "--plot $tmp/no/such/dir/x.png: cannot write it: No such file or directory; nothing was run" \
	"--plot into a missing directory" -- $tiny -i mutex -w counter \
	--plot "$tmp/no/such/dir/x.png"
ran_nothing "--plot into a missing directory"
mkdir "$tmp/dir.png"
expect 1 "--plot $tmp/dir.png: is a directory" "--plot onto a directory" \
	-- $tiny -i mutex -w counter --plot "$tmp/dir.png"
ran_nothing "--plot onto a directory"
expect 2 "'.jpg' is not a format ltxbench writes; name the file .png or .svg" \
	"--plot out.jpg" -- $tiny -i mutex -w counter --plot "$tmp/out.jpg"
ran_nothing "--plot out.jpg"
[ -e "$tmp/out.jpg" ] && bad "--plot out.jpg created the file"

expect 1 "not run: libitm: the -fgnu-tm helper /nonexistent: No such file or directory" \
	"--gnutm /nonexistent" -- $tiny -i libitm -w counter --gnutm /nonexistent
grep -q "nothing ran" "$tmp/err" || bad "--gnutm /nonexistent: no 'nothing ran'"
# (with a helper that exists, so that the library is what is missing,
# also in builds without -fgnu-tm)
printf '#!/bin/sh\nexit 0\n' >"$tmp/helper"
chmod +x "$tmp/helper"
expect 1 "not run: ltx-itm: libltx /nonexistent.so: No such file or directory" \
	"--libltx /nonexistent.so" -- $tiny -i ltx-itm -w counter \
	--gnutm "$tmp/helper" --libltx /nonexistent.so
grep -q "ld.so" "$tmp/err" && bad "--libltx /nonexistent.so reached the loader"
expect 1 "not run: lockfree does not implement intset-list \(only lifo, counter, hm93-counting\)" \
	"-i lockfree -w intset-list" -- $tiny -i lockfree -w intset-list
expect 0 "not run: lockfree does not implement intset-list" \
	"-i lockfree,mutex -w intset-list (some runs)" -- $tiny \
	-i lockfree,mutex -w intset-list

# --help: every long option of the source's table, described.
for o in $(sed -n 's/^[[:space:]]*{ "\([a-z-]*\)", [a-z_]*argument.*/\1/p' \
	"$srcdir/../tools/ltxbench/ltxbench.c"); do
	if ! "$bench" --help | grep -q -E -- "--$o( [A-Z]+)? +[a-z]"; then
		echo "FAIL: --help does not describe --$o"
		fail=1
	fi
done
[ $fail -eq 0 ] && pass "--help describes every option"

"$bench" -i mutex,spin -w counter -t 1,2 -r 2 -d 0.02 --progress \
	>/dev/null 2>"$tmp/err"
if tr '\r' '\n' <"$tmp/err" | grep -q -E 'run 1 of 2; about [0-9]+s left'; then
	pass "--progress shows the time left"
else
	bad "--progress shows no estimate of the time left"
fi

if ! command -v gnuplot >/dev/null 2>&1; then
	expect 1 "needs gnuplot" "--plot without gnuplot" -- $tiny \
		-i mutex -w counter --plot "$tmp/x.png"
	echo "SKIP: gnuplot is not installed: no plot drawn"
	exit $fail
fi
for ext in png svg; do
	expect 0 "plot written to $tmp/one.$ext" "a one-point $ext plot" -- \
		$tiny -i mutex,seq -w counter --plot "$tmp/one.$ext"
	if grep -i -q -E 'warning|gnuplot' "$tmp/err"; then
		bad "a one-point $ext plot: gnuplot complained"
	fi
done
if head -c 8 "$tmp/one.png" | od -An -c | grep -q 'P   N   G'; then
	pass "the .png plot is a PNG image"
else
	bad "$tmp/one.png is not a PNG image"
fi
if grep -q '<svg' "$tmp/one.svg"; then
	pass "the .svg plot is an SVG image"
else
	bad "$tmp/one.svg is not an SVG image"
fi

# A gnuplot that fails: its exit status, in words, and no empty file.
mkdir "$tmp/bin"
printf '#!/bin/sh\ncat >/dev/null\nexit 3\n' >"$tmp/bin/gnuplot"
chmod +x "$tmp/bin/gnuplot"
oldpath=$PATH
PATH="$tmp/bin:$PATH"
expect 1 "the plot was not written: gnuplot exited with status 3" \
	"a failing gnuplot" -- $tiny -i mutex -w counter --plot "$tmp/fail.png"
PATH=$oldpath
grep -q -E 'status (768|[0-9]{3,})' "$tmp/err" &&
	bad "a failing gnuplot: a raw wait status in the message"
[ -e "$tmp/fail.png" ] && bad "a failing gnuplot left $tmp/fail.png behind"
exit $fail
