#!/bin/sh
# SPDX-License-Identifier: MIT
# run-fuzz.sh [TARGET...]: build each libFuzzer target with clang
# (-fsanitize=fuzzer,address,undefined) against the runtime's sources and
# run it for FUZZ_SECONDS (default 30) from its corpus; exits non-zero if
# any target crashes (the input is saved in the build folder).
#
# A target NAME is tests/fuzz/fuzz_NAME.c with its seed corpus in
# tests/fuzz/corpus/NAME/ and an optional dictionary tests/fuzz/NAME.dict.
# To add one, add its name here:
TARGETS="config statseg"
#
# Each run leaves NAME.log and an automake-style NAME.trs in the build
# folder, so .ci/summarize counts each target as one test.
# Environment: CLANG (default clang), FUZZ_SECONDS, FUZZ_BUILD (default
# build-fuzz under the source tree).  New inputs the fuzzer finds go to
# FUZZ_BUILD/corpus-NAME, not into the repository; merge interesting ones
# by hand (./fuzz_NAME -merge=1 tests/fuzz/corpus/NAME FUZZ_BUILD/corpus-NAME).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
CLANG=${CLANG:-clang}
seconds=${FUZZ_SECONDS:-30}
out=${FUZZ_BUILD:-$top/build-fuzz}
[ $# -gt 0 ] || set -- $TARGETS

if ! echo 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n)
{ return 0; }' | "$CLANG" -x c -fsanitize=fuzzer -o /dev/null - 2>/dev/null; then
	echo "run-fuzz: $CLANG cannot build libFuzzer targets (Debian: clang, libclang-rt-dev)" >&2
	exit 77
fi
mkdir -p "$out"
out=$(cd "$out" && pwd) # the targets run from a directory inside it
libs="$(pkg-config --libs libunwind 2>/dev/null || true) -ldl -lm"
# ltx's private copy of jemalloc, made as src/Makefile.am makes it.
jem=$out/jemalloc_private.o
if [ ! -f "$jem" ]; then
	pic="$(pkg-config --variable=libdir jemalloc)/libjemalloc_pic.a"
	rm -rf "$out/jemalloc.tmp" && mkdir -p "$out/jemalloc.tmp"
	(cd "$out/jemalloc.tmp" && ar x "$pic" && rm -f jemalloc_cpp*)
	"$CLANG" -r -nostdlib -o "$jem" "$out"/jemalloc.tmp/*.o
	objcopy --redefine-syms="$top/src/rt/jemalloc.syms" \
		--remove-section=.init_array --remove-section=.rela.init_array \
		"$jem"
	rm -rf "$out/jemalloc.tmp"
fi
# The runtime's sources (the assembly ones included: TM_ATOMIC's restart
# point), less the libitm layer (it needs configure's config.h and its
# assembly checkpoint; no fuzz target reaches it).
srcs=$(ls "$top"/src/*/*.c "$top"/src/*/*.S | grep -v "/src/itm/")
flags="-g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined"
status=0
for t in "$@"; do
	bin=$out/fuzz_$t
	# The whole runtime, so that new sources are picked up by themselves.
	# shellcheck disable=SC2086
	"$CLANG" $flags -pthread -I"$top/include" -I"$top/src" \
		-o "$bin" "$here/fuzz_$t.c" $srcs "$jem" $libs
	mkdir -p "$out/corpus-$t"
	dict=
	[ -f "$here/$t.dict" ] && dict=-dict=$here/$t.dict
	echo "== fuzz $t: $seconds s"
	# From a scratch directory: an input may name a file ltx writes
	# (LTX_STATS_FILE), which must not land in the source tree.
	rm -rf "$out/cwd-$t"
	mkdir -p "$out/cwd-$t"
	if (cd "$out/cwd-$t" && exec "$bin" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
		-print_final_stats=1 -artifact_prefix="$out/$t-" $dict \
		"$out/corpus-$t" "$here/corpus/$t") >"$out/$t.log" 2>&1; then
		grep -E 'stat::number_of_executed_units|stat::new_units_added|cov:' \
			"$out/$t.log" | tail -n 3
		echo "== fuzz $t: passed"
		echo ":test-result: PASS" >"$out/$t.trs"
	else
		echo ":test-result: FAIL" >"$out/$t.trs"
		tail -n 40 "$out/$t.log" >&2
		echo "== fuzz $t: FAILED (log: $out/$t.log)" >&2
		status=1
	fi
done
exit $status
