/* SPDX-License-Identifier: MIT */
/* libFuzzer target: the statistics segment reader and its printers. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rt/statseg.h"

/*
 * Any bytes at all are handed to ltx_statseg_parse, as a segment of
 * another process could be (truncated, of another version, corrupt); when
 * it accepts them, both printers must render them without reading outside
 * the buffer.  ASan checks the bounds; the parser's contract is that it
 * never fails on input, only refuses it.
 */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static FILE *sink;
	struct ltx_statseg_view view;
	uint64_t *buf;

	if (sink == NULL)
		sink = fopen("/dev/null", "w");
	/* The parser wants 8-byte alignment, as a mapped segment has. */
	buf = malloc(size + 8);
	if (buf == NULL)
		return 0;
	memcpy(buf, data, size);
	if (ltx_statseg_parse(buf, size, &view) == LTX_STATSEG_OK) {
		ltx_statseg_print(sink, &view, NULL, NULL);
		ltx_statseg_print_json(sink, &view, NULL, NULL);
	}
	free(buf);
	return 0;
}
