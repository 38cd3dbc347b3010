/* SPDX-License-Identifier: MIT */
/* check_inline's window on the runtime (inline-serial.c, white-box). */
#ifndef LTX_TEST_INLINE_SERIAL_H
#define LTX_TEST_INLINE_SERIAL_H

#include <stdbool.h>
#include <stdint.h>

/* The calling thread's count of transactions begun (tx_id). */
uint64_t inline_serial_tx_id(void);
/* Take the serial token exclusive for the calling thread's idle
 * descriptor (no drain: the caller knows no transaction runs). */
bool inline_serial_take_exclusive(void);
/* Give it back. */
void inline_serial_give_back(void);

#endif /* LTX_TEST_INLINE_SERIAL_H */
