#!/bin/sh
# man-lint.sh: every man page passes mandoc -Tlint (warnings are errors),
# every .so alias points at a page that exists, every section-3 page has
# the same LIBRARY section, and every .Xr reference resolves to a page of
# ltx or to a system page named in man-xr-external.txt.
set -u
mandir=${srcdir:-.}/../man
allow=${srcdir:-.}/lint/man-xr-external.txt
fail=0
tmpfail=$(mktemp)
trap 'rm -f "$tmpfail"' EXIT
if ! command -v mandoc >/dev/null 2>&1; then
	echo "man-lint: mandoc not found (install the Debian package mandoc)" >&2
	exit 77
fi
for page in "$mandir"/*.[1-9]; do
	name=$(basename "$page")
	first=$(head -n 1 "$page")
	case "$first" in
	".so "*)
		target=$(basename "${first#.so }")
		if [ ! -f "$mandir/$target" ]; then
			echo "man-lint: $name: .so target $target does not exist"
			fail=1
		fi
		continue
		;;
	esac
	# A library page names the library and how to link it, the same way
	# on every page.
	case "$name" in
	*.3)
		if ! grep -A1 '^\.Sh LIBRARY$' "$page" |
			grep -qx 'ltx library (libltx, \\-lltx)'; then
			echo "man-lint: $name: no LIBRARY section reading" \
				"'ltx library (libltx, \\-lltx)'"
			fail=1
		fi
		;;
	esac
	out=$(mandoc -Tlint -W warning "$page" 2>&1)
	if [ -n "$out" ]; then
		echo "$out"
		fail=1
	fi
	grep '^\.Xr ' "$page" | while read -r _ ref sec _; do
		sec=${sec%%[!0-9]*}
		if [ -f "$mandir/$ref.$sec" ]; then
			continue
		fi
		if grep -qx "$ref($sec)" "$allow"; then
			continue
		fi
		echo "man-lint: $name: .Xr $ref $sec resolves to no page"
		echo x >>"$tmpfail"
	done
done
[ -s "$tmpfail" ] && fail=1
# Every public function of the headers has a page (the tm__ ones are the
# headers' own plumbing).
for f in $(grep -ohE '\<tm_[a-z0-9][a-z0-9_]*[[:space:]]*\(' \
	"${srcdir:-.}"/../include/ltx/*.h | sed 's/[[:space:]]*($//' |
	sort -u); do
	if [ ! -f "$mandir/$f.3" ]; then
		echo "man-lint: $f (include/ltx) has no page man/$f.3"
		fail=1
	fi
done
exit $fail
