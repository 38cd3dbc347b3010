#!/bin/sh
# measure.sh TXCOST: instructions per transactional operation, by callgrind.
# Each figure is (Ir(K=16) - Ir(K=0)) / (N * 16): the marginal cost of an
# operation on a new line, with its share of begin and commit.  Whole
# transactions are whole.sh's and calls.sh's.
set -e
B=${1:-./txcost}
N=${N:-10000}
ir() {
	valgrind --tool=callgrind --toggle-collect=run \
		--callgrind-out-file=/dev/null "$B" "$1" "$2" "$N" 2>&1 |
		sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
}
for kind in lt ltx st ltxst; do
	a=$(ir $kind 0)
	b=$(ir $kind 16)
	echo "$kind: $(((b - a) / (N * 16))).$((((b - a) * 10 / (N * 16)) % 10)) instructions per operation (first access to a line, K=16)"
done
