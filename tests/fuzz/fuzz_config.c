/* SPDX-License-Identifier: MIT */
/* libFuzzer target: the LTX_* settings parser, inputs are NAME=VALUE. */
#include <ltx/tm.h>

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rt/config.h"

/*
 * An input is "NAME=VALUE" (split at the first '='; without one, the whole
 * input is a value).  For every known setting, the value goes through the
 * setting's parser on a private copy of the configuration; whatever it
 * accepts must format to a value that parses again to the same formatted
 * value (a round trip).  Then NAME=VALUE goes through the public API:
 * tm_config_set either fails with EINVAL or EBUSY, or succeeds, and then
 * what tm_config_get returns must be accepted by tm_config_set and read
 * back unchanged.  Any failure aborts (a crash for libFuzzer), as do the
 * sanitizers' findings.
 */

/* Every setting of the table (rt/config.c). */
static const char *const names[] = {
	"LTX_MODE",	  "LTX_BACKOFF",      "LTX_OREC_BITS",	"LTX_STATS",
	"LTX_STATS_FILE", "LTX_SERIAL_AFTER", "LTX_ALLOC",	"LTX_MEM_LIMIT",
	"LTX_CAPACITY",	  "LTX_ITM_SERIAL",   "LTX_ITM_REPORT",
};

static void fail(const char *what, const char *name, const char *value,
		 const char *got)
{
	fprintf(stderr, "fuzz_config: %s: %s=\"%s\" -> \"%s\"\n", what, name,
		value, got);
	abort();
}

static void round_trip(const struct ltx_setting *s, const char *value)
{
	struct ltx_config cfg = ltx_config, again;
	char first[128], second[128];
	const char *why;

	if (s->parse(value, &cfg) != NULL)
		return;
	s->format(&cfg, first, sizeof(first));
	again = cfg;
	why = s->parse(first, &again);
	if (why != NULL)
		fail("the formatted value does not parse", s->name, value,
		     first);
	s->format(&again, second, sizeof(second));
	if (strcmp(first, second) != 0)
		fail("the round trip changed the value", s->name, first,
		     second);
}

static void public_api(const char *name, const char *value)
{
	char got[128], again[128];

	if (tm_config_set(name, value) != 0) {
		if (errno != EINVAL && errno != EBUSY)
			fail("tm_config_set: unexpected errno", name, value,
			     strerror(errno));
		return;
	}
	if (tm_config_get(name, got, sizeof(got)) != 0)
		fail("tm_config_get failed after a successful set", name, value,
		     strerror(errno));
	if (tm_config_set(name, got) != 0)
		fail("tm_config_set refused what tm_config_get returned", name,
		     value, got);
	if (tm_config_get(name, again, sizeof(again)) != 0 ||
	    strcmp(got, again) != 0)
		fail("tm_config_get changed after setting it to itself", name,
		     got, again);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *in = malloc(size + 1), *eq;
	const char *name = NULL, *value;

	if (in == NULL)
		return 0;
	memcpy(in, data, size);
	in[size] = '\0';
	eq = strchr(in, '=');
	if (eq != NULL) {
		*eq = '\0';
		name = in;
		value = eq + 1;
	} else {
		value = in;
	}
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		const struct ltx_setting *s = ltx_config_find(names[i]);

		if (s == NULL)
			fail("a setting is missing", names[i], "", "");
		round_trip(s, value);
	}
	if (name != NULL) {
		(void)ltx_config_find(name);
		public_api(name, value);
	}
	/* NULL arguments are refused, not dereferenced. */
	if (tm_config_set(NULL, value) == 0 || tm_config_set(name, NULL) == 0)
		fail("tm_config_set accepted NULL", name ? name : "(null)",
		     value, "0");
	free(in);
	return 0;
}
