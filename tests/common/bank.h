/* SPDX-License-Identifier: MIT */
/* The bank of the stress tests: accounts one to a line, transfers that
 * keep the total, and audits that must see it. */
#ifndef LTX_TEST_BANK_H
#define LTX_TEST_BANK_H

#include <ltx/tm.h>

#include <stdbool.h>

/*
 * Each account on a line of its own, so that two transfers conflict only
 * when they share an account.  Static inline, so that each test compiles
 * the transactions with its own flags (check_stress_inline: through
 * <ltx/inline.h>).
 *
 * Synchronization: while threads run, the balances are read and written
 * only by transactions (tm_lt, tm_ltx, tm_st); bank_open and bank_total
 * use plain accesses, before the threads start and after they are joined.
 */
#define BANK_MAX_ACCOUNTS 64

struct bank {
	struct {
		tm_word_t balance;
		char pad[64 - sizeof(tm_word_t)];
	} acct[BANK_MAX_ACCOUNTS] __attribute__((aligned(64)));
	unsigned n;	   /* accounts in use */
	tm_word_t initial; /* each account's first balance */
};

/* bank_open: n accounts (at most BANK_MAX_ACCOUNTS) holding initial each. */
static inline void bank_open(struct bank *b, unsigned n, tm_word_t initial)
{
	b->n = n;
	b->initial = initial;
	for (unsigned i = 0; i < n; i++)
		b->acct[i].balance = initial;
}

/* bank_expected: the total that every transfer keeps. */
static inline tm_word_t bank_expected(const struct bank *b)
{
	return (tm_word_t)b->n * b->initial;
}

/* bank_balance: account i's balance word, for a test's own transactions. */
static inline tm_word_t *bank_balance(struct bank *b, unsigned i)
{
	return &b->acct[i].balance;
}

/* bank_total: the plain sum of the balances (no thread may be running). */
static inline tm_word_t bank_total(const struct bank *b)
{
	tm_word_t sum = 0;

	for (unsigned i = 0; i < b->n; i++)
		sum += b->acct[i].balance;
	return sum;
}

/*
 * bank_transfer: move amount from account from to account to in one
 * transaction (LTX of from; LT, then the ST upgrades it, if to_shared,
 * else LTX, of to; two STs; COMMIT), retried until it commits.
 */
static inline void bank_transfer(struct bank *b, unsigned from, unsigned to,
				 tm_word_t amount, bool to_shared)
{
	do {
		tm_word_t x = tm_ltx(&b->acct[from].balance);
		tm_word_t y;

		if (to_shared)
			y = tm_lt(&b->acct[to].balance);
		else
			y = tm_ltx(&b->acct[to].balance);
		tm_st(&b->acct[from].balance, x - amount);
		tm_st(&b->acct[to].balance, y + amount);
	} while (!tm_commit());
}

/*
 * bank_audit_read: read every balance by LT in the current transaction and
 * VALIDATE.  Returns false if the transaction is doomed (its loads are
 * garbage); true, with the sum it read in *sum, if it is live.  The
 * transaction stays open: the caller commits it.
 */
static inline bool bank_audit_read(struct bank *b, tm_word_t *sum)
{
	tm_word_t s = 0;

	for (unsigned i = 0; i < b->n; i++)
		s += tm_lt(&b->acct[i].balance);
	*sum = s;
	return tm_validate();
}

/* bank_audit: the total as one TM_ATOMIC block reads it.  Never inlined:
 * its own frame keeps the caller's locals out of the block's setjmp
 * (TM_ATOMIC(3)). */
static __attribute__((noinline, unused)) tm_word_t bank_audit(struct bank *b)
{
	volatile tm_word_t sum = 0;

	TM_ATOMIC {
		sum = 0;
		for (unsigned i = 0; i < b->n; i++)
			sum += tm_lt(&b->acct[i].balance);
	}
	return sum;
}

#endif /* LTX_TEST_BANK_H */
