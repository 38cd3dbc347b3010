#!/bin/sh
# env-config.sh: LTX_* values from the environment.  A bad value is
# reported once on stderr, naming the variable and the accepted forms, and
# the program runs on with the default; good values are silent.
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
	fi
	if ! grep -q "accepted: " "$err"; then
		echo "env-config: $1=$2: the warning does not list the accepted forms"
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
expect_warning LTX_MODE quantum
expect_warning LTX_OREC_BITS 99
expect_warning LTX_CAPACITY lots
expect_warning LTX_CAPACITY -1
expect_warning LTX_OREC_BITS ""
expect_silent LTX_BACKOFF none
expect_silent LTX_BACKOFF yield
expect_silent LTX_BACKOFF "spin:n=100"
expect_silent LTX_BACKOFF "exp:max=1024"
expect_silent LTX_MODE invisible
expect_silent LTX_MODE visible
expect_silent LTX_CAPACITY 64
expect_silent LTX_CAPACITY unlimited
expect_silent LTX_OREC_BITS 4
expect_silent LTX_OREC_BITS 28
exit $fail
