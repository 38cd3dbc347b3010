/* SPDX-License-Identifier: MIT */
/* Irrevocable transactions: the serial token. */
#ifndef LTX_TX_SERIAL_H
#define LTX_TX_SERIAL_H

#include <stdbool.h>

#include "tx/desc.h"

/*
 * At most one transaction at a time is irrevocable: it holds the serial
 * token.  An irrevocable transaction takes every line it reads or writes
 * (cd make_irrevocable) and waits for lines others hold instead of
 * failing; ordinary transactions never wait for anything (they fail and
 * let go), so its waits end and it never aborts.  Two irrevocable ones
 * could wait for each other: hence the token.  Ordinary transactions keep
 * running and committing alongside, on other lines; their cost is nil.
 *
 * Synchronization: the token is taken with a CAS (acquire: pairs with the
 * release store that gives it back, so the next holder sees the previous
 * one's commit) and given back with a release store.
 */
extern struct ltx_tx *ltx_serial_owner;

/* ltx_serial_acquire: take the token, waiting as long as needed.  Only
 * for a transaction that holds no line (it could be waited for). */
void ltx_serial_acquire(struct ltx_tx *tx);

/* ltx_serial_try: take the token if free (true); never waits. */
bool ltx_serial_try(struct ltx_tx *tx);

/* ltx_serial_release: give the token back if tx holds it (idempotent). */
void ltx_serial_release(struct ltx_tx *tx);

#endif /* LTX_TX_SERIAL_H */
