/* SPDX-License-Identifier: MIT */
/* ltxstat: run a program with ltx statistics, or follow a running one. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "rt/statseg.h"

/* Exit statuses (ltxstat(1), EXIT STATUS). */
enum {
	EX_USAGE_ = 2,	   /* bad command line */
	EX_NOPROC = 3,	   /* no such process */
	EX_NOSEG = 4,	   /* the process publishes no ltx statistics */
	EX_BADSEG = 5,	   /* segment of another version, corrupt, truncated */
	EX_NOACCESS = 6,   /* the segment cannot be read (permission) */
	EX_INTERNAL = 7,   /* out of memory, fork failed... */
	EX_NOEXEC = 126,   /* PROG exists but cannot be executed */
	EX_NOTFOUND = 127, /* PROG not found */
};

static const char *out_file;
static bool json;
static FILE *out;

static void usage(void)
{
	fprintf(stderr,
		"usage: ltxstat [-o FILE] [--json] [--lib LIBLTX] -- PROG "
		"[ARGS...]\n"
		"       ltxstat [-o FILE] [--json] -p PID [INTERVAL [COUNT]]\n");
	exit(EX_USAGE_);
}

static void die(int status, const char *fmt, ...)
	__attribute__((format(printf, 2, 3), noreturn));

static void die(int status, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "ltxstat: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(status);
}

/* A stable copy of the segment of pid; returns 0 or an exit status. */
static int read_segment(long pid, void **copy, size_t *len,
			struct ltx_statseg_view *v, bool quiet)
{
	char name[64];
	struct stat st;
	void *map, *buf;
	int fd, err = LTX_STATSEG_EBUSY;

	snprintf(name, sizeof(name), "/ltx.%ld", pid);
	fd = shm_open(name, O_RDONLY, 0);
	if (fd < 0) {
		if (quiet)
			return EX_NOSEG;
		if (errno == EACCES)
			die(EX_NOACCESS, "cannot read /dev/shm%s: %s", name,
			    strerror(errno));
		die(EX_NOSEG, "process %ld publishes no ltx statistics (no "
			      "/dev/shm%s: not using ltx, or LTX_STATS unset)",
		    pid, name);
	}
	if (fstat(fd, &st) != 0 || st.st_size <= 0) {
		close(fd);
		die(EX_BADSEG, "/dev/shm%s: truncated segment (empty)", name);
	}
	*len = (size_t)st.st_size;
	map = mmap(NULL, *len, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	if (map == MAP_FAILED)
		die(EX_NOACCESS, "cannot map /dev/shm%s: %s", name,
		    strerror(errno));
	buf = aligned_alloc(8, (*len + 7) & ~(size_t)7);
	if (buf == NULL)
		die(EX_INTERNAL, "out of memory");
	/* Seqlock read (rt/statseg.h): retry while the writer is busy. */
	for (int tries = 0; tries < 1000 && err == LTX_STATSEG_EBUSY; tries++) {
		const volatile uint64_t *seq =
			*len >= 32 ? (const volatile uint64_t *)map + 3 : NULL;
		uint64_t s1 = seq ? __atomic_load_n(seq, __ATOMIC_ACQUIRE) : 0;

		memcpy(buf, map, *len);
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (seq && __atomic_load_n(seq, __ATOMIC_RELAXED) != s1) {
			usleep(1000);
			continue;
		}
		err = ltx_statseg_parse(buf, *len, v);
		if (err == LTX_STATSEG_EBUSY)
			usleep(1000);
	}
	munmap(map, *len);
	if (err == LTX_STATSEG_EVERSION && v->version != LTX_STATSEG_VERSION)
		die(EX_BADSEG, "/dev/shm%s: segment layout version %u, this "
			       "ltxstat reads version %u: use the ltxstat of "
			       "the ltx the program runs on",
		    name, v->version, LTX_STATSEG_VERSION);
	if (err == LTX_STATSEG_EVERSION)
		die(EX_BADSEG, "/dev/shm%s: segment version %u with another "
			       "list of counters (another build of ltx): use "
			       "the ltxstat of the ltx the program runs on",
		    name, v->version);
	if (err != LTX_STATSEG_OK)
		die(EX_BADSEG, "/dev/shm%s: %s", name,
		    ltx_statseg_strerror(err));
	*copy = buf;
	return 0;
}

/* addr2line: "function at file:line" of a frame, if debug info allows. */
static int resolve(void *ctx, const struct ltx_statseg_view *v,
		   const struct ltx_statseg_frame *f, char *buf, size_t len)
{
	int p[2];
	pid_t pid;
	char addr[32], res[1024] = "";
	ssize_t n, got = 0;
	char *nl, *fn, *src;

	(void)ctx;
	if (f->obj < 0 || f->pc == 0 || pipe(p) != 0)
		return 0;
	/* A return address: the call is the byte before. */
	snprintf(addr, sizeof(addr), "0x%" PRIx64, f->off - 1);
	pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		dup2(p[1], 1);
		if (null >= 0)
			dup2(null, 2);
		close(p[0]);
		execlp("addr2line", "addr2line", "-f", "-C", "-e",
		       v->objs[f->obj].path, addr, (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	while (pid > 0 && (n = read(p[0], res + got,
				    sizeof(res) - 1 - (size_t)got)) > 0)
		got += n;
	close(p[0]);
	if (pid > 0)
		waitpid(pid, NULL, 0);
	res[got] = '\0';
	fn = res;
	nl = strchr(fn, '\n');
	if (nl == NULL)
		return 0;
	*nl = '\0';
	src = nl + 1;
	if ((nl = strchr(src, '\n')) != NULL)
		*nl = '\0';
	if ((nl = strstr(src, " (discriminator")) != NULL)
		*nl = '\0';
	if (strcmp(fn, "??") == 0)
		return 0;
	if (strncmp(src, "??", 2) == 0)
		snprintf(buf, len, "%s", fn);
	else
		snprintf(buf, len, "%s at %s", fn,
			 strrchr(src, '/') ? strrchr(src, '/') + 1 : src);
	return 1;
}

static void report(const struct ltx_statseg_view *v)
{
	if (json)
		ltx_statseg_print_json(out, v, resolve, NULL);
	else
		ltx_statseg_print(out, v, resolve, NULL);
	fflush(out);
}

/* Remove segments left by processes that died without their exit handler
 * (killed), if they are ours. */
static void remove_stale(void)
{
	DIR *d = opendir("/dev/shm");
	struct dirent *e;

	if (d == NULL)
		return;
	while ((e = readdir(d)) != NULL) {
		char *end;
		long pid;
		struct stat st;
		char path[300];

		if (strncmp(e->d_name, "ltx.", 4) != 0)
			continue;
		pid = strtol(e->d_name + 4, &end, 10);
		if (*end != '\0' || pid <= 0)
			continue;
		snprintf(path, sizeof(path), "/dev/shm/%s", e->d_name);
		if (stat(path, &st) == 0 && st.st_uid == getuid() &&
		    kill((pid_t)pid, 0) != 0 && errno == ESRCH) {
			char name[300];

			snprintf(name, sizeof(name), "/%s", e->d_name);
			shm_unlink(name);
		}
	}
	closedir(d);
}

static const char *find_lib(const char *opt)
{
	const char *env = getenv("LTX_LIB");

	if (opt != NULL)
		return opt;
	if (env != NULL && env[0] != '\0')
		return env;
	return LTX_LIBDIR "/libltx.so.0";
}

static int run(char **argv, const char *lib)
{
	int p[2], err = 0, status;
	pid_t pid;
	ssize_t n;
	void *seg;
	size_t len;
	struct ltx_statseg_view v;
	const char *old = getenv("LD_PRELOAD");
	char *preload = NULL;

	if (pipe2(p, O_CLOEXEC) != 0)
		die(EX_INTERNAL, "pipe: %s", strerror(errno));
	if (access(lib, R_OK) == 0) {
		if (asprintf(&preload, "%s%s%s", lib, old ? ":" : "",
			     old ? old : "") < 0)
			die(EX_INTERNAL, "out of memory");
	}
	remove_stale();
	pid = fork();
	if (pid < 0)
		die(EX_INTERNAL, "fork: %s", strerror(errno));
	if (pid == 0) {
		char keep[32];

		snprintf(keep, sizeof(keep), "%ld", (long)getpid());
		setenv("LTX_STATS_KEEP", keep, 1);
		if (getenv("LTX_STATS") == NULL ||
		    strcmp(getenv("LTX_STATS"), "0") == 0)
			setenv("LTX_STATS", "1", 1);
		if (preload != NULL)
			setenv("LD_PRELOAD", preload, 1);
		execvp(argv[0], argv);
		err = errno;
		if (write(p[1], &err, sizeof(err)) < 0)
			_exit(EX_INTERNAL);
		_exit(err == ENOENT ? EX_NOTFOUND : EX_NOEXEC);
	}
	close(p[1]);
	/* Like time(1): ^C and ^\ go to the program; we report after it. */
	signal(SIGINT, SIG_IGN);
	signal(SIGQUIT, SIG_IGN);
	n = read(p[0], &err, sizeof(err));
	close(p[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (n == (ssize_t)sizeof(err))
		die(err == ENOENT ? EX_NOTFOUND : EX_NOEXEC,
		    "cannot execute %s: %s", argv[0], strerror(err));
	if (read_segment(pid, &seg, &len, &v, true) != 0) {
		fprintf(stderr, "ltxstat: %s published no ltx statistics (not "
				"using ltx?)\n",
			argv[0]);
		if (WIFEXITED(status) && WEXITSTATUS(status) != 0)
			return WEXITSTATUS(status);
		if (WIFSIGNALED(status))
			return 128 + WTERMSIG(status);
		return EX_NOSEG;
	}
	report(&v);
	if (!(v.h->flags & LTX_STATSEG_FINAL))
		fprintf(out, "  (the program did not exit normally: figures "
			     "of its last refresh)\n");
	{
		char name[64];

		snprintf(name, sizeof(name), "/ltx.%ld", (long)pid);
		shm_unlink(name);
	}
	free(seg);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}

static uint64_t d(uint64_t now, uint64_t before)
{
	return now >= before ? now - before : 0;
}

/* The abort rows in the interval line's four groups, which add up to the
 * aborts: conflicts (every kind), capacity (with no memory), explicit,
 * and the rest (signals, faults, other, not classified). */
static void abort_groups(const struct ltx_stats *c, uint64_t g[4])
{
	const uint64_t *r = c->aborts_by;

	g[0] = r[LTX_ABORT_CONFLICT_LT] + r[LTX_ABORT_CONFLICT_ST] +
	       r[LTX_ABORT_UPGRADE] + r[LTX_ABORT_VALIDATE] +
	       r[LTX_ABORT_COMMIT] + r[LTX_ABORT_DOOMED];
	g[1] = r[LTX_ABORT_CAPACITY] + r[LTX_ABORT_NOMEM];
	g[2] = r[LTX_ABORT_EXPLICIT];
	g[3] = r[LTX_ABORT_SIGNAL] + r[LTX_ABORT_FAULT] + r[LTX_ABORT_OTHER] +
	       ltx_statseg_unclassified(c);
}

/* One vmstat-style line of per-second rates between two samples. */
static void interval_line(const struct ltx_statseg_view *a,
			  const struct ltx_statseg_view *b, int n)
{
	const struct ltx_stats *x = a->c, *y = b->c;
	double secs = (double)d(b->h->update_ns, a->h->update_ns) / 1e9;
	uint64_t ro = d(y->commits_ro, x->commits_ro);
	uint64_t rw = d(y->commits_rw, x->commits_rw);
	uint64_t ab = d(y->aborts, x->aborts);
	uint64_t bo = d(y->backoff_cycles, x->backoff_cycles);
	double hz = b->h->tsc_hz ? (double)b->h->tsc_hz : 1e9;
	uint64_t gx[4], gy[4], g[4];

	abort_groups(x, gx);
	abort_groups(y, gy);
	for (int i = 0; i < 4; i++)
		g[i] = d(gy[i], gx[i]);
	if (secs <= 0)
		secs = 1e-9;
	if (json) {
		fprintf(out,
			"{\"pid\":%" PRId64 ",\"interval_s\":%.3f,"
			"\"commits\":%" PRIu64 ",\"commits_ro\":%" PRIu64
			",\"commits_rw\":%" PRIu64 ",\"aborts\":%" PRIu64
			",\"conflict\":%" PRIu64 ",\"capacity\":%" PRIu64
			",\"explicit\":%" PRIu64 ",\"other\":%" PRIu64
			",\"backoff_s\":%.6f,\"threads\":%" PRIu64 "}\n",
			b->h->pid, secs, ro + rw, ro, rw, ab, g[0], g[1], g[2],
			g[3], (double)bo / hz, y->threads);
		fflush(out);
		return;
	}
	if (n % 20 == 0)
		fprintf(out, "%11s %11s %11s %10s %6s %10s %9s %9s %9s "
			     "%10s %7s\n",
			"commits/s", "ro/s", "rw/s", "aborts/s", "abort%",
			"conflict/s", "capac/s", "explic/s", "other/s",
			"backoff%", "threads");
	fprintf(out, "%11.0f %11.0f %11.0f %10.0f %6.1f %10.0f %9.0f %9.0f "
		     "%9.0f %10.1f %7" PRIu64 "\n",
		(double)(ro + rw) / secs, (double)ro / secs, (double)rw / secs,
		(double)ab / secs,
		ro + rw + ab ? 100.0 * (double)ab / (double)(ro + rw + ab) : 0,
		(double)g[0] / secs, (double)g[1] / secs, (double)g[2] / secs,
		(double)g[3] / secs,
		y->threads ? 100.0 * (double)bo / hz /
				     (secs * (double)y->threads)
			   : 0.0,
		y->threads);
	fflush(out);
}

static long parse_long(const char *s, long lo, long hi, const char *what)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end != '\0' || v < lo || v > hi) {
		fprintf(stderr, "ltxstat: bad %s '%s' (an integer from %ld to "
				"%ld)\n",
			what, s, lo, hi);
		exit(EX_USAGE_);
	}
	return v;
}

static int follow(long pid, long interval, long count)
{
	struct ltx_statseg_view a, b;
	void *sa, *sb;
	size_t la, lb;

	if (kill((pid_t)pid, 0) != 0 && errno == ESRCH)
		die(EX_NOPROC, "no process %ld", pid);
	read_segment(pid, &sa, &la, &a, false);
	if (interval == 0) {
		report(&a);
		free(sa);
		return 0;
	}
	for (long n = 0; count == 0 || n < count; n++) {
		sleep((unsigned)interval);
		if (kill((pid_t)pid, 0) != 0 && errno == ESRCH) {
			fprintf(stderr, "ltxstat: process %ld exited\n", pid);
			break;
		}
		if (read_segment(pid, &sb, &lb, &b, true) != 0) {
			fprintf(stderr, "ltxstat: process %ld exited\n", pid);
			break;
		}
		interval_line(&a, &b, (int)n);
		free(sa);
		sa = sb;
		a = b;
	}
	free(sa);
	return 0;
}

int main(int argc, char **argv)
{
	const char *lib = NULL;
	long pid = 0, interval = 0, count = 0;
	int i;

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0) {
			i++;
			break;
		} else if (strcmp(argv[i], "-o") == 0 && i + 1 < argc) {
			out_file = argv[++i];
		} else if (strcmp(argv[i], "--json") == 0) {
			json = true;
		} else if (strcmp(argv[i], "--lib") == 0 && i + 1 < argc) {
			lib = argv[++i];
		} else if (strcmp(argv[i], "-p") == 0 && i + 1 < argc) {
			pid = parse_long(argv[++i], 1, 0x7fffffff, "PID");
		} else if (strcmp(argv[i], "-h") == 0 ||
			   strcmp(argv[i], "--help") == 0) {
			usage();
		} else if (argv[i][0] == '-') {
			fprintf(stderr, "ltxstat: unknown option '%s'\n",
				argv[i]);
			usage();
		} else {
			break;
		}
	}
	if (pid != 0) {
		if (i < argc)
			interval = parse_long(argv[i++], 1, 86400, "INTERVAL");
		if (i < argc)
			count = parse_long(argv[i++], 1, 1000000000, "COUNT");
		if (i < argc)
			usage();
	} else if (i >= argc) {
		usage();
	}
	out = pid != 0 ? stdout : stderr;
	if (out_file != NULL && (out = fopen(out_file, "w")) == NULL)
		die(EX_USAGE_, "cannot write %s: %s", out_file,
		    strerror(errno));
	if (pid != 0)
		return follow(pid, interval, count);
	return run(argv + i, find_lib(lib));
}
