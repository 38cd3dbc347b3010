#!/bin/sh
# SPDX-License-Identifier: MIT
# examples.sh: every code block of README.md and of the EXAMPLES section of
# every man page compiles, and every one that is a whole program runs.
#
# C blocks (README: ```c; man pages: .Bd -literal and .Dl displays that
# are not shell sessions):
#   - a block with main() is a whole program: it must compile and link as
#     printed, with nothing added, and run with exit status 0, built at
#     -O1 and at -O2 (the setjmp rule of TM_ATOMIC(3) shows at -O1);
#     if the page gives "example-output:" lines, the output must match;
#   - any other block is a translation unit: it must compile (-c) after
#     the page's SYNOPSIS includes (man pages only) and its
#     "example-context:" lines, the declarations of what the example
#     uses but does not show.
# Shell blocks (README: ```sh; man pages: "$ " sessions) must parse
# (sh -n).  Warnings are errors.
#
# Hidden annotations, just before the block they belong to:
#   man page:   .\" example-context: C LINE      .\" example-output: LINE
#   README.md:  <!-- example-context: C LINE --> <!-- example-output: LINE -->
#
# Environment: srcdir (tests/), CC, CFLAGS, LIBTOOL and top_builddir (to
# link against the libltx.la of this build).
set -u
: "${srcdir:=.}"
: "${CC:=cc}"
: "${top_builddir:=..}"
: "${LIBTOOL:=$top_builddir/libtool}"
top=$srcdir/..
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ltx-examples.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
cflags="${CFLAGS:-} -Wall -Wextra -Werror -I$top/include"
fail=0
count=0

# extract_man PAGE: write the page's EXAMPLES blocks to $tmp/NAME-N.{c,sh}
# with NAME-N.ctx (context) and NAME-N.out (expected output).
extract_man() {
	awk -v base="$tmp/$(basename "$1")" '
	function unescape(s) {
		gsub(/\\e/, "\\", s)
		gsub(/\\&/, "", s)
		gsub(/\\-/, "-", s)
		gsub(/\\\(aq/, "\047", s)
		gsub(/\\\(dq/, "\"", s)
		return s
	}
	function open_block() {
		n++
		file = base "-" n ".blk"
		printf "%s", ctx > (base "-" n ".ctx")
		printf "%s", outp > (base "-" n ".out")
		close(base "-" n ".ctx")
		close(base "-" n ".out")
		ctx = ""
		outp = ""
	}
	/^\.Sh / { insyn = ($2 == "SYNOPSIS"); inex = ($2 == "EXAMPLES"); next }
	insyn && /^\.In / { incs = incs "#include <" $2 ">\n"; next }
	!inex { next }
	/^\.\\" example-context: / { ctx = ctx substr($0, 22) "\n"; next }
	/^\.\\" example-output: / { outp = outp substr($0, 21) "\n"; next }
	/^\.Bd -literal/ { open_block(); inbd = 1; next }
	/^\.Ed/ { inbd = 0; close(file); next }
	inbd { print unescape($0) > file; next }
	/^\.Dl / {
		open_block()
		print unescape(substr($0, 5)) > file
		close(file)
	}
	END {
		printf "%s", incs > (base ".incs")
	}
	' "$1"
}

# extract_readme FILE: the same for the fenced blocks of a Markdown file.
extract_readme() {
	awk -v base="$tmp/$(basename "$1")" '
	/^<!-- example-context: .* -->$/ {
		s = substr($0, 23); ctx = ctx substr(s, 1, length(s) - 4) "\n"
		next
	}
	/^<!-- example-output: .* -->$/ {
		s = substr($0, 22); outp = outp substr(s, 1, length(s) - 4) "\n"
		next
	}
	/^```/ && !inb {
		lang = substr($0, 4)
		if (lang != "c" && lang != "sh") {
			skip = 1; inb = 1; next
		}
		n++
		file = base "-" n ".blk"
		printf "%s", (lang == "sh" ? "#!/bin/sh\n" : "") > file
		printf "%s", ctx > (base "-" n ".ctx")
		printf "%s", outp > (base "-" n ".out")
		close(base "-" n ".ctx")
		close(base "-" n ".out")
		ctx = ""; outp = ""; inb = 1; skip = 0
		next
	}
	/^```/ && inb { inb = 0; if (!skip) close(file); next }
	inb && !skip { print > file }
	END { printf "" > (base ".incs") }
	' "$1"
}

# check_shell NAME BLOCK: the commands of a block parse.  In a man page's
# session the commands are the "$ " lines and their continuations.
check_shell() {
	if head -n 1 "$2" | grep -q '^\$ '; then
		awk '/^\$ / { print substr($0, 3); cont = /\\$/; next }
		     cont { print; cont = /\\$/ }' "$2" >"$2.sh"
	else
		cp "$2" "$2.sh"
	fi
	if sh -n "$2.sh" 2>"$2.err"; then
		echo "PASS: $1 (shell)"
	else
		echo "FAIL: $1: the shell commands do not parse:"
		sed 's/^/    /' "$2.err" "$2.sh"
		fail=1
	fi
}

# check_c NAME BLOCK INCS: compile (and, for a whole program, run) a block.
check_c() {
	name=$1 blk=$2 incs=$3
	base=${blk%.blk}
	if grep -q '^int main(' "$blk"; then
		cp "$blk" "$base.c"
		for opt in -O1 -O2; do
			# shellcheck disable=SC2086
			if ! $LIBTOOL --mode=link --tag=CC $CC $cflags $opt ${LDFLAGS:-} \
				-o "$base$opt" "$base.c" \
				"$top_builddir/src/libltx.la" >"$base.err" 2>&1; then
				echo "FAIL: $name: the program does not build ($opt):"
				sed 's/^/    /' "$base.err"
				fail=1
				return
			fi
			if ! timeout 60 "$base$opt" >"$base.got" 2>"$base.err"; then
				echo "FAIL: $name: the program ($opt) failed:"
				sed 's/^/    /' "$base.got" "$base.err"
				fail=1
				return
			fi
			if [ -s "$base.out" ] && ! cmp -s "$base.out" "$base.got"; then
				echo "FAIL: $name ($opt): output differs from the page's:"
				diff "$base.out" "$base.got" | sed 's/^/    /'
				fail=1
				return
			fi
		done
		echo "PASS: $name (program, run at -O1 and -O2)"
		return
	fi
	cat "$incs" "$base.ctx" "$blk" >"$base.c"
	# shellcheck disable=SC2086
	if $CC $cflags -c -o "$base.o" "$base.c" 2>"$base.err"; then
		echo "PASS: $name (compiles)"
	else
		echo "FAIL: $name: does not compile; the source as compiled:"
		cat -n "$base.c" | sed 's/^/    /'
		sed 's/^/    /' "$base.err"
		fail=1
	fi
}

extract_readme "$top/README.md"
for page in "$top"/man/*.[1-9]; do
	head -n 1 "$page" | grep -q '^\.so ' || extract_man "$page"
done
for blk in "$tmp"/*.blk; do
	[ -f "$blk" ] || continue
	count=$((count + 1))
	name=$(basename "${blk%.blk}")
	page=${name%-*}
	if head -n 1 "$blk" | grep -q -E '^(#!/bin/sh|\$ )'; then
		check_shell "$name" "$blk"
	else
		check_c "$name" "$blk" "$tmp/$page.incs"
	fi
done
if [ "$count" -lt 10 ]; then
	echo "FAIL: only $count code blocks found (extraction broken?)"
	fail=1
fi
exit $fail
