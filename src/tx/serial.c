/* SPDX-License-Identifier: MIT */
/* The serial token: irrevocable transactions, and transactions alone. */
#include <assert.h>
#include <stddef.h>

#include "rt/fence.h"
#include "rt/wait.h"
#include "tx/serial.h"
#include "tx/tx.h"

uintptr_t ltx_serial_token __attribute__((visibility("default")));

/* Set the cd flag the holder's operations follow (cd/cd.h). */
static void hold(struct ltx_tx *tx)
{
	tx->cd.irrevocable = 1;
}

bool ltx_serial_try(struct ltx_tx *tx)
{
	uintptr_t none = 0;

	/* Acquire: pairs with the release store in ltx_serial_release. */
	if (!__atomic_compare_exchange_n(&ltx_serial_token, &none,
					 (uintptr_t)tx, false, __ATOMIC_ACQUIRE,
					 __ATOMIC_RELAXED))
		return false;
	hold(tx);
	return true;
}

void ltx_serial_acquire(struct ltx_tx *tx)
{
	unsigned spins = 0;

	assert(ltx_status_idle(__atomic_load_n(&tx->status, __ATOMIC_RELAXED)));
	while (!ltx_serial_try(tx))
		ltx_wait_step(&spins);
}

void ltx_serial_acquire_exclusive(struct ltx_tx *tx)
{
	unsigned spins = 0;

	assert(ltx_status_idle(__atomic_load_n(&tx->status, __ATOMIC_RELAXED)));
	while (!ltx_serial_try_exclusive(tx))
		ltx_wait_step(&spins);
}

/* Another thread's descriptor d runs a transaction that must end first. */
static bool busy(const struct ltx_tx *d)
{
	/* Acquire: pairs with the release stores of status at every
	 * transaction end (what it did is over). */
	int st = __atomic_load_n(&d->status, __ATOMIC_ACQUIRE);

	return st == LTX_ACTIVE || st == LTX_COMMITTING;
}

void ltx_serial_drain(struct ltx_tx *tx)
{
	struct ltx_tx *self = tx->parent != NULL ? tx->parent : tx;

	assert(ltx_serial_exclusive(tx));
	if (ltx_tx_other_threads_now() == 0)
		return; /* nobody to wait for (serial.h) */
	ltx_fence_heavy();
	for (struct ltx_tx *d = ltx_tx_registry(); d != NULL; d = d->next_all) {
		unsigned spins = 0;

		/* This thread's own descriptors: the one interrupted by the
		 * handler tx runs in cannot go on until tx is done. */
		if (d == self || d == self->handler_tx)
			continue;
		while (busy(d))
			ltx_wait_step(&spins);
	}
}
