/* SPDX-License-Identifier: MIT */
/* check_inline's window on the runtime: the descriptor and the token. */
#undef LTX_INLINE /* the runtime's own view of the descriptor */
#include "tx/serial.h"

#include "inline-serial.h"

uint64_t inline_serial_tx_id(void)
{
	return __atomic_load_n(&ltx_self->tx_id, __ATOMIC_RELAXED);
}

bool inline_serial_take_exclusive(void)
{
	return ltx_serial_try_exclusive(ltx_self);
}

void inline_serial_give_back(void)
{
	ltx_serial_release(ltx_self);
}
