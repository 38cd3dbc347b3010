#!/bin/sh
# SPDX-License-Identifier: MIT
# format-check.sh: every C, C++ and header file of the source tree is
# formatted as .clang-format says (clang-format --dry-run --Werror), so
# formatting is the machine's job and a diff fails CI.  The tree is
# formatted with clang-format 14 (Debian 12's, which .ci/install-deps
# installs); other major versions format some constructs differently, so
# the check is skipped with them rather than failing on their taste.
# To format a file: clang-format -i FILE (from the top of the tree).
# Environment: srcdir (tests/), CLANG_FORMAT (default clang-format).
set -u
: "${srcdir:=.}"
: "${CLANG_FORMAT:=clang-format}"
top=$(cd "$srcdir/.." && pwd)
want=14

if ! command -v "$CLANG_FORMAT" >/dev/null 2>&1; then
	echo "SKIP: no $CLANG_FORMAT (apt-get install clang-format)"
	exit 77
fi
version=$("$CLANG_FORMAT" --version | sed -n 's/.*version \([0-9]*\)\..*/\1/p')
if [ "$version" != "$want" ]; then
	echo "SKIP: $CLANG_FORMAT is version ${version:-unknown}; the tree" \
		"is formatted with version $want"
	exit 77
fi
if [ ! -f "$top/.clang-format" ]; then
	echo "FAIL: no .clang-format at the top of the tree"
	exit 1
fi

fail=0
# The check can fail: a line the style would change is reported.
if printf 'int  f( void ){return 0;}\n' |
	"$CLANG_FORMAT" --dry-run --Werror --style=file \
		--assume-filename="$top/src/probe.c" >/dev/null 2>&1; then
	echo "FAIL: clang-format --dry-run --Werror accepted a misformatted line"
	fail=1
else
	echo "PASS: a misformatted line is reported"
fi

files=$(cd "$top" && find src include tests tools \
	\( -name '*.c' -o -name '*.h' -o -name '*.cc' \) \
	-not -path 'tests/fuzz/corpus/*' | LC_ALL=C sort)
n=0
bad=0
for f in $files; do
	n=$((n + 1))
	if ! (cd "$top" && "$CLANG_FORMAT" --dry-run --Werror --style=file \
		"$f" >/dev/null 2>&1); then
		echo "FAIL: $f is not formatted (clang-format -i $f)"
		(cd "$top" && "$CLANG_FORMAT" --dry-run --style=file "$f" 2>&1 |
			head -n 12 | sed 's/^/    /')
		bad=$((bad + 1))
	fi
done
if [ "$bad" -eq 0 ]; then
	echo "PASS: all $n source files are formatted as .clang-format says"
else
	fail=1
fi
exit $fail
