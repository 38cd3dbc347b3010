#!/bin/sh
# SPDX-License-Identifier: MIT
# cxx-check.sh: <ltx/tm.h> and <ltx/isa.h> compile as C++ without a
# warning (-Wall -Wextra -pedantic -Werror) in every standard from C++11
# that the compiler knows, with and without LTX_INLINE; and TM_ATOMIC, C
# only, is refused at the line that uses it with a message naming
# TM_ATOMIC(3) (tests/integration/cxx_tm_atomic.cc must not compile).
# Environment: CXX, CXXFLAGS, srcdir.
set -u
: "${CXX:=c++}"
: "${srcdir:=.}"
inc=$srcdir/../include
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ltx-cxx.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail=0
stds=
for std in c++11 c++14 c++17 c++20 c++23; do
	if echo 'int main() { return 0; }' |
		$CXX -std=$std -x c++ -fsyntax-only - 2>/dev/null; then
		stds="$stds $std"
	fi
done
if [ -z "$stds" ]; then
	echo "SKIP: $CXX compiles no C++11 (is a C++ compiler installed?)"
	exit 77
fi
for std in $stds; do
	for def in "" -DLTX_INLINE; do
		# shellcheck disable=SC2086
		if $CXX ${CXXFLAGS:-} -std=$std $def -Wall -Wextra -pedantic \
			-Werror -I"$inc" -fsyntax-only \
			"$srcdir/integration/cxx_headers.cc" \
			>"$tmp/err" 2>&1; then
			echo "PASS: the headers compile cleanly as $std $def"
		else
			echo "FAIL: the headers as $std $def:"
			sed 's/^/    /' "$tmp/err"
			fail=1
		fi
	done
	line=$(grep -n 'cxx-check: the error is here' \
		"$srcdir/integration/cxx_tm_atomic.cc" | cut -d: -f1)
	# shellcheck disable=SC2086
	if $CXX ${CXXFLAGS:-} -std=$std -I"$inc" -fsyntax-only \
		"$srcdir/integration/cxx_tm_atomic.cc" >"$tmp/err" 2>&1; then
		echo "FAIL: TM_ATOMIC compiled as $std: C++ must refuse it"
		fail=1
	elif ! grep -q "cxx_tm_atomic.cc:$line:" "$tmp/err" ||
		! grep -q 'TM_ATOMIC is C only.*TM_ATOMIC(3)' "$tmp/err"; then
		echo "FAIL: TM_ATOMIC in $std was refused, but not at line" \
			"$line with a message naming TM_ATOMIC(3):"
		sed 's/^/    /' "$tmp/err"
		fail=1
	else
		echo "PASS: TM_ATOMIC is refused as $std:" \
			"$(grep -m 1 -o 'TM_ATOMIC is C only[^"]*' "$tmp/err")"
	fi
done
exit $fail
