/* SPDX-License-Identifier: MIT */
/* The article's LIFO (Figure 8.4), shared by the stress tests. */
#ifndef LTX_TEST_LIFO_H
#define LTX_TEST_LIFO_H

#include <ltx/isa.h>

#include <stddef.h>

/*
 * Figure 8.4, as printed ("... delay ..." lines deleted: ltx delays inside
 * VALIDATE and COMMIT when they fail), but for c, which the figure reads
 * and writes with plain loads and stores: here relaxed atomics, the same
 * instructions.  A pop doomed after its VALIDATE (by an irrevocable
 * transaction that took top: LTX_SERIAL_AFTER, ltx(7) "Requester loses")
 * may still read res->c while the thread that popped res meanwhile pushes
 * it and writes c: a stale value its COMMIT then throws away, as on the
 * article's hardware, but a data race in C that ThreadSanitizer would
 * report.
 *
 * Static inline, so that each test compiles the figure with its own flags
 * (check_stress_inline: through <ltx/inline.h>).
 *
 * Synchronization: top is only read and written by the transactions of
 * push and pop (LTX, ST, COMMIT); an element's c is written by push before
 * the COMMIT that publishes the element, and read by pop after the LTX of
 * top that found it (VALIDATE then says the read was consistent).
 */
struct lifo_elem {
	long d;
	struct lifo_elem *c;
};

struct lifo {
	struct lifo_elem *top;
};

static inline void lifo_push(struct lifo *l, struct lifo_elem *n)
{
	while (1) {
		__atomic_store_n(&n->c, LTX(l->top), __ATOMIC_RELAXED);
		ST(&l->top, n);
		if (COMMIT())
			return;
	}
}

/* lifo_pop: the element on top, or NULL if the stack was empty. */
static inline struct lifo_elem *lifo_pop(struct lifo *l)
{
	while (1) {
		struct lifo_elem *res = LTX(l->top);

		if (VALIDATE()) {
			if (res != NULL)
				ST(&l->top,
				   __atomic_load_n(&res->c, __ATOMIC_RELAXED));
			if (COMMIT())
				return res;
		}
	}
}

#endif /* LTX_TEST_LIFO_H */
