# shellcheck shell=sh
# common.sh: what whole.sh and calls.sh do first (sourced; ME is the
# script's name).  Checks for valgrind, clears the LTX_* settings (ltx's
# defaults only: a setting in the environment would change the path being
# counted) and makes TMP, a folder removed on exit.
command -v valgrind >/dev/null 2>&1 || {
	echo "$ME: valgrind is needed (valgrind --tool=callgrind)" >&2
	exit 1
}
for v in $(env | sed -n 's/^\(LTX_[A-Z0-9_]*\)=.*/\1/p'); do
	unset "$v"
done
TMP=$(mktemp -d "${TMPDIR:-/tmp}/txcost.XXXXXX")
trap 'rm -rf "$TMP"' EXIT INT TERM
