/* SPDX-License-Identifier: MIT */
/* -fgnu-tm test: random memset/memcpy/memmove/byte sequences against a model.
 */
#include <stdint.h>
#include <string.h>

#include "itm-test.h"

#define ROUNDS 3000
#define REGION 512 /* each thread's bytes */
#define MAXOPS 40
#define MAXLEN 150

/*
 * Each thread owns REGION bytes of one arena, packed at an odd offset so
 * that neighbouring threads' regions share cache lines (false conflicts,
 * so aborts and re-executions).  A transaction runs a random sequence of
 * up to MAXOPS operations on its region: a byte store, memset, memcpy of
 * disjoint ranges, memmove of overlapping ones (the _ITM_mem* barriers,
 * reading bytes the same transaction wrote), a byte-by-byte hash of a
 * range and a copy through a local, then records its round in the
 * thread's slot; one in four ends in __transaction_cancel.  The same
 * sequence runs first on a plain copy (the model).  After each
 * transaction the region must equal the model (or the model before the
 * sequence, if cancelled), the hash read inside the transaction the
 * model's, and the slot the last committed round.
 *
 * With the argument "rfw" each transaction also increments a shared
 * counter (counter++: GCC's _ITM_RfWU8 then _ITM_WaWU8), which a cancel
 * must undo too: at the end it must equal the commits.  Not under
 * libitm: its serial mode, the default for a lone thread, logs nothing
 * for a read-for-write and skips the undo log on a write-after-write, so
 * a cancel leaves the increment (GCC 12, 1 thread: 3000 for 2291
 * commits; ml_wt 2764; gl_wt right).  A nested transaction then bumps
 * the counter again and a count of its own, and cancels itself half of
 * the time: its cancel must undo both (closed nesting: the counter was
 * written by the enclosing transaction first, a write-after-write) and
 * nothing of the enclosing one's.  libitm keeps those increments in
 * every method, gl_wt included (GCC 12).
 * run-itm-tests.sh runs "rfw" on ltx only.
 */
static unsigned char arena[64 * REGION + 64] __attribute__((aligned(64)));
#define REGION_OF(id) (&arena[13 + (id)*REGION])

static unsigned long commits_done; /* rfw: counter++ in each transaction */
static unsigned long inner_done;   /* rfw: the nested ones' count */
static int rfw;
static unsigned long kept_total; /* rfw: nested ones kept, all threads */

/* rfw: the nested transaction, cancelled if cancel. */
__attribute__((transaction_safe, noinline)) static void inner(int cancel)
{
	__transaction_atomic
	{
		commits_done++;
		inner_done++;
		if (cancel)
			__transaction_cancel;
	}
}
/* Each thread's last committed round, on a line of its own. */
static struct {
	long round;
} __attribute__((aligned(64))) last[64];

enum { BYTE, SET, COPY, MOVE, HASH, VIA_LOCAL, NKINDS };

struct op {
	int kind, dst, src, len;
	unsigned char v;
};

/* The sequence on bytes b; returns the hashes it read.  Plain code: it is
 * the model, and the transaction's body is the same lines instrumented. */
#define RUN_OPS(b, ops, nops, hash)                                            \
	do {                                                                   \
		for (int i_ = 0; i_ < (nops); i_++) {                          \
			const struct op *o_ = &(ops)[i_];                      \
			unsigned char t_;                                      \
                                                                               \
			switch (o_->kind) {                                    \
			case BYTE:                                             \
				(b)[o_->dst] = o_->v;                          \
				break;                                         \
			case SET:                                              \
				memset((b) + o_->dst, o_->v, (size_t)o_->len); \
				break;                                         \
			case COPY:                                             \
				memcpy((b) + o_->dst, (b) + o_->src,           \
				       (size_t)o_->len);                       \
				break;                                         \
			case MOVE:                                             \
				memmove((b) + o_->dst, (b) + o_->src,          \
					(size_t)o_->len);                      \
				break;                                         \
			case HASH:                                             \
				for (int k_ = 0; k_ < o_->len; k_++)           \
					(hash) =                               \
						(hash)*31 + (b)[o_->src + k_]; \
				break;                                         \
			default:                                               \
				memcpy(&t_, (b) + o_->src, 1);                 \
				(hash) += t_;                                  \
				memcpy((b) + o_->dst, &t_, 1);                 \
			}                                                      \
		}                                                              \
	} while (0)

static void make_ops(unsigned long *seed, struct op *ops, int nops)
{
	for (int i = 0; i < nops; i++) {
		unsigned long r = next_rand(seed);
		struct op *o = &ops[i];

		o->kind = (int)(r % NKINDS);
		o->len = 1 + (int)((r >> 8) % MAXLEN);
		o->dst = (int)((r >> 16) % (unsigned long)(REGION - o->len));
		o->src = (int)((r >> 32) % (unsigned long)(REGION - o->len));
		o->v = (unsigned char)(r >> 56);
		/* memcpy's ranges must not overlap: memmove then. */
		if (o->kind == COPY && o->dst < o->src + o->len &&
		    o->src < o->dst + o->len)
			o->kind = MOVE;
	}
}

static void *worker(void *arg)
{
	long id = (long)arg;
	unsigned long seed = 0x2545f4914f6cdd1dul * (unsigned long)(id + 1);
	unsigned char *b = REGION_OF(id);
	unsigned char model[REGION], before[REGION];
	struct op ops[MAXOPS];
	unsigned long mine = 0, kept = 0; /* commits; nested ones kept */
	long committed = -1;

	memcpy(model, b, REGION);
	for (int round = 0; round < ROUNDS; round++) {
		int nops = 1 + (int)(next_rand(&seed) % MAXOPS);
		int cancel = next_rand(&seed) % 4 == 0;
		int inner_cancel = next_rand(&seed) % 2 == 0;
		unsigned long want = 0, got = 0;

		make_ops(&seed, ops, nops);
		memcpy(before, model, REGION);
		RUN_OPS(model, ops, nops, want);
		__transaction_atomic
		{
			got = 0;
			RUN_OPS(b, ops, nops, got);
			last[id].round = round;
			if (rfw) {
				commits_done++;
				inner(inner_cancel);
			}
			if (cancel)
				__transaction_cancel;
		}
		if (cancel) {
			memcpy(model, before, REGION);
			CHECK(last[id].round == committed);
		} else {
			CHECK(got == want);
			CHECK(last[id].round == round);
			committed = round;
			mine++;
			kept += rfw && !inner_cancel;
		}
		CHECK(memcmp(b, model, REGION) == 0);
	}
	__atomic_fetch_add(&kept_total, kept, __ATOMIC_RELAXED);
	return (void *)mine;
}

int main(int argc, char **argv)
{
	int n = nthreads_arg(argc, argv);
	unsigned long commits = 0;
	pthread_t t[64];

	if (argc > 2) {
		CHECK(strcmp(argv[2], "rfw") == 0);
		rfw = 1;
	}
	for (int i = 0; i < 64; i++)
		last[i].round = -1;
	for (size_t i = 0; i < sizeof(arena); i++)
		arena[i] = (unsigned char)(i * 7 + 3);
	/* run_threads discards the results: the commits are counted here. */
	for (long i = 0; i < n; i++)
		CHECK(pthread_create(&t[i], NULL, worker, (void *)i) == 0);
	for (int i = 0; i < n; i++) {
		void *mine;

		CHECK(pthread_join(t[i], &mine) == 0);
		commits += (unsigned long)mine;
	}
	if (rfw) {
		CHECK(inner_done == kept_total);
		CHECK(commits_done == commits + kept_total);
	}
	for (size_t i = 0; i < 13; i++)
		CHECK(arena[i] == (unsigned char)(i * 7 + 3));
	for (size_t i = 13 + (size_t)n * REGION; i < sizeof(arena); i++)
		CHECK(arena[i] == (unsigned char)(i * 7 + 3));
	printf("memops_model: %d threads%s: ok\n", n, rfw ? ", rfw" : "");
	return 0;
}
