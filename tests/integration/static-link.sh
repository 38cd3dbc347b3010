#!/bin/sh
# SPDX-License-Identifier: MIT
# static-link.sh: a program links fully statically with the flags ltx.pc
# gives (gcc -static ... $(pkg-config --static --libs ltx)) and runs,
# call stacks of abort sites (libunwind) included.  The flags come from
# this build's ltx.pc; -L puts this build's libltx.a ahead of any
# installed one.
# Environment: CC, CFLAGS, PKG_CONFIG, srcdir, top_builddir.
set -u
: "${CC:=cc}"
: "${PKG_CONFIG:=pkg-config}"
: "${srcdir:=.}"
: "${top_builddir:=..}"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ltx-static.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
case " ${CFLAGS:-} " in
*-fsanitize*)
	echo "SKIP: sanitizer runtimes do not link with -static"
	exit 77
	;;
esac
if [ ! -f "$top_builddir/src/.libs/libltx.a" ]; then
	echo "SKIP: no static libltx.a in this build (--disable-static)"
	exit 77
fi
echo 'int main(void) { return 0; }' >"$tmp/probe.c"
if ! $CC -static -o "$tmp/probe" "$tmp/probe.c" 2>/dev/null; then
	echo "SKIP: $CC cannot link static programs (no libc.a: libc6-dev)"
	exit 77
fi
PKG_CONFIG_PATH=$top_builddir${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
export PKG_CONFIG_PATH
fail=0
req=$($PKG_CONFIG --print-requires-private ltx)
case "$req" in
*libunwind*) echo "PASS: ltx.pc: Requires.private: $req" ;;
*)
	echo "FAIL: ltx.pc does not require libunwind privately ('$req')"
	fail=1
	;;
esac
libs=$($PKG_CONFIG --static --libs ltx) || exit 1
cflags=$($PKG_CONFIG --cflags ltx) || exit 1
echo "flags: $cflags $libs"
# shellcheck disable=SC2086
if ! $CC -static ${CFLAGS:-} -I"$srcdir/../include" $cflags \
	-o "$tmp/lifo" "$srcdir/../tools/examples/lifo.c" \
	-L"$top_builddir/src/.libs" $libs >"$tmp/err" 2>&1; then
	echo "FAIL: $CC -static ... \$(pkg-config --static --libs ltx):"
	sed 's/^/    /' "$tmp/err"
	exit 1
fi
if [ -s "$tmp/err" ]; then
	echo "FAIL: the static link warned:"
	sed 's/^/    /' "$tmp/err"
	fail=1
else
	echo "PASS: the static link succeeds without a warning"
fi
if LC_ALL=C readelf -l "$tmp/lifo" 2>/dev/null | grep -q 'INTERP'; then
	echo "FAIL: the program has a dynamic loader: not static"
	fail=1
fi
if LTX_STATS=stacks "$tmp/lifo" 4 2000 >"$tmp/out" 2>"$tmp/stats" &&
	grep -q 'OK, every element was popped exactly once' "$tmp/out" &&
	grep -q 'commits' "$tmp/stats"; then
	echo "PASS: the static program runs, with LTX_STATS=stacks"
else
	echo "FAIL: the static program failed:"
	sed 's/^/    /' "$tmp/out" "$tmp/stats"
	fail=1
fi
# The same flags in a dynamic link (as build systems that ask for
# --static flags but find libltx.so do) must work too.
# shellcheck disable=SC2086
if $CC ${CFLAGS:-} -I"$srcdir/../include" $cflags -o "$tmp/lifo-dyn" \
	"$srcdir/../tools/examples/lifo.c" -L"$top_builddir/src/.libs" \
	$libs >"$tmp/err" 2>&1 &&
	LD_LIBRARY_PATH=$top_builddir/src/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} \
		"$tmp/lifo-dyn" 2 1000 >"$tmp/out" 2>&1; then
	echo "PASS: the --static flags also link and run a dynamic program"
else
	echo "FAIL: a dynamic link with the --static flags:"
	sed 's/^/    /' "$tmp/err" "$tmp/out"
	fail=1
fi
# A -fgnu-tm program linked with libltx.a ahead of libitm: it pulls in
# only the libitm ABI's objects, and ltx's settings must still be read
# (LTX_ITM_REPORT prints what ran; a bad LTX_MODE is reported).
if [ "${GNU_TM:-no}" = yes ]; then
	# shellcheck disable=SC2086
	if $CC ${CFLAGS:-} -fgnu-tm -pthread -I"$srcdir/itm" \
		-o "$tmp/counter" "$srcdir/itm/counter.c" \
		"$top_builddir/src/.libs/libltx.a" \
		$($PKG_CONFIG --static --libs-only-l --libs-only-other ltx |
			sed 's/-lltx//') >"$tmp/err" 2>&1; then
		LTX_ITM_REPORT=1 LTX_MODE=bogus "$tmp/counter" 2 \
			>"$tmp/out" 2>"$tmp/err"
		if grep -q ': ok$' "$tmp/out" &&
			grep -q '^ltx-itm: [1-9][0-9]* transactions' "$tmp/err" &&
			grep -q 'LTX_MODE="bogus" is invalid' "$tmp/err"; then
			echo "PASS: a -fgnu-tm program linked with libltx.a" \
				"reads ltx's settings"
		else
			echo "FAIL: a -fgnu-tm program linked with libltx.a" \
				"ignored LTX_ITM_REPORT or LTX_MODE:"
			sed 's/^/    /' "$tmp/out" "$tmp/err"
			fail=1
		fi
	else
		echo "FAIL: a -fgnu-tm program does not link with libltx.a:"
		sed 's/^/    /' "$tmp/err"
		fail=1
	fi
fi
exit $fail
