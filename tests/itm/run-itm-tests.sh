#!/bin/sh
# SPDX-License-Identifier: MIT
# Runs the -fgnu-tm test programs under GCC's libitm and under ltx, and
# (ltx only) mixed.c, mixed_bank.c, alone_churn.c and handlers.c, where
# GCC and tm_* transactions share data or the tm_* API serves GCC ones.
#
# Each program in tests/itm checks its own result.  It is built once with
# gcc -fgnu-tm (so it needs libitm.so.1) and once linked with -lltx ahead of
# libitm; then, at 1, 2 and 8 threads and in each conflict-detection mode
# ltx accepts, it runs
#   - against libitm (the reference),
#   - with LD_PRELOAD=libltx.so (the unmodified binary),
#   - linked with -lltx, with the single-thread serial path off
#     (LTX_ITM_SERIAL=never), so that the instrumented path runs even at 1
#     thread.
# Under ltx, LTX_ITM_REPORT=1 makes the library print a summary line at exit;
# a run passes only if that line is there with a transaction count above 0,
# which proves the calls went to ltx and not to libitm.  At 1 thread the
# programs are deterministic and their output must match libitm's exactly.
#
# Environment: CC, CXX, srcdir (tests/), LTXLIBDIR (the directory holding
# libltx.so), GNU_TM (yes when configure found -fgnu-tm and libitm).
set -u

: "${CC:=cc}"
: "${CXX:=c++}"
: "${srcdir:=.}"
: "${LTXLIBDIR:=../src/.libs}"
: "${GNU_TM:=yes}"

if [ "$GNU_TM" != yes ]; then
	echo "SKIP: $CC cannot build -fgnu-tm programs with libitm"
	exit 77
fi

LTXLIB=$(cd "$LTXLIBDIR" && pwd)/libltx.so
if [ ! -f "$LTXLIB" ]; then
	echo "SKIP: no shared libltx.so in $LTXLIBDIR (--disable-shared?)"
	exit 77
fi

PROGS="counter list rbtree memops memops_model clone relaxed nested signals threads alloc_handoff vectors"
work=itm-work
mkdir -p "$work"
fail=0

build() {
	p=$1
	src=$srcdir/itm/$p.c
	cc=$CC
	if [ ! -f "$src" ]; then
		src=$srcdir/itm/$p.cc
		cc=$CXX
	fi
	$cc -O2 -fgnu-tm -pthread -I"$srcdir/itm" -I"$srcdir/../include" \
		"$src" -o "$work/$p.itm" || return 1
	$cc -O2 -fgnu-tm -pthread -I"$srcdir/itm" -I"$srcdir/../include" \
		"$src" \
		-o "$work/$p.ltx" -Wl,--no-as-needed -L"$LTXLIBDIR" -lltx \
		-Wl,-rpath,"$(dirname "$LTXLIB")" || return 1
}

# The C++ program needs a C++ compiler that accepts -fgnu-tm.
echo 'int main() { int x = 0; __transaction_atomic { x++; } return x - 1; }' \
	>"$work/probe.cc"
if $CXX -fgnu-tm "$work/probe.cc" -o "$work/probe" 2>/dev/null; then
	PROGS="$PROGS exceptions"
else
	echo "note: $CXX cannot build -fgnu-tm programs; C++ test skipped"
fi

modes=invisible
for p in $PROGS; do
	if ! build "$p"; then
		echo "FAIL: $p does not build"
		fail=1
	fi
done

# Modes: invisible always; visible when ltx accepts it (no complaint).
if [ -n "$(LTX_MODE=visible LD_PRELOAD="$LTXLIB" "$work/counter.itm" 1 \
	2>&1 >/dev/null | grep LTX_MODE)" ]; then
	echo "note: LTX_MODE=visible is not accepted by this ltx; testing" \
		"the invisible mode only"
else
	modes="invisible visible"
fi

# check NAME: the last run's out/err passed (ok line; ltx report if $2).
check() {
	name=$1
	want_report=$2
	if [ "$rc" -ne 0 ] || ! grep -q ': ok$' "$work/out"; then
		echo "FAIL: $name (exit $rc)"
		cat "$work/out" "$work/err"
		fail=1
		return
	fi
	if [ "$want_report" = yes ]; then
		n=$(sed -n 's/^ltx-itm: \([0-9]*\) transactions.*/\1/p' \
			"$work/err")
		if [ -z "$n" ] || [ "$n" -eq 0 ]; then
			echo "FAIL: $name: no ltx-itm report, so ltx did not" \
				"run the transactions"
			cat "$work/err"
			fail=1
			return
		fi
	fi
	echo "PASS: $name: $(cat "$work/out")${n:+ [ltx: $n transactions]}"
}

# A bad LTX_ITM_SERIAL is reported once, and the default kept.
n=$(LTX_ITM_SERIAL=bogus LD_PRELOAD="$LTXLIB" "$work/counter.itm" 2 2>&1 \
	>/dev/null | grep -c 'LTX_ITM_SERIAL="bogus" is invalid')
if [ "$n" -ne 1 ]; then
	echo "FAIL: a bad LTX_ITM_SERIAL was reported $n times, not once"
	fail=1
fi

# The reference run under libitm.  GCC 12's libitm calls abort() (exit
# 134, nothing on stderr) when a transaction that it has made irrevocable
# (its serial fallback after many restarts, under contention) reaches
# __transaction_cancel (_ITM_abortTransaction tests STATE_IRREVOCABLE):
# memops_model at 2 threads died so in about 1 run in 20.  That is
# libitm's failure, not the program's: such a run is tried again, twice
# at most, and said so.
libitm_ref() {
	tries=0
	while :; do
		"$@" >"$work/out" 2>"$work/err"
		rc=$?
		tries=$((tries + 1))
		if [ "$rc" -ne 134 ] || [ -s "$work/err" ] || [ $tries -ge 3 ]
		then
			break
		fi
		echo "note: $*: libitm aborted (exit 134, no message: its" \
			"abort of a cancel in a transaction it made irrevocable);" \
			"run again"
	done
}

for p in $PROGS; do
	for t in 1 2 8; do
		n=
		libitm_ref "$work/$p.itm" $t
		check "$p $t threads, libitm" no
		cp "$work/out" "$work/ref"
		for m in $modes; do
			LTX_MODE=$m LTX_ITM_REPORT=1 LD_PRELOAD="$LTXLIB" \
				"$work/$p.itm" $t >"$work/out" 2>"$work/err"
			rc=$?
			check "$p $t threads, LD_PRELOAD ltx, $m" yes
			if [ $t -eq 1 ] && ! cmp -s "$work/out" "$work/ref"; then
				echo "FAIL: $p: ltx and libitm results differ"
				fail=1
			fi
			LTX_MODE=$m LTX_ITM_REPORT=1 LTX_ITM_SERIAL=never \
				"$work/$p.ltx" $t >"$work/out" 2>"$work/err"
			rc=$?
			check "$p $t threads, -lltx, instrumented, $m" yes
			if [ $t -eq 1 ] && ! cmp -s "$work/out" "$work/ref"; then
				echo "FAIL: $p: ltx and libitm results differ"
				fail=1
			fi
		done
	done
done
# A cancel undoes counter++ (GCC's read-for-write, then write-after-write)
# and x += k of every scalar type: ltx only, since libitm's serial mode
# leaves the increment (memops_model.c says why).
if ! build cancel_types; then
	echo "FAIL: cancel_types does not build"
	fail=1
fi
for t in 1 2 8; do
	for m in $modes; do
		n=
		LTX_MODE=$m LTX_ITM_REPORT=1 LD_PRELOAD="$LTXLIB" \
			"$work/memops_model.itm" $t rfw >"$work/out" 2>"$work/err"
		rc=$?
		check "memops_model rfw $t threads, LD_PRELOAD ltx, $m" yes
		LTX_MODE=$m LTX_ITM_REPORT=1 LTX_ITM_SERIAL=never \
			"$work/memops_model.ltx" $t rfw >"$work/out" 2>"$work/err"
		rc=$?
		check "memops_model rfw $t threads, -lltx, instrumented, $m" yes
		LTX_MODE=$m LTX_ITM_REPORT=1 LD_PRELOAD="$LTXLIB" \
			"$work/cancel_types.itm" $t >"$work/out" 2>"$work/err"
		rc=$?
		check "cancel_types $t threads, LD_PRELOAD ltx, $m" yes
		LTX_MODE=$m LTX_ITM_REPORT=1 LTX_ITM_SERIAL=never \
			"$work/cancel_types.ltx" $t >"$work/out" 2>"$work/err"
		rc=$?
		check "cancel_types $t threads, -lltx, instrumented, $m" yes
	done
done
# Clone tables registered and deregistered (dlopen/dlclose of a -fgnu-tm
# object) while other threads look clones up: clone.c with a plugin.
if $CC -O2 -fgnu-tm -shared -fPIC "$srcdir/itm/clone_plugin.c" \
	-o "$work/clone_plugin.so"; then
	plugin=$(cd "$work" && pwd)/clone_plugin.so
	for t in 1 2 8; do
		n=
		"$work/clone.itm" $t "$plugin" >"$work/out" 2>"$work/err"
		rc=$?
		check "clone reloading $t threads, libitm" no
		for m in $modes; do
			LTX_MODE=$m LTX_ITM_REPORT=1 LD_PRELOAD="$LTXLIB" \
				"$work/clone.itm" $t "$plugin" \
				>"$work/out" 2>"$work/err"
			rc=$?
			check "clone reloading $t threads, LD_PRELOAD ltx, $m" yes
			LTX_MODE=$m LTX_ITM_REPORT=1 LTX_ITM_SERIAL=never \
				"$work/clone.ltx" $t "$plugin" \
				>"$work/out" 2>"$work/err"
			rc=$?
			check "clone reloading $t threads, -lltx, instrumented, $m" yes
		done
	done
else
	echo "FAIL: clone_plugin does not build"
	fail=1
fi
# The application kernels of bench_apps.c (bench-apps.sh times them), tiny
# sizes: each checks its own invariants, under libitm and ltx.
if build bench_apps; then
	for app in vacation kmeans bayes; do
		for t in 1 2 4; do
			n=
			"$work/bench_apps.itm" $app $t tiny >"$work/out" \
				2>"$work/err"
			rc=$?
			check "bench_apps $app $t threads, libitm" no
			cp "$work/out" "$work/ref"
			for m in $modes; do
				LTX_MODE=$m LTX_ITM_REPORT=1 LD_PRELOAD="$LTXLIB" \
					"$work/bench_apps.itm" $app $t tiny \
					>"$work/out" 2>"$work/err"
				rc=$?
				check "bench_apps $app $t threads, LD_PRELOAD ltx, $m" yes
				LTX_MODE=$m LTX_ITM_REPORT=1 LTX_ITM_SERIAL=never \
					"$work/bench_apps.ltx" $app $t tiny \
					>"$work/out" 2>"$work/err"
				rc=$?
				check "bench_apps $app $t threads, -lltx, instrumented, $m" yes
				if ! cmp -s "$work/out" "$work/ref"; then
					echo "FAIL: bench_apps $app: ltx and libitm results differ"
					fail=1
				fi
			done
		done
	done
else
	echo "FAIL: bench_apps does not build"
	fail=1
fi
# GCC and tm_* transactions on the same data (ltx only: it uses the tm_*
# API): N threads of each, in each mode.
if $CC -O2 -fgnu-tm -pthread -I"$srcdir/itm" -I"$srcdir/../include" \
	"$srcdir/itm/mixed.c" -o "$work/mixed.ltx" -Wl,--no-as-needed \
	-L"$LTXLIBDIR" -lltx -Wl,-rpath,"$(dirname "$LTXLIB")"; then
	for t in 1 2 4; do
		for m in $modes; do
			n=
			LTX_MODE=$m LTX_ITM_REPORT=1 "$work/mixed.ltx" $t \
				>"$work/out" 2>"$work/err"
			rc=$?
			check "mixed $t+$t threads, -lltx, $m" yes
		done
	done
else
	echo "FAIL: mixed does not build"
	fail=1
fi
# tm_on_commit and tm_on_abort from GCC transactions (ltx only: tm_*
# API), with restarts and cancels: N threads, each mode, instrumented or
# as the runtime picks.
if $CC -O2 -fgnu-tm -pthread -I"$srcdir/itm" -I"$srcdir/../include" \
	"$srcdir/itm/handlers.c" -o "$work/handlers.ltx" -Wl,--no-as-needed \
	-L"$LTXLIBDIR" -lltx -Wl,-rpath,"$(dirname "$LTXLIB")"; then
	for t in 1 2 4; do
		for m in $modes; do
			for serial in auto never; do
				n=
				LTX_MODE=$m LTX_ITM_SERIAL=$serial \
					LTX_ITM_REPORT=1 "$work/handlers.ltx" \
					$t >"$work/out" 2>"$work/err"
				rc=$?
				check "handlers $t threads, $m, LTX_ITM_SERIAL=$serial" yes
			done
		done
	done
else
	echo "FAIL: handlers does not build"
	fail=1
fi
# A bank shared by GCC and tm_* transactions, with every kind of GCC
# transaction (irrevocable, closed nesting) and every documented setting
# of the serial fallback: money is conserved, audits see the total.
if $CC -O2 -fgnu-tm -pthread -I"$srcdir/itm" -I"$srcdir/../include" \
	"$srcdir/itm/mixed_bank.c" -o "$work/mixed_bank.ltx" \
	-Wl,--no-as-needed -L"$LTXLIBDIR" -lltx \
	-Wl,-rpath,"$(dirname "$LTXLIB")"; then
	for t in 2 4; do
		for m in $modes; do
			for after in 0 1 100 1000; do
				n=
				LTX_MODE=$m LTX_SERIAL_AFTER=$after \
					LTX_ITM_REPORT=1 \
					"$work/mixed_bank.ltx" $t 20000 \
					>"$work/out" 2>"$work/err"
				rc=$?
				check "mixed_bank $t+$t threads, $m, LTX_SERIAL_AFTER=$after" yes
			done
		done
	done
else
	echo "FAIL: mixed_bank does not build"
	fail=1
fi
# A GCC thread alone most of the time (uninstrumented, the token taken
# without a drain) beside tm_* threads that come and go one by one.
if $CC -O2 -fgnu-tm -pthread -I"$srcdir/itm" -I"$srcdir/../include" \
	"$srcdir/itm/alone_churn.c" -o "$work/alone_churn.ltx" \
	-Wl,--no-as-needed -L"$LTXLIBDIR" -lltx \
	-Wl,-rpath,"$(dirname "$LTXLIB")"; then
	for m in $modes; do
		n=
		LTX_MODE=$m LTX_ITM_REPORT=1 "$work/alone_churn.ltx" 300 \
			>"$work/out" 2>"$work/err"
		rc=$?
		check "alone_churn, $m" yes
	done
else
	echo "FAIL: alone_churn does not build"
	fail=1
fi
# A signal handler that runs GCC transactions, on a thread whose own
# transactions run uninstrumented (alone: the serial token held) or
# instrumented (ltx only: under libitm the first case waits for ever).
if $CC -O2 -fgnu-tm -pthread -I"$srcdir/itm" "$srcdir/itm/handler_tx.c" \
	-o "$work/handler_tx.ltx" -Wl,--no-as-needed -L"$LTXLIBDIR" -lltx \
	-Wl,-rpath,"$(dirname "$LTXLIB")"; then
	for m in $modes; do
		n=
		LTX_MODE=$m LTX_ITM_REPORT=1 "$work/handler_tx.ltx" 1 \
			>"$work/out" 2>"$work/err"
		rc=$?
		check "handler_tx 1 thread, -lltx, $m" yes
		LTX_MODE=$m LTX_ITM_REPORT=1 LTX_ITM_SERIAL=never \
			"$work/handler_tx.ltx" 1 >"$work/out" 2>"$work/err"
		rc=$?
		check "handler_tx 1 thread, -lltx, instrumented, $m" yes
		# The handler on the workers' own line, at 1 and 8 threads.
		for t in 1 8; do
			LTX_MODE=$m LTX_ITM_REPORT=1 "$work/handler_tx.ltx" \
				$t shared >"$work/out" 2>"$work/err"
			rc=$?
			check "handler_tx $t threads shared, -lltx, $m" yes
			LTX_MODE=$m LTX_ITM_REPORT=1 LTX_ITM_SERIAL=never \
				"$work/handler_tx.ltx" $t shared \
				>"$work/out" 2>"$work/err"
			rc=$?
			check "handler_tx $t threads shared, -lltx, instrumented, $m" yes
			# Threads that run no transaction: the handlers
			# borrow spare descriptors.
			LTX_MODE=$m LTX_ITM_REPORT=1 "$work/handler_tx.ltx" \
				$t bystander >"$work/out" 2>"$work/err"
			rc=$?
			check "handler_tx $t threads bystander, -lltx, $m" yes
		done
	done
else
	echo "FAIL: handler_tx does not build"
	fail=1
fi
# Build itm/$2.c linked with -lltx (ltx only) and run it, with the
# arguments after $2, in each mode under each LTX_ITM_SERIAL setting of
# the list $1.
ltx_serial_runs() {
	serials=$1
	p=$2
	shift 2
	if ! $CC -O2 -fgnu-tm -pthread -I"$srcdir/itm" "$srcdir/itm/$p.c" \
		-o "$work/$p.ltx" -Wl,--no-as-needed -L"$LTXLIBDIR" -lltx \
		-Wl,-rpath,"$(dirname "$LTXLIB")"; then
		echo "FAIL: $p does not build"
		fail=1
		return
	fi
	for m in $modes; do
		for serial in $serials; do
			n=
			LTX_MODE=$m LTX_ITM_REPORT=1 LTX_ITM_SERIAL=$serial \
				"$work/$p.ltx" "$@" >"$work/out" 2>"$work/err"
			rc=$?
			check "$p${*:+ $*}, -lltx, $m, LTX_ITM_SERIAL=$serial" yes
		done
	done
}
# Signal handlers that run GCC transactions while short-lived threads
# run theirs and exit: none may run on a thread after ltx has taken its
# descriptor back (it hung in malloc inside the handler).
ltx_serial_runs "auto never" handler_exit 4
# A signal whose handler runs a GCC transaction, landing in a system
# call that ltx makes while a serial transaction of its thread waits for
# another thread's (the handler ran at once and waited for ever for the
# token its own thread held).  The program's sched_yield puts the signal
# there every time.
ltx_serial_runs "auto never" token_wait
# The same, the signal landing in the allocator, called by ltx in a
# serial transaction (of a thread alone: LTX_ITM_SERIAL=auto only) to grow
# its undo log or to allocate the transaction's block.  The program's
# realloc or malloc puts it there every time.
ltx_serial_runs auto log_wait realloc
ltx_serial_runs auto log_wait malloc
# A handler that jumps out of such a call (the thread held no token) must
# not leave it marked as ltx's: a later signal in the program's own system
# call, in a serial transaction, must run its handler at once (it waited
# for the transaction's end).
ltx_serial_runs "auto never" own_jump
exit $fail
