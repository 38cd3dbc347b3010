/* SPDX-License-Identifier: MIT */
/* Conflicts classified: true sharing, false sharing, aliasing, unknown. */
#include <stddef.h>
#include <string.h>

#include "cd/conflict.h"
#include "cd/orec.h"
#include "rt/config.h"
#include "rt/hash.h"
#include "rt/peek.h"

/* The bits of the line hash that both tables index with, from the lowest
 * (cd/orec.h: ltx_orec_at; cd/visible.c: lock_of). */
static uint64_t record_bits(uintptr_t line)
{
	return ltx_hash_line(line, LTX_OREC_MUL) >> (LTX_OREC_HASH_SHIFT + 3);
}

static bool same_record(uintptr_t a, uintptr_t b, unsigned bits)
{
	return ((record_bits(a) ^ record_bits(b)) &
		(((uint64_t)1 << bits) - 1)) == 0;
}

unsigned ltx_cd_separating_bits(uintptr_t a, uintptr_t b)
{
	uint64_t d = record_bits(a) ^ record_bits(b);
	unsigned n;

	if (d == 0)
		return 0;
	n = (unsigned)__builtin_ctzll(d) + 1;
	return n <= LTX_OREC_BITS_MAX ? n : 0;
}

/* The table size of the invisible mode (the mask is scaled by 8). */
static unsigned orec_bits(void)
{
	return (unsigned)__builtin_popcountll(
		(uint64_t)__atomic_load_n(&ltx_orec_mask, __ATOMIC_RELAXED));
}

/* Bytes [addr, addr + size) of addr's line, as a mask. */
static uint64_t bytes_at(uintptr_t addr, unsigned size)
{
	uint64_t m = size >= 8 ? 0xff : ((uint64_t)1 << size) - 1;

	return m << (addr & LTX_LINE_MASK);
}

/* The bytes an entry (a copy) has stored into its line. */
static uint64_t dirty_of(const struct ltx_wentry *e)
{
	if (!(e->flags & LTX_WENTRY_SINGLE))
		return e->mask;
	/* A lone aligned word kept aside (cd.h); stale if not in the line. */
	if ((e->single_addr & ~(uintptr_t)LTX_LINE_MASK) != e->line)
		return 0;
	return bytes_at(e->single_addr, 8);
}

/* The holder has line too, having stored theirs into it. */
static void same_line(struct ltx_conflict *k, uint64_t theirs)
{
	k->theirs = theirs;
	if (theirs == 0) {
		k->again = true; /* taken (LTX), nothing stored yet */
		return;
	}
	k->cls = (k->mine & theirs) ? LTX_CONFLICT_TRUE : LTX_CONFLICT_FALSE;
}

/* The holder has other, a different line on the same record. */
static void aliasing(struct ltx_conflict *k, uintptr_t other)
{
	k->cls = LTX_CONFLICT_ALIAS;
	k->other = other;
	k->bits = ltx_cd_separating_bits(k->line, other);
}

/*
 * Invisible mode: the orec's lock word points at the holder's head entry
 * for it.  Its line is ours, or another one (aliasing) if it is alone on
 * the orec; with other lines chained to it, ours may be one of them (the
 * chain's indices are relative to a write set we do not know): unknown.
 */
static void look_entry(struct ltx_conflict *k, bool same_only)
{
	struct ltx_wentry e;

	if (!ltx_peek(&e, ltx_orec_entry(k->note.holder), sizeof(e)))
		return;
	if (e.line == k->line) {
		same_line(k, dirty_of(&e));
	} else if (!same_only && e.line != 0 && e.next == 0 &&
		   !(e.flags & LTX_WENTRY_CHAINED) &&
		   same_record(k->line, e.line, orec_bits())) {
		aliasing(k, e.line);
	}
}

/* The visible mode's owner: the first entries of its write set. */
#define OWNER_ENTRIES 64
#define OWNER_CHUNK   8 /* entries per copy: 1 KiB of stack */
#define OWNER_RECENT  8 /* looked at even if the owner holds fewer */

_Static_assert(offsetof(struct ltx_cd, ws_end) ==
			       offsetof(struct ltx_cd, ws_next) +
				       sizeof(void *) &&
		       offsetof(struct ltx_cd, ws_base) ==
			       offsetof(struct ltx_cd, ws_next) +
				       2 * sizeof(void *),
	       "ws_next, ws_end, ws_base in a row");

/*
 * Visible mode: the owner word names the owner's cd id, the caller found
 * its cd.  Its entries for our line hold its dirty bytes; an entry for
 * another line on our bytelock, and none for ours, is aliasing.
 */
static void look_owner(struct ltx_conflict *k, bool same_only)
{
	struct ltx_wentry *p[3], e[OWNER_CHUNK]; /* ws_next, ws_end, base */
	uintptr_t other = 0;
	uint64_t theirs = 0;
	bool found = false;
	size_t n;

	if (k->owner == NULL || !ltx_peek(p, &k->owner->ws_next, sizeof(p)) ||
	    p[0] < p[2] || p[1] < p[0])
		return;
	/* The owner may have let go already (committed): its last entries
	 * are still there, unchanged until its next transaction. */
	n = (size_t)(p[0] - p[2]);
	if (n < OWNER_RECENT)
		n = OWNER_RECENT;
	if (n > (size_t)(p[1] - p[2]))
		n = (size_t)(p[1] - p[2]);
	if (n > OWNER_ENTRIES)
		n = OWNER_ENTRIES;
	for (size_t at = 0; at < n; at += OWNER_CHUNK) {
		size_t m = n - at < OWNER_CHUNK ? n - at : OWNER_CHUNK;

		if (!ltx_peek(e, p[2] + at, m * sizeof(e[0])))
			return;
		for (size_t i = 0; i < m; i++) {
			if (e[i].line == k->line) {
				found = true;
				theirs |= dirty_of(&e[i]);
			} else if (other == 0 && e[i].line != 0 &&
				   same_record(k->line, e[i].line,
					       ltx_config.orec_bits)) {
				other = e[i].line;
			}
		}
	}
	if (found)
		same_line(k, theirs);
	else if (other != 0 && !same_only)
		aliasing(k, other);
}

static void look(struct ltx_conflict *k, bool same_only)
{
	if (k->note.held == LTX_CD_HELD_ENTRY)
		look_entry(k, same_only);
	else if (k->note.held == LTX_CD_HELD_OWNER)
		look_owner(k, same_only);
	/* LTX_CD_HELD_READERS: which bytes the readers read is not kept. */
}

void ltx_cd_conflict_classify(struct ltx_conflict *k,
			      const struct ltx_cd_conflict *note,
			      const struct ltx_cd *owner)
{
	memset(k, 0, sizeof(*k));
	k->cls = LTX_CONFLICT_UNKNOWN;
	k->note = *note;
	k->owner = owner;
	if (note->held == 0 || note->addr == 0 || note->size == 0)
		return;
	k->line = note->addr & ~(uintptr_t)LTX_LINE_MASK;
	k->mine = bytes_at(note->addr, note->size);
	look(k, false);
}

void ltx_cd_conflict_again(struct ltx_conflict *k)
{
	if (!k->again)
		return;
	k->again = false; /* unless the holder still has nothing stored */
	look(k, true);
}
