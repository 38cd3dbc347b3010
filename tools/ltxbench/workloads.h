/* SPDX-License-Identifier: MIT */
/*
 * The workloads, written once against the access interface (LOAD, LOADX,
 * STORE, TX_BEGIN, TX_END, TX_RESTART, TX_SAFE) and compiled once per
 * implementation: include an access_*.h header, define BENCH_WORKLOADS to
 * the name of the table to export, then include this file.
 *
 * Every shared field is a long or a pointer, so that each LOAD/STORE is one
 * aligned word.  Nodes come from a per-thread arena, cache-line aligned, and
 * are never freed during a run (no reclamation scheme is under test).
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

#ifndef BENCH_WORKLOADS
#error "define BENCH_WORKLOADS before including workloads.h"
#endif

#define LINE_ALIGNED __attribute__((aligned(BENCH_CACHELINE)))

/* ---- lifo: the article's stack (Figure 8.4), pop then push ---- */

struct lifo_node {
	struct lifo_node *next;
	long id;
};

struct lifo {
	struct lifo_node *top LINE_ALIGNED;
	struct lifo_node *nodes LINE_ALIGNED;
	long n;
};

static struct bench_state *lifo_setup(const struct bench_params *p,
				      struct bench_worker *w, long nthreads)
{
	struct lifo *s = bench_alloc(w, sizeof(*s));

	s->n = p->size;
	s->nodes = bench_alloc(w, (size_t)s->n * sizeof(*s->nodes));
	for (long i = 0; i < s->n; i++) {
		s->nodes[i].id = i;
		s->nodes[i].next = s->top;
		s->top = &s->nodes[i];
	}
	return (struct bench_state *)s;
}

static long lifo_op(struct bench_state *st, const struct bench_params *p,
		    struct bench_worker *w)
{
	struct lifo *s = (struct lifo *)st;
	struct lifo_node *n;

	TX_BEGIN(w);
	n = LOADX(s->top);
	if (n != NULL)
		STORE(s->top, LOAD(n->next));
	TX_END(w);
	if (n == NULL)
		return 0; /* the other threads hold every element */
	TX_BEGIN(w);
	STORE(n->next, LOADX(s->top));
	STORE(s->top, n);
	TX_END(w);
	return 1;
}

static bool lifo_check(struct bench_state *st, const struct bench_params *p,
		       struct bench_worker *w, long nthreads, char *msg,
		       size_t len)
{
	struct lifo *s = (struct lifo *)st;
	char *seen = calloc((size_t)s->n, 1);
	long count = 0;

	for (struct lifo_node *n = s->top; n != NULL; n = n->next) {
		if (n < s->nodes || n >= s->nodes + s->n || count > s->n) {
			snprintf(msg, len,
				 "the stack holds a foreign node or "
				 "a cycle");
			return false;
		}
		if (seen[n->id]++) {
			snprintf(msg, len, "element %ld is on the stack twice",
				 n->id);
			return false;
		}
		count++;
	}
	free(seen);
	if (count != s->n) {
		snprintf(msg, len, "%ld of %ld elements lost", s->n - count,
			 s->n);
		return false;
	}
	return true;
}

/* ---- counter and hm93-counting: one shared counter ---- */

struct counter {
	long value LINE_ALIGNED;
};

static struct bench_state *counter_setup(const struct bench_params *p,
					 struct bench_worker *w, long nthreads)
{
	return bench_alloc(w, sizeof(struct counter));
}

/* counter: read with LT, then write (an upgrade from shared). */
static long counter_op(struct bench_state *st, const struct bench_params *p,
		       struct bench_worker *w)
{
	struct counter *s = (struct counter *)st;

	TX_BEGIN(w);
	STORE(s->value, LOAD(s->value) + 1);
	TX_END(w);
	return 1;
}

/* hm93-counting: the article's counting benchmark, LTX then ST. */
static long counting_op(struct bench_state *st, const struct bench_params *p,
			struct bench_worker *w)
{
	struct counter *s = (struct counter *)st;

	TX_BEGIN(w);
	STORE(s->value, LOADX(s->value) + 1);
	TX_END(w);
	return 1;
}

static bool counter_check(struct bench_state *st, const struct bench_params *p,
			  struct bench_worker *w, long nthreads, char *msg,
			  size_t len)
{
	struct counter *s = (struct counter *)st;
	long ops = 0;

	for (long t = 0; t < nthreads; t++)
		ops += w[t].ops;
	if (s->value != ops) {
		snprintf(msg, len, "the counter is %ld after %ld increments",
			 s->value, ops);
		return false;
	}
	return true;
}

/*
 * ---- integer sets ----
 * Each thread draws a key in [0, range); update/2 percent of operations
 * insert it, update/2 percent remove it, the rest look it up.  stat[0] and
 * stat[1] count successful inserts and removes, so that the final size is
 * known.  A thread keeps one spare node, allocated outside transactions.
 */

enum { INTSET_INSERT, INTSET_REMOVE, INTSET_CONTAINS };

static int intset_pick(struct bench_worker *w, const struct bench_params *p,
		       long *key)
{
	long r = bench_rand_below(w, 100);

	*key = bench_rand_below(w, p->range);
	if (r * 2 < p->update)
		return INTSET_INSERT;
	if (r < p->update)
		return INTSET_REMOVE;
	return INTSET_CONTAINS;
}

static bool intset_check_size(long count, long initial, struct bench_worker *w,
			      long nthreads, char *msg, size_t len)
{
	long expect = initial;

	for (long t = 0; t < nthreads; t++)
		expect += w[t].stat[0] - w[t].stat[1];
	if (count != expect) {
		snprintf(msg, len,
			 "the set holds %ld keys; %ld expected "
			 "(initial size plus inserts minus removes)",
			 count, expect);
		return false;
	}
	return true;
}

/* -- intset-list: a sorted linked list between two sentinels -- */

struct list_node {
	long key;
	struct list_node *next;
};

struct intset_list {
	struct list_node *head;
	long initial;
};

static struct list_node *list_new_node(struct bench_worker *w, long key)
{
	struct list_node *n = bench_alloc(w, sizeof(*n));

	n->key = key;
	return n;
}

/*
 * Find the first node whose key is >= key, and its predecessor.  Returns
 * false if a NULL was read: only the tail sentinel has one, and its key
 * stops every search first, so the snapshot was inconsistent.
 */
static TX_SAFE bool list_find(struct intset_list *s, long key,
			      struct list_node **prevp, struct list_node **curp,
			      long *keyp)
{
	struct list_node *prev = s->head, *cur;
	long k;

	cur = LOAD(prev->next);
	for (;;) {
		if (cur == NULL)
			return false;
		k = LOAD(cur->key);
		if (k >= key)
			break;
		prev = cur;
		cur = LOAD(cur->next);
	}
	*prevp = prev;
	*curp = cur;
	*keyp = k;
	return true;
}

static long list_update(struct intset_list *s, struct bench_worker *w, int kind,
			long key)
{
	struct list_node *prev, *cur, *n = w->priv;
	long k, done;

	if (kind == INTSET_INSERT && n == NULL)
		n = w->priv = list_new_node(w, 0);
	if (n != NULL)
		n->key = key; /* private until published */
	TX_BEGIN(w);
	done = 0;
	if (!list_find(s, key, &prev, &cur, &k))
		TX_RESTART(w);
	if (kind == INTSET_INSERT && k != key) {
		STORE(n->next, cur);
		STORE(prev->next, n);
		done = 1;
	} else if (kind == INTSET_REMOVE && k == key) {
		STORE(prev->next, LOAD(cur->next));
		done = 1;
	}
	TX_END(w);
	if (done && kind == INTSET_INSERT)
		w->priv = NULL;
	return done;
}

static long intset_list_op(struct bench_state *st, const struct bench_params *p,
			   struct bench_worker *w)
{
	struct intset_list *s = (struct intset_list *)st;
	struct list_node *prev, *cur;
	long key, k, found;
	int kind = intset_pick(w, p, &key);

	if (kind != INTSET_CONTAINS) {
		w->stat[kind] += list_update(s, w, kind, key);
		return 1;
	}
	TX_BEGIN(w);
	if (!list_find(s, key, &prev, &cur, &k))
		TX_RESTART(w);
	found = k == key;
	TX_END(w);
	w->stat[2] += found;
	return 1;
}

static struct bench_state *intset_list_setup(const struct bench_params *p,
					     struct bench_worker *w,
					     long nthreads)
{
	struct intset_list *s = bench_alloc(w, sizeof(*s));
	long stat0 = w->stat[0];

	s->head = list_new_node(w, LONG_MIN);
	s->head->next = list_new_node(w, LONG_MAX);
	while (s->initial < p->size)
		s->initial += list_update(s, w, INTSET_INSERT,
					  bench_rand_below(w, p->range));
	w->stat[0] = stat0;
	return (struct bench_state *)s;
}

static bool intset_list_check(struct bench_state *st,
			      const struct bench_params *p,
			      struct bench_worker *w, long nthreads, char *msg,
			      size_t len)
{
	struct intset_list *s = (struct intset_list *)st;
	long count = 0, last = LONG_MIN;
	struct list_node *n;

	for (n = s->head->next; n != NULL && n->key != LONG_MAX; n = n->next) {
		if (n->key <= last || n->key >= p->range) {
			snprintf(msg, len,
				 "the list is not sorted or holds "
				 "key %ld out of range",
				 n->key);
			return false;
		}
		last = n->key;
		count++;
	}
	if (n == NULL || n->next != NULL) {
		snprintf(msg, len, "the tail sentinel is lost");
		return false;
	}
	return intset_check_size(count, s->initial, w, nthreads, msg, len);
}

/* -- intset-rbtree: a red-black tree (CLRS ch. 13) with NULL leaves -- */

#define RB_BLACK 0 /* a doomed ltx load reads 0: black ends the fixups */
#define RB_RED	 1

struct rb_node {
	long key;
	struct rb_node *left, *right, *parent;
	long color;
};

struct intset_rbtree {
	struct rb_node *root;
	long initial;
};

static TX_SAFE bool rb_rotate_left(struct intset_rbtree *t, struct rb_node *x)
{
	struct rb_node *y = LOAD(x->right), *yl, *xp;

	if (y == NULL)
		return false;
	yl = LOAD(y->left);
	STORE(x->right, yl);
	if (yl != NULL)
		STORE(yl->parent, x);
	xp = LOAD(x->parent);
	STORE(y->parent, xp);
	if (xp == NULL)
		STORE(t->root, y);
	else if (x == LOAD(xp->left))
		STORE(xp->left, y);
	else
		STORE(xp->right, y);
	STORE(y->left, x);
	STORE(x->parent, y);
	return true;
}

static TX_SAFE bool rb_rotate_right(struct intset_rbtree *t, struct rb_node *x)
{
	struct rb_node *y = LOAD(x->left), *yr, *xp;

	if (y == NULL)
		return false;
	yr = LOAD(y->right);
	STORE(x->left, yr);
	if (yr != NULL)
		STORE(yr->parent, x);
	xp = LOAD(x->parent);
	STORE(y->parent, xp);
	if (xp == NULL)
		STORE(t->root, y);
	else if (x == LOAD(xp->right))
		STORE(xp->right, y);
	else
		STORE(xp->left, y);
	STORE(y->right, x);
	STORE(x->parent, y);
	return true;
}

static TX_SAFE long rb_color(struct rb_node *n)
{
	return n == NULL ? RB_BLACK : LOAD(n->color);
}

static TX_SAFE struct rb_node *rb_find(struct intset_rbtree *t, long key)
{
	struct rb_node *x = LOAD(t->root);

	while (x != NULL) {
		long k = LOAD(x->key);

		if (k == key)
			break;
		x = key < k ? LOAD(x->left) : LOAD(x->right);
	}
	return x;
}

/* Insert z (key set, private); 1 if inserted, 0 if present, -1 if doomed. */
static TX_SAFE int rb_insert(struct intset_rbtree *t, struct rb_node *z)
{
	struct rb_node *x = LOAD(t->root), *y = NULL, *p, *g, *u;
	long key = z->key;

	while (x != NULL) {
		long k = LOAD(x->key);

		if (k == key)
			return 0;
		y = x;
		x = key < k ? LOAD(x->left) : LOAD(x->right);
	}
	STORE(z->parent, y);
	STORE(z->left, (struct rb_node *)NULL);
	STORE(z->right, (struct rb_node *)NULL);
	STORE(z->color, (long)RB_RED);
	if (y == NULL)
		STORE(t->root, z);
	else if (key < LOAD(y->key))
		STORE(y->left, z);
	else
		STORE(y->right, z);
	for (;;) {
		p = LOAD(z->parent);
		if (p == NULL || LOAD(p->color) != RB_RED)
			break;
		g = LOAD(p->parent); /* a red node is never the root */
		if (g == NULL)
			return -1;
		if (p == LOAD(g->left)) {
			u = LOAD(g->right);
			if (rb_color(u) == RB_RED) {
				STORE(p->color, (long)RB_BLACK);
				STORE(u->color, (long)RB_BLACK);
				STORE(g->color, (long)RB_RED);
				z = g;
				continue;
			}
			if (z == LOAD(p->right)) {
				z = p;
				if (!rb_rotate_left(t, z))
					return -1;
				p = LOAD(z->parent);
				if (p == NULL)
					return -1;
			}
			STORE(p->color, (long)RB_BLACK);
			STORE(g->color, (long)RB_RED);
			if (!rb_rotate_right(t, g))
				return -1;
		} else {
			u = LOAD(g->left);
			if (rb_color(u) == RB_RED) {
				STORE(p->color, (long)RB_BLACK);
				STORE(u->color, (long)RB_BLACK);
				STORE(g->color, (long)RB_RED);
				z = g;
				continue;
			}
			if (z == LOAD(p->left)) {
				z = p;
				if (!rb_rotate_right(t, z))
					return -1;
				p = LOAD(z->parent);
				if (p == NULL)
					return -1;
			}
			STORE(p->color, (long)RB_BLACK);
			STORE(g->color, (long)RB_RED);
			if (!rb_rotate_left(t, g))
				return -1;
		}
	}
	x = LOAD(t->root);
	if (x == NULL)
		return -1;
	STORE(x->color, (long)RB_BLACK);
	return 1;
}

/* Put v where u was (CLRS's RB-TRANSPLANT). */
static TX_SAFE void rb_transplant(struct intset_rbtree *t, struct rb_node *u,
				  struct rb_node *v)
{
	struct rb_node *up = LOAD(u->parent);

	if (up == NULL)
		STORE(t->root, v);
	else if (u == LOAD(up->left))
		STORE(up->left, v);
	else
		STORE(up->right, v);
	if (v != NULL)
		STORE(v->parent, up);
}

/* Restore the black heights after removing a black node; x's parent is xp. */
static TX_SAFE bool rb_remove_fixup(struct intset_rbtree *t, struct rb_node *x,
				    struct rb_node *xp)
{
	struct rb_node *w, *wl, *wr;

	while (x != LOAD(t->root) && rb_color(x) == RB_BLACK) {
		if (xp == NULL)
			return false;
		if (x == LOAD(xp->left)) {
			w = LOAD(xp->right); /* x is short: w exists */
			if (w == NULL)
				return false;
			if (LOAD(w->color) == RB_RED) {
				STORE(w->color, (long)RB_BLACK);
				STORE(xp->color, (long)RB_RED);
				if (!rb_rotate_left(t, xp))
					return false;
				w = LOAD(xp->right);
				if (w == NULL)
					return false;
			}
			wl = LOAD(w->left);
			wr = LOAD(w->right);
			if (rb_color(wl) == RB_BLACK &&
			    rb_color(wr) == RB_BLACK) {
				STORE(w->color, (long)RB_RED);
				x = xp;
				xp = LOAD(x->parent);
				continue;
			}
			if (rb_color(wr) == RB_BLACK) {
				/* wl is red, unless a doomed transaction's
				 * loads (0) made the colors disagree. */
				if (wl == NULL)
					return false;
				STORE(wl->color, (long)RB_BLACK);
				STORE(w->color, (long)RB_RED);
				if (!rb_rotate_right(t, w))
					return false;
				w = LOAD(xp->right);
				if (w == NULL)
					return false;
				wr = LOAD(w->right);
			}
			STORE(w->color, LOAD(xp->color));
			STORE(xp->color, (long)RB_BLACK);
			if (wr != NULL)
				STORE(wr->color, (long)RB_BLACK);
			if (!rb_rotate_left(t, xp))
				return false;
		} else {
			w = LOAD(xp->left);
			if (w == NULL)
				return false;
			if (LOAD(w->color) == RB_RED) {
				STORE(w->color, (long)RB_BLACK);
				STORE(xp->color, (long)RB_RED);
				if (!rb_rotate_right(t, xp))
					return false;
				w = LOAD(xp->left);
				if (w == NULL)
					return false;
			}
			wl = LOAD(w->left);
			wr = LOAD(w->right);
			if (rb_color(wl) == RB_BLACK &&
			    rb_color(wr) == RB_BLACK) {
				STORE(w->color, (long)RB_RED);
				x = xp;
				xp = LOAD(x->parent);
				continue;
			}
			if (rb_color(wl) == RB_BLACK) {
				if (wr == NULL) /* doomed, as above */
					return false;
				STORE(wr->color, (long)RB_BLACK);
				STORE(w->color, (long)RB_RED);
				if (!rb_rotate_left(t, w))
					return false;
				w = LOAD(xp->left);
				if (w == NULL)
					return false;
				wl = LOAD(w->left);
			}
			STORE(w->color, LOAD(xp->color));
			STORE(xp->color, (long)RB_BLACK);
			if (wl != NULL)
				STORE(wl->color, (long)RB_BLACK);
			if (!rb_rotate_right(t, xp))
				return false;
		}
		x = LOAD(t->root);
		break;
	}
	if (x != NULL)
		STORE(x->color, (long)RB_BLACK);
	return true;
}

/* Remove key; 1 if removed, 0 if absent, -1 if doomed (CLRS RB-DELETE). */
static TX_SAFE int rb_remove(struct intset_rbtree *t, long key)
{
	struct rb_node *z = rb_find(t, key), *y, *x, *xp, *zl, *zr;
	long ycolor;

	if (z == NULL)
		return 0;
	zl = LOAD(z->left);
	zr = LOAD(z->right);
	ycolor = LOAD(z->color);
	if (zl == NULL) {
		x = zr;
		xp = LOAD(z->parent);
		rb_transplant(t, z, zr);
	} else if (zr == NULL) {
		x = zl;
		xp = LOAD(z->parent);
		rb_transplant(t, z, zl);
	} else {
		struct rb_node *l;

		for (y = zr; (l = LOAD(y->left)) != NULL; y = l)
			;
		ycolor = LOAD(y->color);
		x = LOAD(y->right);
		if (LOAD(y->parent) == z) {
			xp = y;
		} else {
			xp = LOAD(y->parent);
			rb_transplant(t, y, x);
			STORE(y->right, zr);
			STORE(zr->parent, y);
		}
		rb_transplant(t, z, y);
		STORE(y->left, zl);
		STORE(zl->parent, y);
		STORE(y->color, LOAD(z->color));
	}
	if (ycolor == RB_BLACK && !rb_remove_fixup(t, x, xp))
		return -1;
	return 1;
}

static long intset_rbtree_update(struct intset_rbtree *s,
				 struct bench_worker *w, int kind, long key)
{
	struct rb_node *n = w->priv;
	int done;

	if (kind == INTSET_INSERT) {
		if (n == NULL)
			n = w->priv = bench_alloc(w, sizeof(*n));
		n->key = key;
	}
	TX_BEGIN(w);
	if (kind == INTSET_INSERT)
		done = rb_insert(s, n);
	else
		done = rb_remove(s, key);
	if (done < 0)
		TX_RESTART(w);
	TX_END(w);
	if (done && kind == INTSET_INSERT)
		w->priv = NULL;
	return done;
}

static long intset_rbtree_op(struct bench_state *st,
			     const struct bench_params *p,
			     struct bench_worker *w)
{
	struct intset_rbtree *s = (struct intset_rbtree *)st;
	long key, found;
	int kind = intset_pick(w, p, &key);

	if (kind != INTSET_CONTAINS) {
		w->stat[kind] += intset_rbtree_update(s, w, kind, key);
		return 1;
	}
	TX_BEGIN(w);
	found = rb_find(s, key) != NULL;
	TX_END(w);
	w->stat[2] += found;
	return 1;
}

static struct bench_state *intset_rbtree_setup(const struct bench_params *p,
					       struct bench_worker *w,
					       long nthreads)
{
	struct intset_rbtree *s = bench_alloc(w, sizeof(*s));
	long stat0 = w->stat[0];

	while (s->initial < p->size)
		s->initial += intset_rbtree_update(
			s, w, INTSET_INSERT, bench_rand_below(w, p->range));
	w->stat[0] = stat0;
	return (struct bench_state *)s;
}

/* The black height of n's subtree, or -1 (with msg) if it is not valid. */
static long rb_validate(struct rb_node *n, struct rb_node *parent, long lo,
			long hi, long *count, char *msg, size_t len)
{
	long lh, rh;

	if (n == NULL)
		return 1;
	if (n->parent != parent) {
		snprintf(msg, len, "node %ld has a wrong parent pointer",
			 n->key);
		return -1;
	}
	if (n->key < lo || n->key > hi) {
		snprintf(msg, len, "node %ld is out of order", n->key);
		return -1;
	}
	if (n->color == RB_RED &&
	    (rb_color(n->left) == RB_RED || rb_color(n->right) == RB_RED)) {
		snprintf(msg, len, "red node %ld has a red child", n->key);
		return -1;
	}
	(*count)++;
	lh = rb_validate(n->left, n, lo, n->key - 1, count, msg, len);
	if (lh < 0)
		return -1;
	rh = rb_validate(n->right, n, n->key + 1, hi, count, msg, len);
	if (rh < 0)
		return -1;
	if (lh != rh) {
		snprintf(msg, len, "black heights differ under node %ld",
			 n->key);
		return -1;
	}
	return lh + (n->color == RB_BLACK);
}

static bool intset_rbtree_check(struct bench_state *st,
				const struct bench_params *p,
				struct bench_worker *w, long nthreads,
				char *msg, size_t len)
{
	struct intset_rbtree *s = (struct intset_rbtree *)st;
	long count = 0;

	if (rb_color(s->root) != RB_BLACK) {
		snprintf(msg, len, "the root is red");
		return false;
	}
	if (rb_validate(s->root, NULL, 0, p->range - 1, &count, msg, len) < 0)
		return false;
	return intset_check_size(count, s->initial, w, nthreads, msg, len);
}

/* -- intset-skiplist: Pugh's skip list between two full-height sentinels -- */

#define SL_LEVELS 16

struct sl_node {
	long key;
	long level;
	struct sl_node *next[];
};

struct intset_skiplist {
	struct sl_node *head;
	long initial;
};

static struct sl_node *sl_new_node(struct bench_worker *w, long key, long level)
{
	struct sl_node *n =
		bench_alloc(w, sizeof(*n) + (size_t)level * sizeof(n->next[0]));

	n->key = key;
	n->level = level;
	return n;
}

/* A node of level 1 + (number of consecutive heads), at most SL_LEVELS. */
static struct sl_node *sl_new_random_node(struct bench_worker *w)
{
	long level = 1;

	while (level < SL_LEVELS && (bench_rand(w) & 1))
		level++;
	return sl_new_node(w, 0, level);
}

/*
 * The predecessors and successors of key at every level.  Returns false if
 * a NULL was read (the tail sentinel's key stops every search first).
 */
static TX_SAFE bool sl_find(struct intset_skiplist *s, long key,
			    struct sl_node **preds, struct sl_node **succs)
{
	struct sl_node *x = s->head, *nx;

	for (long lv = SL_LEVELS - 1; lv >= 0; lv--) {
		for (;;) {
			nx = LOAD(x->next[lv]);
			if (nx == NULL)
				return false;
			if (LOAD(nx->key) >= key)
				break;
			x = nx;
		}
		preds[lv] = x;
		succs[lv] = nx;
	}
	return true;
}

static long sl_update(struct intset_skiplist *s, struct bench_worker *w,
		      int kind, long key)
{
	struct sl_node *preds[SL_LEVELS], *succs[SL_LEVELS];
	struct sl_node *n = w->priv;
	long done;

	if (kind == INTSET_INSERT) {
		if (n == NULL)
			n = w->priv = sl_new_random_node(w);
		n->key = key;
	}
	TX_BEGIN(w);
	done = 0;
	if (!sl_find(s, key, preds, succs))
		TX_RESTART(w);
	if (kind == INTSET_INSERT && LOAD(succs[0]->key) != key) {
		for (long i = 0; i < n->level; i++) {
			STORE(n->next[i], succs[i]);
			STORE(preds[i]->next[i], n);
		}
		done = 1;
	} else if (kind == INTSET_REMOVE && LOAD(succs[0]->key) == key) {
		struct sl_node *x = succs[0];
		long level = LOAD(x->level);

		if (level > SL_LEVELS)
			TX_RESTART(w);
		for (long i = 0; i < level; i++)
			STORE(preds[i]->next[i], LOAD(x->next[i]));
		done = 1;
	}
	TX_END(w);
	if (done && kind == INTSET_INSERT)
		w->priv = NULL;
	return done;
}

static long intset_skiplist_op(struct bench_state *st,
			       const struct bench_params *p,
			       struct bench_worker *w)
{
	struct intset_skiplist *s = (struct intset_skiplist *)st;
	struct sl_node *preds[SL_LEVELS], *succs[SL_LEVELS];
	long key, found;
	int kind = intset_pick(w, p, &key);

	if (kind != INTSET_CONTAINS) {
		w->stat[kind] += sl_update(s, w, kind, key);
		return 1;
	}
	TX_BEGIN(w);
	if (!sl_find(s, key, preds, succs))
		TX_RESTART(w);
	found = LOAD(succs[0]->key) == key;
	TX_END(w);
	w->stat[2] += found;
	return 1;
}

static struct bench_state *intset_skiplist_setup(const struct bench_params *p,
						 struct bench_worker *w,
						 long nthreads)
{
	struct intset_skiplist *s = bench_alloc(w, sizeof(*s));
	struct sl_node *tail = sl_new_node(w, LONG_MAX, SL_LEVELS);
	long stat0 = w->stat[0];

	s->head = sl_new_node(w, LONG_MIN, SL_LEVELS);
	for (long i = 0; i < SL_LEVELS; i++)
		s->head->next[i] = tail;
	while (s->initial < p->size)
		s->initial += sl_update(s, w, INTSET_INSERT,
					bench_rand_below(w, p->range));
	w->stat[0] = stat0;
	return (struct bench_state *)s;
}

static bool intset_skiplist_check(struct bench_state *st,
				  const struct bench_params *p,
				  struct bench_worker *w, long nthreads,
				  char *msg, size_t len)
{
	struct intset_skiplist *s = (struct intset_skiplist *)st;
	long count = 0;

	for (long lv = SL_LEVELS - 1; lv >= 0; lv--) {
		long last = LONG_MIN, n = 0;
		struct sl_node *x;

		for (x = s->head->next[lv]; x != NULL && x->key != LONG_MAX;
		     x = x->next[lv]) {
			if (x->key <= last || x->key >= p->range ||
			    x->level <= lv) {
				snprintf(msg, len,
					 "level %ld is not sorted "
					 "or links node %ld of level %ld",
					 lv, x->key, x->level);
				return false;
			}
			last = x->key;
			n++;
		}
		if (x == NULL) {
			snprintf(msg, len, "level %ld lost its tail", lv);
			return false;
		}
		count = n;
	}
	return intset_check_size(count, s->initial, w, nthreads, msg, len);
}

/* -- intset-hash: a fixed table of sorted chains, one bucket per key -- */

struct hash_node {
	long key;
	struct hash_node *next;
};

struct intset_hash {
	struct hash_node **buckets;
	long nbuckets;
	long initial;
};

/*
 * The link that points at the first node of key's chain whose key is >= key
 * (or at NULL).  NULL ends a chain, so a doomed search just ends early.
 * Always inlined: GCC inlines it into both callers in every build but
 * the LTX_INLINE one, whose larger loads tip its heuristics to a call and
 * five saved registers per operation; forcing it keeps the builds alike,
 * so that txcost compares the runtimes' loads, not two shapes of the
 * program.
 */
static inline __attribute__((always_inline)) TX_SAFE struct hash_node **
hash_find(struct intset_hash *s, long key, struct hash_node **curp)
{
	struct hash_node **link = &s->buckets[key % s->nbuckets];
	struct hash_node *cur = LOAD(*link);

	while (cur != NULL && LOAD(cur->key) < key) {
		link = &cur->next;
		cur = LOAD(*link);
	}
	*curp = cur;
	return link;
}

static long hash_update(struct intset_hash *s, struct bench_worker *w, int kind,
			long key)
{
	struct hash_node **link, *cur, *n = w->priv;
	long done;

	if (kind == INTSET_INSERT) {
		if (n == NULL)
			n = w->priv = bench_alloc(w, sizeof(*n));
		n->key = key;
	}
	TX_BEGIN(w);
	done = 0;
	link = hash_find(s, key, &cur);
	if (kind == INTSET_INSERT && (cur == NULL || LOAD(cur->key) != key)) {
		STORE(n->next, cur);
		STORE(*link, n);
		done = 1;
	} else if (kind == INTSET_REMOVE && cur != NULL &&
		   LOAD(cur->key) == key) {
		STORE(*link, LOAD(cur->next));
		done = 1;
	}
	TX_END(w);
	if (done && kind == INTSET_INSERT)
		w->priv = NULL;
	return done;
}

static long intset_hash_op(struct bench_state *st, const struct bench_params *p,
			   struct bench_worker *w)
{
	struct intset_hash *s = (struct intset_hash *)st;
	struct hash_node *cur;
	long key, found;
	int kind = intset_pick(w, p, &key);

	if (kind != INTSET_CONTAINS) {
		w->stat[kind] += hash_update(s, w, kind, key);
		return 1;
	}
	TX_BEGIN(w);
	hash_find(s, key, &cur);
	found = cur != NULL && LOAD(cur->key) == key;
	TX_END(w);
	w->stat[2] += found;
	return 1;
}

static struct bench_state *intset_hash_setup(const struct bench_params *p,
					     struct bench_worker *w,
					     long nthreads)
{
	struct intset_hash *s = bench_alloc(w, sizeof(*s));
	long stat0 = w->stat[0];

	s->nbuckets = p->size > 0 ? p->size : 1;
	s->buckets =
		bench_alloc(w, (size_t)s->nbuckets * sizeof(s->buckets[0]));
	while (s->initial < p->size)
		s->initial += hash_update(s, w, INTSET_INSERT,
					  bench_rand_below(w, p->range));
	w->stat[0] = stat0;
	return (struct bench_state *)s;
}

static bool intset_hash_check(struct bench_state *st,
			      const struct bench_params *p,
			      struct bench_worker *w, long nthreads, char *msg,
			      size_t len)
{
	struct intset_hash *s = (struct intset_hash *)st;
	long count = 0;

	for (long b = 0; b < s->nbuckets; b++) {
		long last = -1;

		for (struct hash_node *n = s->buckets[b]; n != NULL;
		     n = n->next) {
			if (n->key <= last || n->key % s->nbuckets != b ||
			    n->key >= p->range) {
				snprintf(msg, len,
					 "bucket %ld is not sorted "
					 "or holds key %ld",
					 b, n->key);
				return false;
			}
			last = n->key;
			count++;
		}
	}
	return intset_check_size(count, s->initial, w, nthreads, msg, len);
}

/*
 * ---- bank: transfers between accounts, and read-only totals ----
 * update percent of operations move a random amount between two random
 * accounts; the others sum every balance in one transaction and fail the
 * run if a committed snapshot's total is not the constant total.
 */

#define BANK_INITIAL 1000

struct account {
	long balance;
} LINE_ALIGNED;

struct bank {
	struct account *acc;
	long n;
};

static struct bench_state *bank_setup(const struct bench_params *p,
				      struct bench_worker *w, long nthreads)
{
	struct bank *s = bench_alloc(w, sizeof(*s));

	s->n = p->size > 1 ? p->size : 2;
	s->acc = bench_alloc(w, (size_t)s->n * sizeof(*s->acc));
	for (long i = 0; i < s->n; i++)
		s->acc[i].balance = BANK_INITIAL;
	return (struct bench_state *)s;
}

static long bank_op(struct bench_state *st, const struct bench_params *p,
		    struct bench_worker *w)
{
	struct bank *s = (struct bank *)st;
	long total;

	if (bench_rand_below(w, 100) < p->update) {
		long a = bench_rand_below(w, s->n);
		long b = (a + 1 + bench_rand_below(w, s->n - 1)) % s->n;
		long amount = 1 + bench_rand_below(w, 100);

		TX_BEGIN(w);
		STORE(s->acc[a].balance, LOADX(s->acc[a].balance) - amount);
		STORE(s->acc[b].balance, LOADX(s->acc[b].balance) + amount);
		TX_END(w);
		return 1;
	}
	TX_BEGIN(w);
	total = 0;
	for (long i = 0; i < s->n; i++)
		total += LOAD(s->acc[i].balance);
	TX_END(w);
	if (total != s->n * BANK_INITIAL)
		bench_fatal("ltxbench: bank: INVARIANT BROKEN: a committed "
			    "read-only transaction saw a total of %ld, not "
			    "%ld",
			    total, s->n * BANK_INITIAL);
	w->stat[0]++;
	return 1;
}

static bool bank_check(struct bench_state *st, const struct bench_params *p,
		       struct bench_worker *w, long nthreads, char *msg,
		       size_t len)
{
	struct bank *s = (struct bank *)st;
	long total = 0;

	for (long i = 0; i < s->n; i++)
		total += s->acc[i].balance;
	if (total != s->n * BANK_INITIAL) {
		snprintf(msg, len, "the balances total %ld, not %ld", total,
			 s->n * BANK_INITIAL);
		return false;
	}
	return true;
}

/*
 * ---- hm93-fifo: the article's producer/consumer bounded FIFO ----
 * With one thread it alternates enqueue and dequeue; with more, even
 * threads produce and odd ones consume.  A producer enqueues (id, seq)
 * with seq counting up; a consumer fails the run at once if it sees a
 * producer's seq out of order, and keeps counts and sums per producer so
 * that the end can prove nothing was lost or duplicated.
 */

#define FIFO_SEQ_BITS 40

struct fifo {
	long head LINE_ALIGNED;
	long tail LINE_ALIGNED;
	long *slots LINE_ALIGNED;
	long cap;
};

struct fifo_consumer {
	long *count, *sum, *last;
};

static struct bench_state *fifo_setup(const struct bench_params *p,
				      struct bench_worker *w, long nthreads)
{
	struct fifo *s = bench_alloc(w, sizeof(*s));

	s->cap = p->size > 0 ? p->size : 1;
	s->slots = bench_alloc(w, (size_t)s->cap * sizeof(long));
	for (long t = 0; t < nthreads; t++) {
		struct fifo_consumer *c = bench_alloc(&w[t], sizeof(*c));

		c->count = bench_alloc(&w[t], (size_t)nthreads * sizeof(long));
		c->sum = bench_alloc(&w[t], (size_t)nthreads * sizeof(long));
		c->last = bench_alloc(&w[t], (size_t)nthreads * sizeof(long));
		for (long i = 0; i < nthreads; i++)
			c->last[i] = -1;
		w[t].priv = c;
	}
	return (struct bench_state *)s;
}

static long fifo_op(struct bench_state *st, const struct bench_params *p,
		    struct bench_worker *w)
{
	struct fifo *s = (struct fifo *)st;
	bool produce = w->nthreads == 1 ? !(w->stat[2]++ & 1) : !(w->id & 1);
	long h, t, v, done;

	if (produce) {
		v = (w->id << FIFO_SEQ_BITS) | w->stat[0];
		TX_BEGIN(w);
		done = 0;
		t = LOADX(s->tail);
		h = LOAD(s->head);
		if (t - h < s->cap) {
			STORE(s->slots[t % s->cap], v);
			STORE(s->tail, t + 1);
			done = 1;
		}
		TX_END(w);
		w->stat[0] += done;
		return done;
	}
	TX_BEGIN(w);
	done = 0;
	h = LOADX(s->head);
	t = LOAD(s->tail);
	if (h < t) {
		v = LOAD(s->slots[h % s->cap]);
		STORE(s->head, h + 1);
		done = 1;
	}
	TX_END(w);
	if (done) {
		struct fifo_consumer *c = w->priv;
		long id = v >> FIFO_SEQ_BITS;
		long seq = v & (((long)1 << FIFO_SEQ_BITS) - 1);

		if (id < 0 || id >= w->nthreads || seq <= c->last[id])
			bench_fatal("ltxbench: hm93-fifo: INVARIANT BROKEN: "
				    "thread %ld dequeued (%ld, %ld) after "
				    "(%ld, %ld)",
				    w->id, id, seq, id,
				    id >= 0 && id < w->nthreads ? c->last[id]
								: -1L);
		c->last[id] = seq;
		c->count[id]++;
		c->sum[id] += seq;
		w->stat[1]++;
	}
	return done;
}

static bool fifo_check(struct bench_state *st, const struct bench_params *p,
		       struct bench_worker *w, long nthreads, char *msg,
		       size_t len)
{
	struct fifo *s = (struct fifo *)st;

	if (s->tail - s->head < 0 || s->tail - s->head > s->cap) {
		snprintf(msg, len, "head %ld and tail %ld are %s", s->head,
			 s->tail, "more than the capacity apart");
		return false;
	}
	for (long id = 0; id < nthreads; id++) {
		long count = 0, sum = 0, n = w[id].stat[0];

		for (long t = 0; t < nthreads; t++) {
			struct fifo_consumer *c = w[t].priv;

			count += c->count[id];
			sum += c->sum[id];
		}
		for (long i = s->head; i < s->tail; i++) {
			long v = s->slots[i % s->cap];

			if (v >> FIFO_SEQ_BITS == id) {
				count++;
				sum += v & (((long)1 << FIFO_SEQ_BITS) - 1);
			}
		}
		if (count != n || sum != n * (n - 1) / 2) {
			snprintf(msg, len,
				 "thread %ld enqueued %ld values; "
				 "%ld were dequeued or left (sum %ld, "
				 "expected %ld)",
				 id, n, count, sum, n * (n - 1) / 2);
			return false;
		}
	}
	return true;
}

/*
 * ---- hm93-dlist: the article's doubly-linked list ----
 * Each thread holds at most one node: holding one, it enqueues it at the
 * tail; holding none, it dequeues the head.  The list starts with size
 * nodes, plus one held by each thread.
 */

struct dnode {
	struct dnode *next, *prev;
	long id;
};

struct dlist {
	struct dnode *head LINE_ALIGNED;
	struct dnode *tail LINE_ALIGNED;
	struct dnode *nodes LINE_ALIGNED;
	long n;
};

static struct bench_state *dlist_setup(const struct bench_params *p,
				       struct bench_worker *w, long nthreads)
{
	struct dlist *s = bench_alloc(w, sizeof(*s));

	s->n = p->size + nthreads;
	s->nodes = bench_alloc(w, (size_t)s->n * sizeof(*s->nodes));
	for (long i = 0; i < s->n; i++) {
		struct dnode *d = &s->nodes[i];

		d->id = i;
		if (i < nthreads) {
			w[i].priv = d;
			continue;
		}
		d->prev = s->tail;
		if (s->tail == NULL)
			s->head = d;
		else
			s->tail->next = d;
		s->tail = d;
	}
	return (struct bench_state *)s;
}

static long dlist_op(struct bench_state *st, const struct bench_params *p,
		     struct bench_worker *w)
{
	struct dlist *s = (struct dlist *)st;
	struct dnode *d = w->priv, *t, *h, *nx;

	if (d != NULL) {
		TX_BEGIN(w);
		t = LOADX(s->tail);
		STORE(d->prev, t);
		STORE(d->next, (struct dnode *)NULL);
		if (t == NULL)
			STORE(s->head, d);
		else
			STORE(t->next, d);
		STORE(s->tail, d);
		TX_END(w);
		w->priv = NULL;
		return 1;
	}
	TX_BEGIN(w);
	h = LOADX(s->head);
	if (h != NULL) {
		nx = LOAD(h->next);
		STORE(s->head, nx);
		if (nx == NULL)
			STORE(s->tail, (struct dnode *)NULL);
		else
			STORE(nx->prev, (struct dnode *)NULL);
	}
	TX_END(w);
	w->priv = h;
	return h != NULL;
}

static bool dlist_check(struct bench_state *st, const struct bench_params *p,
			struct bench_worker *w, long nthreads, char *msg,
			size_t len)
{
	struct dlist *s = (struct dlist *)st;
	char *seen = calloc((size_t)s->n, 1);
	struct dnode *prev = NULL;
	long count = 0;

	for (struct dnode *d = s->head; d != NULL; prev = d, d = d->next) {
		if (d < s->nodes || d >= s->nodes + s->n || count >= s->n ||
		    seen[d->id]++) {
			snprintf(msg, len,
				 "the list holds a node twice, a "
				 "cycle or a foreign node");
			return false;
		}
		if (d->prev != prev) {
			snprintf(msg, len,
				 "node %ld's prev pointer does not "
				 "match the forward order",
				 d->id);
			return false;
		}
		count++;
	}
	if (s->tail != prev) {
		snprintf(msg, len, "the tail is not the last node");
		return false;
	}
	for (long t = 0; t < nthreads; t++) {
		struct dnode *d = w[t].priv;

		if (d != NULL && seen[d->id]++) {
			snprintf(msg, len, "node %ld is both held and listed",
				 d->id);
			return false;
		}
		count += d != NULL;
	}
	free(seen);
	if (count != s->n) {
		snprintf(msg, len, "%ld of %ld nodes lost", s->n - count, s->n);
		return false;
	}
	return true;
}

/* ---- the table ---- */

#define INTSET(nm, sz, rg, desc)                                               \
	static const struct bench_workload wl_##nm = {                         \
		.name = "intset-" #nm,                                         \
		.describe = desc,                                              \
		.defaults = { .size = sz, .range = rg, .update = 20 },         \
		.setup = intset_##nm##_setup,                                  \
		.op = intset_##nm##_op,                                        \
		.check = intset_##nm##_check,                                  \
	}
INTSET(list, 256, 512, "sorted linked list");
INTSET(rbtree, 4096, 8192, "red-black tree");
INTSET(skiplist, 4096, 8192, "skip list");
INTSET(hash, 4096, 8192, "hash table of sorted chains");

static const struct bench_workload wl_lifo = {
	.name = "lifo",
	.describe = "the article's LIFO: pop, then push back",
	.defaults = { .size = 64, .range = 0, .update = 100 },
	.setup = lifo_setup,
	.op = lifo_op,
	.check = lifo_check,
};

static const struct bench_workload wl_counter = {
	.name = "counter",
	.describe = "one shared counter, read then written",
	.defaults = { .size = 1, .range = 0, .update = 100 },
	.setup = counter_setup,
	.op = counter_op,
	.check = counter_check,
};

static const struct bench_workload wl_bank = {
	.name = "bank",
	.describe = "transfers, and read-only totals of every balance",
	.defaults = { .size = 256, .range = 0, .update = 95 },
	.setup = bank_setup,
	.op = bank_op,
	.check = bank_check,
};

static const struct bench_workload wl_counting = {
	.name = "hm93-counting",
	.describe = "the article's counting: LTX, then ST",
	.defaults = { .size = 1, .range = 0, .update = 100 },
	.setup = counter_setup,
	.op = counting_op,
	.check = counter_check,
};

static const struct bench_workload wl_fifo = {
	.name = "hm93-fifo",
	.describe = "the article's producer/consumer bounded FIFO",
	.defaults = { .size = 32, .range = 0, .update = 100 },
	.setup = fifo_setup,
	.op = fifo_op,
	.check = fifo_check,
};

static const struct bench_workload wl_dlist = {
	.name = "hm93-dlist",
	.describe = "the article's doubly-linked list: dequeue head, "
		    "enqueue tail",
	.defaults = { .size = 0, .range = 0, .update = 100 },
	.setup = dlist_setup,
	.op = dlist_op,
	.check = dlist_check,
};

const struct bench_workload *const BENCH_WORKLOADS[] = {
	&wl_lifo, &wl_counter,	&wl_list, &wl_rbtree, &wl_skiplist, &wl_hash,
	&wl_bank, &wl_counting, &wl_fifo, &wl_dlist,  NULL,
};
