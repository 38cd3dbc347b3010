/* SPDX-License-Identifier: MIT */
/*
 * ltxbench: workloads x implementations x thread counts x repetitions, each
 * run for a fixed time in a child process of its own and checked at the
 * end; reports median throughput, abort rate and the ratio to a baseline.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <ltx/tm.h>

#include "bench.h"

#ifndef LTXBENCH_GNUTM
#define LTXBENCH_GNUTM "ltxbench-gnutm"
#endif
#ifndef LTXBENCH_VERSION
#define LTXBENCH_VERSION "unknown"
#endif

static const char *prepare_mode(const char *mode)
{
	static char why[128];

	if (tm_config_set("LTX_MODE", mode) == 0)
		return NULL;
	if (errno == EINVAL)
		snprintf(why, sizeof(why), "no %s mode in this libltx", mode);
	else
		snprintf(why, sizeof(why), "LTX_MODE=%s refused: %s", mode,
			 strerror(errno));
	return why;
}

static const char *prepare_invisible(void)
{
	return prepare_mode("invisible");
}

static const char *prepare_visible(void)
{
	return prepare_mode("visible");
}

static const struct bench_impl impls[] = {
	{ .name = "seq",
	  .workloads = bench_seq_workloads,
	  .single_thread_only = true },
	{ .name = "ltx-invisible",
	  .workloads = bench_ltx_workloads,
	  .prepare = prepare_invisible,
	  .counts_aborts = true },
	{ .name = "ltx-visible",
	  .workloads = bench_ltx_workloads,
	  .prepare = prepare_visible,
	  .counts_aborts = true },
	{ .name = "ltx-inline",
	  .workloads = bench_ltx_inline_workloads,
	  .prepare = prepare_invisible,
	  .counts_aborts = true },
	{ .name = "mutex", .workloads = bench_mutex_workloads },
	{ .name = "spin", .workloads = bench_spin_workloads },
	{ .name = "lockfree", .workloads = bench_lockfree_workloads },
	{ .name = "libitm", .external = 1 },
	{ .name = "libitm-ml_wt", .external = 3 },
	{ .name = "ltx-itm", .external = 2 },
};
#define NIMPLS (sizeof(impls) / sizeof(impls[0]))

/* The canonical workload list: every access interface compiles them all. */
#define WORKLOADS bench_seq_workloads

struct cell {
	double *rate; /* ops/s of each repetition */
	int nrates;
	long commits, aborts;
	const char *na; /* why this implementation could not run */
};

static struct {
	int wl[64], nwl;
	int im[NIMPLS], nim;
	long threads[BENCH_MAX_THREADS], nthreads;
	int reps;
	double duration;
	struct bench_params user;
	int baseline;
	enum { OUT_TABLE, OUT_CSV, OUT_JSON, OUT_MARKDOWN } out;
	const char *plot, *gnutm, *libltx, *cmdline;
	int progress;
	bool impls_named; /* -i was given */
	char load_start[64], load_end[64];
} opt;

static struct cell *cells;
static long checked_runs;
static const char *impl_na[NIMPLS];

static struct cell *cell_at(int w, int i, long t)
{
	return &cells[((size_t)w * opt.nim + (size_t)i) * (size_t)opt.nthreads +
		      (size_t)t];
}

/* usage: the synopsis, and with full the description of every option. */
static void usage(FILE *f, bool full)
{
	fputs("usage: ltxbench [-q] [-w LIST] [-i LIST] [-t LIST] [-r N] [-d "
	      "SECONDS]\n"
	      "                [-b IMPL] [--size N] [--range N] [--update PCT] "
	      "[--seed N]\n"
	      "                [--csv | --json | --markdown] [--plot "
	      "FILE.png|FILE.svg]\n"
	      "                [--gnutm PATH] [--libltx PATH] "
	      "[--[no-]progress]\n"
	      "       ltxbench -l | -h | -V\n",
	      f);
	if (!full) {
		fputs("Try 'ltxbench --help' for what each option does.\n", f);
		return;
	}
	fprintf(f,
		"Runs each workload on each implementation at each thread "
		"count, REPS\n"
		"times, each run in a child process and checked at its end; "
		"prints the\n"
		"median throughput, the abort rate and the ratio to a "
		"baseline.\n"
		"  -q, --quick          short sweep: 0.08 s runs, 3 "
		"repetitions\n"
		"  -w, --workloads LIST workloads, comma-separated (default: "
		"all; see -l)\n"
		"  -i, --impls LIST     implementations, comma-separated "
		"(default: all)\n"
		"  -t, --threads LIST   thread counts, 1 to %d (default: "
		"1,2,4,8)\n"
		"  -r, --reps N         runs per point, the median is shown "
		"(default: 5)\n"
		"  -d, --duration S     seconds per run (default: 1)\n"
		"  -b, --baseline IMPL  the ratio column divides by IMPL's "
		"figure at the\n"
		"                       same thread count (default: mutex)\n"
		"      --size N         override the workloads' size "
		"(elements, accounts,\n"
		"                       slots); the integer sets' range "
		"becomes 2N\n"
		"      --range N        override the key range of the integer "
		"sets\n"
		"      --update PCT     override the percentage of updating "
		"operations\n"
		"      --seed N         seed of the per-thread generators "
		"(default: 1)\n"
		"      --csv            print CSV instead of the table\n"
		"      --json           print JSON instead of the table\n"
		"      --markdown       print a Markdown table, with command "
		"and machine\n"
		"      --plot FILE      also draw throughput against threads "
		"with gnuplot,\n"
		"                       one panel per workload, as PNG or SVG "
		"(by FILE's\n"
		"                       extension); FILE is checked before "
		"anything runs\n"
		"      --gnutm PATH     the helper built with gcc -fgnu-tm "
		"(libitm,\n"
		"                       libitm-ml_wt, ltx-itm; default: "
		"$LTXBENCH_GNUTM,\n"
		"                       beside ltxbench, or where it is "
		"installed)\n"
		"      --libltx PATH    the libltx.so that ltx-itm preloads "
		"(default:\n"
		"                       $LTXBENCH_LIBLTX, or the one ltxbench "
		"uses)\n"
		"      --progress       show progress and the time left on "
		"standard error\n"
		"      --no-progress    do not (default: progress when it is a "
		"terminal)\n"
		"  -l, --list           list workloads and implementations, "
		"and exit\n"
		"  -h, --help           print this help, and exit\n"
		"  -V, --version        print the version, and exit\n"
		"Exit status: 0 when every point ran (some implementations may "
		"be\n"
		"unavailable), 1 when a run failed, an invariant broke, the "
		"plot could\n"
		"not be written or nothing could run, 2 for a bad option.\n",
		BENCH_MAX_THREADS);
}

static void __attribute__((noreturn, format(printf, 1, 2)))
usage_error(const char *fmt, ...)
{
	va_list ap;

	fputs("ltxbench: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	usage(stderr, false);
	exit(2);
}

static int find_impl(const char *name)
{
	for (size_t i = 0; i < NIMPLS; i++)
		if (strcmp(impls[i].name, name) == 0)
			return (int)i;
	return -1;
}

static int find_workload(const char *name)
{
	for (int i = 0; WORKLOADS[i] != NULL; i++)
		if (strcmp(WORKLOADS[i]->name, name) == 0)
			return i;
	return -1;
}

static long parse_long(const char *s, long lo, long hi, const char *what)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (*s == '\0' || *end != '\0' || errno != 0 || v < lo || v > hi)
		usage_error("bad %s '%s' (expected %ld to %ld)", what, s, lo,
			    hi);
	return v;
}

/* Split a comma-separated list, calling one() on each item. */
static void parse_list(const char *list, void (*one)(const char *))
{
	char *copy = strdup(list), *save = NULL;

	for (char *it = strtok_r(copy, ",", &save); it != NULL;
	     it = strtok_r(NULL, ",", &save))
		one(it);
	free(copy);
}

static void add_workload(const char *name)
{
	int w = find_workload(name);

	if (w < 0)
		usage_error("unknown workload '%s' (see ltxbench -l)", name);
	if (opt.nwl < 64)
		opt.wl[opt.nwl++] = w;
}

static void add_impl(const char *name)
{
	int i = find_impl(name);

	if (i < 0)
		usage_error("unknown implementation '%s' (see ltxbench -l)",
			    name);
	if ((size_t)opt.nim < NIMPLS)
		opt.im[opt.nim++] = i;
}

static void add_threads(const char *s)
{
	long t = parse_long(s, 1, BENCH_MAX_THREADS, "thread count");

	if (opt.nthreads < BENCH_MAX_THREADS)
		opt.threads[opt.nthreads++] = t;
}

static void list(void)
{
	printf("workloads (default size, range, update %%):\n");
	for (int i = 0; WORKLOADS[i] != NULL; i++) {
		const struct bench_workload *wl = WORKLOADS[i];

		printf("  %-16s %s (%ld, %ld, %ld)\n", wl->name, wl->describe,
		       wl->defaults.size, wl->defaults.range,
		       wl->defaults.update);
	}
	printf("implementations:\n"
	       "  seq              uninstrumented code, 1 thread only\n"
	       "  ltx-invisible    ltx tm_*, LTX_MODE=invisible\n"
	       "  ltx-visible      ltx tm_*, LTX_MODE=visible\n"
	       "  ltx-inline       ltx tm_* built with LTX_INLINE, invisible\n"
	       "  mutex            one global pthread mutex\n"
	       "  spin             one global spinlock with backoff\n"
	       "  lockfree         lifo, counter, hm93-counting only\n"
	       "  libitm           gcc -fgnu-tm code on GCC's libitm\n"
	       "  libitm-ml_wt     the same, ITM_DEFAULT_METHOD=ml_wt\n"
	       "  ltx-itm          gcc -fgnu-tm code on libltx, preloaded\n");
}

static bool executable(const char *path)
{
	return path != NULL && access(path, X_OK) == 0;
}

/* The helper: --gnutm, $LTXBENCH_GNUTM, beside this program, installed. */
static const char *find_gnutm(void)
{
	static char path[PATH_MAX + 32];
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (opt.gnutm != NULL)
		return opt.gnutm;
	if (getenv("LTXBENCH_GNUTM") != NULL)
		return getenv("LTXBENCH_GNUTM");
	if (n > 0) {
		char *slash;

		self[n] = '\0';
		slash = strrchr(self, '/');
		if (slash != NULL) {
			*slash = '\0';
			snprintf(path, sizeof(path), "%s/ltxbench-gnutm", self);
			if (executable(path))
				return path;
			/* libtool keeps the real binary in .libs */
			snprintf(path, sizeof(path), "%s/../ltxbench-gnutm",
				 self);
			if (executable(path))
				return path;
		}
	}
	return LTXBENCH_GNUTM;
}

/* The libltx.so to preload: --libltx, $LTXBENCH_LIBLTX, or ours. */
static const char *find_libltx(void)
{
	Dl_info info;

	if (opt.libltx != NULL)
		return opt.libltx;
	if (getenv("LTXBENCH_LIBLTX") != NULL)
		return getenv("LTXBENCH_LIBLTX");
	if (dladdr((void *)tm_commit, &info) != 0 && info.dli_fname != NULL)
		return info.dli_fname;
	return NULL;
}

static struct bench_params params_for(const struct bench_workload *wl)
{
	struct bench_params p = wl->defaults;

	if (opt.user.size >= 0)
		p.size = opt.user.size;
	if (opt.user.range >= 0)
		p.range = opt.user.range;
	else if (opt.user.size >= 0 && wl->defaults.range > 0)
		p.range = 2 * p.size;
	if (p.range < 1)
		p.range = 1;
	if (opt.user.update >= 0)
		p.update = opt.user.update;
	p.seed = opt.user.seed;
	return p;
}

/*
 * Run one point in a child process.  Returns 0 with *rate etc. set, 3 with
 * *na set if the implementation cannot run here; exits on any failure.
 */
static int run_point(int w, int i, long threads, int rep, double *rate,
		     long *commits, long *aborts, char **na)
{
	const struct bench_workload *wl = WORKLOADS[w];
	const struct bench_impl *im = &impls[i];
	struct bench_params p = params_for(wl);
	char buf[512], *line;
	size_t len = 0;
	int fd[2], status;
	ssize_t n;
	pid_t pid;

	p.seed += (uint64_t)rep * 7919;
	if (pipe(fd) != 0) {
		perror("ltxbench: pipe");
		exit(1);
	}
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0) {
		perror("ltxbench: fork");
		exit(1);
	}
	if (pid == 0) {
		close(fd[0]);
		dup2(fd[1], 1);
		close(fd[1]);
		if (im->external) {
			char a[6][32];
			const char *helper = find_gnutm(), *lib;
			char *argv[10];
			int k = 0;

			argv[k++] = (char *)helper;
			unsetenv("LD_PRELOAD");
			if (im->external == 3)
				setenv("ITM_DEFAULT_METHOD", "ml_wt", 1);
			if (im->external == 2) {
				lib = find_libltx();
				if (lib == NULL) {
					printf("na libltx.so not found (use "
					       "--libltx)\n");
					exit(3);
				}
				setenv("LD_PRELOAD", lib, 1);
				argv[k++] = "--expect-ltx";
			}
			argv[k++] = (char *)wl->name;
			snprintf(a[0], 32, "%ld", threads);
			snprintf(a[1], 32, "%.6f", opt.duration);
			snprintf(a[2], 32, "%ld", p.size);
			snprintf(a[3], 32, "%ld", p.range);
			snprintf(a[4], 32, "%ld", p.update);
			snprintf(a[5], 32, "%llu", (unsigned long long)p.seed);
			for (int j = 0; j < 6; j++)
				argv[k++] = a[j];
			argv[k] = NULL;
			execv(helper, argv);
			printf("na %s: %s\n", helper, strerror(errno));
			exit(3);
		}
		exit(bench_child_main(im, wl->name, &p, threads, opt.duration));
	}
	close(fd[1]);
	while (len < sizeof(buf) - 1 &&
	       (n = read(fd[0], buf + len, sizeof(buf) - 1 - len)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			break;
		len += (size_t)n;
	}
	buf[len] = '\0';
	close(fd[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	line = strrchr(buf, '\n');
	if (line != NULL)
		*line = '\0';
	line = strrchr(buf, '\n') ? strrchr(buf, '\n') + 1 : buf;
	if (WIFEXITED(status) && WEXITSTATUS(status) == 3 &&
	    strncmp(line, "na ", 3) == 0) {
		*na = strdup(line + 3);
		return 3;
	}
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
		long ops;
		double secs;

		if (sscanf(line, "ok %ld %lf %ld %ld checked", &ops, &secs,
			   commits, aborts) == 4 &&
		    secs > 0) {
			*rate = (double)ops / secs;
			checked_runs++;
			return 0;
		}
	}
	fprintf(stderr, "\nltxbench: FAILED: %s on %s with %ld threads ",
		wl->name, im->name, threads);
	if (WIFSIGNALED(status))
		fprintf(stderr, "(killed by signal %d: %s)\n", WTERMSIG(status),
			strsignal(WTERMSIG(status)));
	else
		fprintf(stderr, "(exit status %d, output '%s')\n",
			WIFEXITED(status) ? WEXITSTATUS(status) : -1, line);
	exit(1);
}

static bool runs_at(int i, long threads)
{
	return !impls[i].single_thread_only || threads == 1;
}

static bool impl_has(int i, int w)
{
	return impls[i].external ||
	       bench_find_workload(&impls[i], WORKLOADS[w]->name) != NULL;
}

static void read_loadavg(char *buf, size_t len)
{
	FILE *f = fopen("/proc/loadavg", "r");

	snprintf(buf, len, "unknown");
	if (f != NULL) {
		if (fgets(buf, (int)len, f) != NULL) {
			/* keep the three averages */
			char *p = buf;

			for (int k = 0; k < 3 && p != NULL; k++)
				p = strchr(p + 1, ' ');
			if (p != NULL)
				*p = '\0';
		}
		fclose(f);
	}
}

/*
 * What /proc/cpuinfo says of the first CPU: its model name, and on x86 its
 * family and model numbers and whether it has RTM.  A virtual machine's
 * model name is often only the vendor's brand ("AMD EPYC"), and the same
 * name then covers CPUs whose caches and coherence differ a lot; libitm's
 * default method is hardware TM where RTM is present.
 */
struct cpu_info {
	char name[96];
	int family, model; /* -1: not said */
	int rtm;	   /* 1 or 0; -1: no flags line */
};

static void cpu_info(struct cpu_info *c)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[4096];

	snprintf(c->name, sizeof(c->name), "unknown CPU");
	c->family = c->model = c->rtm = -1;
	if (f == NULL)
		return;
	/* The first processor's lines: up to its blank line. */
	while (fgets(line, sizeof(line), f) != NULL && line[0] != '\n') {
		char *colon = strchr(line, ':');
		const char *v;

		if (colon == NULL)
			continue;
		v = colon[1] == ' ' ? colon + 2 : colon + 1;
		if (strncmp(line, "model name", 10) == 0) {
			snprintf(c->name, sizeof(c->name), "%s", v);
			c->name[strcspn(c->name, "\n")] = '\0';
		} else if (strncmp(line, "cpu family", 10) == 0) {
			c->family = atoi(v);
		} else if (strncmp(line, "model\t", 6) == 0) {
			c->model = atoi(v);
		} else if (strncmp(line, "flags", 5) == 0) {
			/* The flags line fits the buffer (about 1,500
			 * characters on today's CPUs). */
			c->rtm = strstr(v, " rtm ") != NULL ||
				 strstr(v, " rtm\n") != NULL ||
				 strncmp(v, "rtm ", 4) == 0;
		}
	}
	fclose(f);
}

/* "AMD EPYC, family 25 model 1, no RTM": what the tables print. */
static void cpu_model(char *buf, size_t len)
{
	struct cpu_info c;
	int n;

	cpu_info(&c);
	n = snprintf(buf, len, "%s", c.name);
	if (c.family >= 0 && c.model >= 0 && n >= 0 && (size_t)n < len)
		n += snprintf(buf + n, len - (size_t)n, ", family %d model %d",
			      c.family, c.model);
	if (c.rtm >= 0 && n >= 0 && (size_t)n < len)
		snprintf(buf + n, len - (size_t)n,
			 c.rtm ? ", RTM" : ", no RTM");
}

/*
 * Implementations whose helper or library is missing cannot run: say why
 * before the sweep, rather than run children that fail one by one.
 */
static void check_external(void)
{
	static char why_helper[PATH_MAX + 64], why_lib[PATH_MAX + 64];
	const char *helper = find_gnutm(), *lib = find_libltx();
	bool helper_ok = executable(helper);

	if (!helper_ok)
		snprintf(why_helper, sizeof(why_helper),
			 "the -fgnu-tm helper %s: %s", helper, strerror(errno));
	if (lib == NULL)
		snprintf(why_lib, sizeof(why_lib),
			 "no libltx.so to preload (use --libltx)");
	else if (access(lib, R_OK) != 0)
		snprintf(why_lib, sizeof(why_lib), "libltx %s: %s", lib,
			 strerror(errno));
	for (int i = 0; i < opt.nim; i++) {
		int im = opt.im[i];

		if (!impls[im].external || impl_na[im] != NULL)
			continue;
		if (!helper_ok)
			impl_na[im] = why_helper;
		else if (impls[im].external == 2 && why_lib[0] != '\0')
			impl_na[im] = why_lib;
	}
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* "45s", "3m05s", "1h02m". */
static const char *duration_text(double secs, char *buf, size_t len)
{
	long s = (long)(secs + 0.5);

	if (s < 60)
		snprintf(buf, len, "%lds", s);
	else if (s < 3600)
		snprintf(buf, len, "%ldm%02lds", s / 60, s % 60);
	else
		snprintf(buf, len, "%ldh%02ldm", s / 3600, s / 60 % 60);
	return buf;
}

/*
 * The progress line: the point, and the time left, estimated from the
 * runs so far (each run's length plus its start-up) or, before the first,
 * from the run length alone.
 */
static void show_progress(long done, long total, long ran, double elapsed,
			  int w, int im, long t, int rep)
{
	double per = ran > 0 ? elapsed / (double)ran : opt.duration + 0.05;
	char left[32];

	fprintf(stderr,
		"\r\033[Kltxbench: %ld/%ld %s on %s, %ld thread%s, run %d of "
		"%d; about %s left",
		done + 1, total, WORKLOADS[opt.wl[w]]->name, impls[im].name,
		opt.threads[t], opt.threads[t] > 1 ? "s" : "", rep + 1,
		opt.reps,
		duration_text(per * (double)(total - done), left,
			      sizeof(left)));
}

/* Run every point, with a progress line if asked for. */
static void sweep(void)
{
	long total = 0, done = 0, ran = 0;
	double start = now();

	for (int w = 0; w < opt.nwl; w++)
		for (int i = 0; i < opt.nim; i++)
			for (long t = 0; t < opt.nthreads; t++)
				if (impl_has(opt.im[i], opt.wl[w]) &&
				    runs_at(opt.im[i], opt.threads[t]) &&
				    impl_na[opt.im[i]] == NULL)
					total += opt.reps;
	for (int w = 0; w < opt.nwl; w++) {
		for (int i = 0; i < opt.nim; i++) {
			int im = opt.im[i];

			for (long t = 0; t < opt.nthreads; t++) {
				struct cell *c = cell_at(w, i, t);

				if (!impl_has(im, opt.wl[w]) ||
				    !runs_at(im, opt.threads[t]))
					continue;
				c->rate = calloc((size_t)opt.reps,
						 sizeof(double));
				for (int r = 0; r < opt.reps; r++) {
					long cm = 0, ab = 0;
					char *na = NULL;

					if (impl_na[im] != NULL) {
						c->na = impl_na[im];
						continue;
					}
					if (opt.progress)
						show_progress(done, total, ran,
							      now() - start, w,
							      im, t, r);
					done++;
					if (run_point(opt.wl[w], im,
						      opt.threads[t], r,
						      &c->rate[c->nrates], &cm,
						      &ab, &na) == 3) {
						impl_na[im] = c->na = na;
						continue;
					}
					ran++;
					c->nrates++;
					c->commits += cm;
					c->aborts += ab;
				}
			}
		}
	}
	if (opt.progress)
		fprintf(stderr, "\r\033[K");
	fprintf(stderr, "ltxbench: %ld runs, each one's invariant checked\n",
		checked_runs);
}

/*
 * Say on standard error what was asked for but could not run: an
 * implementation that is unavailable here, or a workload that an
 * implementation does not have.
 */
static void report_not_run(void)
{
	for (int i = 0; i < opt.nim; i++) {
		int im = opt.im[i];
		char missing[512] = "";

		if (impl_na[im] != NULL) {
			fprintf(stderr, "ltxbench: not run: %s: %s\n",
				impls[im].name, impl_na[im]);
			continue;
		}
		for (int w = 0; w < opt.nwl; w++) {
			size_t l = strlen(missing);

			if (!impl_has(im, opt.wl[w]))
				snprintf(missing + l, sizeof(missing) - l,
					 "%s%s", l ? ", " : "",
					 WORKLOADS[opt.wl[w]]->name);
		}
		/* The default sweep asks every implementation for every
		 * workload; only a named one's gaps are worth a line. */
		if (missing[0] != '\0' && opt.impls_named) {
			fprintf(stderr,
				"ltxbench: not run: %s does not "
				"implement %s (only",
				impls[im].name, missing);
			for (int k = 0; impls[im].workloads != NULL &&
					impls[im].workloads[k] != NULL;
			     k++)
				fprintf(stderr, "%s %s", k ? "," : "",
					impls[im].workloads[k]->name);
			fprintf(stderr, ")\n");
		}
	}
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(struct cell *c)
{
	qsort(c->rate, (size_t)c->nrates, sizeof(double), cmp_double);
	if (c->nrates % 2)
		return c->rate[c->nrates / 2];
	return (c->rate[c->nrates / 2 - 1] + c->rate[c->nrates / 2]) / 2;
}

/* The baseline's median at this point (or at 1 thread), or 0. */
static double baseline_rate(int w, long t)
{
	int b = -1;

	for (int i = 0; i < opt.nim; i++)
		if (opt.im[i] == opt.baseline)
			b = i;
	if (b < 0)
		return 0;
	if (cell_at(w, b, t)->nrates > 0)
		return median(cell_at(w, b, t));
	for (long u = 0; u < opt.nthreads; u++)
		if (opt.threads[u] == 1 && cell_at(w, b, u)->nrates > 0)
			return median(cell_at(w, b, u));
	return 0;
}

static void human(double v, char *buf, size_t len)
{
	if (v >= 1e9)
		snprintf(buf, len, "%.3gG", v / 1e9);
	else if (v >= 1e6)
		snprintf(buf, len, "%.3gM", v / 1e6);
	else if (v >= 1e3)
		snprintf(buf, len, "%.3gk", v / 1e3);
	else
		snprintf(buf, len, "%.3g", v);
}

struct row {
	const char *wl, *im, *na;
	long threads;
	int nrates;
	double med, min, max, abort_pct, ratio; /* < 0: none */
};

static bool get_row(int w, int i, long t, struct row *r)
{
	struct cell *c = cell_at(w, i, t);
	double base;

	if (c->nrates == 0 && c->na == NULL)
		return false;
	r->wl = WORKLOADS[opt.wl[w]]->name;
	r->im = impls[opt.im[i]].name;
	r->threads = opt.threads[t];
	r->na = c->na;
	r->nrates = c->nrates;
	r->med = r->min = r->max = r->abort_pct = r->ratio = -1;
	if (c->nrates == 0)
		return true;
	r->med = median(c);
	r->min = c->rate[0];
	r->max = c->rate[c->nrates - 1];
	if (impls[opt.im[i]].counts_aborts && c->commits + c->aborts > 0)
		r->abort_pct = 100.0 * (double)c->aborts /
			       (double)(c->commits + c->aborts);
	base = baseline_rate(w, t);
	if (base > 0)
		r->ratio = r->med / base;
	return true;
}

static void machine_line(FILE *f, const char *prefix)
{
	char model[192];

	cpu_model(model, sizeof(model));
	fprintf(f, "%s%ld CPUs (%s), load average %s before, %s after\n",
		prefix, sysconf(_SC_NPROCESSORS_ONLN), model, opt.load_start,
		opt.load_end);
}

static void print_table(void)
{
	const char *bname = impls[opt.baseline].name;
	char vs[64];

	printf("# ltxbench: %.3g s runs, median of %d, ratio vs %s\n",
	       opt.duration, opt.reps, bname);
	machine_line(stdout, "# ");
	snprintf(vs, sizeof(vs), "vs %s", bname);
	printf("%-15s %-14s %7s %10s %7s %10s\n", "workload", "impl", "threads",
	       "ops/s", "abort%", vs);
	for (int w = 0; w < opt.nwl; w++)
		for (int i = 0; i < opt.nim; i++)
			for (long t = 0; t < opt.nthreads; t++) {
				struct row r;
				char ops[32], ab[32], ra[32];

				if (!get_row(w, i, t, &r))
					continue;
				if (r.na != NULL) {
					printf("%-15s %-14s %7ld %10s %7s "
					       "%10s  (%s)\n",
					       r.wl, r.im, r.threads, "n/a",
					       "-", "-", r.na);
					continue;
				}
				human(r.med, ops, sizeof(ops));
				snprintf(ab, sizeof(ab), "-");
				if (r.abort_pct >= 0)
					snprintf(ab, sizeof(ab), "%.1f",
						 r.abort_pct);
				snprintf(ra, sizeof(ra), "-");
				if (r.ratio >= 0)
					snprintf(ra, sizeof(ra), "%.2fx",
						 r.ratio);
				printf("%-15s %-14s %7ld %10s %7s %10s\n", r.wl,
				       r.im, r.threads, ops, ab, ra);
			}
}

/*
 * One row per workload and thread count, one column per implementation
 * that ran; those that could not run are listed under the table.
 */
static void print_markdown(void)
{
	const char *bname = impls[opt.baseline].name;
	bool shown[NIMPLS] = { false }, any_na = false;

	printf("Command: `%s`  \n", opt.cmdline);
	machine_line(stdout, "Machine: ");
	printf("\nMedian operations per second of %d runs of %g s each, and "
	       "in parentheses the ratio to %s at the same thread count.\n\n",
	       opt.reps, opt.duration, bname);
	printf("| workload | threads |");
	for (int i = 0; i < opt.nim; i++) {
		for (int w = 0; w < opt.nwl; w++)
			for (long t = 0; t < opt.nthreads; t++)
				shown[i] |= cell_at(w, i, t)->nrates > 0;
		if (shown[i])
			printf(" %s |", impls[opt.im[i]].name);
	}
	printf("\n|---|--:|");
	for (int i = 0; i < opt.nim; i++)
		if (shown[i])
			printf("--:|");
	printf("\n");
	for (int w = 0; w < opt.nwl; w++)
		for (long t = 0; t < opt.nthreads; t++) {
			printf("| %s | %ld |", WORKLOADS[opt.wl[w]]->name,
			       opt.threads[t]);
			for (int i = 0; i < opt.nim; i++) {
				struct row r;
				char ops[32];

				if (!shown[i])
					continue;
				if (!get_row(w, i, t, &r) || r.na != NULL) {
					printf(" |");
					continue;
				}
				human(r.med, ops, sizeof(ops));
				if (r.ratio >= 0)
					printf(" %s (%.2fx) |", ops, r.ratio);
				else
					printf(" %s |", ops);
			}
			printf("\n");
		}
	for (int i = 0; i < opt.nim; i++)
		for (int w = 0; w < opt.nwl && !shown[i]; w++)
			for (long t = 0; t < opt.nthreads; t++)
				if (cell_at(w, i, t)->na != NULL) {
					printf("%s%s: n/a (%s)",
					       any_na ? "; "
						      : "\nNot measured: ",
					       impls[opt.im[i]].name,
					       cell_at(w, i, t)->na);
					any_na = true;
					w = opt.nwl;
					break;
				}
	if (any_na)
		printf(".\n");
}

/* A CSV field in double quotes, its quotes doubled (RFC 4180). */
static void csv_string(const char *prefix, const char *s, const char *suffix)
{
	printf("\"%s", prefix);
	for (; *s; s++) {
		if (*s == '"')
			putchar('"');
		putchar(*s);
	}
	printf("%s\"", suffix);
}

/*
 * One row per figure; every row ends with the machine (CPUs online and
 * the CPU's model, as the table's header says them), so that rows
 * gathered from several machines stay told apart.
 */
static void print_csv(void)
{
	char model[192];
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);

	cpu_model(model, sizeof(model));
	printf("workload,impl,threads,reps,ops_per_s_median,ops_per_s_min,"
	       "ops_per_s_max,abort_pct,ratio_vs_%s,note,cpus,cpu\n",
	       impls[opt.baseline].name);
	for (int w = 0; w < opt.nwl; w++)
		for (int i = 0; i < opt.nim; i++)
			for (long t = 0; t < opt.nthreads; t++) {
				struct row r;

				if (!get_row(w, i, t, &r))
					continue;
				printf("%s,%s,%ld,%d,", r.wl, r.im, r.threads,
				       r.nrates);
				if (r.na != NULL) {
					printf(",,,,,");
					csv_string("n/a (", r.na, ")");
				} else {
					printf("%.0f,%.0f,%.0f,", r.med, r.min,
					       r.max);
					if (r.abort_pct >= 0)
						printf("%.3f", r.abort_pct);
					putchar(',');
					if (r.ratio >= 0)
						printf("%.4f", r.ratio);
					putchar(',');
				}
				printf(",%ld,", cpus);
				csv_string("", model, "");
				putchar('\n');
			}
}

static void json_string(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			printf("\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			printf("\\u%04x", *s);
		else
			putchar(*s);
	}
	putchar('"');
}

static void print_json(void)
{
	struct cpu_info cpu;
	bool first = true;

	cpu_info(&cpu);
	printf("{\n  \"version\": ");
	json_string(LTXBENCH_VERSION);
	printf(",\n  \"command\": ");
	json_string(opt.cmdline);
	printf(",\n  \"machine\": {\"cpus\": %ld, \"model\": ",
	       sysconf(_SC_NPROCESSORS_ONLN));
	json_string(cpu.name);
	if (cpu.family >= 0 && cpu.model >= 0)
		printf(", \"family\": %d, \"model_number\": %d", cpu.family,
		       cpu.model);
	if (cpu.rtm >= 0)
		printf(", \"rtm\": %s", cpu.rtm ? "true" : "false");
	printf(", \"loadavg_before\": ");
	json_string(opt.load_start);
	printf(", \"loadavg_after\": ");
	json_string(opt.load_end);
	printf("},\n  \"duration_s\": %g, \"reps\": %d, \"baseline\": ",
	       opt.duration, opt.reps);
	json_string(impls[opt.baseline].name);
	printf(",\n  \"results\": [");
	for (int w = 0; w < opt.nwl; w++)
		for (int i = 0; i < opt.nim; i++)
			for (long t = 0; t < opt.nthreads; t++) {
				struct row r;

				if (!get_row(w, i, t, &r))
					continue;
				printf("%s\n    {\"workload\": \"%s\", "
				       "\"impl\": \"%s\", \"threads\": %ld, "
				       "\"reps\": %d, ",
				       first ? "" : ",", r.wl, r.im, r.threads,
				       r.nrates);
				first = false;
				if (r.na != NULL) {
					printf("\"na\": ");
					json_string(r.na);
					printf("}");
					continue;
				}
				printf("\"ops_per_s\": %.0f, \"ops_per_s_min\":"
				       " %.0f, \"ops_per_s_max\": %.0f, "
				       "\"abort_pct\": ",
				       r.med, r.min, r.max);
				if (r.abort_pct >= 0)
					printf("%.3f", r.abort_pct);
				else
					printf("null");
				printf(", \"ratio\": ");
				if (r.ratio >= 0)
					printf("%.4f}", r.ratio);
				else
					printf("null}");
			}
	printf("\n  ]\n}\n");
}

static bool gnuplot_found(void)
{
	const char *path = getenv("PATH");
	char *copy, *save = NULL;
	bool found = false;

	if (path == NULL)
		return false;
	copy = strdup(path);
	for (char *d = strtok_r(copy, ":", &save); d != NULL && !found;
	     d = strtok_r(NULL, ":", &save)) {
		char f[PATH_MAX];

		snprintf(f, sizeof(f), "%s/gnuplot", d);
		found = executable(f);
	}
	free(copy);
	return found;
}

/*
 * How each implementation is drawn, the same in every panel: a dark colour
 * (readable on white), a marker and a dash pattern.  seq runs at one
 * thread only, so it is drawn as a horizontal line at its figure.
 */
static const struct look {
	const char *color;
	int point, dash;
} looks[] = {
	{ "#000000", -1, 2 }, /* seq */
	{ "#0046ad", 7, 1 },  /* ltx-invisible */
	{ "#6a1b9a", 5, 1 },  /* ltx-visible */
	{ "#1565c0", 3, 6 },  /* ltx-inline */
	{ "#c62828", 9, 3 },  /* mutex */
	{ "#e65100", 11, 4 }, /* spin */
	{ "#2e7d32", 13, 5 }, /* lockfree */
	{ "#795548", 4, 2 },  /* libitm */
	{ "#546e7a", 6, 2 },  /* libitm-ml_wt */
	{ "#00838f", 8, 1 },  /* ltx-itm */
};
_Static_assert(sizeof(looks) / sizeof(looks[0]) == NIMPLS,
	       "one look per implementation");

static enum { PLOT_PNG, PLOT_SVG } plot_format;
static bool plot_created, plot_written;

/* A plot file this run created but never wrote is removed at exit. */
static void remove_unwritten_plot(void)
{
	if (plot_created && !plot_written)
		unlink(opt.plot);
}

/*
 * --plot FILE, before anything runs: the format comes from the extension
 * (.png or .svg; anything else is a usage error), and the file must be
 * writable now, not after minutes of runs.  The file is opened without
 * truncation, so an existing one keeps its content until the plot
 * replaces it.  Returns 0, or 1 after a message.
 */
static int check_plot_path(void)
{
	const char *dot = strrchr(opt.plot, '.');
	const char *slash = strrchr(opt.plot, '/');
	struct stat st;
	bool existed;
	int fd;

	if (dot == NULL || (slash != NULL && dot < slash))
		usage_error("--plot %s: name the file .png or .svg (the "
			    "format follows the extension)",
			    opt.plot);
	if (strcasecmp(dot, ".png") == 0)
		plot_format = PLOT_PNG;
	else if (strcasecmp(dot, ".svg") == 0)
		plot_format = PLOT_SVG;
	else
		usage_error("--plot %s: '%s' is not a format ltxbench writes; "
			    "name the file .png or .svg",
			    opt.plot, dot);
	existed = stat(opt.plot, &st) == 0;
	if (existed && S_ISDIR(st.st_mode)) {
		fprintf(stderr,
			"ltxbench: --plot %s: is a directory; nothing "
			"was run\n",
			opt.plot);
		return 1;
	}
	fd = open(opt.plot, O_WRONLY | O_CREAT | O_CLOEXEC, 0666);
	if (fd < 0) {
		fprintf(stderr,
			"ltxbench: --plot %s: cannot write it: %s; "
			"nothing was run\n",
			opt.plot, strerror(errno));
		return 1;
	}
	close(fd);
	if (!existed) {
		plot_created = true;
		atexit(remove_unwritten_plot);
	}
	return 0;
}

/* Write s as a gnuplot single-quoted string ('' stands for '). */
static void gp_string(FILE *g, const char *s)
{
	fputc('\'', g);
	for (; *s; s++) {
		if (*s == '\'')
			fputc('\'', g);
		fputc(*s, g);
	}
	fputc('\'', g);
}

static int cmp_long(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b;

	return (x > y) - (x < y);
}

/* "exited with status 3", "was killed by signal 9 (Killed)". */
static const char *describe_status(int status, char *buf, size_t len)
{
	if (status == -1)
		snprintf(buf, len, "could not be waited for: %s",
			 strerror(errno));
	else if (WIFEXITED(status))
		snprintf(buf, len, "exited with status %d",
			 WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		snprintf(buf, len, "was killed by signal %d (%s)",
			 WTERMSIG(status), strsignal(WTERMSIG(status)));
	else
		snprintf(buf, len, "stopped (wait status %#x)", status);
	return buf;
}

/*
 * Throughput against threads, one panel per workload and one more for the
 * legend, so that no key covers data.  Both axes are logarithmic; the x
 * ticks are the thread counts run, the y labels one format (1M, 10M...),
 * and each panel's y range spans its data, so single points and flat
 * lines draw without gnuplot's "empty range" warnings.
 */
static int plot(void)
{
	int cells = opt.nwl + 1;
	int cols = cells < 3 ? cells : 3;
	int rows = (cells + cols - 1) / cols;
	long th[BENCH_MAX_THREADS];
	bool drawn[NIMPLS] = { false };
	char why[128];
	struct stat st;
	FILE *g;
	int rc;

	memcpy(th, opt.threads, sizeof(long) * (size_t)opt.nthreads);
	qsort(th, (size_t)opt.nthreads, sizeof(long), cmp_long);
	/* gnuplot's standard output would get the image if it could not
	 * open the file: keep it off the terminal. */
	g = popen("exec gnuplot >/dev/null", "w");
	if (g == NULL) {
		fprintf(stderr, "ltxbench: cannot run gnuplot: %s\n",
			strerror(errno));
		return 1;
	}
	if (plot_format == PLOT_SVG)
		fprintf(g,
			"set terminal svg noenhanced size %d,%d "
			"font 'sans,11' background '#ffffff'\n",
			480 * cols, 360 * rows);
	else
		fprintf(g,
			"set terminal pngcairo noenhanced size %d,%d "
			"font 'sans,10'\n",
			480 * cols, 360 * rows);
	fprintf(g, "set output ");
	gp_string(g, opt.plot);
	fprintf(g, "\n");
	for (size_t k = 0; k < NIMPLS; k++)
		fprintf(g,
			"set style line %zu lc rgb '%s' lw 2 pt %d ps 1.3 "
			"dt %d\n",
			k + 1, looks[k].color, looks[k].point, looks[k].dash);
	for (int w = 0; w < opt.nwl; w++)
		for (int i = 0; i < opt.nim; i++) {
			fprintf(g, "$d%d_%d << EOD\n", w, i);
			for (long t = 0; t < opt.nthreads; t++) {
				struct row r;

				if (get_row(w, i, t, &r) && r.na == NULL)
					fprintf(g, "%ld %.0f\n", r.threads,
						r.med);
			}
			fprintf(g, "EOD\n");
		}
	fprintf(g, "set multiplot layout %d,%d title ", rows, cols);
	snprintf(why, sizeof(why),
		 "ltxbench: median of %d run%s of %g s per "
		 "point",
		 opt.reps, opt.reps > 1 ? "s" : "", opt.duration);
	gp_string(g, why);
	fprintf(g,
		"\nunset key\nset grid\nset logscale x 2\nset logscale y 10\n"
		"set xrange [%g:%g]\nset xtics (",
		(double)th[0] / 1.5, (double)th[opt.nthreads - 1] * 1.5);
	for (long t = 0; t < opt.nthreads; t++)
		if (t == 0 || th[t] != th[t - 1])
			fprintf(g, "%s%ld", t ? ", " : "", th[t]);
	fprintf(g, ")\nset format y '%%.0s%%c'\nset xlabel 'threads'\n"
		   "set ylabel 'operations per second'\n");
	for (int w = 0; w < opt.nwl; w++) {
		const char *sep = "plot ";
		double lo = 0, hi = 0;

		for (int i = 0; i < opt.nim; i++)
			for (long t = 0; t < opt.nthreads; t++) {
				struct row r;

				if (!get_row(w, i, t, &r) || r.na != NULL ||
				    r.med <= 0)
					continue;
				lo = lo > 0 && lo < r.med ? lo : r.med;
				hi = hi > r.med ? hi : r.med;
			}
		fprintf(g, "set title ");
		gp_string(g, WORKLOADS[opt.wl[w]]->name);
		fprintf(g, "\n");
		if (hi <= 0) {
			fprintf(g, "set yrange [1:1000]\nset label 1 'nothing "
				   "ran' at graph 0.5,0.5 center\n"
				   "plot 1e9 notitle\nunset label 1\n");
			continue;
		}
		fprintf(g, "set yrange [%g:%g]\n", lo / 3, hi * 3);
		for (int i = 0; i < opt.nim; i++) {
			int k = opt.im[i];
			bool any = false;
			double one = 0;

			for (long t = 0; t < opt.nthreads; t++) {
				struct cell *c = cell_at(w, i, t);

				any |= c->nrates > 0;
				if (c->nrates > 0 && opt.threads[t] == 1)
					one = median(c);
			}
			if (!any)
				continue;
			drawn[k] = true;
			if (impls[k].single_thread_only && one > 0)
				fprintf(g, "%s%.0f with lines ls %d notitle",
					sep, one, k + 1);
			else
				fprintf(g,
					"%s$d%d_%d using 1:2 with "
					"linespoints ls %d notitle",
					sep, w, i, k + 1);
			sep = ", ";
		}
		fprintf(g, "\n");
	}
	/* The legend's own panel: keys of data-free curves. */
	fprintf(g, "unset title\nunset xlabel\nunset ylabel\nunset grid\n"
		   "unset border\nunset tics\nunset logscale\n"
		   "set xrange [0:1]\nset yrange [0:1]\n"
		   "set key center center vertical Left reverse spacing 1.4 "
		   "samplen 4 font ',12'\n");
	{
		const char *sep = "plot ";

		for (size_t k = 0; k < NIMPLS; k++) {
			if (!drawn[k])
				continue;
			fprintf(g, "%s2 with %s ls %zu title '%s%s'", sep,
				impls[k].single_thread_only ? "lines"
							    : "linespoints",
				k + 1, impls[k].name,
				impls[k].single_thread_only ? " (1 thread)"
							    : "");
			sep = ", ";
		}
		if (*sep == 'p')
			fprintf(g, "set label 1 'nothing ran' at graph 0.5,0.5 "
				   "center\nplot 2 notitle");
		fprintf(g, "\n");
	}
	fprintf(g, "unset multiplot\n");
	rc = pclose(g);
	if (rc != 0) {
		fprintf(stderr,
			"ltxbench: the plot was not written: gnuplot "
			"%s\n",
			describe_status(rc, why, sizeof(why)));
		return 1;
	}
	if (stat(opt.plot, &st) != 0 || st.st_size == 0) {
		fprintf(stderr, "ltxbench: gnuplot wrote nothing to %s\n",
			opt.plot);
		return 1;
	}
	plot_written = true;
	fprintf(stderr, "ltxbench: plot written to %s\n", opt.plot);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "quick", no_argument, NULL, 'q' },
		{ "workloads", required_argument, NULL, 'w' },
		{ "impls", required_argument, NULL, 'i' },
		{ "threads", required_argument, NULL, 't' },
		{ "reps", required_argument, NULL, 'r' },
		{ "duration", required_argument, NULL, 'd' },
		{ "baseline", required_argument, NULL, 'b' },
		{ "list", no_argument, NULL, 'l' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ "size", required_argument, NULL, 'S' },
		{ "range", required_argument, NULL, 'R' },
		{ "update", required_argument, NULL, 'U' },
		{ "seed", required_argument, NULL, 's' },
		{ "csv", no_argument, NULL, 'C' },
		{ "json", no_argument, NULL, 'J' },
		{ "markdown", no_argument, NULL, 'M' },
		{ "plot", required_argument, NULL, 'P' },
		{ "gnutm", required_argument, NULL, 'G' },
		{ "libltx", required_argument, NULL, 'L' },
		{ "progress", no_argument, NULL, 'p' },
		{ "no-progress", no_argument, NULL, 'n' },
		{ NULL, 0, NULL, 0 },
	};
	const char *wls = NULL, *ims = NULL, *ths = "1,2,4,8";
	const char *base = "mutex";
	int reps = -1, c, outs = 0;
	double duration = -1;
	bool quick = false;
	char cmd[1024] = "ltxbench";
	char *end;

	opt.user.size = opt.user.range = opt.user.update = -1;
	opt.user.seed = 1;
	opt.progress = isatty(2);
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":qw:i:t:r:d:b:lhV", longopts,
				NULL)) != -1) {
		switch (c) {
		case 'q':
			quick = true;
			break;
		case 'w':
			wls = optarg;
			break;
		case 'i':
			ims = optarg;
			break;
		case 't':
			ths = optarg;
			break;
		case 'r':
			reps = (int)parse_long(optarg, 1, 1000, "repetitions");
			break;
		case 'd':
			duration = strtod(optarg, &end);
			if (*optarg == '\0' || *end != '\0' ||
			    !(duration > 0 && duration <= 3600))
				usage_error("bad duration '%s' (seconds, "
					    "more than 0, at most 3600)",
					    optarg);
			break;
		case 'b':
			base = optarg;
			break;
		case 'l':
			list();
			return 0;
		case 'h':
			usage(stdout, true);
			return 0;
		case 'V':
			printf("ltxbench %s\n", LTXBENCH_VERSION);
			return 0;
		case 'S':
			opt.user.size = parse_long(optarg, 0, 1L << 26, "size");
			break;
		case 'R':
			opt.user.range =
				parse_long(optarg, 1, 1L << 40, "range");
			break;
		case 'U':
			opt.user.update =
				parse_long(optarg, 0, 100, "update percentage");
			break;
		case 's':
			opt.user.seed = (uint64_t)parse_long(optarg, 0,
							     LONG_MAX, "seed");
			break;
		case 'C':
			opt.out = OUT_CSV;
			outs++;
			break;
		case 'J':
			opt.out = OUT_JSON;
			outs++;
			break;
		case 'M':
			opt.out = OUT_MARKDOWN;
			outs++;
			break;
		case 'P':
			opt.plot = optarg;
			break;
		case 'G':
			opt.gnutm = optarg;
			break;
		case 'L':
			opt.libltx = optarg;
			break;
		case 'p':
			opt.progress = 1;
			break;
		case 'n':
			opt.progress = 0;
			break;
		case ':':
			usage_error("option '%s' needs a value",
				    argv[optind - 1]);
		default:
			usage_error("unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc)
		usage_error("unexpected argument '%s'", argv[optind]);
	if (outs > 1)
		usage_error("choose one of --csv, --json and --markdown");
	opt.reps = reps > 0 ? reps : quick ? 3 : 5;
	opt.duration = duration > 0 ? duration : quick ? 0.08 : 1.0;
	if (wls != NULL)
		parse_list(wls, add_workload);
	else
		for (int w = 0; WORKLOADS[w] != NULL; w++)
			opt.wl[opt.nwl++] = w;
	opt.impls_named = ims != NULL;
	if (ims != NULL)
		parse_list(ims, add_impl);
	else
		for (size_t i = 0; i < NIMPLS; i++)
			opt.im[opt.nim++] = (int)i;
	parse_list(ths, add_threads);
	if (opt.nwl == 0 || opt.nim == 0 || opt.nthreads == 0)
		usage_error("empty workload, implementation or thread list");
	opt.baseline = find_impl(base);
	if (opt.baseline < 0)
		usage_error("unknown baseline '%s' (see ltxbench -l)", base);
	for (int w = 0; w < opt.nwl; w++) {
		const struct bench_workload *wl = WORKLOADS[opt.wl[w]];
		struct bench_params p = params_for(wl);

		if (strncmp(wl->name, "intset-", 7) == 0 && p.range < p.size)
			usage_error("%s: the key range (%ld) is smaller than "
				    "the size (%ld)",
				    wl->name, p.range, p.size);
	}
	if (opt.plot != NULL && !gnuplot_found()) {
		fprintf(stderr,
			"ltxbench: --plot needs gnuplot, which is not "
			"in PATH (install gnuplot or gnuplot-nox); nothing was "
			"run\n");
		return 1;
	}
	if (opt.plot != NULL && check_plot_path() != 0)
		return 1;
	check_external();
	for (int k = 1; k < argc; k++) {
		size_t l = strlen(cmd);

		snprintf(cmd + l, sizeof(cmd) - l, " %s", argv[k]);
	}
	opt.cmdline = cmd;
	cells = calloc((size_t)opt.nwl * (size_t)opt.nim * (size_t)opt.nthreads,
		       sizeof(*cells));
	read_loadavg(opt.load_start, sizeof(opt.load_start));
	sweep();
	read_loadavg(opt.load_end, sizeof(opt.load_end));
	switch (opt.out) {
	case OUT_TABLE:
		print_table();
		break;
	case OUT_CSV:
		print_csv();
		break;
	case OUT_JSON:
		print_json();
		break;
	case OUT_MARKDOWN:
		print_markdown();
		break;
	}
	fflush(stdout);
	report_not_run();
	if (checked_runs == 0) {
		fprintf(stderr, "ltxbench: nothing ran%s\n",
			opt.plot != NULL ? "; no plot written" : "");
		return 1;
	}
	if (opt.plot != NULL)
		return plot();
	return 0;
}
