/* SPDX-License-Identifier: MIT */
/* The LTX_* settings: parsing, defaults, and the environment. */
#define _GNU_SOURCE /* secure_getenv */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rt/alloc.h"
#include "rt/config.h"
#include "rt/stats.h"

struct ltx_config ltx_config = {
	.mode = LTX_MODE_INVISIBLE,
	.orec_bits = LTX_OREC_BITS_DEFAULT,
	.backoff = { .policy = LTX_BACKOFF_AUTO, .min = 64, .max = 65536 },
	.serial_after = 16,
	.alloc = LTX_ALLOC_AUTO,
	.mem_limit = LTX_MEM_LIMIT_DEFAULT,
	.itm_serial = 1,
};

#define CYCLES_MAX ((uint64_t)1 << 40)

/* A decimal number in [lo, hi] spanning exactly [s, end). */
static bool parse_number(const char *s, const char *end, uint64_t lo,
			 uint64_t hi, uint64_t *out)
{
	uint64_t v = 0;

	if (s == end)
		return false;
	for (; s < end; s++) {
		if (*s < '0' || *s > '9')
			return false;
		if (v > (hi - (uint64_t)(*s - '0')) / 10)
			return false;
		v = v * 10 + (uint64_t)(*s - '0');
	}
	if (v < lo)
		return false;
	*out = v;
	return true;
}

static const char *parse_mode(const char *value, struct ltx_config *cfg)
{
	if (strcmp(value, "invisible") == 0) {
		cfg->mode = LTX_MODE_INVISIBLE;
		return NULL;
	}
	if (strcmp(value, "visible") == 0) {
		cfg->mode = LTX_MODE_VISIBLE;
		return NULL;
	}
	return LTX_CONFIG_UNACCEPTED;
}

static void format_mode(const struct ltx_config *cfg, char *buf, size_t len)
{
	snprintf(buf, len, "%s",
		 cfg->mode == LTX_MODE_VISIBLE ? "visible" : "invisible");
}

static const char *parse_orec_bits(const char *value, struct ltx_config *cfg)
{
	uint64_t v;

	if (!parse_number(value, value + strlen(value), LTX_OREC_BITS_MIN,
			  LTX_OREC_BITS_MAX, &v))
		return LTX_CONFIG_UNACCEPTED;
	cfg->orec_bits = (unsigned)v;
	return NULL;
}

static void format_orec_bits(const struct ltx_config *cfg, char *buf,
			     size_t len)
{
	snprintf(buf, len, "%u", cfg->orec_bits);
}

/* LTX_CAPACITY: unlimited (or 0), or the transaction cache size in slots. */
static const char *parse_capacity(const char *value, struct ltx_config *cfg)
{
	uint64_t v;

	if (strcmp(value, "unlimited") == 0) {
		cfg->capacity = 0;
		return NULL;
	}
	if (!parse_number(value, value + strlen(value), 0, 1u << 30, &v))
		return LTX_CONFIG_UNACCEPTED;
	cfg->capacity = (unsigned)v;
	return NULL;
}

static void format_capacity(const struct ltx_config *cfg, char *buf, size_t len)
{
	if (cfg->capacity == 0)
		snprintf(buf, len, "unlimited");
	else
		snprintf(buf, len, "%u", cfg->capacity);
}

/*
 * LTX_BACKOFF: none | spin[:n=CYCLES] | exp[:min=CYCLES,max=CYCLES] |
 * auto[:min=CYCLES,max=CYCLES] | yield.  Parameters are optional and keep
 * their defaults when left out.
 */
static const char *parse_backoff(const char *value, struct ltx_config *cfg)
{
	struct ltx_backoff_cfg b = { .min = 64, .max = 65536 };
	const char *colon = strchr(value, ':');
	size_t n = colon ? (size_t)(colon - value) : strlen(value);
	const char *p;
	bool window;

	if (n == 4 && strncmp(value, "none", 4) == 0)
		b.policy = LTX_BACKOFF_NONE;
	else if (n == 4 && strncmp(value, "spin", 4) == 0)
		b.policy = LTX_BACKOFF_SPIN, b.min = 1024;
	else if (n == 3 && strncmp(value, "exp", 3) == 0)
		b.policy = LTX_BACKOFF_EXP;
	else if (n == 4 && strncmp(value, "auto", 4) == 0)
		b.policy = LTX_BACKOFF_AUTO;
	else if (n == 5 && strncmp(value, "yield", 5) == 0)
		b.policy = LTX_BACKOFF_YIELD;
	else
		return LTX_CONFIG_UNACCEPTED;
	window = b.policy == LTX_BACKOFF_EXP || b.policy == LTX_BACKOFF_AUTO;
	if (colon != NULL) {
		if (b.policy == LTX_BACKOFF_NONE ||
		    b.policy == LTX_BACKOFF_YIELD)
			return "this policy takes no parameters";
		for (p = colon + 1;;) {
			const char *end = strchr(p, ',');
			const char *eq = strchr(p, '=');
			uint64_t v;

			if (end == NULL)
				end = p + strlen(p);
			if (eq == NULL || eq > end)
				return "a parameter is not KEY=VALUE";
			if (!parse_number(eq + 1, end, 1, CYCLES_MAX, &v))
				return "a value is not a number from 1 to 2^40";
			if (b.policy == LTX_BACKOFF_SPIN && eq - p == 1 &&
			    *p == 'n')
				b.min = v;
			else if (window && eq - p == 3 &&
				 strncmp(p, "min", 3) == 0)
				b.min = v;
			else if (window && eq - p == 3 &&
				 strncmp(p, "max", 3) == 0)
				b.max = v;
			else
				return "unknown parameter";
			if (*end == '\0')
				break;
			p = end + 1;
		}
	}
	if (window && b.min > b.max)
		return "min is greater than max";
	if (!window)
		b.max = b.min;
	/* Field by field: each value is valid with any mix of old and new. */
	__atomic_store_n(&cfg->backoff.min, b.min, __ATOMIC_RELAXED);
	__atomic_store_n(&cfg->backoff.max, b.max, __ATOMIC_RELAXED);
	__atomic_store_n(&cfg->backoff.policy, b.policy, __ATOMIC_RELAXED);
	return NULL;
}

static void format_backoff(const struct ltx_config *cfg, char *buf, size_t len)
{
	const struct ltx_backoff_cfg *b = &cfg->backoff;

	switch (b->policy) {
	case LTX_BACKOFF_NONE:
		snprintf(buf, len, "none");
		break;
	case LTX_BACKOFF_SPIN:
		snprintf(buf, len, "spin:n=%" PRIu64, b->min);
		break;
	case LTX_BACKOFF_YIELD:
		snprintf(buf, len, "yield");
		break;
	default:
		snprintf(buf, len, "%s:min=%" PRIu64 ",max=%" PRIu64,
			 b->policy == LTX_BACKOFF_AUTO ? "auto" : "exp", b->min,
			 b->max);
		break;
	}
}

/* LTX_STATS: 0 | 1 | stacks (rt/stats.h, issue 6). */
static const char *parse_stats(const char *value, struct ltx_config *cfg)
{
	if (strcmp(value, "0") == 0)
		cfg->stats = LTX_STATS_OFF;
	else if (strcmp(value, "1") == 0)
		cfg->stats = LTX_STATS_ON;
	else if (strcmp(value, "stacks") == 0)
		cfg->stats = LTX_STATS_STACKS;
	else
		return LTX_CONFIG_UNACCEPTED;
	return NULL;
}

static void format_stats(const struct ltx_config *cfg, char *buf, size_t len)
{
	snprintf(buf, len, "%s",
		 cfg->stats == LTX_STATS_STACKS ? "stacks"
		 : cfg->stats == LTX_STATS_ON	? "1"
						: "0");
}

/* LTX_STATS_FILE: where the exit summary goes ("" is stderr). */
static const char *parse_stats_file(const char *value, struct ltx_config *cfg)
{
	if (strlen(value) >= sizeof(cfg->stats_file))
		return "longer than 255 bytes";
	strcpy(cfg->stats_file, value);
	return NULL;
}

static void format_stats_file(const struct ltx_config *cfg, char *buf,
			      size_t len)
{
	snprintf(buf, len, "%s", cfg->stats_file);
}

/* LTX_SERIAL_AFTER: consecutive aborts before a transaction goes serial. */
static const char *parse_serial_after(const char *value, struct ltx_config *cfg)
{
	uint64_t v;

	if (!parse_number(value, value + strlen(value), 0, 1000000000, &v))
		return LTX_CONFIG_UNACCEPTED;
	__atomic_store_n(&cfg->serial_after, (unsigned)v, __ATOMIC_RELAXED);
	return NULL;
}

static void format_serial_after(const struct ltx_config *cfg, char *buf,
				size_t len)
{
	snprintf(buf, len, "%u",
		 __atomic_load_n(&cfg->serial_after, __ATOMIC_RELAXED));
}

static const char *parse_alloc(const char *value, struct ltx_config *cfg)
{
	if (strcmp(value, "auto") == 0)
		cfg->alloc = LTX_ALLOC_AUTO;
	else if (strcmp(value, "jemalloc") == 0)
		cfg->alloc = LTX_ALLOC_JEMALLOC;
	else if (strcmp(value, "libc") == 0)
		cfg->alloc = LTX_ALLOC_LIBC;
	else
		return LTX_CONFIG_UNACCEPTED;
	return NULL;
}

static void format_alloc(const struct ltx_config *cfg, char *buf, size_t len)
{
	static const char *const names[] = { "auto", "jemalloc", "libc" };

	snprintf(buf, len, "%s", names[cfg->alloc]);
}

/* LTX_MEM_LIMIT: bytes, with an optional k, m or g suffix (powers of 2). */
static const char *parse_mem_limit(const char *value, struct ltx_config *cfg)
{
	size_t n = strlen(value);
	unsigned shift = 0;
	uint64_t v;

	if (n > 0 && strchr("kKmMgG", value[n - 1]) != NULL) {
		shift = strchr("kK", value[n - 1])   ? 10
			: strchr("mM", value[n - 1]) ? 20
						     : 30;
		n--;
	}
	if (!parse_number(value, value + n, 1, (uint64_t)1 << 40 >> shift, &v))
		return LTX_CONFIG_UNACCEPTED;
	__atomic_store_n(&cfg->mem_limit, v << shift, __ATOMIC_RELAXED);
	return NULL;
}

static void format_mem_limit(const struct ltx_config *cfg, char *buf,
			     size_t len)
{
	snprintf(buf, len, "%" PRIu64,
		 __atomic_load_n(&cfg->mem_limit, __ATOMIC_RELAXED));
}

/* LTX_ITM_SERIAL: may a lone thread's GCC transaction run serially? */
static const char *parse_itm_serial(const char *value, struct ltx_config *cfg)
{
	if (strcmp(value, "auto") == 0)
		__atomic_store_n(&cfg->itm_serial, 1, __ATOMIC_RELAXED);
	else if (strcmp(value, "never") == 0)
		__atomic_store_n(&cfg->itm_serial, 0, __ATOMIC_RELAXED);
	else
		return LTX_CONFIG_UNACCEPTED;
	return NULL;
}

static void format_itm_serial(const struct ltx_config *cfg, char *buf,
			      size_t len)
{
	snprintf(buf, len, "%s",
		 __atomic_load_n(&cfg->itm_serial, __ATOMIC_RELAXED) ? "auto"
								     : "never");
}

/* LTX_ITM_REPORT: 0 | 1. */
static const char *parse_itm_report(const char *value, struct ltx_config *cfg)
{
	if (strcmp(value, "0") == 0 || value[0] == '\0')
		__atomic_store_n(&cfg->itm_report, 0, __ATOMIC_RELAXED);
	else if (strcmp(value, "1") == 0)
		__atomic_store_n(&cfg->itm_report, 1, __ATOMIC_RELAXED);
	else
		return LTX_CONFIG_UNACCEPTED;
	return NULL;
}

static void format_itm_report(const struct ltx_config *cfg, char *buf,
			      size_t len)
{
	snprintf(buf, len, "%d",
		 __atomic_load_n(&cfg->itm_report, __ATOMIC_RELAXED));
}

static const struct ltx_setting settings[] = {
	{ "LTX_MODE", "invisible | visible", "invisible", LTX_SETTING_STARTUP,
	  parse_mode, format_mode },
	{ "LTX_BACKOFF",
	  "none | spin[:n=CYCLES] | exp[:min=CYCLES,max=CYCLES] | "
	  "auto[:min=CYCLES,max=CYCLES] | yield",
	  "auto:min=64,max=65536", LTX_SETTING_ANYTIME, parse_backoff,
	  format_backoff },
	{ "LTX_OREC_BITS", "an integer from 4 to 28", "16", LTX_SETTING_STARTUP,
	  parse_orec_bits, format_orec_bits },
	{ "LTX_STATS", "0 | 1 | stacks", "0", LTX_SETTING_STARTUP, parse_stats,
	  format_stats },
	{ "LTX_STATS_FILE", "a file name, or empty for stderr", "",
	  LTX_SETTING_STARTUP, parse_stats_file, format_stats_file },
	{ "LTX_SERIAL_AFTER", "an integer from 0 (never) to 1000000000", "16",
	  LTX_SETTING_ANYTIME, parse_serial_after, format_serial_after },
	{ "LTX_ALLOC", "auto | jemalloc | libc", "auto", LTX_SETTING_STARTUP,
	  parse_alloc, format_alloc },
	{ "LTX_MEM_LIMIT",
	  "a size from 1 byte to 1 TiB, in bytes or with a k, m or g suffix",
	  "67108864", LTX_SETTING_ANYTIME, parse_mem_limit, format_mem_limit },
	{ "LTX_CAPACITY",
	  "unlimited | SLOTS, an integer from 0 to 1073741824 (1 per line "
	  "read, 2 per line written)",
	  "unlimited", LTX_SETTING_STARTUP, parse_capacity, format_capacity },
	{ "LTX_ITM_SERIAL", "auto | never", "auto", LTX_SETTING_ANYTIME,
	  parse_itm_serial, format_itm_serial },
	{ "LTX_ITM_REPORT", "0 | 1", "0", LTX_SETTING_ANYTIME, parse_itm_report,
	  format_itm_report },
};

const struct ltx_setting *ltx_config_find(const char *name)
{
	for (size_t i = 0; i < sizeof(settings) / sizeof(settings[0]); i++)
		if (strcmp(settings[i].name, name) == 0)
			return &settings[i];
	return NULL;
}

const char *ltx_config_apply(const struct ltx_setting *s, const char *value)
{
	return s->parse(value, &ltx_config);
}

/*
 * The environment of a program that runs with privileges its caller does
 * not have (set-user-ID, set-group-ID, file capabilities: AT_SECURE) is the
 * caller's to choose: LTX_STATS_FILE would name a file the program then
 * writes, and every other setting changes what it does.  secure_getenv
 * returns NULL there, so such a program runs on the defaults and whatever
 * it sets itself (tm_config_set); a setting found in its environment is
 * named once, so that the caller knows it had no effect.
 */
void ltx_config_from_env(void)
{
	for (size_t i = 0; i < sizeof(settings) / sizeof(settings[0]); i++) {
		const struct ltx_setting *s = &settings[i];
		const char *v = secure_getenv(s->name);
		const char *why;

		if (v == NULL) {
			if (getenv(s->name) != NULL)
				fprintf(stderr,
					"ltx: %s is ignored: the program runs "
					"with privileges its caller does not "
					"have (set-user-ID or the like)\n",
					s->name);
			continue;
		}
		why = ltx_config_apply(s, v);
		if (why != NULL)
			ltx_config_warn(s, v, why);
	}
}

void ltx_config_warn(const struct ltx_setting *s, const char *value,
		     const char *why)
{
	/* One format for every setting; the reason only when it says more
	 * than the accepted forms do. */
	fprintf(stderr,
		"ltx: %s=\"%s\" is invalid%s%s%s; accepted: %s; "
		"using the default, %s\n",
		s->name, value, why[0] != '\0' ? " (" : "", why,
		why[0] != '\0' ? ")" : "", s->forms,
		s->dflt[0] != '\0' ? s->dflt : "\"\"");
}
