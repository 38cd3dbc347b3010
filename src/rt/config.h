/* SPDX-License-Identifier: MIT */
/* Run-time configuration: the LTX_* settings, from the environment or C. */
#ifndef LTX_RT_CONFIG_H
#define LTX_RT_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rt/backoff.h"

/* LTX_OREC_BITS: log2 of the ownership-record table size (src/cd). */
#define LTX_OREC_BITS_DEFAULT 16
#define LTX_OREC_BITS_MIN     4
#define LTX_OREC_BITS_MAX     28

/* Conflict-detection modes (src/cd). */
enum ltx_mode {
	LTX_MODE_INVISIBLE = 0, /* versioned orecs, invisible reads (default) */
	LTX_MODE_VISIBLE = 1,	/* reader-visible line locks (faithful) */
};

/*
 * Synchronization: settings marked LTX_SETTING_STARTUP change only while a
 * single thread uses ltx (the caller checks); the others are single words
 * written and read with relaxed atomics, each value valid on its own.
 */
struct ltx_config {
	int mode;			/* enum ltx_mode */
	unsigned orec_bits;		/* log2 of the orec table size */
	struct ltx_backoff_cfg backoff; /* applied by failing VALIDATE/COMMIT */
	int stats;			/* LTX_STATS: enum ltx_stats_level */
	char stats_file[256];		/* LTX_STATS_FILE: "" for stderr */
	unsigned serial_after;		/* aborts before going irrevocable */
	int alloc;	    /* enum ltx_alloc_backend (rt/alloc.h) */
	uint64_t mem_limit; /* bytes freed by tm_free that may wait */
	unsigned capacity;  /* LTX_CAPACITY in slots; 0: unlimited */
	int itm_serial;	    /* LTX_ITM_SERIAL: 1 auto, 0 never */
	int itm_report;	    /* LTX_ITM_REPORT: summary line at exit */
};

extern struct ltx_config ltx_config;

enum ltx_setting_when {
	LTX_SETTING_ANYTIME, /* may change while transactions run */
	LTX_SETTING_STARTUP, /* only before a second thread uses ltx */
};

struct ltx_setting {
	const char *name;  /* the environment variable, "LTX_BACKOFF" */
	const char *forms; /* the accepted forms, for messages and docs */
	const char *dflt;  /* the default value */
	int when;	   /* enum ltx_setting_when */
	/* parse: check value and store it in cfg; NULL, or why it is bad
	 * (cfg is then unchanged): LTX_CONFIG_UNACCEPTED when it is simply
	 * not one of the accepted forms, else a phrase that says more */
	const char *(*parse)(const char *value, struct ltx_config *cfg);
	/* format: the current value in the syntax parse accepts */
	void (*format)(const struct ltx_config *cfg, char *buf, size_t len);
};

/* What a parser returns for a value that is none of the forms it accepts. */
#define LTX_CONFIG_UNACCEPTED ""

/* ltx_config_find: the setting called name, or NULL. */
const struct ltx_setting *ltx_config_find(const char *name);

/* ltx_config_apply: parse value into ltx_config.  Returns NULL or why. */
const char *ltx_config_apply(const struct ltx_setting *s, const char *value);

/*
 * ltx_config_from_env: apply every LTX_* variable that is set, unless the
 * program runs with privileges its caller lacks (secure_getenv(3)): then
 * none is applied, and each one set is named on stderr.  A bad value is
 * reported once on stderr (ltx_config_warn), and the default stays in force.
 */
void ltx_config_from_env(void);

/*
 * ltx_config_warn: the one message for a bad value of setting s: the
 * variable, the value, why (unless LTX_CONFIG_UNACCEPTED), the accepted
 * forms and the default in force.
 */
void ltx_config_warn(const struct ltx_setting *s, const char *value,
		     const char *why);

#endif /* LTX_RT_CONFIG_H */
