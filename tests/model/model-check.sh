#!/bin/sh
# SPDX-License-Identifier: MIT
# Model-check the conflict-detection protocols (tests/model/*.pml) with Spin:
# every model must verify with no error (assertions, invalid end states),
# and each of its broken variants must fail, which shows the model can
# catch the bug it is there for.  A model names its broken variants on a
# line of its own, "model-check: broken -DBROKEN ..." (Spin defines, each
# one a variant).  MODEL_ATTEMPTS sets the transaction attempts per thread
# (make soak raises it; a model may scale it down, as the -irrevocable ones
# do).  Skipped (77) when spin or a C compiler is missing.
set -u
srcdir=${srcdir:-$(dirname "$0")/..}
models="invisible invisible-irrevocable visible visible-irrevocable"
attempts=${MODEL_ATTEMPTS:-3}
CC=${CC:-cc}
command -v spin >/dev/null 2>&1 || {
	echo "model-check: spin not installed (Debian package 'spin'): skipped"
	exit 77
}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
status=0

# verify MODEL DEFINES: print pan's verdict; returns pan's error count.
verify() {
	model=$1
	shift
	dir="$work/$model$*"
	dir=$(echo "$dir" | tr -c 'A-Za-z0-9/_\n' _)
	mkdir -p "$dir"
	(cd "$dir" && spin "$@" -DATTEMPTS="$attempts" -a \
		"$srcdir/model/$model.pml" >spin.out 2>&1 &&
		$CC -O2 -w -DSAFETY -DCOLLAPSE -o pan pan.c >cc.out 2>&1) || {
		cat "$dir/spin.out" "$dir/cc.out" 2>/dev/null
		echo "model-check: $model $*: could not build the verifier"
		return 255
	}
	start=$(date +%s.%N)
	(cd "$dir" && ./pan -m1000000 >pan.out 2>&1)
	end=$(date +%s.%N)
	errors=$(sed -n 's/.*errors: \([0-9]*\).*/\1/p' "$dir/pan.out")
	states=$(sed -n 's/^ *\([0-9e.+]*\) states, stored.*/\1/p' \
		"$dir/pan.out")
	printf 'model-check: %s %s attempts=%s: %s states, %s errors, %.2f s\n' \
		"$model" "${*:-(faithful)}" "$attempts" "${states:-?}" \
		"${errors:-?}" "$(awk "BEGIN { print $end - $start }")"
	if [ -z "$errors" ]; then
		cat "$dir/pan.out"
		return 255
	fi
	if [ "$errors" -gt 0 ]; then
		grep -E 'violated|invalid end state[^s]|errors:' "$dir/pan.out" |
			head -n 5
	fi
	[ "$errors" -eq 0 ]
}

srcdir=$(cd "$srcdir" && pwd)
for m in $models; do
	if ! verify "$m"; then
		echo "model-check: FAIL: $m has a protocol error"
		status=1
	fi
	broken=$(sed -n 's/.*model-check: broken \(-D[^*]*\).*/\1/p' \
		"$srcdir/model/$m.pml")
	if [ -z "$broken" ]; then
		echo "model-check: FAIL: $m names no broken variant"
		status=1
	fi
	for b in $broken; do
		if verify "$m" "$b"; then
			echo "model-check: FAIL: $m $b verified: the model cannot catch the bug"
			status=1
		else
			echo "model-check: $m $b fails, as it must"
		fi
	done
done
exit $status
