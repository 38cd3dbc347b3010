#!/bin/sh
# SPDX-License-Identifier: MIT
# setuid-env.sh: a set-user-ID program ignores the LTX_* environment its
# caller chose (LTX_STATS_FILE would otherwise make it write any file), and
# a summary file it is told to use by the program itself is opened as its
# caller could: never one the caller could not write.  Makes a set-user-ID
# root copy of setuid_stats and runs it as nobody, so it needs root (CI runs
# as root) and setpriv(1); skipped otherwise, or where the file system
# ignores the set-user-ID bit.
set -u
[ "$(id -u)" = 0 ] || { echo "setuid-env: SKIP: needs root"; exit 77; }
command -v setpriv >/dev/null 2>&1 ||
	{ echo "setuid-env: SKIP: no setpriv"; exit 77; }
nobody=$(id -u nobody 2>/dev/null) || { echo "setuid-env: SKIP: no user nobody"; exit 77; }
T=$(mktemp -d /tmp/ltx-setuid.XXXXXX)
trap 'rm -rf "$T"' EXIT
chmod 755 "$T"
cp ./setuid_stats "$T/prog"
chown 0:0 "$T/prog"
chmod 4755 "$T/prog"
as_nobody() {
	setpriv --reuid="$nobody" --regid="$nobody" --clear-groups -- "$@"
}
fail=0

# A root-only file, and one the caller (nobody) may write.
printf 'secret\n' >"$T/victim"
chmod 600 "$T/victim"
: >"$T/mine"
chown "$nobody" "$T/mine"

as_nobody env LTX_STATS=1 LTX_STATS_FILE="$T/victim" "$T/prog" \
	>"$T/out" 2>"$T/err"
st=$?
if ! grep -q '^euid=0$' "$T/out"; then
	echo "setuid-env: SKIP: the set-user-ID bit had no effect here"
	exit 77
fi
[ $st -eq 0 ] || { echo "setuid-env: the program failed ($st)"; cat "$T/err"; fail=1; }
if [ "$(cat "$T/victim")" != secret ]; then
	echo "FAIL: LTX_STATS_FILE from the environment rewrote a root-only file"
	fail=1
fi
grep -q '^ltx: LTX_STATS_FILE is ignored: ' "$T/err" || {
	echo "FAIL: no word that LTX_STATS_FILE was ignored:"
	cat "$T/err"
	fail=1
}

# The program names the file itself: opened as nobody would, so refused.
as_nobody "$T/prog" "$T/victim" >/dev/null 2>"$T/err"
if [ "$(cat "$T/victim")" != secret ]; then
	echo "FAIL: a summary file named by the program clobbered a root-only file"
	fail=1
fi
grep -q "^ltx: LTX_STATS_FILE: cannot open $T/victim: Permission denied; summary on stderr" \
	"$T/err" || { echo "FAIL: no refusal on stderr:"; cat "$T/err"; fail=1; }
grep -q ' commits ' "$T/err" || { echo "FAIL: the summary was lost"; fail=1; }

# ... while a file the caller may write gets the summary.
as_nobody "$T/prog" "$T/mine" >/dev/null 2>"$T/err"
grep -q ' commits ' "$T/mine" || {
	echo "FAIL: no summary in a file the caller may write:"
	cat "$T/err"
	fail=1
}
[ $fail -eq 0 ] && echo "setuid-env: OK"
exit $fail
