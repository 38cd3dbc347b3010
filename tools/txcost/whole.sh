#!/bin/sh
# whole.sh DIR: instructions per whole transaction on ltxbench's integer
# sets and bank, one thread, counted by callgrind (see whole.c).
#
# DIR holds the txcost-whole builds: whole-seq, whole-ltx, whole-ltx-inline,
# whole-atomic, whole-atomic-inline.  Each runs N operations per workload
# (N=10000 unless set) under callgrind, on the workloads of SETS (all five
# with ltxbench's defaults unless set: "NAME[:SIZE[:RANGE]] ...", as
# whole.c takes them); a figure is the inclusive Ir of the calls of the
# workload's op made for that kind of operation, divided by their number.
# Writes the figures to $SAVE (default txcost-whole.tsv) as "WORKLOAD
# OPERATION IMPL IR_PER_OP" lines (WORKLOAD with its shape, as SETS names
# it); with BASE set to such a file from another build (the figures before
# a change), also prints overhead before and after.
set -e
DIR=${1:?usage: whole.sh DIR}
N=${N:-10000}
SAVE=${SAVE:-txcost-whole.tsv}
HERE=$(dirname "$0")
IMPLS="seq ltx ltx-inline atomic atomic-inline"
# ltxbench's shapes: a set's range is twice its size, where its mix of
# inserts and removes keeps it (a wider range, as in TinySTM's driver,
# makes the set grow through the run, and the figures depend on N).
SETS=${SETS:-"intset-list intset-rbtree intset-skiplist intset-hash bank"}

if [ -n "$BASE" ] && [ ! -r "$BASE" ]; then
	echo "whole.sh: cannot read BASE=$BASE" >&2
	exit 1
fi
# shellcheck disable=SC2034 # common.sh's messages name it
ME=whole.sh
. "$HERE/common.sh"

for impl in $IMPLS; do
	prog=$DIR/whole-$impl
	if ! valgrind --tool=callgrind --toggle-collect='txcost_*' \
		--compress-strings=no --compress-pos=no \
		--callgrind-out-file="$TMP/cg.$impl" "$prog" "$N" $SETS \
		>"$TMP/out.$impl" 2>"$TMP/err.$impl"; then
		echo "whole.sh: $prog failed:" >&2
		tail -5 "$TMP/err.$impl" >&2
		exit 1
	fi
	awk -f "$HERE/arcs.awk" "$TMP/cg.$impl" >"$TMP/arcs.$impl"
done
# The same operations must have run in every build, none aborted.
for impl in $IMPLS; do
	if ! cmp -s "$TMP/out.seq" "$TMP/out.$impl"; then
		echo "whole.sh: whole-$impl ran other operations than" \
			"whole-seq (or aborted):" >&2
		diff "$TMP/out.seq" "$TMP/out.$impl" >&2 || :
		exit 1
	fi
done

# Two tables: TM_ATOMIC blocks (ltx's public API), then ltxbench's own ltx
# interface; one row per workload and operation, then the workload's mix.
awk -v impls="$IMPLS" -v N="$N" -v tmp="$TMP" -v save="$SAVE" -v base="$BASE" '
function op_of(wl) {
	sub(/^intset-/, "", wl)
	return (wl == "bank" ? "bank" : "intset_" wl) "_op"
}
function fmt(x) { return x == "" ? "-" : sprintf("%.0f", x) }
function ratio(a, b) {
	if (a == "" || b == "" || b <= 0)
		return "-"
	return sprintf("%.2f", a / b)
}
function minus(a, b) { return a == "" || b == "" ? "" : a - b }
# The label of a row: workload and shape, operation, how many ran.
function label(wl, k,    c, how) {
	if (k == "all") {
		c = 0
		for (how in count)
			if (index(how, wl SUBSEP) == 1)
				c += count[how]
		return sprintf("| %s | all (mix) | %d |", shape[wl], c)
	}
	if (wl == "bank")
		return sprintf("| %s | %s | %d |", shape[wl], k, count[wl, k])
	how = k == "lookup" ? "found" : k == "insert" ? "inserted" : "removed"
	return sprintf("| %s | %s | %d (%.0f%% %s) |", shape[wl], k,
		       count[wl, k], 100 * done[wl, k] / count[wl, k], how)
}
# Table of implementations a and b (each with its inline build) against seq.
function table(a, b) {
	printf("| workload | operation | operations | seq | ltx |")
	printf(" ltx `LTX_INLINE` | overhead: ltx - seq | overhead inline |")
	printf(" ltx / seq | inline / seq |\n")
	printf("|---|---|---|--:|--:|--:|--:|--:|--:|--:|\n")
	for (r = 1; r <= nr; r++) {
		wl = row_wl[r]
		k = row_k[r]
		s = per[wl, k, "seq"]
		printf("%s %s | %s | %s | %s | %s | %s | %s |\n", label(wl, k),
		       fmt(s), fmt(per[wl, k, a]), fmt(per[wl, k, b]),
		       fmt(minus(per[wl, k, a], s)),
		       fmt(minus(per[wl, k, b], s)), ratio(per[wl, k, a], s),
		       ratio(per[wl, k, b], s))
	}
}
BEGIN {
	ni = split(impls, impl, " ")
	while ((getline line < (tmp "/out.seq")) > 0) {
		split(line, f, " ")
		if (f[2] == "aborts")
			continue
		if (f[2] == "params") {
			wls[++nw] = f[1]
			# As SETS names it: figures of other shapes differ.
			id[f[1]] = f[1] ":" f[3] (f[1] == "bank" ? "" : ":" f[4])
			shape[f[1]] = f[1] == "bank" ? \
			    sprintf("bank, %d accounts, %d%% transfers", f[3],
				    f[5]) : \
			    sprintf("%s, %d keys of %d, %d%% updates", f[1],
				    f[3], f[4], f[5])
			continue
		}
		kinds[f[1]] = kinds[f[1]] " " f[2]
		count[f[1], f[2]] = f[3]
		done[f[1], f[2]] = f[4]
	}
	for (i = 1; i <= ni; i++) {
		file = tmp "/arcs." impl[i]
		while ((getline line < file) > 0) {
			split(line, f, " ")
			k = f[1]
			if (k !~ /^txcost_/)
				continue
			sub(/^txcost_/, "", k)
			calls[impl[i], f[2], k] += f[3]
			ir[impl[i], f[2], k] += f[4]
		}
	}
	if (base != "")
		while ((getline line < base) > 0) {
			split(line, f, "\t")
			before[f[1], f[2], f[3]] = f[4]
		}
	# The rows: each workload\047s kinds of operation, then its mix.
	for (w = 1; w <= nw; w++) {
		nk = split(kinds[wls[w]], kind, " ")
		for (j = 1; j <= nk + 1; j++) {
			row_wl[++nr] = wls[w]
			row_k[nr] = j <= nk ? kind[j] : "all"
		}
	}
	# Per operation: the inclusive Ir of the op called for that kind
	# (or for any kind: the mix) over the number of those calls.
	printf("") > save
	for (r = 1; r <= nr; r++) {
		wl = row_wl[r]
		k = row_k[r]
		fn = op_of(wl)
		for (i = 1; i <= ni; i++) {
			c = 0; s = 0
			for (key in calls) {
				split(key, f, SUBSEP)
				if (f[1] == impl[i] && f[2] == fn &&
				    (k == "all" || f[3] == k)) {
					c += calls[key]
					s += ir[key]
				}
			}
			per[wl, k, impl[i]] = c > 0 ? s / c : ""
			if (c > 0)
				printf("%s\t%s\t%s\t%.1f\n", id[wl], k,
				       impl[i], s / c) > save
		}
	}
	print "Whole transactions: instructions per operation, callgrind, one"
	print "thread, seed 1, " N " operations of each workload after " N / 10
	print "uncounted.  A figure is all that the workload\047s operation"
	print "does: drawing the kind and key, the whole transaction (begin,"
	print "every access, commit, the block\047s bookkeeping; a restart"
	print "would be included, and there was none) and the operation\047s"
	print "own counters.  Only the benchmark\047s loop is left out."
	print "There is no `tm_malloc`/`tm_free` in these: ltxbench\047s sets"
	print "take an insert\047s node from a spare allocated outside the"
	print "transaction and never free a removed one (per-call costs of"
	print "both are below)."
	print ""
	print "Each transaction a `TM_ATOMIC` block (ltx\047s public API: the"
	print "block\047s begin, restart point, `tm_lt`/`tm_st`, commit and"
	print "scope cleanup), against the same code with plain loads and"
	print "stores (seq):"
	print ""
	table("atomic", "atomic-inline")
	print ""
	print "The same workloads on ltxbench\047s ltx interface (what"
	print "`ltxbench -i ltx-invisible,ltx-inline` runs: no `TM_ATOMIC`;"
	print "the first `tm_lt` begins the transaction, `tm_commit` ends it,"
	print "a failed commit runs the body again):"
	print ""
	table("ltx", "ltx-inline")
	if (base == "")
		exit 0
	printf("\nOverhead over seq (instructions per operation, ltx minus ")
	printf("seq), before (%s) and now, and now / before:\n\n", base)
	printf("| workload | operation |")
	for (i = 2; i <= ni; i++)
		printf(" %s before | now | ratio |", impl[i])
	printf(" inline <= out of line |\n|---|---|")
	for (i = 2; i <= ni; i++)
		printf("--:|--:|--:|")
	printf("---|\n")
	for (r = 1; r <= nr; r++) {
		wl = row_wl[r]
		k = row_k[r]
		printf("| %s | %s |", id[wl], k)
		for (i = 2; i <= ni; i++) {
			b = before[id[wl], k, impl[i]]
			bs = before[id[wl], k, "seq"]
			bo = b == "" || bs == "" ? "" : b - bs
			o = minus(per[wl, k, impl[i]], per[wl, k, "seq"])
			over[impl[i]] = o
			printf(" %s | %s | %s |", fmt(bo), fmt(o), ratio(o, bo))
		}
		printf(" %s |\n", over["ltx-inline"] <= over["ltx"] && \
		       over["atomic-inline"] <= over["atomic"] ? "yes" : "no")
	}
}'
