/* SPDX-License-Identifier: MIT */
/* Red-black trees for -fgnu-tm programs: a set of longs, and maps. */
#ifndef ITM_RBTREE_H
#define ITM_RBTREE_H

#include <stdlib.h>

#include "itm-test.h"

/*
 * A red-black tree with parent pointers and NULL leaves (Cormen et al.,
 * Introduction to Algorithms, ch. 13, without the sentinel, which every
 * transaction would write).  struct rb_map is a tree of (key, val) nodes
 * ordered by its comparator, which callers call through a pointer (in a
 * transaction, a TM clone lookup per node: bench_apps.c wants that); the
 * rebalancing below is shared by every tree.  rb_insert, rb_erase and
 * rb_contains are the integer set of rbtree.c and bench_intset.c: one
 * global tree searched with the plain order of longs.  rb_check verifies
 * order, colours, parents and black heights after a run.
 */
enum { RED, BLACK };

struct rb {
	long key;
	void *val;
	int colour;
	struct rb *left, *right, *parent;
};

typedef int rb_cmp_fn(long, long) __attribute__((transaction_safe));

struct rb_map {
	struct rb *root;
	rb_cmp_fn *cmp; /* NULL: the plain order (the set) */
};

static struct rb_map rb_set;

/* noinline: GCC 12 crashes (expand_call_tm) inlining these into worker. */
#define TS __attribute__((transaction_safe, noinline))

TS static void rb_rotate_left(struct rb_map *m, struct rb *x)
{
	struct rb *y = x->right;

	x->right = y->left;
	if (y->left != NULL)
		y->left->parent = x;
	y->parent = x->parent;
	if (x->parent == NULL)
		m->root = y;
	else if (x == x->parent->left)
		x->parent->left = y;
	else
		x->parent->right = y;
	y->left = x;
	x->parent = y;
}

TS static void rb_rotate_right(struct rb_map *m, struct rb *x)
{
	struct rb *y = x->left;

	x->left = y->right;
	if (y->right != NULL)
		y->right->parent = x;
	y->parent = x->parent;
	if (x->parent == NULL)
		m->root = y;
	else if (x == x->parent->right)
		x->parent->right = y;
	else
		x->parent->left = y;
	y->right = x;
	x->parent = y;
}

/* Hang a new red node z under p (NULL: as the root) on the side dir says
 * (< 0: left), then restore the colours. */
TS static void rb_link(struct rb_map *m, struct rb *p, int dir, struct rb *z)
{
	z->left = z->right = NULL;
	z->parent = p;
	z->colour = RED;
	if (p == NULL)
		m->root = z;
	else if (dir < 0)
		p->left = z;
	else
		p->right = z;
	while (z->parent != NULL && z->parent->colour == RED) {
		struct rb *g = z->parent->parent, *u;

		if (z->parent == g->left) {
			u = g->right;
			if (u != NULL && u->colour == RED) {
				z->parent->colour = BLACK;
				u->colour = BLACK;
				g->colour = RED;
				z = g;
				continue;
			}
			if (z == z->parent->right) {
				z = z->parent;
				rb_rotate_left(m, z);
			}
			z->parent->colour = BLACK;
			g->colour = RED;
			rb_rotate_right(m, g);
		} else {
			u = g->left;
			if (u != NULL && u->colour == RED) {
				z->parent->colour = BLACK;
				u->colour = BLACK;
				g->colour = RED;
				z = g;
				continue;
			}
			if (z == z->parent->left) {
				z = z->parent;
				rb_rotate_right(m, z);
			}
			z->parent->colour = BLACK;
			g->colour = RED;
			rb_rotate_left(m, g);
		}
	}
	m->root->colour = BLACK;
}

TS static int colour(const struct rb *n)
{
	return n == NULL ? BLACK : n->colour;
}

/* Put v in u's place under u's parent. */
TS static void rb_transplant(struct rb_map *m, struct rb *u, struct rb *v)
{
	if (u->parent == NULL)
		m->root = v;
	else if (u == u->parent->left)
		u->parent->left = v;
	else
		u->parent->right = v;
	if (v != NULL)
		v->parent = u->parent;
}

/* Restore the colours after removing a black node: x (maybe NULL) sits
 * under parent xp with one black too few on its side. */
TS static void rb_erase_fixup(struct rb_map *m, struct rb *x, struct rb *xp)
{
	while (x != m->root && colour(x) == BLACK) {
		struct rb *w;

		if (x == xp->left) {
			w = xp->right;
			if (colour(w) == RED) {
				w->colour = BLACK;
				xp->colour = RED;
				rb_rotate_left(m, xp);
				w = xp->right;
			}
			if (colour(w->left) == BLACK &&
			    colour(w->right) == BLACK) {
				w->colour = RED;
				x = xp;
				xp = x->parent;
				continue;
			}
			if (colour(w->right) == BLACK) {
				w->left->colour = BLACK;
				w->colour = RED;
				rb_rotate_right(m, w);
				w = xp->right;
			}
			w->colour = xp->colour;
			xp->colour = BLACK;
			if (w->right != NULL)
				w->right->colour = BLACK;
			rb_rotate_left(m, xp);
		} else {
			w = xp->left;
			if (colour(w) == RED) {
				w->colour = BLACK;
				xp->colour = RED;
				rb_rotate_right(m, xp);
				w = xp->left;
			}
			if (colour(w->left) == BLACK &&
			    colour(w->right) == BLACK) {
				w->colour = RED;
				x = xp;
				xp = x->parent;
				continue;
			}
			if (colour(w->left) == BLACK) {
				w->right->colour = BLACK;
				w->colour = RED;
				rb_rotate_left(m, w);
				w = xp->left;
			}
			w->colour = xp->colour;
			xp->colour = BLACK;
			if (w->left != NULL)
				w->left->colour = BLACK;
			rb_rotate_right(m, xp);
		}
		x = m->root;
		xp = NULL;
	}
	if (x != NULL)
		x->colour = BLACK;
}

/* Take node z out of the tree (the caller frees it). */
TS static void rb_unlink(struct rb_map *m, struct rb *z)
{
	struct rb *y, *x, *xp;
	int removed_colour = z->colour;

	if (z->left == NULL) {
		x = z->right;
		xp = z->parent;
		rb_transplant(m, z, z->right);
	} else if (z->right == NULL) {
		x = z->left;
		xp = z->parent;
		rb_transplant(m, z, z->left);
	} else {
		y = z->right;
		while (y->left != NULL)
			y = y->left;
		removed_colour = y->colour;
		x = y->right;
		if (y->parent == z) {
			xp = y;
		} else {
			xp = y->parent;
			rb_transplant(m, y, y->right);
			y->right = z->right;
			y->right->parent = y;
		}
		rb_transplant(m, z, y);
		y->left = z->left;
		y->left->parent = y;
		y->colour = z->colour;
	}
	if (removed_colour == BLACK)
		rb_erase_fixup(m, x, xp);
}

/* The set: the plain order of longs, compared in place. */

TS static int rb_insert(long key)
{
	struct rb *p = NULL, *c = rb_set.root, *z;

	while (c != NULL) {
		if (key == c->key)
			return 0;
		p = c;
		c = key < c->key ? c->left : c->right;
	}
	z = malloc(sizeof(*z));
	z->key = key;
	z->val = NULL;
	rb_link(&rb_set, p, p != NULL && key < p->key ? -1 : 1, z);
	return 1;
}

TS static int rb_erase(long key)
{
	struct rb *z = rb_set.root;

	while (z != NULL && z->key != key)
		z = key < z->key ? z->left : z->right;
	if (z == NULL)
		return 0;
	rb_unlink(&rb_set, z);
	free(z);
	return 1;
}

TS static int rb_contains(long key)
{
	const struct rb *n = rb_set.root;

	while (n != NULL && n->key != key)
		n = key < n->key ? n->left : n->right;
	return n != NULL;
}

/* m's order of a and b: its comparator, or the plain one (not in a
 * transaction: for the checker). */
static int rb_order(const struct rb_map *m, long a, long b)
{
	return m->cmp != NULL ? m->cmp(a, b) : (a < b ? -1 : a > b);
}

/*
 * Black height of the subtree at n, checking order (keys strictly between
 * the bounds, when has_lo/has_hi), colours and parents; counts the nodes
 * and calls fn (if not NULL) on each.
 */
static int rb_check(const struct rb_map *m, const struct rb *n,
		    const struct rb *parent, const struct rb *lo,
		    const struct rb *hi, long *count, void (*fn)(long, void *))
{
	int l, r;

	if (n == NULL)
		return 1;
	CHECK(n->parent == parent);
	CHECK(lo == NULL || rb_order(m, lo->key, n->key) < 0);
	CHECK(hi == NULL || rb_order(m, n->key, hi->key) < 0);
	if (n->colour == RED)
		CHECK(colour(n->left) == BLACK && colour(n->right) == BLACK);
	l = rb_check(m, n->left, n, lo, n, count, fn);
	r = rb_check(m, n->right, n, n, hi, count, fn);
	CHECK(l == r);
	++*count;
	if (fn != NULL)
		fn(n->key, n->val);
	return l + (n->colour == BLACK);
}

#endif /* ITM_RBTREE_H */
