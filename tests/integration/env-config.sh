#!/bin/sh
# env-config.sh: LTX_* values from the environment.  A bad value is
# reported once on stderr, in one format for every setting, saying each
# thing once (the variable, the value, why if the accepted forms do not
# say it, the accepted forms, the default in force), and the program runs
# on with the default; good values are silent.  The exit summary is never
# lost silently (LTX_STATS_FILE on a full device).
set -u
lifo=../tools/examples/lifo
err=$(mktemp)
trap 'rm -f "$err"' EXIT
fail=0

expect_warning() { # VAR VALUE
	if ! env "$1=$2" $lifo 2 2000 >/dev/null 2>"$err"; then
		echo "env-config: $1=$2: the program failed"
		fail=1
	fi
	n=$(grep -c "^ltx: $1=\"$2\" is invalid" "$err")
	if [ "$n" != 1 ]; then
		echo "env-config: $1=$2: expected one warning, got:"
		cat "$err"
		fail=1
		return
	fi
	line=$(grep "^ltx: $1=\"$2\" is invalid" "$err")
	# One format: ... is invalid[ (why)]; accepted: FORMS; using the
	# default, DEFAULT
	rest=${line#"ltx: $1=\"$2\" is invalid"}
	case $rest in
	" ("*"); accepted: "*"; using the default, "?*) why=${rest#" ("}
		why=${why%%"); accepted: "*} ;;
	"; accepted: "*"; using the default, "?*) why= ;;
	*)
		echo "env-config: $1=$2: not the common format: $line"
		fail=1
		return
		;;
	esac
	forms=${rest#*"; accepted: "}
	forms=${forms%"; using the default, "*}
	# Said once: the reason does not repeat the accepted forms.
	case $why in
	*"$forms"*)
		echo "env-config: $1=$2: the reason repeats the forms: $line"
		fail=1
		;;
	esac
}

# expect_once VAR VALUE PHRASE: the warning says PHRASE exactly once.
expect_once() {
	env "$1=$2" $lifo 2 2000 >/dev/null 2>"$err"
	n=$(grep -o -F -- "$3" "$err" | wc -l)
	if [ "$n" != 1 ]; then
		echo "env-config: $1=$2: \"$3\" said $n times:"
		cat "$err"
		fail=1
	fi
}

expect_silent() { # VAR VALUE
	if ! env "$1=$2" $lifo 2 2000 >/dev/null 2>"$err" || [ -s "$err" ]; then
		echo "env-config: $1=$2: expected silent success, got:"
		cat "$err"
		fail=1
	fi
}

expect_warning LTX_BACKOFF bogus
expect_warning LTX_BACKOFF "exp:min=100,max=10"
expect_warning LTX_BACKOFF "spin:n=-1"
expect_warning LTX_BACKOFF "auto:n=64"
expect_warning LTX_BACKOFF "auto:min=100,max=10"
expect_warning LTX_MODE quantum
expect_warning LTX_OREC_BITS 99
expect_warning LTX_CAPACITY lots
expect_warning LTX_CAPACITY -1
expect_warning LTX_OREC_BITS ""
expect_warning LTX_STATS garbage
expect_warning LTX_SERIAL_AFTER -3
expect_warning LTX_ALLOC tcmalloc
expect_warning LTX_MEM_LIMIT 2t
expect_warning LTX_ITM_SERIAL sometimes
expect_warning LTX_ITM_REPORT yes
expect_once LTX_OREC_BITS 99 "from 4 to 28"
expect_once LTX_STATS garbage "stacks"
expect_once LTX_ITM_SERIAL sometimes "never"
expect_silent LTX_BACKOFF none
expect_silent LTX_BACKOFF yield
expect_silent LTX_BACKOFF "spin:n=100"
expect_silent LTX_BACKOFF "exp:max=1024"
expect_silent LTX_BACKOFF auto
expect_silent LTX_BACKOFF "auto:min=128,max=8192"
expect_silent LTX_MODE invisible
expect_silent LTX_MODE visible
expect_silent LTX_CAPACITY 64
expect_silent LTX_CAPACITY unlimited
expect_silent LTX_OREC_BITS 4
expect_silent LTX_OREC_BITS 28
expect_silent LTX_ITM_SERIAL never
expect_silent LTX_ITM_REPORT 0

# A summary that cannot be written is reported, and goes to stderr.
if [ -w /dev/full ]; then
	LTX_STATS=1 LTX_STATS_FILE=/dev/full $lifo 2 2000 >/dev/null 2>"$err"
	if ! grep -q '^ltx: LTX_STATS_FILE: cannot write /dev/full: .*; summary on stderr' "$err" ||
		! grep -q ' commits ' "$err"; then
		echo "env-config: LTX_STATS_FILE=/dev/full: no error, or no summary on stderr:"
		cat "$err"
		fail=1
	fi
fi
exit $fail
