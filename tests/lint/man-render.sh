#!/bin/sh
# SPDX-License-Identifier: MIT
# man-render.sh: render every man page as man-db does on Debian (groff with
# tbl, MANWIDTH=80) and fail on a broken layout, which mandoc's lint does
# not see because mandoc lays out tables and lists its own way:
#   - any groff warning with -ww ("can't break line": a table cell wider
#     than the page);
#   - a rendered line wider than 80 columns;
#   - text that starts at column 40 or further: groff 1.22 sets a
#     .Bl -column cell that does not fit its column one word per line at
#     the right margin;
#   - a macro run into the text before it ("to read..It Ev X" on a text
#     line is printed as words, so the entry it should start is lost);
#   - a footer other than "ltx VERSION" (a bare .Os prints "BSD").
# Environment: srcdir, PACKAGE_VERSION (the version the footers must name).
set -u
mandir=${srcdir:-.}/../man
version=${PACKAGE_VERSION:-$(sed -n "s/^m4_define(\[ltx_version\], \[\(.*\)\])/\1/p" "${srcdir:-.}/../configure.ac")}
width=80
# Column counts below are in characters, not bytes.
LC_ALL=C.UTF-8
export LC_ALL
if ! command -v groff >/dev/null 2>&1; then
	echo "man-render: groff not found (install the Debian package groff-base)" >&2
	exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
pages=0
bad() {
	echo "FAIL: $name: $*"
	fail=1
	page_ok=no
}
for page in "$mandir"/*.[1-9]; do
	name=$(basename "$page")
	case "$(head -n 1 "$page")" in
	".so "*) continue ;; # an alias: man-lint.sh checks its target
	esac
	pages=$((pages + 1))
	page_ok=yes
	# man-db's pipeline at MANWIDTH=80: tbl, then groff -mandoc with a
	# line length of 78 (LL, LT) for the utf8 device; -P-cbou: plain
	# text, no bold, underline or overstrike.
	groff -t -mandoc -Tutf8 -P-cbou -rLL=$((width - 2))n \
		-rLT=$((width - 2))n -ww "$page" >"$tmp/txt" 2>"$tmp/warn"
	if [ -s "$tmp/warn" ]; then
		bad "groff warnings:"
		sed 's/^/    /' "$tmp/warn"
	fi
	if grep -n -E "^.{$((width + 1)),}" "$tmp/txt" >"$tmp/long"; then
		bad "rendered lines wider than $width columns:"
		sed 's/^/    /' "$tmp/long"
	fi
	if grep -n -E '^ {39,}[^ ]' "$tmp/txt" >"$tmp/far"; then
		bad "text pushed to the right margin (a table cell wider" \
			"than its column?):"
		sed 's/^/    /' "$tmp/far"
	fi
	if grep -n -E '^[^.].*[.]\.(Bl|El|It|Sh|Ss|Pp|Bd|Ed|Xr|Ev|Fn|Fa|Ft|Nm|Ar|Fl|Cm|Li|Pa|Dv|Er|Va|Vt|In|Sx|Ic|Em)( |$)' \
		"$page" >"$tmp/runin"; then
		bad "a macro run into the text before it:"
		sed 's/^/    /' "$tmp/runin"
	fi
	footer=$(grep -v '^ *$' "$tmp/txt" | tail -n 1)
	case "$footer" in
	"ltx $version "*) ;;
	*) bad "footer '$footer' does not begin 'ltx $version'" ;;
	esac
	[ $page_ok = yes ] && echo "PASS: $name renders cleanly at $width columns"
done
[ "$pages" -gt 0 ] || {
	echo "FAIL: no man pages found in $mandir"
	exit 1
}
exit $fail
