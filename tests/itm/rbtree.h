/* SPDX-License-Identifier: MIT */
/* A red-black tree of longs for -fgnu-tm programs (test and bench). */
#ifndef ITM_RBTREE_H
#define ITM_RBTREE_H

#include <stdlib.h>

#include "itm-test.h"

/*
 * A red-black tree with parent pointers and NULL leaves (Cormen et al.,
 * Introduction to Algorithms, ch. 13, without the sentinel, which every
 * transaction would write).  The checker verifies order, colours and black
 * heights after the run.
 */
enum { RED, BLACK };

struct rb {
	long key;
	int colour;
	struct rb *left, *right, *parent;
};

static struct rb *root;

/* noinline: GCC 12 crashes (expand_call_tm) inlining these into worker. */
#define TS __attribute__((transaction_safe, noinline))

TS static void rotate_left(struct rb *x)
{
	struct rb *y = x->right;

	x->right = y->left;
	if (y->left != NULL)
		y->left->parent = x;
	y->parent = x->parent;
	if (x->parent == NULL)
		root = y;
	else if (x == x->parent->left)
		x->parent->left = y;
	else
		x->parent->right = y;
	y->left = x;
	x->parent = y;
}

TS static void rotate_right(struct rb *x)
{
	struct rb *y = x->left;

	x->left = y->right;
	if (y->right != NULL)
		y->right->parent = x;
	y->parent = x->parent;
	if (x->parent == NULL)
		root = y;
	else if (x == x->parent->right)
		x->parent->right = y;
	else
		x->parent->left = y;
	y->right = x;
	x->parent = y;
}

TS static int rb_insert(long key)
{
	struct rb *p = NULL, *c = root, *z;

	while (c != NULL) {
		if (key == c->key)
			return 0;
		p = c;
		c = key < c->key ? c->left : c->right;
	}
	z = malloc(sizeof(*z));
	z->key = key;
	z->left = z->right = NULL;
	z->parent = p;
	z->colour = RED;
	if (p == NULL)
		root = z;
	else if (key < p->key)
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
				rotate_left(z);
			}
			z->parent->colour = BLACK;
			g->colour = RED;
			rotate_right(g);
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
				rotate_right(z);
			}
			z->parent->colour = BLACK;
			g->colour = RED;
			rotate_left(g);
		}
	}
	root->colour = BLACK;
	return 1;
}

TS static int colour(const struct rb *n)
{
	return n == NULL ? BLACK : n->colour;
}

/* Put v in u's place under u's parent. */
TS static void transplant(struct rb *u, struct rb *v)
{
	if (u->parent == NULL)
		root = v;
	else if (u == u->parent->left)
		u->parent->left = v;
	else
		u->parent->right = v;
	if (v != NULL)
		v->parent = u->parent;
}

/* Restore the colours after removing a black node: x (maybe NULL) sits
 * under parent xp with one black too few on its side. */
TS static void erase_fixup(struct rb *x, struct rb *xp)
{
	while (x != root && colour(x) == BLACK) {
		struct rb *w;

		if (x == xp->left) {
			w = xp->right;
			if (colour(w) == RED) {
				w->colour = BLACK;
				xp->colour = RED;
				rotate_left(xp);
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
				rotate_right(w);
				w = xp->right;
			}
			w->colour = xp->colour;
			xp->colour = BLACK;
			if (w->right != NULL)
				w->right->colour = BLACK;
			rotate_left(xp);
		} else {
			w = xp->left;
			if (colour(w) == RED) {
				w->colour = BLACK;
				xp->colour = RED;
				rotate_right(xp);
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
				rotate_left(w);
				w = xp->left;
			}
			w->colour = xp->colour;
			xp->colour = BLACK;
			if (w->left != NULL)
				w->left->colour = BLACK;
			rotate_right(xp);
		}
		x = root;
		xp = NULL;
	}
	if (x != NULL)
		x->colour = BLACK;
}

TS static int rb_erase(long key)
{
	struct rb *z = root, *y, *x, *xp;
	int removed_colour;

	while (z != NULL && z->key != key)
		z = key < z->key ? z->left : z->right;
	if (z == NULL)
		return 0;
	removed_colour = z->colour;
	if (z->left == NULL) {
		x = z->right;
		xp = z->parent;
		transplant(z, z->right);
	} else if (z->right == NULL) {
		x = z->left;
		xp = z->parent;
		transplant(z, z->left);
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
			transplant(y, y->right);
			y->right = z->right;
			y->right->parent = y;
		}
		transplant(z, y);
		y->left = z->left;
		y->left->parent = y;
		y->colour = z->colour;
	}
	if (removed_colour == BLACK)
		erase_fixup(x, xp);
	free(z);
	return 1;
}

TS static int rb_contains(long key)
{
	const struct rb *n = root;

	while (n != NULL && n->key != key)
		n = key < n->key ? n->left : n->right;
	return n != NULL;
}

/* Black height of n's subtree, checking order, colours and parents. */
static int check_tree(const struct rb *n, const struct rb *parent, long lo,
		      long hi, long *count)
{
	int l, r;

	if (n == NULL)
		return 1;
	CHECK(n->parent == parent);
	CHECK(n->key > lo && n->key < hi);
	if (n->colour == RED)
		CHECK(colour(n->left) == BLACK && colour(n->right) == BLACK);
	l = check_tree(n->left, n, lo, n->key, count);
	r = check_tree(n->right, n, n->key, hi, count);
	CHECK(l == r);
	++*count;
	return l + (n->colour == BLACK);
}

#endif /* ITM_RBTREE_H */
