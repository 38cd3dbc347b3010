/* SPDX-License-Identifier: MIT */
/* Irrevocable transactions: the serial token (see serial.h). */
#include <stddef.h>

#include "rt/wait.h"
#include "tx/serial.h"

struct ltx_tx *ltx_serial_owner;

bool ltx_serial_try(struct ltx_tx *tx)
{
	struct ltx_tx *none = NULL;

	/* Pairs with the release store in ltx_serial_release. */
	if (!__atomic_compare_exchange_n(&ltx_serial_owner, &none, tx, false,
					 __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
		return false;
	tx->cd.irrevocable = 1;
	return true;
}

void ltx_serial_acquire(struct ltx_tx *tx)
{
	unsigned spins = 0;

	while (!ltx_serial_try(tx))
		ltx_wait_step(&spins);
}

void ltx_serial_release(struct ltx_tx *tx)
{
	if (!tx->cd.irrevocable)
		return;
	tx->cd.irrevocable = 0;
	/* Pairs with the acquire CAS of the next holder. */
	__atomic_store_n(&ltx_serial_owner, NULL, __ATOMIC_RELEASE);
}
