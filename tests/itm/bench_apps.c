/* SPDX-License-Identifier: MIT */
/* -fgnu-tm application kernels with the shapes of STAMP's, for ltx vs libitm.
 */
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "itm-test.h"
#include "rbtree.h"

/*
 * bench_apps APP THREADS [SIZE]
 *   APP   vacation, kmeans or bayes
 *   SIZE  tiny (a smoke test), small, or bench (the default)
 *
 * Three kernels written for ltx's benchmarks, each with the shape of a
 * STAMP application (Minh et al., IISWC 2008) that GCC's TM port runs:
 *
 * vacation  a travel agency: three reservation tables (cars, flights,
 *           rooms), each a red-black tree whose comparator is called
 *           through a pointer (so every node visited costs an indirect
 *           call, a TM clone lookup), and a hash table of customers, each
 *           with a list of reservations.  Clients run long transactions:
 *           make a reservation (query several items, book the dearest of
 *           each kind, allocating the customer and the reservation
 *           records; over budget, __transaction_cancel), delete a customer
 *           (cancel and free everything it holds), update the tables
 *           (add items, allocating nodes; remove unused ones, freeing
 *           them).  Pricing goes through a per-kind function pointer too.
 * kmeans    clustering: each point is assigned to its nearest centre
 *           outside transactions, then one short transaction adds the
 *           point to its cluster's accumulators (a count and one sum per
 *           feature); chunks of points are claimed through a shared
 *           index, in a transaction too.  Few clusters: high contention.
 * bayes     structure learning's transactions: a shared task counter,
 *           then a long read-mostly transaction that tests whether adding
 *           an edge u->v to a directed acyclic graph would close a cycle
 *           (a depth-first search over the children lists from v), reads
 *           v's parents and theirs to score the change, and writes the
 *           edge if it is allowed; sometimes an edge is removed or
 *           reversed.
 *
 * Each checks its own invariants after the run (reservations match the
 * tables and the bills; the accumulators match the assignment, point by
 * point; the graph is acyclic, its parent and child lists mirror each
 * other, and its edge count matches the committed inserts) and prints
 * "APP: N threads: ok" on stdout, the same under any runtime at one
 * thread.  On stderr it prints "time: SECONDS" (the parallel phase),
 * "cpu: SECONDS" (the CPU time of its threads in that phase) and
 * what the transactions did.
 */

enum { SIZE_TINY, SIZE_SMALL, SIZE_BENCH };

static int nthreads;
static int size_class = SIZE_BENCH;

/* The value of a parameter for the size asked for. */
static long sized(long tiny, long small, long bench)
{
	return size_class == SIZE_TINY	  ? tiny
	       : size_class == SIZE_SMALL ? small
					  : bench;
}

static double clock_seconds(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double now(void)
{
	return clock_seconds(CLOCK_MONOTONIC);
}

/* ------------------------------------------------------------------ */
/* Maps (long key -> pointer) on rbtree.h's trees, searched with their
 * comparator called through a pointer. */

TS static void *map_find(struct rb_map *m, long key)
{
	struct rb *n = m->root;
	rb_cmp_fn *cmp = m->cmp;

	while (n != NULL) {
		int c = cmp(key, n->key);

		if (c == 0)
			return n->val;
		n = c < 0 ? n->left : n->right;
	}
	return NULL;
}

/* Insert key -> val; returns 0 (and changes nothing) if key is there. */
TS static int map_insert(struct rb_map *m, long key, void *val)
{
	struct rb *p = NULL, *c = m->root, *z;
	rb_cmp_fn *cmp = m->cmp;
	int dir = 0;

	while (c != NULL) {
		dir = cmp(key, c->key);
		if (dir == 0)
			return 0;
		p = c;
		c = dir < 0 ? c->left : c->right;
	}
	z = malloc(sizeof(*z));
	z->key = key;
	z->val = val;
	rb_link(m, p, dir, z);
	return 1;
}

/* Remove key; returns its value, or NULL if it was not there. */
TS static void *map_erase(struct rb_map *m, long key)
{
	struct rb *z = m->root;
	rb_cmp_fn *cmp = m->cmp;
	void *val;

	while (z != NULL) {
		int c = cmp(key, z->key);

		if (c == 0)
			break;
		z = c < 0 ? z->left : z->right;
	}
	if (z == NULL)
		return NULL;
	val = z->val;
	rb_unlink(m, z);
	free(z);
	return val;
}

/* ------------------------------------------------------------------ */
/* vacation */

enum { CAR, FLIGHT, ROOM, NKINDS };

enum { OP_RESERVE, OP_DELETE_CUSTOMER, OP_UPDATE_TABLES };

struct item {
	long id;
	long used, free, total;
	long price;
};

struct reservation {
	int kind;
	long id;
	long price;
	struct reservation *next;
};

struct customer {
	long id;
	long bill;
	struct reservation *list;
	struct customer *next; /* hash chain */
};

TS static int cmp_up(long a, long b)
{
	return a < b ? -1 : a > b;
}

TS static int cmp_down(long a, long b)
{
	return a > b ? -1 : a < b;
}

/* What an item costs to book now, or -1 if none is free: each kind has
 * its own rule, called through a pointer. */
typedef long quote_fn(const struct item *) __attribute__((transaction_safe));

TS static long quote_car(const struct item *it)
{
	return it->free > 0 ? it->price : -1;
}

TS static long quote_flight(const struct item *it)
{
	return it->free > 0 ? it->price + it->price / 10 : -1; /* tax */
}

TS static long quote_room(const struct item *it)
{
	/* Cheaper while most rooms are free. */
	return it->free > 0 ? it->price - (it->free > it->total / 2 ? 5 : 0)
			    : -1;
}

static struct rb_map tables[NKINDS];
static quote_fn *quotes[NKINDS] = { quote_car, quote_flight, quote_room };

static struct customer **buckets;
static long nbuckets;

static struct {
	long relations; /* items per table, customers */
	long queries;	/* items one transaction looks at */
	long range_pct; /* ids queried: this % of relations */
	long user_pct;	/* % of reservations; the rest split evenly */
	long tasks;	/* transactions, over all threads */
	long budget;	/* a customer's bill above this cancels */
} vac;

struct vac_count {
	long reserved, cancelled, deleted, updates;
} __attribute__((aligned(64)));

static struct vac_count vac_counts[64];

TS static struct customer *customer_find(long id)
{
	struct customer *c = buckets[id & (nbuckets - 1)];

	while (c != NULL && c->id != id)
		c = c->next;
	return c;
}

TS static struct customer *customer_add(long id)
{
	struct customer **b = &buckets[id & (nbuckets - 1)];
	struct customer *c = malloc(sizeof(*c));

	c->id = id;
	c->bill = 0;
	c->list = NULL;
	c->next = *b;
	*b = c;
	return c;
}

/* Book one of item id of kind for c at price. */
TS static void reserve(struct customer *c, int kind, long id, long price)
{
	struct item *it = map_find(&tables[kind], id);
	struct reservation *r = malloc(sizeof(*r));

	it->used++;
	it->free--;
	r->kind = kind;
	r->id = id;
	r->price = price;
	r->next = c->list;
	c->list = r;
	c->bill += price;
}

/* Counted outside the transaction's effects: the cancel undoes the rest. */
__attribute__((transaction_pure)) static void count_cancel(long *n)
{
	++*n;
}

/* Returns whether it reserved (a cancel reserves nothing). */
static int make_reservation(const int *kinds, const long *ids, long cid,
			    long *cancels)
{
	int result = 0;

	__transaction_atomic
	{
		long best_price[NKINDS] = { -1, -1, -1 };
		long best_id[NKINDS] = { 0, 0, 0 };
		struct customer *c;

		for (long q = 0; q < vac.queries; q++) {
			int k = kinds[q];
			struct item *it = map_find(&tables[k], ids[q]);
			long p;

			if (it == NULL)
				continue;
			p = quotes[k](it);
			if (p > best_price[k]) {
				best_price[k] = p;
				best_id[k] = ids[q];
			}
		}
		if (best_price[CAR] >= 0 || best_price[FLIGHT] >= 0 ||
		    best_price[ROOM] >= 0) {
			c = customer_find(cid);
			if (c == NULL)
				c = customer_add(cid);
			for (int k = 0; k < NKINDS; k++)
				if (best_price[k] >= 0)
					reserve(c, k, best_id[k],
						best_price[k]);
			if (c->bill > vac.budget) {
				count_cancel(cancels);
				__transaction_cancel;
			}
			result = 1;
		}
	}
	return result;
}

/* Cancel and free everything customer cid holds, then the customer. */
static int delete_customer(long cid)
{
	int done = 0;

	__transaction_atomic
	{
		struct customer **pp = &buckets[cid & (nbuckets - 1)];

		while (*pp != NULL && (*pp)->id != cid)
			pp = &(*pp)->next;
		if (*pp != NULL) {
			struct customer *c = *pp;
			struct reservation *r = c->list;

			while (r != NULL) {
				struct reservation *next = r->next;
				struct item *it =
					map_find(&tables[r->kind], r->id);

				it->used--;
				it->free++;
				free(r);
				r = next;
			}
			*pp = c->next;
			free(c);
			done = 1;
		}
	}
	return done;
}

/* Add capacity (or a new item), or remove unused items. */
static void update_tables(const int *kinds, const long *ids, const long *prices,
			  const int *adds)
{
	__transaction_atomic
	{
		for (long q = 0; q < vac.queries; q++) {
			struct rb_map *m = &tables[kinds[q]];
			struct item *it = map_find(m, ids[q]);

			if (adds[q]) {
				if (it == NULL) {
					it = malloc(sizeof(*it));
					it->id = ids[q];
					it->used = 0;
					it->free = it->total = 100;
					it->price = prices[q];
					map_insert(m, ids[q], it);
				} else {
					it->free += 100;
					it->total += 100;
					it->price = prices[q];
				}
			} else if (it != NULL && it->used == 0) {
				map_erase(m, ids[q]);
				free(it);
			}
		}
	}
}

static void *vacation_client(void *arg)
{
	long id = (long)arg;
	unsigned long seed = 0x9e3779b97f4a7c15ul * (unsigned long)(id + 1);
	long share = vac.tasks / nthreads + (id < vac.tasks % nthreads);
	long range = vac.relations * vac.range_pct / 100;
	struct vac_count *cnt = &vac_counts[id];
	int kinds[64], adds[64];
	long ids[64], prices[64];

	for (long t = 0; t < share; t++) {
		unsigned long r = next_rand(&seed);
		long pct = (long)(r % 100);
		int op = pct < vac.user_pct ? OP_RESERVE
			 : pct < vac.user_pct + (100 - vac.user_pct) / 2
				 ? OP_DELETE_CUSTOMER
				 : OP_UPDATE_TABLES;
		long cid = (long)(next_rand(&seed) % (unsigned long)range) + 1;

		/* Chosen before the transaction, as a client would. */
		for (long q = 0; q < vac.queries; q++) {
			r = next_rand(&seed);
			kinds[q] = (int)(r % NKINDS);
			ids[q] = (long)((r >> 8) % (unsigned long)range) + 1;
			adds[q] = (int)((r >> 40) & 1);
			prices[q] = (long)((r >> 48) % 5) * 10 + 50;
		}
		switch (op) {
		case OP_RESERVE:
			cnt->reserved += make_reservation(kinds, ids, cid,
							  &cnt->cancelled);
			break;
		case OP_DELETE_CUSTOMER:
			cnt->deleted += delete_customer(cid);
			break;
		default:
			update_tables(kinds, ids, prices, adds);
			cnt->updates++;
		}
	}
	return NULL;
}

/* After the run: each item's reservations, as the customers hold them. */
static long *booked[NKINDS];
static int check_kind;

static void check_item(long key, void *val)
{
	const struct item *it = val;

	CHECK(it->id == key);
	CHECK(key >= 1 && key <= vac.relations);
	CHECK(it->used >= 0 && it->free >= 0);
	CHECK(it->used + it->free == it->total);
	CHECK(it->used == booked[check_kind][key]);
	booked[check_kind][key] = -1; /* seen */
}

static void vacation_setup(void)
{
	unsigned long seed = 42;

	vac.relations = sized(256, 4096, 16384);
	vac.tasks = sized(2000, 40000, 200000);
	vac.queries = 4;
	vac.range_pct = 60;
	vac.user_pct = 90;
	vac.budget = 3500;
	tables[CAR].cmp = cmp_up;
	tables[FLIGHT].cmp = cmp_down;
	tables[ROOM].cmp = cmp_up;
	nbuckets = 1;
	while (nbuckets < vac.relations)
		nbuckets *= 2;
	buckets = calloc((size_t)nbuckets, sizeof(*buckets));
	CHECK(buckets != NULL);
	/* Every kind's items, inserted in a shuffled order. */
	for (int k = 0; k < NKINDS; k++) {
		long *order = malloc((size_t)vac.relations * sizeof(long));

		CHECK(order != NULL);
		for (long i = 0; i < vac.relations; i++)
			order[i] = i + 1;
		for (long i = vac.relations - 1; i > 0; i--) {
			long j = (long)(next_rand(&seed) %
					(unsigned long)(i + 1));
			long x = order[i];

			order[i] = order[j];
			order[j] = x;
		}
		for (long i = 0; i < vac.relations; i++) {
			struct item *it = malloc(sizeof(*it));

			CHECK(it != NULL);
			it->id = order[i];
			it->used = 0;
			it->free = it->total =
				(long)(next_rand(&seed) % 5 + 1) * 100;
			it->price = (long)(next_rand(&seed) % 5) * 10 + 50;
			CHECK(map_insert(&tables[k], it->id, it));
		}
		free(order);
	}
	for (long i = 1; i <= vac.relations; i++)
		customer_add(i);
}

static void vacation_check(void)
{
	struct vac_count sum = { 0, 0, 0, 0 };

	for (int k = 0; k < NKINDS; k++) {
		booked[k] = calloc((size_t)vac.relations + 1, sizeof(long));
		CHECK(booked[k] != NULL);
	}
	for (long b = 0; b < nbuckets; b++)
		for (const struct customer *c = buckets[b]; c != NULL;
		     c = c->next) {
			long bill = 0;

			CHECK((c->id & (nbuckets - 1)) == b);
			CHECK(c->bill <= vac.budget);
			for (const struct reservation *r = c->list; r != NULL;
			     r = r->next) {
				CHECK(r->kind >= 0 && r->kind < NKINDS);
				CHECK(r->id >= 1 && r->id <= vac.relations);
				booked[r->kind][r->id]++;
				bill += r->price;
			}
			CHECK(bill == c->bill);
		}
	for (int k = 0; k < NKINDS; k++) {
		long count = 0;

		check_kind = k;
		CHECK(colour(tables[k].root) == BLACK);
		rb_check(&tables[k], tables[k].root, NULL, NULL, NULL, &count,
			 check_item);
		/* Every item someone holds is still in the table. */
		for (long i = 1; i <= vac.relations; i++)
			CHECK(booked[k][i] == 0 || booked[k][i] == -1);
	}
	for (int i = 0; i < nthreads; i++) {
		sum.reserved += vac_counts[i].reserved;
		sum.cancelled += vac_counts[i].cancelled;
		sum.deleted += vac_counts[i].deleted;
		sum.updates += vac_counts[i].updates;
	}
	CHECK(sum.reserved > 0 && sum.deleted > 0 && sum.updates > 0);
	fprintf(stderr,
		"vacation: %ld reservations, %ld cancelled, %ld customers "
		"deleted, %ld table updates\n",
		sum.reserved, sum.cancelled, sum.deleted, sum.updates);
}

/* ------------------------------------------------------------------ */
/* kmeans */

#define KM_D	 32
#define KM_CHUNK 3

static struct {
	long points;
	int clusters;
	int rounds;
} km;

static int (*km_feature)[KM_D];	  /* the points */
static int *km_member;		  /* each point's cluster this round */
static double (*km_centre)[KM_D]; /* read-only during a round */

/* The shared accumulators, rows apart. */
struct km_acc {
	int len;
	int sum[KM_D];
} __attribute__((aligned(64)));

static struct km_acc *km_acc;
static long km_next;  /* the next point to claim */
static long km_delta; /* points that changed cluster this round */
static pthread_barrier_t km_round;

static int km_nearest(const int *f)
{
	int best = 0;
	double best_d = 0;

	for (int k = 0; k < km.clusters; k++) {
		double d = 0;

		for (int j = 0; j < KM_D; j++) {
			double x = f[j] - km_centre[k][j];

			d += x * x;
		}
		if (k == 0 || d < best_d) {
			best_d = d;
			best = k;
		}
	}
	return best;
}

/* Between rounds (one thread): check the accumulators point by point,
 * then move each centre to its cluster's mean and clear them. */
static void km_new_centres(void)
{
	static long sum[64][KM_D];
	static long len[64];
	long total = 0;

	memset(sum, 0, sizeof(sum));
	memset(len, 0, sizeof(len));
	for (long i = 0; i < km.points; i++) {
		int k = km_member[i];

		CHECK(k >= 0 && k < km.clusters);
		len[k]++;
		for (int j = 0; j < KM_D; j++)
			sum[k][j] += km_feature[i][j];
	}
	for (int k = 0; k < km.clusters; k++) {
		CHECK(km_acc[k].len == len[k]);
		total += km_acc[k].len;
		for (int j = 0; j < KM_D; j++) {
			CHECK(km_acc[k].sum[j] == sum[k][j]);
			if (len[k] != 0)
				km_centre[k][j] = (double)sum[k][j] / len[k];
		}
	}
	CHECK(total == km.points);
	memset(km_acc, 0, (size_t)km.clusters * sizeof(*km_acc));
	km_next = 0;
}

static void *kmeans_worker(void *arg)
{
	long id = (long)arg;

	for (int round = 0; round < km.rounds; round++) {
		long delta = 0;

		for (;;) {
			long start;

			__transaction_atomic
			{
				start = km_next;
				km_next = start + KM_CHUNK;
			}
			if (start >= km.points)
				break;
			for (long i = start;
			     i < start + KM_CHUNK && i < km.points; i++) {
				const int *f = km_feature[i];
				int k = km_nearest(f);

				if (k != km_member[i])
					delta++;
				km_member[i] = k;
				__transaction_atomic
				{
					km_acc[k].len++;
					for (int j = 0; j < KM_D; j++)
						km_acc[k].sum[j] += f[j];
				}
			}
		}
		__transaction_atomic
		{
			km_delta += delta;
		}
		if (pthread_barrier_wait(&km_round) ==
		    PTHREAD_BARRIER_SERIAL_THREAD)
			km_new_centres();
		pthread_barrier_wait(&km_round);
	}
	(void)id;
	return NULL;
}

static void kmeans_setup(void)
{
	unsigned long seed = 4242;

	km.points = sized(2048, 16384, 65536);
	km.rounds = (int)sized(2, 5, 10);
	km.clusters = 15;
	km_feature = malloc((size_t)km.points * sizeof(*km_feature));
	km_member = malloc((size_t)km.points * sizeof(*km_member));
	km_centre = malloc((size_t)km.clusters * sizeof(*km_centre));
	km_acc = aligned_alloc(64, (size_t)km.clusters * sizeof(*km_acc));
	CHECK(km_feature && km_member && km_centre && km_acc);
	memset(km_acc, 0, (size_t)km.clusters * sizeof(*km_acc));
	/* Points around 16 hidden centres; the first points seed the
	 * centres. */
	for (long i = 0; i < km.points; i++) {
		unsigned long c = next_rand(&seed) % 16;

		for (int j = 0; j < KM_D; j++)
			km_feature[i][j] =
				(int)((c * 977 + (unsigned long)j * 131) %
				      1000) +
				(int)(next_rand(&seed) % 200);
		km_member[i] = -1;
	}
	for (int k = 0; k < km.clusters; k++)
		for (int j = 0; j < KM_D; j++)
			km_centre[k][j] = km_feature[k][j];
	CHECK(pthread_barrier_init(&km_round, NULL, (unsigned)nthreads) == 0);
}

static void kmeans_check(void)
{
	fprintf(stderr,
		"kmeans: %ld points, %d clusters, %d rounds, "
		"%ld changes of cluster\n",
		km.points, km.clusters, km.rounds, km_delta);
	CHECK(km_delta >= km.points); /* the first round moves every one */
}

/* ------------------------------------------------------------------ */
/* bayes */

#define BY_MAXP 4
#define BY_MAXC 16
#define BY_MAXV 1024

struct var {
	int nparents, nchildren;
	int parents[BY_MAXP];
	int children[BY_MAXC];
} __attribute__((aligned(64)));

static struct {
	int vars;
	long tasks;
} by;

static struct var *by_var;
static long by_next;	      /* the next task */
static long by_edges_net[64]; /* inserts - removes, per thread */

struct by_count {
	long inserted, refused, removed, reversed;
} __attribute__((aligned(64)));

static struct by_count by_counts[64];

TS static int by_has_edge(int u, int v)
{
	const struct var *x = &by_var[u];

	for (int i = 0; i < x->nchildren; i++)
		if (x->children[i] == v)
			return 1;
	return 0;
}

/* Is dst reachable from src along child edges?  A depth-first search;
 * its stack and marks are its own locals. */
TS static int by_reachable(int src, int dst)
{
	unsigned char seen[BY_MAXV];
	int stack[BY_MAXV];
	int top = 0;

	for (int i = 0; i < by.vars; i++)
		seen[i] = 0;
	stack[top++] = src;
	seen[src] = 1;
	while (top > 0) {
		const struct var *x = &by_var[stack[--top]];
		int n = x->nchildren;

		for (int i = 0; i < n; i++) {
			int c = x->children[i];

			if (c == dst)
				return 1;
			if (!seen[c]) {
				seen[c] = 1;
				stack[top++] = c;
			}
		}
	}
	return 0;
}

/* A made-up score of v's family: reads v's parents and theirs. */
TS static long by_score(int u, int v)
{
	const struct var *x = &by_var[v];
	long s = (long)((unsigned)(u * 2654435761u) >> 20) % 97;

	for (int i = 0; i < x->nparents; i++) {
		const struct var *p = &by_var[x->parents[i]];

		s -= 7 * p->nparents + p->nchildren;
	}
	return s;
}

TS static void by_add_edge(int u, int v)
{
	struct var *x = &by_var[u], *y = &by_var[v];

	x->children[x->nchildren++] = v;
	y->parents[y->nparents++] = u;
}

TS static void by_remove_edge(int u, int v)
{
	struct var *x = &by_var[u], *y = &by_var[v];

	for (int i = 0; i < x->nchildren; i++)
		if (x->children[i] == v) {
			x->children[i] = x->children[--x->nchildren];
			break;
		}
	for (int i = 0; i < y->nparents; i++)
		if (y->parents[i] == u) {
			y->parents[i] = y->parents[--y->nparents];
			break;
		}
}

/* May u->v be added: room on both ends, not there, no cycle, good score. */
TS static int by_insert_ok(int u, int v)
{
	if (u == v || by_var[v].nparents >= BY_MAXP ||
	    by_var[u].nchildren >= BY_MAXC || by_has_edge(u, v) ||
	    by_has_edge(v, u))
		return 0;
	if (by_score(u, v) < -40)
		return 0;
	return !by_reachable(v, u);
}

static void *bayes_learner(void *arg)
{
	long id = (long)arg;
	struct by_count *cnt = &by_counts[id];

	for (;;) {
		long task;
		unsigned long r;
		int u, v, kind, done = 0;

		__transaction_atomic
		{
			task = by_next;
			if (task < by.tasks)
				by_next = task + 1;
		}
		if (task >= by.tasks)
			break;
		r = 0x2545f4914f6cdd1dul * (unsigned long)(task + 1);
		r = next_rand(&r);
		u = (int)(r % (unsigned long)by.vars);
		v = (int)((r >> 16) % (unsigned long)by.vars);
		kind = (int)((r >> 32) % 10);
		if (kind < 7) {
			__transaction_atomic
			{
				if (by_insert_ok(u, v)) {
					by_add_edge(u, v);
					done = 1;
				}
			}
			if (done) {
				cnt->inserted++;
				by_edges_net[id]++;
			} else {
				cnt->refused++;
			}
		} else if (kind < 9) {
			/* Remove one of v's parents: u picks which. */
			__transaction_atomic
			{
				int n = by_var[v].nparents;

				if (n > 0) {
					by_remove_edge(by_var[v].parents[u % n],
						       v);
					done = 1;
				}
			}
			if (done) {
				cnt->removed++;
				by_edges_net[id]--;
			}
		} else {
			/* Reverse one of v's child edges if that stays
			 * acyclic. */
			__transaction_atomic
			{
				int n = by_var[v].nchildren;

				if (n > 0) {
					int c = by_var[v].children[u % n];

					by_remove_edge(v, c);
					if (by_insert_ok(c, v)) {
						by_add_edge(c, v);
						done = 1;
					} else {
						by_add_edge(v, c);
					}
				}
			}
			cnt->reversed += done;
		}
	}
	return NULL;
}

static void bayes_setup(void)
{
	by.vars = (int)sized(64, 256, 512);
	by.tasks = sized(4000, 40000, 200000);
	by_var = aligned_alloc(64, (size_t)by.vars * sizeof(*by_var));
	CHECK(by_var != NULL);
	memset(by_var, 0, (size_t)by.vars * sizeof(*by_var));
}

static void bayes_check(void)
{
	int *indeg = calloc((size_t)by.vars, sizeof(int));
	int *queue = malloc((size_t)by.vars * sizeof(int));
	long edges = 0, net = 0, sorted = 0;
	struct by_count sum = { 0, 0, 0, 0 };
	int head = 0, tail = 0;

	CHECK(indeg != NULL && queue != NULL);
	for (int u = 0; u < by.vars; u++) {
		const struct var *x = &by_var[u];

		CHECK(x->nparents >= 0 && x->nparents <= BY_MAXP);
		CHECK(x->nchildren >= 0 && x->nchildren <= BY_MAXC);
		for (int i = 0; i < x->nchildren; i++) {
			const struct var *y = &by_var[x->children[i]];
			int found = 0;

			for (int j = 0; j < y->nparents; j++)
				found += y->parents[j] == u;
			CHECK(found == 1);
			indeg[x->children[i]]++;
			edges++;
		}
	}
	for (int v = 0; v < by.vars; v++)
		CHECK(indeg[v] == by_var[v].nparents);
	/* Kahn's topological sort: acyclic iff every node comes out. */
	for (int v = 0; v < by.vars; v++)
		if (indeg[v] == 0)
			queue[tail++] = v;
	while (head < tail) {
		const struct var *x = &by_var[queue[head++]];

		sorted++;
		for (int i = 0; i < x->nchildren; i++)
			if (--indeg[x->children[i]] == 0)
				queue[tail++] = x->children[i];
	}
	CHECK(sorted == by.vars);
	for (int i = 0; i < nthreads; i++) {
		net += by_edges_net[i];
		sum.inserted += by_counts[i].inserted;
		sum.refused += by_counts[i].refused;
		sum.removed += by_counts[i].removed;
		sum.reversed += by_counts[i].reversed;
	}
	CHECK(edges == net);
	CHECK(sum.inserted > 0 && sum.refused > 0);
	fprintf(stderr,
		"bayes: %ld edges at the end; %ld inserted, %ld refused, "
		"%ld removed, %ld reversed\n",
		edges, sum.inserted, sum.refused, sum.removed, sum.reversed);
	free(indeg);
	free(queue);
}

/* ------------------------------------------------------------------ */

static const struct app {
	const char *name;
	void (*setup)(void);
	void *(*worker)(void *);
	void (*check)(void);
} apps[] = {
	{ "vacation", vacation_setup, vacation_client, vacation_check },
	{ "kmeans", kmeans_setup, kmeans_worker, kmeans_check },
	{ "bayes", bayes_setup, bayes_learner, bayes_check },
};

static const struct app *app;
static pthread_barrier_t end_line;

/*
 * Threads leave together: libitm changes its default method when the
 * number of threads changes, and a transaction that begins meanwhile can
 * end up irrevocable, where __transaction_cancel aborts the process.
 */
static void *run_app(void *arg)
{
	void *ret = app->worker(arg);

	pthread_barrier_wait(&end_line);
	return ret;
}

static void usage(void)
{
	fprintf(stderr, "usage: bench_apps vacation|kmeans|bayes THREADS "
			"[tiny|small|bench]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	double t0, t1, c0, c1;

	if (argc < 3)
		usage();
	for (size_t i = 0; i < sizeof(apps) / sizeof(apps[0]); i++)
		if (strcmp(argv[1], apps[i].name) == 0)
			app = &apps[i];
	if (app == NULL)
		usage();
	nthreads = atoi(argv[2]);
	if (nthreads < 1 || nthreads > 64)
		usage();
	if (argc > 3) {
		if (strcmp(argv[3], "tiny") == 0)
			size_class = SIZE_TINY;
		else if (strcmp(argv[3], "small") == 0)
			size_class = SIZE_SMALL;
		else if (strcmp(argv[3], "bench") == 0)
			size_class = SIZE_BENCH;
		else
			usage();
	}
	app->setup();
	CHECK(pthread_barrier_init(&end_line, NULL, (unsigned)nthreads) == 0);
	c0 = clock_seconds(CLOCK_PROCESS_CPUTIME_ID);
	t0 = now();
	run_threads(nthreads, run_app);
	t1 = now();
	c1 = clock_seconds(CLOCK_PROCESS_CPUTIME_ID);
	app->check();
	fprintf(stderr, "time: %.6f\n", t1 - t0);
	/* CPU time of the phase, all threads: steadier than the time on a
	 * loaded machine, where a thread waiting for a core costs none. */
	fprintf(stderr, "cpu: %.6f\n", c1 - c0);
	printf("%s: %d threads: ok\n", app->name, nthreads);
	return 0;
}
