/* SPDX-License-Identifier: MIT */
/* Single-thread semantics of the public API (<ltx/tm.h>, <ltx/isa.h>). */
#include <ltx/isa.h>
#include <ltx/tm.h>

#include <check.h>
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ltx-test.h"

#define LINE 64

static uint64_t words[64][8] __attribute__((aligned(LINE)));

static void reset_words(void)
{
	for (int i = 0; i < 64; i++)
		for (int j = 0; j < 8; j++)
			words[i][j] = (uint64_t)(i * 8 + j);
}

START_TEST(test_begin_is_implicit_and_commit_ends_it)
{
	reset_words();
	ck_assert(!tm_in_transaction());
	ck_assert_uint_eq(tm_lt(&words[0][0]), 0);
	ck_assert(tm_in_transaction());
	ck_assert(tm_commit());
	ck_assert(!tm_in_transaction());
	ck_assert_uint_eq(tm_status(), 0);
}
END_TEST

START_TEST(test_validate_and_commit_outside_a_transaction_return_true)
{
	ck_assert(tm_validate());
	ck_assert(tm_commit());
	ck_assert(!tm_in_transaction());
	tm_abort(); /* no transaction: nothing happens */
	ck_assert_uint_eq(tm_status(), 0);
}
END_TEST

START_TEST(test_store_is_buffered_until_commit)
{
	reset_words();
	tm_st(&words[1][2], 1234);
	ck_assert_uint_eq(words[1][2], 10); /* memory untouched: XCOMMIT */
	ck_assert_uint_eq(tm_lt(&words[1][2]), 1234); /* read after write */
	ck_assert_uint_eq(tm_ltx(&words[1][2]), 1234);
	ck_assert(tm_validate());
	ck_assert_uint_eq(words[1][2], 10);
	ck_assert(tm_commit());
	ck_assert_uint_eq(words[1][2], 1234);
}
END_TEST

START_TEST(test_abort_discards_stores_and_reports_explicit)
{
	reset_words();
	tm_st(&words[2][0], 99);
	tm_st(&words[3][7], 98);
	tm_abort();
	ck_assert(!tm_in_transaction());
	ck_assert_uint_eq(words[2][0], 16);
	ck_assert_uint_eq(words[3][7], 31);
	ck_assert_uint_eq(tm_status(), TM_ABORT_EXPLICIT);
	/* The next transaction starts clean and reports 0 once committed. */
	tm_st(&words[2][0], 7);
	ck_assert(tm_commit());
	ck_assert_uint_eq(words[2][0], 7);
	ck_assert_uint_eq(tm_status(), 0);
}
END_TEST

START_TEST(test_sub_word_store_changes_only_its_bytes)
{
	static union {
		uint64_t w;
		uint8_t b[8];
		uint16_t h[4];
		uint32_t s[2];
	} u __attribute__((aligned(8)));

	u.w = 0x1111111111111111ull;
	TM_ST(u.b[3], (uint8_t)0xab);
	TM_ST(u.h[3], (uint16_t)0xcdef);
	ck_assert_uint_eq(TM_LT(u.b[3]), 0xab);
	ck_assert_uint_eq(TM_LT(u.b[2]), 0x11);
	ck_assert_uint_eq(TM_LT(u.h[3]), 0xcdef);
	ck_assert(tm_commit());
	ck_assert_uint_eq(u.w, 0xcdef1111ab111111ull);

	TM_ST(u.s[0], (uint32_t)0x01020304);
	ck_assert(tm_commit());
	ck_assert_uint_eq(u.w, 0xcdef111101020304ull);
}
END_TEST

START_TEST(test_typed_macros_keep_the_type)
{
	static int32_t i32 = -5;
	static int16_t i16 = -300;
	static char *ptr;
	static char target[4];

	ck_assert_int_eq(TM_LT(i32), -5);
	ck_assert_int_eq(TM_LTX(i16), -300);
	TM_ST(i32, -70000);
	TM_ST(ptr, target + 2);
	ck_assert_ptr_eq(TM_LT(ptr), target + 2);
	ck_assert(tm_commit());
	ck_assert_int_eq(i32, -70000);
	ck_assert_ptr_eq(ptr, target + 2);
}
END_TEST

START_TEST(test_isa_spelling_matches_the_article)
{
	static long x = 41;

	ST(&x, LTX(x) + 1);
	ck_assert(VALIDATE());
	ck_assert(COMMIT());
	ck_assert_int_eq(x, 42);
	ck_assert_int_eq(LT(x), 42);
	ABORT();
	ck_assert_uint_eq(tm_status(), TM_ABORT_EXPLICIT);
}
END_TEST

START_TEST(test_unaligned_and_straddling_accesses_are_exact)
{
	static unsigned char buf[3 * LINE] __attribute__((aligned(LINE)));
	unsigned char out[40];
	uint64_t w;

	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (unsigned char)i;
	/* An 8-byte word across the line boundary at 64. */
	w = tm_lt(buf + 60);
	ck_assert_uint_eq(w, 0x434241403f3e3d3cull);
	tm_st(buf + 61, 0x0807060504030201ull);
	tm_st_u32(buf + 127, 0xa1a2a3a4u); /* straddles line 1 and 2 */
	tm_lt_bytes(out, buf + 58, 12);
	ck_assert_uint_eq(out[2], 0x3c);
	ck_assert_uint_eq(out[3], 0x01);
	ck_assert_uint_eq(out[10], 0x08);
	ck_assert_uint_eq(out[11], 0x45);
	ck_assert(tm_commit());
	for (size_t i = 0; i < sizeof(buf); i++) {
		unsigned char want = (unsigned char)i;

		if (i >= 61 && i < 69)
			want = (unsigned char)(i - 60);
		if (i >= 127 && i < 131)
			want = (unsigned char)(0xa4 - (i - 127));
		ck_assert_msg(buf[i] == want, "byte %zu is %#x, want %#x", i,
			      buf[i], want);
	}
}
END_TEST

/*
 * TM_LT, TM_LTX and TM_ST of an 8-byte lvalue: an aligned type takes the
 * word entry points without the test of alignment (<ltx/tm.h>); a packed
 * member (alignment 1) keeps the test, here across a line boundary,
 * where only the byte path is exact.
 */
struct packed_word {
	unsigned char pad[61];
	uint64_t x;
} __attribute__((packed));

START_TEST(test_typed_words_aligned_and_packed)
{
	static union {
		struct packed_word p;
		unsigned char b[3 * LINE];
	} u __attribute__((aligned(LINE)));
	static struct {
		long a;
		void *b;
		unsigned long c;
	} s __attribute__((aligned(LINE)));

	ck_assert_uint_eq(__alignof__(u.p.x), 1);
	ck_assert_uint_eq(__alignof__(s.a), 8);
	u.p.x = 0x1122334455667788ull;
	s.a = -5;
	s.b = &s;
	s.c = 25;
	ck_assert_uint_eq(TM_LT(u.p.x), 0x1122334455667788ull);
	ck_assert_int_eq(TM_LT(s.a), -5);
	ck_assert_ptr_eq(TM_LT(s.b), &s);
	ck_assert_uint_eq(TM_LT(s.c), 25);
	TM_ST(u.p.x, TM_LTX(u.p.x) + 1);
	TM_ST(s.a, TM_LTX(s.a) * 3);
	TM_ST(s.c, TM_LT(s.c) * 2);
	ck_assert_int_eq(TM_LT(s.a), -15); /* read after write */
	ck_assert_uint_eq(TM_LT(u.p.x), 0x1122334455667789ull);
	ck_assert(tm_commit());
	ck_assert_uint_eq(u.p.x, 0x1122334455667789ull);
	ck_assert_int_eq(s.a, -15);
	ck_assert_uint_eq(s.c, 50);
	ck_assert_uint_eq(u.b[60], 0); /* the bytes around it unchanged */
	ck_assert_uint_eq(u.b[69], 0);
}
END_TEST

#if defined(LTX_DEBUG) && !defined(LTX_INLINE)
/* A pointer cast to an 8-byte-aligned type that is not: debug builds stop
 * in the word entry point (release builds: undefined, as C has it; with
 * LTX_INLINE the load is the caller's and makes no such check). */
START_TEST(test_misaligned_typed_word_is_reported)
{
	static unsigned char buf[2 * LINE] __attribute__((aligned(LINE)));
	uint64_t *p = (uint64_t *)(void *)(buf + 4);

	(void)TM_LT(*p);
}
END_TEST
#endif

START_TEST(test_byte_ranges_copy_exactly)
{
	static char src[200], dst[200];
	char tmp[200];

	for (int i = 0; i < 200; i++)
		src[i] = (char)(i * 7);
	memset(dst, 'x', sizeof(dst));
	tm_lt_bytes(tmp, src + 3, 150);
	tm_st_bytes(dst + 5, tmp, 150);
	ck_assert(dst[5] == 'x'); /* buffered */
	ck_assert(tm_commit());
	ck_assert(memcmp(dst + 5, src + 3, 150) == 0);
	ck_assert(dst[4] == 'x' && dst[155] == 'x');
}
END_TEST

/* Bytes of a line that the transaction did not store are not clobbered by
 * its commit, even if they changed meanwhile (the article: "move
 * non-transactional data off of the cache line"; ltx tolerates it). */
START_TEST(test_commit_writes_back_only_dirty_bytes)
{
	static volatile unsigned char line[LINE] __attribute__((aligned(LINE)));

	memset((void *)line, 0, sizeof(line));
	tm_st_u8((void *)&line[5], 0x55);
	tm_st_u16((void *)&line[40], 0x6666);
	line[6] = 0x77; /* a non-transactional write to the same line */
	line[0] = 0x11;
	ck_assert(tm_commit());
	ck_assert_uint_eq(line[5], 0x55);
	ck_assert_uint_eq(line[6], 0x77);
	ck_assert_uint_eq(line[0], 0x11);
	ck_assert_uint_eq(line[40], 0x66);
	ck_assert_uint_eq(line[41], 0x66);
	ck_assert_uint_eq(line[42], 0);
}
END_TEST

/* Stores to a line the transaction holds already (after LTX, after a
 * first ST: tm_st's inline path for a held line) merge into its entry:
 * the same word again, other words, sub-words; reads see them all and
 * the commit writes exactly them. */
START_TEST(test_stores_to_a_held_line_merge)
{
	reset_words();
	ck_assert_uint_eq(tm_ltx(&words[5][0]), 40);
	tm_st(&words[5][0], 1000);
	tm_st(&words[5][1], 1001);
	tm_st_u8((char *)&words[5][2] + 1, 0xee);
	tm_st(&words[5][0], 1002);
	tm_st(&words[6][4], 2000); /* a first ST, kept aside */
	tm_st(&words[6][4], 2001); /* the same word again */
	tm_st(&words[6][5], 2002); /* another word of that line */
	tm_st_u16((char *)&words[6][6] + 2, 0x1234);
	ck_assert_uint_eq(tm_lt(&words[5][0]), 1002);
	ck_assert_uint_eq(tm_lt(&words[5][1]), 1001);
	ck_assert_uint_eq(tm_lt(&words[5][2]), 42 | 0xee00);
	ck_assert_uint_eq(tm_lt(&words[5][3]), 43);
	ck_assert_uint_eq(tm_lt(&words[6][4]), 2001);
	ck_assert_uint_eq(tm_lt(&words[6][5]), 2002);
	ck_assert_uint_eq(tm_lt(&words[6][6]), 54 | 0x12340000);
	ck_assert_uint_eq(words[5][0], 40); /* still buffered */
	ck_assert_uint_eq(words[6][4], 52);
	ck_assert(tm_commit());
	ck_assert_uint_eq(words[5][0], 1002);
	ck_assert_uint_eq(words[5][1], 1001);
	ck_assert_uint_eq(words[5][2], 42 | 0xee00);
	ck_assert_uint_eq(words[5][3], 43);
	ck_assert_uint_eq(words[6][4], 2001);
	ck_assert_uint_eq(words[6][5], 2002);
	ck_assert_uint_eq(words[6][6], 54 | 0x12340000);
	ck_assert_uint_eq(words[6][7], 55);
	/* The same stores aborted leave memory alone. */
	tm_ltx(&words[5][0]);
	tm_st(&words[5][0], 1);
	tm_st(&words[5][1], 2);
	tm_abort();
	ck_assert_uint_eq(words[5][0], 1002);
	ck_assert_uint_eq(words[5][1], 1001);
}
END_TEST

/*
 * Read after write, each case the fast paths tell apart (<ltx/inline.h>
 * answers the first from the write-set entry in the caller, with
 * LTX_INLINE; check_api_inline runs this file so): a word stored alone in
 * its line, a word of that line not stored, a sub-word store, a line with
 * several stored words, a line taken by LTX and stored, and an entry
 * reused by the next transaction, which must not answer its last word.
 */
START_TEST(test_read_after_write_returns_the_stored_value)
{
	reset_words();
	tm_st(&words[8][3], 800); /* the first operation: begins */
	ck_assert_uint_eq(tm_lt(&words[8][3]), 800);
	ck_assert_uint_eq(tm_lt(&words[8][3]), 800); /* again */
	ck_assert_uint_eq(tm_lt(&words[8][4]), 68);  /* same line, memory */
	tm_st(&words[8][3], 801);		     /* the same word again */
	ck_assert_uint_eq(tm_lt(&words[8][3]), 801);
	tm_st_u16((char *)&words[9][1] + 4, 0xbeef);
	ck_assert_uint_eq(tm_lt(&words[9][1]), 73 | (uint64_t)0xbeef << 32);
	tm_st(&words[10][0], 1000);
	tm_st(&words[10][7], 1007);
	tm_st(&words[10][2], 1002);
	ck_assert_uint_eq(tm_lt(&words[10][0]), 1000);
	ck_assert_uint_eq(tm_lt(&words[10][1]), 81);
	ck_assert_uint_eq(tm_lt(&words[10][2]), 1002);
	ck_assert_uint_eq(tm_lt(&words[10][7]), 1007);
	ck_assert_uint_eq(tm_ltx(&words[11][5]), 93);
	tm_st(&words[11][5], 1105);
	ck_assert_uint_eq(tm_lt(&words[11][5]), 1105);
	ck_assert_uint_eq(words[8][3], 67); /* all still buffered */
	ck_assert_uint_eq(words[10][0], 80);
	ck_assert(tm_commit());
	ck_assert_uint_eq(words[8][3], 801);
	ck_assert_uint_eq(words[9][1], 73 | (uint64_t)0xbeef << 32);
	ck_assert_uint_eq(words[10][2], 1002);
	ck_assert_uint_eq(words[11][5], 1105);
	/* The next transaction's first entry, taken by LTX, still holds
	 * the last one's word (as if kept aside): memory is the answer. */
	tm_st(&words[12][0], 1);
	ck_assert(tm_commit());
	words[12][0] = 2;
	ck_assert_uint_eq(tm_ltx(&words[12][0]), 2);
	ck_assert_uint_eq(tm_lt(&words[12][0]), 2);
	ck_assert(tm_commit());
	/* Read after write in a transaction that begins with a load. */
	ck_assert_uint_eq(tm_lt(&words[13][0]), 104);
	tm_st(&words[13][0], 7);
	ck_assert_uint_eq(tm_lt(&words[13][0]), 7);
	tm_abort();
	ck_assert_uint_eq(words[13][0], 104);
	ck_assert_uint_eq(tm_lt(&words[13][0]), 104); /* a new one */
	ck_assert(tm_commit());
}
END_TEST

/*
 * Read after write answers a word from its entry only while the entry
 * keeps that word aside: not after a second word of the line turned it
 * into the general form, not for an entry that an aborted transaction
 * used for the same word, and a misaligned load of a line whose one store
 * is a word goes byte by byte (over the stored bytes and memory's).
 */
START_TEST(test_read_after_write_only_from_a_word_kept_aside)
{
	reset_words();
	/* The descriptor made, so that the stores below take the fast
	 * path, which keeps a lone word aside. */
	ck_assert_uint_eq(tm_lt(&words[0][0]), 0);
	ck_assert(tm_commit());
	tm_st(&words[14][0], 1);
	tm_st(&words[14][1], 2); /* the general form */
	tm_st(&words[14][0], 3);
	ck_assert_uint_eq(tm_lt(&words[14][0]), 3);
	ck_assert_uint_eq(tm_lt(&words[14][1]), 2);
	ck_assert(tm_commit());
	ck_assert_uint_eq(words[14][0], 3);
	/* The first entry of an aborted transaction, then of an LTX. */
	tm_st(&words[16][0], 5);
	tm_abort();
	ck_assert_uint_eq(tm_ltx(&words[16][0]), 128);
	ck_assert_uint_eq(tm_lt(&words[16][0]), 128);
	ck_assert(tm_commit());
	/* Misaligned, on the line of a word kept aside. */
	words[15][1] = 0x11;
	tm_st(&words[15][0], 0x0807060504030201);
	ck_assert_uint_eq(tm_lt((char *)&words[15][0] + 1), 0x1108070605040302);
	ck_assert_uint_eq(tm_lt(&words[15][0]), 0x0807060504030201);
	ck_assert(tm_commit());
}
END_TEST

START_TEST(test_ltx_without_store_changes_nothing)
{
	reset_words();
	ck_assert_uint_eq(tm_ltx(&words[4][1]), 33);
	ck_assert(tm_commit());
	ck_assert_uint_eq(words[4][1], 33);
}
END_TEST

START_TEST(test_large_transactions_grow_their_logs)
{
	size_t n = 5000;
	uint64_t *a = aligned_alloc(LINE, n * LINE);
	uint64_t sum = 0;

	for (size_t i = 0; i < n; i++)
		a[i * 8] = i;
	/* 5000 lines read (read set starts at 1024), then written
	 * (write set starts at 64). */
	for (size_t i = 0; i < n; i++)
		sum += tm_lt(&a[i * 8]);
	ck_assert_uint_eq(sum, n * (n - 1) / 2);
	for (size_t i = 0; i < n; i++)
		tm_st(&a[i * 8], tm_lt(&a[i * 8]) + 1);
	ck_assert(tm_commit());
	for (size_t i = 0; i < n; i++)
		ck_assert_uint_eq(a[i * 8], i + 1);
	free(a);
}
END_TEST

/*
 * Doomed loads return 0 without reading the target memory: after the
 * transaction is doomed, a tm_lt of an unreadable page returns 0 instead
 * of faulting.  The doom comes from a line locked by another thread.
 */
static uint64_t owned[8] __attribute__((aligned(LINE)));

/* The holder's steps (the step harness, common/ltx-test.h); main dooms
 * itself between them. */
static void hold_line(void *arg)
{
	tm_st(&owned[0], 5); /* takes the line in E */
}

static void release_line(void *arg)
{
	ck_assert(tm_commit());
}

START_TEST(test_doomed_loads_return_zero_without_touching_memory)
{
	struct ltx_test_peer holder;
	long page = sysconf(_SC_PAGESIZE);
	uint64_t *noaccess = mmap(NULL, (size_t)page, PROT_NONE,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	static uint64_t other = 77;

	ck_assert(noaccess != MAP_FAILED);
	owned[0] = 1;
	ltx_test_peer_start(&holder);
	ltx_test_peer_run(&holder, hold_line, NULL);
	ck_assert_uint_eq(tm_lt(&other), 77);
	ck_assert_uint_eq(tm_lt(&owned[0]), 0); /* busy: doomed */
	ck_assert(tm_in_transaction());
	ck_assert_uint_eq(tm_lt(noaccess), 0); /* no fault: not read */
	ck_assert_uint_eq(tm_lt(&other), 0);
	tm_st(&other, 1); /* a store in a doomed transaction does nothing */
	ck_assert(tm_status() & TM_ABORT_CONFLICT);
	ck_assert(!tm_validate());
	ck_assert(!tm_in_transaction());
	ck_assert(tm_status() & TM_ABORT_CONFLICT);
	ck_assert(tm_status() & TM_ABORT_RETRY);
	ck_assert(tm_commit()); /* nothing open: true */
	ltx_test_peer_run(&holder, release_line, NULL);
	ltx_test_peer_stop(&holder);
	ck_assert_uint_eq(other, 77);
	ck_assert_uint_eq(owned[0], 5);
	munmap(noaccess, (size_t)page);
}
END_TEST

/* A doomed transaction's loads return 0 for the words it stored too. */
START_TEST(test_doomed_read_after_write_returns_zero)
{
	struct ltx_test_peer holder;
	static uint64_t mine[8] __attribute__((aligned(LINE))) = { 3 };

	owned[0] = 1;
	ltx_test_peer_start(&holder);
	ltx_test_peer_run(&holder, hold_line, NULL);
	tm_st(&mine[0], 9);
	ck_assert_uint_eq(tm_lt(&mine[0]), 9);
	ck_assert_uint_eq(tm_lt(&owned[0]), 0); /* busy: doomed */
	ck_assert(tm_in_transaction());
	ck_assert_uint_eq(tm_lt(&mine[0]), 0);
	ck_assert_uint_eq(tm_lt(&mine[1]), 0);
	ck_assert(!tm_commit());
	ck_assert(tm_status() & TM_ABORT_CONFLICT);
	ltx_test_peer_run(&holder, release_line, NULL);
	ltx_test_peer_stop(&holder);
	ck_assert_uint_eq(mine[0], 3);
	ck_assert_uint_eq(owned[0], 5);
}
END_TEST

/*
 * Random transactions of every load and store form against a plain model,
 * in each mode (_i): sized stores and loads at any alignment (straddling
 * words and lines), byte ranges, LT and LTX, reads of bytes the
 * transaction stored over bytes it did not; one in four aborted.  Each
 * load must return the model's bytes, and after each transaction memory
 * must equal the model (the model before it, if aborted).  Built plain,
 * with LTX_INLINE and statically, as this file is.
 */
#define MODEL_BYTES 512
static unsigned char model_mem[MODEL_BYTES + 16] __attribute__((aligned(LINE)));

static unsigned long model_rand(unsigned long *s)
{
	*s = *s * 6364136223846793005ul + 1442695040888963407ul;
	return *s >> 17;
}

/* One operation at a, len bytes (1 to 100), on memory and the model m. */
static void model_op(unsigned long *seed, unsigned char *m, int kind, int a,
		     int len)
{
	unsigned char *p = model_mem + a, t[100];
	uint64_t v = ((uint64_t)model_rand(seed) << 32) ^ model_rand(seed);
	uint64_t x = 0, y = 0;

	switch (kind) {
	case 0:
		tm_st_u8(p, (uint8_t)v);
		memcpy(m + a, &v, 1);
		return;
	case 1:
		tm_st_u16(p, (uint16_t)v);
		memcpy(m + a, &v, 2);
		return;
	case 2:
		tm_st_u32(p, (uint32_t)v);
		memcpy(m + a, &v, 4);
		return;
	case 3:
		tm_st_u64(p, v);
		memcpy(m + a, &v, 8);
		return;
	case 4:
		for (int k = 0; k < len; k++)
			t[k] = (unsigned char)model_rand(seed);
		tm_st_bytes(p, t, (size_t)len);
		memcpy(m + a, t, (size_t)len);
		return;
	case 5:
		x = (v & 1) ? tm_ltx_u8(p) : tm_lt_u8(p);
		memcpy(&y, m + a, 1);
		break;
	case 6:
		x = (v & 1) ? tm_ltx_u16(p) : tm_lt_u16(p);
		memcpy(&y, m + a, 2);
		break;
	case 7:
		x = (v & 1) ? tm_ltx_u32(p) : tm_lt_u32(p);
		memcpy(&y, m + a, 4);
		break;
	case 8:
		x = (v & 1) ? tm_ltx_u64(p) : tm_lt_u64(p);
		memcpy(&y, m + a, 8);
		break;
	default:
		tm_lt_bytes(t, p, (size_t)len);
		ck_assert_msg(memcmp(t, m + a, (size_t)len) == 0,
			      "tm_lt_bytes(%d, %d) differs from the model", a,
			      len);
		return;
	}
	ck_assert_msg(x == y, "kind %d at %d: 0x%llx, model 0x%llx", kind, a,
		      (unsigned long long)x, (unsigned long long)y);
}

START_TEST(test_random_accesses_match_a_model)
{
	unsigned long seed = 0x5eed + (unsigned long)_i;
	unsigned char m[MODEL_BYTES + 16], before[MODEL_BYTES + 16];

	if (!ltx_test_use_mode(_i))
		return;
	for (int i = 0; i < MODEL_BYTES + 16; i++)
		model_mem[i] = m[i] = (unsigned char)(i * 7 + 1);
	for (int round = 0; round < 3000; round++) {
		int nops = 1 + (int)(model_rand(&seed) % 60);
		bool aborted = model_rand(&seed) % 4 == 0;

		memcpy(before, m, sizeof(m));
		for (int i = 0; i < nops; i++) {
			int kind = (int)(model_rand(&seed) % 10);
			int len = 1 + (int)(model_rand(&seed) % 100);
			int a = (int)(model_rand(&seed) %
				      (unsigned long)(MODEL_BYTES - len));

			model_op(&seed, m, kind, a, len);
		}
		ck_assert(tm_validate());
		if (aborted) {
			tm_abort();
			memcpy(m, before, sizeof(m));
		} else {
			ck_assert(tm_commit());
		}
		ck_assert_msg(memcmp(model_mem, m, sizeof(m)) == 0,
			      "round %d: memory differs from the model", round);
	}
}
END_TEST

/* Set LTX_BACKOFF to value; tm_config_get must then give expect. */
static void backoff_round_trip(const char *value, const char *expect)
{
	char buf[128];

	ck_assert_int_eq(tm_config_set("LTX_BACKOFF", value), 0);
	ck_assert_int_eq(tm_config_get("LTX_BACKOFF", buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, expect);
}

START_TEST(test_config_set_and_get_round_trip)
{
	char buf[128];

	/* The default, before anything is set. */
	ck_assert_int_eq(tm_config_get("LTX_BACKOFF", buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "auto:min=64,max=65536");
	backoff_round_trip("spin:n=500", "spin:n=500");
	backoff_round_trip("exp:min=8,max=64", "exp:min=8,max=64");
	backoff_round_trip("auto:max=4096", "auto:min=64,max=4096");
	backoff_round_trip("auto", "auto:min=64,max=65536");
	ck_assert_int_eq(tm_config_get("LTX_MODE", buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "invisible");
}
END_TEST

START_TEST(test_config_rejects_bad_names_and_values)
{
	char buf[128], tiny[2];
	const char *bad[] = { "",
			      "fast",
			      "exp:min=0",
			      "exp:min=9,max=8",
			      "exp:max",
			      "exp:min=1x",
			      "none:n=3",
			      "spin:m=3",
			      "exp:min=99999999999999999999",
			      "exp:min=4,",
			      "yield:n=1",
			      "auto:n=5",
			      "auto:min=9,max=8",
			      "autox",
			      "auto:" };

	ck_assert_int_eq(tm_config_set("LTX_BACKOFF", "exp:min=64,max=65536"),
			 0);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		errno = 0;
		ck_assert_msg(tm_config_set("LTX_BACKOFF", bad[i]) == -1,
			      "accepted \"%s\"", bad[i]);
		ck_assert_int_eq(errno, EINVAL);
	}
	ck_assert_int_eq(tm_config_get("LTX_BACKOFF", buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "exp:min=64,max=65536"); /* unchanged */
	errno = 0;
	ck_assert_int_eq(tm_config_set("LTX_NO_SUCH_THING", "1"), -1);
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_int_eq(tm_config_set(NULL, "1"), -1);
	ck_assert_int_eq(tm_config_set("LTX_BACKOFF", NULL), -1);
	ck_assert_int_eq(tm_config_set("LTX_MODE", "quantum"), -1);
	ck_assert_int_eq(tm_config_set("LTX_OREC_BITS", "29"), -1);
	ck_assert_int_eq(tm_config_set("LTX_OREC_BITS", "3"), -1);
	errno = 0;
	ck_assert_int_eq(tm_config_get("LTX_BACKOFF", tiny, sizeof(tiny)), -1);
	ck_assert_int_eq(errno, ERANGE);
}
END_TEST

START_TEST(test_startup_settings_are_busy_inside_a_transaction)
{
	static uint64_t x;

	(void)tm_lt(&x);
	errno = 0;
	ck_assert_int_eq(tm_config_set("LTX_MODE", "invisible"), -1);
	ck_assert_int_eq(errno, EBUSY);
	ck_assert(tm_commit());
	/* The orec table exists now: its size is fixed. */
	errno = 0;
	ck_assert_int_eq(tm_config_set("LTX_OREC_BITS", "12"), -1);
	ck_assert_int_eq(errno, EBUSY);
	ck_assert_int_eq(tm_config_set("LTX_MODE", "invisible"), 0);
}
END_TEST

/* The other thread's step: one transaction; it then waits, alive. */
static void one_transaction(void *arg)
{
	static uint64_t y;

	(void)tm_lt(&y);
	tm_commit();
}

START_TEST(test_startup_settings_are_busy_once_other_threads_use_ltx)
{
	struct ltx_test_peer other;

	ltx_test_peer_start(&other);
	ltx_test_peer_run(&other, one_transaction, NULL);
	errno = 0;
	ck_assert_int_eq(tm_config_set("LTX_MODE", "invisible"), -1);
	ck_assert_int_eq(errno, EBUSY);
	/* Backoff may change at any time. */
	ck_assert_int_eq(tm_config_set("LTX_BACKOFF", "yield"), 0);
	ltx_test_peer_stop(&other);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("api");
	TCase *tc = tcase_create("semantics");
	TCase *cfg = tcase_create("config");

	/* The scripted conflicts need lines that do not share orecs: the
	 * default table, whatever LTX_OREC_BITS says (the table is made at
	 * the first transaction, after this). */
	if (tm_config_set("LTX_OREC_BITS", "16") != 0) {
		perror("check_api: LTX_OREC_BITS=16");
		return EXIT_FAILURE;
	}
	tcase_add_test(tc, test_begin_is_implicit_and_commit_ends_it);
	tcase_add_test(
		tc, test_validate_and_commit_outside_a_transaction_return_true);
	tcase_add_test(tc, test_store_is_buffered_until_commit);
	tcase_add_test(tc, test_abort_discards_stores_and_reports_explicit);
	tcase_add_test(tc, test_sub_word_store_changes_only_its_bytes);
	tcase_add_test(tc, test_typed_macros_keep_the_type);
	tcase_add_test(tc, test_typed_words_aligned_and_packed);
#if defined(LTX_DEBUG) && !defined(LTX_INLINE)
	tcase_add_test_raise_signal(tc, test_misaligned_typed_word_is_reported,
				    SIGABRT);
#endif
	tcase_add_test(tc, test_isa_spelling_matches_the_article);
	tcase_add_test(tc, test_unaligned_and_straddling_accesses_are_exact);
	tcase_add_test(tc, test_byte_ranges_copy_exactly);
	tcase_add_test(tc, test_commit_writes_back_only_dirty_bytes);
	tcase_add_test(tc, test_stores_to_a_held_line_merge);
	tcase_add_test(tc, test_read_after_write_returns_the_stored_value);
	tcase_add_test(tc, test_read_after_write_only_from_a_word_kept_aside);
	tcase_add_test(tc, test_ltx_without_store_changes_nothing);
	tcase_add_test(tc, test_large_transactions_grow_their_logs);
	tcase_add_test(tc,
		       test_doomed_loads_return_zero_without_touching_memory);
	tcase_add_test(tc, test_doomed_read_after_write_returns_zero);
	tcase_add_loop_test(tc, test_random_accesses_match_a_model, 0,
			    LTX_TEST_NMODES);
	suite_add_tcase(s, tc);
	tcase_add_test(cfg, test_config_set_and_get_round_trip);
	tcase_add_test(cfg, test_config_rejects_bad_names_and_values);
	tcase_add_test(cfg,
		       test_startup_settings_are_busy_inside_a_transaction);
	tcase_add_test(
		cfg, test_startup_settings_are_busy_once_other_threads_use_ltx);
	suite_add_tcase(s, cfg);
	return ltx_test_run(s);
}
