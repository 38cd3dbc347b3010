/* SPDX-License-Identifier: MIT */
/*
 * ltxbench-gnutm: ltxbench's helper built with gcc -fgnu-tm.  ltxbench runs
 * it once per measured run, plainly (GCC's libitm serves the transactions)
 * or with LD_PRELOAD naming libltx.so (ltx serves them through the libitm
 * ABI).  It prints one line: "ok OPS SECONDS COMMITS ABORTS checked", or
 * "na REASON" with exit status 3.
 *
 * usage: ltxbench-gnutm [--expect-ltx] WORKLOAD THREADS SECONDS SIZE RANGE
 *			  UPDATE SEED
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

void bench_gnutm_impossible(void)
{
	bench_fatal("ltxbench: a GCC TM transaction read an impossible value");
}

/* The ABI's entry point; this file names it only to ask who defines it. */
#define ITM_BEGIN "_ITM_beginTransaction"

/* With --expect-ltx: refuse to measure libitm under ltx's name. */
static const char *check_ltx_serves(void)
{
	void *sym = dlsym(RTLD_DEFAULT, ITM_BEGIN);
	Dl_info info;

	if (sym == NULL || dladdr(sym, &info) == 0 || info.dli_fname == NULL)
		return "no libitm ABI found at all";
	if (strstr(info.dli_fname, "libltx") == NULL)
		return "no libitm ABI in this libltx";
	return NULL;
}

static long number(const char *s, const char *what)
{
	char *end;
	long v = strtol(s, &end, 10);

	if (*s == '\0' || *end != '\0') {
		fprintf(stderr, "ltxbench-gnutm: bad %s '%s'\n", what, s);
		exit(2);
	}
	return v;
}

int main(int argc, char **argv)
{
	struct bench_impl im = {
		.name = "gnutm",
		.workloads = bench_gnutm_workloads,
		.counts_aborts = false,
	};
	struct bench_params p;
	char *end;
	double seconds;
	long nthreads;
	int i = 1;

	if (argc > 1 && strcmp(argv[1], "--expect-ltx") == 0) {
		im.prepare = check_ltx_serves;
		im.name = "ltx-itm";
		i++;
	}
	if (argc - i != 7) {
		fprintf(stderr, "usage: ltxbench-gnutm [--expect-ltx] WORKLOAD "
				"THREADS SECONDS SIZE RANGE UPDATE SEED\n");
		return 2;
	}
	nthreads = number(argv[i + 1], "thread count");
	seconds = strtod(argv[i + 2], &end);
	if (*end != '\0' || seconds <= 0 || nthreads < 1 ||
	    nthreads > BENCH_MAX_THREADS) {
		fprintf(stderr, "ltxbench-gnutm: bad thread count or time\n");
		return 2;
	}
	p.size = number(argv[i + 3], "size");
	p.range = number(argv[i + 4], "range");
	p.update = number(argv[i + 5], "update percentage");
	p.seed = (uint64_t)number(argv[i + 6], "seed");
	return bench_child_main(&im, argv[i], &p, nthreads, seconds);
}
