#!/bin/sh
# SPDX-License-Identifier: MIT
# layers.sh [SRCDIR]: fail when a file of src/ includes a header of a
# higher layer than its own.  The layers, bottom to top (DESIGN.md):
#   arch < rt < cd < tx < api, itm
# api and itm are two front ends side by side: neither includes the other.
# With no argument, checks $srcdir/../src and then proves that the check
# can fail: it plants an upward include in a copy of the tree and expects
# the copy to be refused.
set -u

rank() {
	case $1 in
	arch) echo 0 ;;
	rt) echo 1 ;;
	cd) echo 2 ;;
	tx) echo 3 ;;
	api | itm) echo 4 ;;
	*) echo 9 ;;
	esac
}

# check DIR: print each upward include; exit status 1 if there is one.
check() {
	bad=0
	for f in "$1"/*/*.c "$1"/*/*.h; do
		[ -f "$f" ] || continue
		from=$(basename "$(dirname "$f")")
		rf=$(rank "$from")
		for inc in $(sed -n 's/^#[ \t]*include[ \t]*"\([a-z_]*\)\/.*/\1/p' "$f" |
			sort -u); do
			ri=$(rank "$inc")
			[ "$ri" = 9 ] && continue
			if [ "$ri" -gt "$rf" ] ||
				{ [ "$ri" -eq "$rf" ] && [ "$inc" != "$from" ]; }; then
				echo "upward include: ${f#"$1"/} includes $inc/"
				bad=1
			fi
		done
	done
	return $bad
}

if [ $# -gt 0 ]; then
	check "$1"
	exit $?
fi

: "${srcdir:=.}"
src=$srcdir/../src
if ! check "$src"; then
	echo "FAIL: the include graph runs up DESIGN.md's layers"
	exit 1
fi
echo "PASS: no file includes a header of a higher layer"

# The check must be able to fail: plant an rt -> tx include in a copy.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp -r "$src" "$tmp/src"
printf '#include "tx/desc.h"\n' >>"$tmp/src/rt/config.c"
if out=$(check "$tmp/src"); then
	echo "FAIL: a planted upward include (rt -> tx) was not refused"
	exit 1
fi
case "$out" in
*"rt/config.c includes tx/"*) echo "PASS: a planted upward include is refused: $out" ;;
*)
	echo "FAIL: the planted include was refused for another reason: $out"
	exit 1
	;;
esac
# And a sideways one between the front ends.
cp "$src/itm/itm.c" "$tmp/src/itm/itm.c"
cp "$src/rt/config.c" "$tmp/src/rt/config.c"
printf '#include "api/x.h"\n' >>"$tmp/src/itm/itm.c"
if check "$tmp/src" >/dev/null; then
	echo "FAIL: a planted include between the front ends was not refused"
	exit 1
fi
echo "PASS: a planted include between the front ends (itm -> api) is refused"
exit 0
