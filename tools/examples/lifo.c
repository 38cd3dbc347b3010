/* SPDX-License-Identifier: MIT */
/*
 * The article's Figure 8.4, a LIFO using transactional memory, as printed
 * with its "... delay ..." lines deleted (ltx applies the delay inside a
 * failing VALIDATE or COMMIT), driven by threads that push and pop.  It
 * checks that every element pushed is popped exactly once.
 *
 * usage: lifo [THREADS [OPS_PER_THREAD]]
 */
#include <ltx/isa.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

typedef long data_t;

/* ---- Figure 8.4, verbatim but for the deleted delays ---- */
struct elem {
	data_t d;
	struct elem *c;
};
struct elem *top;
void push(struct elem *n)
{
	while (1) {
		n->c = LTX(top);
		ST(&top, n);
		if (COMMIT())
			return;
	}
}
struct elem *pop(void)
{
	while (1) {
		struct elem *res = LTX(top);
		if (VALIDATE()) {
			if (res != NULL)
				ST(&top, res->c);
			if (COMMIT())
				return res;
		}
	}
}
/* ---- end of Figure 8.4 ---- */

struct worker {
	pthread_t thread;
	long id, ops;
	struct elem *elems;
	long pushed, popped;
	unsigned char *seen; /* per element: times this worker popped it */
	long aborts;
};

static long nthreads = 4, nops = 100000;

static void *run(void *arg)
{
	struct worker *w = arg;

	for (long i = 0; i < w->ops; i++) {
		struct elem *e = &w->elems[i];

		e->d = w->id * w->ops + i;
		push(e);
		w->pushed++;
		/* Pop one element (ours or another thread's) per push. */
		e = pop();
		if (e == NULL) {
			fprintf(stderr, "lifo: pop found the stack empty\n");
			exit(1);
		}
		w->seen[e->d]++;
		w->popped++;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	struct worker *w;
	long total = 0, popped = 0, lost = 0, dup = 0;
	unsigned char *seen;

	if (argc > 1)
		nthreads = strtol(argv[1], NULL, 10);
	if (argc > 2)
		nops = strtol(argv[2], NULL, 10);
	if (nthreads < 1 || nthreads > 256 || nops < 1 || nops > 100000000) {
		fprintf(stderr, "usage: lifo [THREADS(1-256) [OPS(1-1e8)]]\n");
		return 2;
	}
	w = calloc((size_t)nthreads, sizeof(*w));
	for (long t = 0; t < nthreads; t++) {
		w[t].id = t;
		w[t].ops = nops;
		w[t].elems = calloc((size_t)nops, sizeof(struct elem));
		w[t].seen = calloc((size_t)(nthreads * nops), 1);
		if (!w[t].elems || !w[t].seen) {
			perror("lifo");
			return 1;
		}
	}
	printf("lifo: %ld threads, each pushing and popping %ld elements "
	       "through Figure 8.4's LIFO\n",
	       nthreads, nops);
	for (long t = 0; t < nthreads; t++)
		pthread_create(&w[t].thread, NULL, run, &w[t]);
	for (long t = 0; t < nthreads; t++)
		pthread_join(w[t].thread, NULL);

	seen = calloc((size_t)(nthreads * nops), 1);
	for (long t = 0; t < nthreads; t++) {
		total += w[t].pushed;
		popped += w[t].popped;
		for (long i = 0; i < nthreads * nops; i++)
			seen[i] += w[t].seen[i];
		printf("  thread %ld: pushed %ld, popped %ld\n", t, w[t].pushed,
		       w[t].popped);
	}
	for (long i = 0; i < nthreads * nops; i++) {
		if (seen[i] == 0)
			lost++;
		else if (seen[i] > 1)
			dup++;
	}
	free(seen);
	/* Each push and each pop is one committed transaction. */
	printf("lifo: %ld transactions committed\n", total + popped);
	printf("lifo: pushed %ld, popped %ld, lost %ld, duplicated %ld, "
	       "stack %s at the end\n",
	       total, popped, lost, dup, top == NULL ? "empty" : "NOT empty");
	if (lost || dup || top != NULL || popped != total) {
		printf("lifo: FAILED\n");
		return 1;
	}
	printf("lifo: OK, every element was popped exactly once\n");
	return 0;
}
