/* SPDX-License-Identifier: MIT */
/* What api/atomic-x86_64.S reads of the descriptor (atomic.c checks it). */
#ifndef LTX_API_ATOMIC_OFFSETS_H
#define LTX_API_ATOMIC_OFFSETS_H

/*
 * tm__block_enter begins the block itself, in assembly: it reads and
 * writes the descriptor's checkpoint at this offset of struct ltx_tx
 * (tx/desc.h).  api/atomic.c asserts that it is so: a change to the
 * descriptor that moves it fails the build there.
 */
#define LTX_TX_CHECKPOINT 1208

#endif /* LTX_API_ATOMIC_OFFSETS_H */
