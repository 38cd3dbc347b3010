/* SPDX-License-Identifier: MIT */
/* Read after write: a word merged from memory and a write-set entry; the
 * write-back of an entry's dirty bytes. */
#include <check.h>
#include <stdlib.h>

#include "cd/wset.h"
#include "ltx-test.h"

/* The merge byte by byte, as the definition says it. */
static uint64_t merge_bytes(uint64_t mem, uint64_t data, unsigned dirty)
{
	uint64_t out = 0;

	for (unsigned b = 0; b < 8; b++) {
		uint64_t src = (dirty & (1u << b)) ? data : mem;

		out |= src & ((uint64_t)0xff << (b * 8));
	}
	return out;
}

/* The next of a xorshift sequence (never 0 from a seed that is not). */
static uint64_t next_seed(uint64_t *seed)
{
	*seed ^= *seed << 13;
	*seed ^= *seed >> 7;
	*seed ^= *seed << 17;
	return *seed;
}

/* An empty write-set entry for line. */
static void entry_of(struct ltx_wentry *w, uint64_t *line)
{
	memset(w, 0, sizeof(*w));
	w->line = (uintptr_t)line;
}

START_TEST(test_byte_mask_sets_the_dirty_bytes_whole)
{
	for (unsigned dirty = 0; dirty < 256; dirty++) {
		uint64_t m = ltx_wset_byte_mask(dirty);

		for (unsigned b = 0; b < 8; b++)
			ck_assert_uint_eq((m >> (b * 8)) & 0xff,
					  (dirty & (1u << b)) ? 0xff : 0);
	}
}
END_TEST

/* Every dirty pattern of every word of a line: the merged word has the
 * entry's bytes where it wrote, memory's elsewhere. */
START_TEST(test_merged_word_takes_dirty_bytes_from_the_entry)
{
	static uint64_t line[8] __attribute__((aligned(64)));
	struct ltx_wentry w;
	uint64_t seed = 0x9e3779b97f4a7c15ull;

	entry_of(&w, line);
	for (unsigned i = 0; i < 8; i++) {
		for (unsigned dirty = 0; dirty < 256; dirty++) {
			line[i] = next_seed(&seed);
			w.data[i] = ~seed * 3;
			/* Neighbouring words dirty too: they must not leak. */
			w.mask = ((uint64_t)dirty << (i * 8)) |
				 ((seed >> 32) & ~((uint64_t)0xff << (i * 8)));
			ck_assert_uint_eq(
				ltx_wset_merged_word(&w, &line[i]),
				merge_bytes(line[i], w.data[i], dirty));
		}
	}
}
END_TEST

/* One write-back of mask m over a line of sentinel bytes: every dirty
 * byte is the entry's, every other byte is untouched. */
static void check_write_back(struct ltx_wentry *w, uint64_t *line, uint64_t m)
{
	const unsigned char *data = (const unsigned char *)w->data;
	unsigned char want[64];

	for (unsigned b = 0; b < 64; b++)
		want[b] = ((m >> b) & 1) ? data[b] : 0xa5;
	/* Both forms: whole and partial words (the commits), and whole
	 * words and bytes (the small commit of the fast paths). */
	for (int bytes = 0; bytes < 2; bytes++) {
		memset(line, 0xa5, 64);
		w->mask = m;
		ltx_wset_write_back_as(w, m, bytes);
		if (memcmp(line, want, 64) != 0)
			ck_abort_msg("write-back of mask %016llx%s: wrong "
				     "bytes",
				     (unsigned long long)m,
				     bytes ? " byte by byte" : "");
	}
}

/* Every dirty pattern of each word (alone, and beside whole words and
 * other patterns), and random masks over the line. */
START_TEST(test_write_back_writes_the_dirty_bytes_only)
{
	static uint64_t line[8] __attribute__((aligned(64)));
	struct ltx_wentry w;
	uint64_t seed = 0x2545f4914f6cdd1dull;

	entry_of(&w, line);
	for (unsigned b = 0; b < 64; b++)
		((unsigned char *)w.data)[b] = (unsigned char)(b * 7 + 1);
	for (unsigned i = 0; i < 8; i++) {
		for (unsigned dirty = 1; dirty < 256; dirty++) {
			uint64_t m = (uint64_t)dirty << (i * 8);

			check_write_back(&w, line, m);
			/* With the word after it whole, or in part. */
			check_write_back(
				&w, line,
				m | ((uint64_t)0xff << (((i + 1) & 7) * 8)));
			check_write_back(&w, line,
					 m | ((uint64_t)(dirty ^ 0xff)
					      << (((i + 3) & 7) * 8)));
		}
	}
	for (int n = 0; n < 20000; n++)
		check_write_back(&w, line, next_seed(&seed));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("wset");
	TCase *tc = tcase_create("merge");

	tcase_add_test(tc, test_byte_mask_sets_the_dirty_bytes_whole);
	tcase_add_test(tc, test_merged_word_takes_dirty_bytes_from_the_entry);
	tcase_add_test(tc, test_write_back_writes_the_dirty_bytes_only);
	suite_add_tcase(s, tc);
	return ltx_test_run(s);
}
