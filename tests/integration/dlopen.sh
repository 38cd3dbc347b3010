#!/bin/sh
# SPDX-License-Identifier: MIT
# dlopen.sh: libltx.so loaded with dlopen(3) after the program started
# (as a plugin's dependency would be), as ltx(7) CAVEATS says: with
# GLIBC_TUNABLES=glibc.rtld.optional_static_tls=4096 it loads and runs a
# transaction; without, it either loads or fails with glibc's "static TLS
# block" error (its initial-exec thread-local storage, about 3 KiB, is
# more than glibc keeps for libraries loaded late), never otherwise.
# Environment: CC, CFLAGS, abs_top_builddir.
set -u
: "${CC:=cc}"
lib=${abs_top_builddir:?}/src/.libs/libltx.so
if [ ! -f "$lib" ]; then
	echo "SKIP: no shared libltx.so in this build (--disable-shared)"
	exit 77
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ltx-dlopen.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
cat >"$tmp/plug.c" <<'EOC'
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>

int main(int argc, char **argv)
{
	static uint64_t word;
	void (*st)(uint64_t *, uint64_t);
	int (*commit)(void);
	void *h;

	(void)argc;
	h = dlopen(argv[1], RTLD_NOW);
	if (h == NULL) {
		printf("dlopen: %s\n", dlerror());
		return 2;
	}
	*(void **)&st = dlsym(h, "tm_st");
	*(void **)&commit = dlsym(h, "tm_commit");
	if (st == NULL || commit == NULL) {
		printf("dlsym: %s\n", dlerror());
		return 1;
	}
	st(&word, 42);
	if (!commit() || word != 42) {
		printf("the transaction did not commit 42\n");
		return 1;
	}
	printf("loaded, committed\n");
	return 0;
}
EOC
# shellcheck disable=SC2086 # CFLAGS is a list of flags
if ! $CC ${CFLAGS:-} -o "$tmp/plug" "$tmp/plug.c" -ldl >"$tmp/cc.out" 2>&1; then
	cat "$tmp/cc.out"
	echo "FAIL: cannot build the dlopen probe"
	exit 1
fi
fail=0
out=$(GLIBC_TUNABLES=glibc.rtld.optional_static_tls=4096 "$tmp/plug" "$lib")
rc=$?
if [ $rc -eq 0 ]; then
	echo "PASS: with optional_static_tls=4096: $out"
else
	echo "FAIL: with optional_static_tls=4096 (status $rc): $out"
	fail=1
fi
out=$(env -u GLIBC_TUNABLES "$tmp/plug" "$lib")
rc=$?
case "$rc:$out" in
0:*) echo "PASS: without the tunable: $out" ;;
2:*"static TLS"*) echo "PASS: without the tunable, as documented: $out" ;;
*)
	echo "FAIL: without the tunable (status $rc): $out"
	fail=1
	;;
esac
exit $fail
