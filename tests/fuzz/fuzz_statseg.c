/* SPDX-License-Identifier: MIT */
/* libFuzzer target: the statistics segment reader, its checks, printers. */
#define _GNU_SOURCE /* memfd_create */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "rt/statseg.h"

/*
 * Any bytes at all go through every check a reader makes before it trusts
 * a segment, as they come from a file or a process that may be hostile:
 *   - as a file name (ltx_statseg_name_pid) and a /proc/PID/maps line
 *     (ltx_statseg_maps_line): a match must be a segment of that pid in
 *     the segment directory;
 *   - as the fstat of an open file and what the reader expects of it
 *     (ltx_statseg_check_file): accepted only if regular, of a segment's
 *     size, with the owner and inode expected;
 *   - as a header, for the bytes to read (ltx_statseg_size): never more
 *     than the file has, nor than LTX_STATSEG_SIZE_MAX;
 *   - as an object file a segment names (ltx_statseg_elf_functions): the
 *     symbol table reader stays inside it;
 *   - as a segment (ltx_statseg_parse, then ltx_statseg_check_pid): when
 *     accepted, both printers must render it without reading outside the
 *     buffer.
 * ASan checks the bounds; a broken invariant aborts (a crash for libFuzzer).
 */

static void check(int ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "fuzz_statseg: %s\n", what);
		abort();
	}
}

static uint64_t word(const uint8_t *data, size_t size, size_t at)
{
	uint64_t w = 0;

	for (size_t i = 0; i < 8 && at + i < size; i++)
		w |= (uint64_t)data[at + i] << (8 * i);
	return w;
}

static void names_and_maps(const uint8_t *data, size_t size)
{
	char text[512];
	struct ltx_statseg_mapping m;
	size_t n = size < sizeof(text) - 1 ? size : sizeof(text) - 1;
	long pid;

	memcpy(text, data, n);
	text[n] = '\0';
	pid = ltx_statseg_name_pid(text);
	check(pid >= 0, "a negative pid from a name");
	if (pid > 0)
		check(strncmp(text, "ltx.", 4) == 0,
		      "a pid from a foreign name");
	for (long p = 0; p < 3; p++) {
		long want = p == 0   ? pid
			    : p == 1 ? 42
				     : (long)(word(data, size, 0) & 0x7fffffff);

		if (!ltx_statseg_maps_line(text, want, &m))
			continue;
		check(want > 0, "a mapping for pid 0");
		check(strncmp(m.path, LTX_STATSEG_DIR "/",
			      sizeof(LTX_STATSEG_DIR)) == 0,
		      "a mapping outside the segment directory");
		check(ltx_statseg_name_pid(m.path + sizeof(LTX_STATSEG_DIR)) ==
			      want,
		      "a mapping of another pid");
	}
}

static void file_checks(const uint8_t *data, size_t size)
{
	struct ltx_statseg_expect e;
	struct stat st;
	int err;

	memset(&st, 0, sizeof(st));
	memset(&e, 0, sizeof(e));
	st.st_mode = (mode_t)word(data, size, 0);
	st.st_size = (off_t)(word(data, size, 8) & 0x7fffffffffffffffull);
	st.st_uid = (uid_t)word(data, size, 16);
	st.st_ino = (ino_t)word(data, size, 24);
	st.st_dev = makedev((unsigned)word(data, size, 32) & 0xfff,
			    (unsigned)word(data, size, 36) & 0xfffff);
	e.check_owner = word(data, size, 40) & 1;
	e.check_inode = word(data, size, 40) & 2;
	e.uid = (uid_t)word(data, size, 48);
	e.ino = word(data, size, 56);
	e.major = (unsigned)word(data, size, 64) & 0xfff;
	e.minor = (unsigned)word(data, size, 68) & 0xfffff;
	err = ltx_statseg_check_file(&st, &e);
	if (err != LTX_STATSEG_OK)
		return;
	check(S_ISREG(st.st_mode), "accepted a file that is not regular");
	check(st.st_size <= (off_t)LTX_STATSEG_SIZE_MAX,
	      "accepted a huge file");
	check(!e.check_owner || st.st_uid == e.uid, "accepted another owner");
	check(!e.check_inode || (uint64_t)st.st_ino == e.ino,
	      "accepted another inode");
}

/* As an object file named by a segment: the symbol table reader must
 * stay inside the file and give names that end. */
static void elf_symbols(const uint8_t *data, size_t size)
{
	static int fd = -1;
	static char name[4][128];
	uint64_t off[4], into[4];

	if (fd < 0)
		fd = memfd_create("fuzz_statseg", 0);
	if (fd < 0 || ftruncate(fd, 0) != 0 ||
	    pwrite(fd, data, size, 0) != (ssize_t)size)
		return;
	for (int k = 0; k < 4; k++)
		off[k] = word(data, size, 8 * (size_t)k + 3) & 0xffffff;
	ltx_statseg_elf_functions(fd, size, off, 4, name, into);
	for (int k = 0; k < 4; k++)
		check(memchr(name[k], '\0', sizeof(name[k])) != NULL,
		      "a function name without its end");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static FILE *sink;
	struct ltx_statseg_view view;
	uint64_t *buf, file_size;
	size_t n = 0;

	if (sink == NULL)
		sink = fopen("/dev/null", "w");
	names_and_maps(data, size);
	file_checks(data, size);
	elf_symbols(data, size);
	/* The parser wants 8-byte alignment, as a mapped segment has. */
	buf = malloc(size + 8);
	if (buf == NULL)
		return 0;
	memcpy(buf, data, size);
	file_size = size ^ (word(data, size, size > 8 ? size - 8 : 0) & 0xffff);
	if (ltx_statseg_size(buf, size, file_size, &n) == LTX_STATSEG_OK)
		check(n <= file_size && n <= LTX_STATSEG_SIZE_MAX &&
			      n >= sizeof(struct ltx_statseg_header),
		      "a size beyond the file or the cap");
	if (ltx_statseg_parse(buf, size, &view) == LTX_STATSEG_OK) {
		check(ltx_statseg_check_pid(&view, view.h->pid) ==
			      LTX_STATSEG_OK,
		      "its own pid refused");
		check(ltx_statseg_check_pid(&view, view.h->pid ^ 1) ==
			      LTX_STATSEG_EPID,
		      "another pid accepted");
		ltx_statseg_print(sink, &view, NULL, NULL);
		ltx_statseg_print_json(sink, &view, NULL, NULL);
	}
	free(buf);
	return 0;
}
