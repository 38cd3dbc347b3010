/* SPDX-License-Identifier: MIT */
/* ltxstat: run a program with ltx statistics, or follow a running one. */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "rt/statseg.h"

/* Exit statuses (ltxstat(1), EXIT STATUS): one per kind of failure. */
enum {
	EX_USAGE_ = 2,	   /* bad command line, LTX_STATS or library */
	EX_NOPROC = 3,	   /* no such process */
	EX_NOSEG = 4,	   /* no ltx statistics (or no transaction) */
	EX_VERSION = 5,	   /* a segment of another version or build of ltx */
	EX_NOACCESS = 6,   /* permission denied (segment, /proc/PID/maps) */
	EX_INTERNAL = 7,   /* out of memory, fork failed... */
	EX_NOTREG = 8,	   /* not a regular file (directory, FIFO, link...) */
	EX_TOOBIG = 9,	   /* larger than any segment (a huge file) */
	EX_CORRUPT = 10,   /* not a segment, or corrupt or truncated */
	EX_NOTOWN = 11,	   /* not the process's own: owner, inode or pid */
	EX_NOEXEC = 126,   /* PROG exists but cannot be executed */
	EX_NOTFOUND = 127, /* PROG not found */
};

#ifndef LTXSTAT_VERSION
#define LTXSTAT_VERSION "unknown"
#endif

static bool json;
static FILE *out;

static const char usage_text[] =
	"usage: ltxstat [-o FILE] [--json] [--lib LIBLTX] [--] PROG [ARGS...]\n"
	"       ltxstat [-o FILE] [--json] -p PID [INTERVAL [COUNT]]\n"
	"       ltxstat [-o FILE] [--json] -f SEGMENT\n"
	"       ltxstat --help | --version\n";

static void help(void)
{
	printf("%s\n"
	       "Transaction statistics of a program using ltx: run PROG with\n"
	       "statistics on and print a summary when it exits; or follow\n"
	       "the running process PID (one line of rates every INTERVAL\n"
	       "seconds); or print the summary a segment file holds.\n\n"
	       "  -o FILE        write the report to FILE\n"
	       "  --json         one JSON object per report\n"
	       "  --lib LIBLTX   the library to preload (default: $LTX_LIB,\n"
	       "                 else the installed libltx.so.0)\n"
	       "  -p PID         follow process PID\n"
	       "  -f SEGMENT     read a statistics segment file\n"
	       "  --help         this text;  --version  the version\n\n"
	       "See ltxstat(1) for the figures and the exit statuses.\n",
	       usage_text);
	exit(0);
}

static void usage_error(const char *fmt, ...)
	__attribute__((format(printf, 1, 2), noreturn));

static void usage_error(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "ltxstat: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry 'ltxstat --help' for more information.\n");
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

/* ---- reading a segment ---- */

struct segment {
	int fd;
	char path[160];
	void *buf; /* a stable, checked copy, 8-byte aligned */
	size_t len;
	struct ltx_statseg_view v;
};

/* The exit status and a phrase for a segment that cannot be used. */
static void refuse(const struct segment *s, int err)
{
	switch (err) {
	case LTX_STATSEG_EVERSION:
		if (s->v.version != LTX_STATSEG_VERSION)
			die(EX_VERSION,
			    "%s: segment layout version %u; this ltxstat "
			    "reads version %u: use the ltxstat of the ltx the "
			    "program runs on",
			    s->path, s->v.version, LTX_STATSEG_VERSION);
		die(EX_VERSION,
		    "%s: segment version %u with another list of "
		    "counters (another build of ltx): use the "
		    "ltxstat of the ltx the program runs on",
		    s->path, s->v.version);
	case LTX_STATSEG_ENOTREG:
		die(EX_NOTREG, "%s: not a regular file: refused", s->path);
	case LTX_STATSEG_ETOOBIG:
		die(EX_TOOBIG,
		    "%s: larger than any statistics segment (%u "
		    "bytes at most): refused",
		    s->path, LTX_STATSEG_SIZE_MAX);
	case LTX_STATSEG_EOWNER:
	case LTX_STATSEG_EINODE:
	case LTX_STATSEG_EPID:
		die(EX_NOTOWN,
		    "%s: %s: refused (planted by someone else, or "
		    "left by another process)",
		    s->path, ltx_statseg_strerror(err));
	default:
		die(EX_CORRUPT, "%s: %s", s->path, ltx_statseg_strerror(err));
	}
}

/*
 * Open path as a segment and check it as e asks (e may be NULL), before
 * reading a byte of it: non-blocking, so that a FIFO cannot hang us, and
 * never through a symbolic link.  Dies with the exit status of what is
 * wrong.
 */
static void seg_open(struct segment *s, const char *path,
		     const struct ltx_statseg_expect *e, int absent_status)
{
	struct ltx_statseg_header h;
	struct stat st;
	ssize_t n;
	int err;

	memset(s, 0, sizeof(*s));
	snprintf(s->path, sizeof(s->path), "%s", path);
	s->fd = open(path,
		     O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (s->fd < 0) {
		if (errno == ENOENT)
			die(absent_status, "%s: %s", path, strerror(errno));
		if (errno == EACCES || errno == EPERM)
			die(EX_NOACCESS, "cannot read %s: %s", path,
			    strerror(errno));
		if (errno == ELOOP)
			die(EX_NOTREG, "%s: a symbolic link: refused", path);
		die(EX_NOTREG, "cannot open %s: %s", path, strerror(errno));
	}
	if (fstat(s->fd, &st) != 0)
		die(EX_INTERNAL, "%s: %s", path, strerror(errno));
	err = ltx_statseg_check_file(&st, e);
	if (err != LTX_STATSEG_OK)
		refuse(s, err);
	/* The size to read, from the header, capped: never st_size. */
	n = pread(s->fd, &h, sizeof(h), 0);
	if (n < 0)
		die(EX_NOACCESS, "cannot read %s: %s", path, strerror(errno));
	err = ltx_statseg_size(&h, (size_t)n, (uint64_t)st.st_size, &s->len);
	if (err == LTX_STATSEG_EVERSION)
		s->v.version = h.version;
	if (err != LTX_STATSEG_OK)
		refuse(s, err);
	s->buf = aligned_alloc(8, (s->len + 7) & ~(size_t)7);
	if (s->buf == NULL)
		die(EX_INTERNAL, "out of memory");
}

/*
 * A stable copy (the seqlock of rt/statseg.h: retry while the writer is
 * busy), parsed, and checked to be process pid's (pid 0: any).  Returns
 * LTX_STATSEG_OK or the error.
 */
static int seg_read(struct segment *s, long pid)
{
	int err = LTX_STATSEG_EBUSY;

	for (int tries = 0; tries < 1000 && err == LTX_STATSEG_EBUSY; tries++) {
		uint64_t s1, s2;
		const off_t at = offsetof(struct ltx_statseg_header, seq);

		if (pread(s->fd, &s1, sizeof(s1), at) != (ssize_t)sizeof(s1) ||
		    pread(s->fd, s->buf, s->len, 0) != (ssize_t)s->len ||
		    pread(s->fd, &s2, sizeof(s2), at) != (ssize_t)sizeof(s2))
			return LTX_STATSEG_ETRUNC;
		err = s1 == s2 ? ltx_statseg_parse(s->buf, s->len, &s->v)
			       : LTX_STATSEG_EBUSY;
		if (err == LTX_STATSEG_EBUSY)
			usleep(1000);
	}
	if (err == LTX_STATSEG_OK && pid != 0)
		err = ltx_statseg_check_pid(&s->v, pid);
	return err;
}

static void seg_close(struct segment *s)
{
	if (s->fd >= 0)
		close(s->fd);
	free(s->buf);
	s->fd = -1;
	s->buf = NULL;
}

/* The summary, its sites named as the program's own exit summary names
 * them (rt/statseg-sym.c). */
static void report(const struct ltx_statseg_view *v)
{
	struct ltx_statseg_sym *sym = ltx_statseg_sym_new(v);

	if (json)
		ltx_statseg_print_json(out, v, ltx_statseg_sym_resolve, sym);
	else
		ltx_statseg_print(out, v, ltx_statseg_sym_resolve, sym);
	ltx_statseg_sym_free(sym);
	fflush(out);
}

/* ---- ltxstat -p: a running process ---- */

/* The process's file-system user id (its files' owner), or -1. */
static long process_uid(long pid)
{
	char path[64], line[256];
	long uid = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%ld/status", pid);
	f = fopen(path, "re");
	if (f == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL) {
		long r, e, sv, fs;

		if (sscanf(line, "Uid: %ld %ld %ld %ld", &r, &e, &sv, &fs) ==
		    4) {
			uid = fs;
			break;
		}
	}
	fclose(f);
	return uid;
}

/* A name in the segment directory for pid that the process does not map
 * (planted, or left by a former process), to say so; or "". */
static void unmapped_name(long pid, char *buf, size_t len)
{
	DIR *d = opendir(LTX_STATSEG_DIR);
	struct dirent *e;

	buf[0] = '\0';
	if (d == NULL)
		return;
	while ((e = readdir(d)) != NULL)
		if (ltx_statseg_name_pid(e->d_name) == pid) {
			snprintf(buf, len, "%s/%s", LTX_STATSEG_DIR, e->d_name);
			break;
		}
	closedir(d);
}

/*
 * Open the segment process pid publishes: the file it maps, found in
 * /proc/<pid>/maps, and only if it is still that file (device and inode),
 * owned by the process's user.  Dies with the documented status if there
 * is none or it is refused.
 */
static void open_process_segment(long pid, struct segment *s)
{
	struct ltx_statseg_expect e = { .check_owner = true,
					.check_inode = true };
	struct ltx_statseg_mapping m;
	char path[64], *line = NULL, other[300];
	size_t cap = 0;
	bool found = false, removed = false;
	long uid;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%ld/maps", pid);
	f = fopen(path, "re");
	errno = 0;
	while (f != NULL && !found && getline(&line, &cap, f) > 0) {
		found = ltx_statseg_maps_line(line, pid, &m);
		if (found && m.deleted) {
			/* Unlinked under it: not reachable by name. */
			removed = true;
			found = false;
		}
	}
	if (f == NULL || (!found && ferror(f))) {
		int err = errno;

		if (f == NULL && err == ENOENT)
			die(EX_NOPROC, "no process %ld", pid);
		die(EX_NOACCESS,
		    "cannot read %s (a process of another user?): "
		    "%s",
		    path, strerror(err));
	}
	fclose(f);
	free(line);
	if (!found && removed)
		die(EX_NOSEG,
		    "process %ld publishes ltx statistics, but its "
		    "segment was removed from " LTX_STATSEG_DIR,
		    pid);
	if (!found) {
		unmapped_name(pid, other, sizeof(other));
		die(EX_NOSEG,
		    "process %ld publishes no ltx statistics (it maps no "
		    "segment: not using ltx, or LTX_STATS unset)%s%s%s",
		    pid, other[0] ? "; " : "", other,
		    other[0] ? " is not its segment: ignored" : "");
	}
	uid = process_uid(pid);
	if (uid < 0)
		die(EX_NOPROC, "no process %ld", pid);
	e.uid = (uid_t)uid;
	e.major = m.major;
	e.minor = m.minor;
	e.ino = m.ino;
	seg_open(s, m.path, &e, EX_NOSEG);
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
		fprintf(out,
			"%11s %11s %11s %10s %6s %10s %9s %9s %9s "
			"%10s %7s\n",
			"commits/s", "ro/s", "rw/s", "aborts/s", "abort%",
			"conflict/s", "capac/s", "explic/s", "other/s",
			"backoff%", "threads");
	fprintf(out,
		"%11.0f %11.0f %11.0f %10.0f %6.1f %10.0f %9.0f %9.0f "
		"%9.0f %10.1f %7" PRIu64 "\n",
		(double)(ro + rw) / secs, (double)ro / secs, (double)rw / secs,
		(double)ab / secs,
		ro + rw + ab ? 100.0 * (double)ab / (double)(ro + rw + ab) : 0,
		(double)g[0] / secs, (double)g[1] / secs, (double)g[2] / secs,
		(double)g[3] / secs,
		y->threads
			? 100.0 * (double)bo / hz / (secs * (double)y->threads)
			: 0.0,
		y->threads);
	fflush(out);
}

static int follow(long pid, long interval, long count)
{
	struct segment s;
	struct ltx_statseg_view a;
	void *prev;
	int err;

	if (kill((pid_t)pid, 0) != 0 && errno == ESRCH)
		die(EX_NOPROC, "no process %ld", pid);
	open_process_segment(pid, &s);
	err = seg_read(&s, pid);
	if (err != LTX_STATSEG_OK)
		refuse(&s, err);
	if (interval == 0) {
		report(&s.v);
		seg_close(&s);
		return 0;
	}
	prev = malloc(s.len);
	if (prev == NULL)
		die(EX_INTERNAL, "out of memory");
	for (long n = 0; count == 0 || n < count; n++) {
		/* The last sample, as a view into prev. */
		memcpy(prev, s.buf, s.len);
		if (ltx_statseg_parse(prev, s.len, &a) != LTX_STATSEG_OK)
			break;
		sleep((unsigned)interval);
		if (kill((pid_t)pid, 0) != 0 && errno == ESRCH) {
			fprintf(stderr, "ltxstat: process %ld exited\n", pid);
			break;
		}
		err = seg_read(&s, pid);
		if (err != LTX_STATSEG_OK)
			refuse(&s, err);
		if (s.v.h->flags & LTX_STATSEG_FINAL) {
			fprintf(stderr, "ltxstat: process %ld exited\n", pid);
			break;
		}
		interval_line(&a, &s.v, (int)n);
	}
	free(prev);
	seg_close(&s);
	return 0;
}

/* ---- ltxstat -f: a segment file ---- */

static int read_file(const char *path)
{
	struct segment s;
	int err;

	seg_open(&s, path, NULL, EX_NOSEG);
	err = seg_read(&s, 0);
	if (err != LTX_STATSEG_OK)
		refuse(&s, err);
	report(&s.v);
	seg_close(&s);
	return 0;
}

/* ---- ltxstat -- PROG: run a program ---- */

static volatile pid_t child;

/*
 * Like time(1), ltxstat reports after the program, so the signals that
 * end a program go to it.  The terminal sends ^C and ^\ to the whole
 * foreground process group, the program included (si_code SI_KERNEL):
 * those are not sent again; one sent to ltxstat alone (kill(1)) is.
 */
static void forward(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	if (si->si_code != SI_KERNEL && child > 0)
		kill(child, sig);
}

static void forward_signals(void)
{
	static const int sigs[] = { SIGINT, SIGQUIT, SIGTERM, SIGHUP };
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = forward;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaction(sigs[i], &sa, NULL);
}

/* LTX_STATS for the program: 1 unless it asks for stacks; a value ltx
 * would refuse is refused here, not left for the program to ignore. */
static const char *stats_level(void)
{
	const char *e = getenv("LTX_STATS");

	if (e == NULL || strcmp(e, "0") == 0 || strcmp(e, "1") == 0)
		return "1";
	if (strcmp(e, "stacks") == 0)
		return "stacks";
	usage_error("LTX_STATS=\"%s\" is invalid; accepted: 0 | 1 | stacks "
		    "(ltxstat sets 1 unless it is stacks)",
		    e);
}

/* The library to preload, or NULL if the default is not installed. */
static const char *find_lib(const char *opt)
{
	const char *lib = opt, *what = "--lib";
	struct stat st;

	if (lib == NULL && getenv("LTX_LIB") != NULL &&
	    getenv("LTX_LIB")[0] != '\0') {
		lib = getenv("LTX_LIB");
		what = "LTX_LIB";
	}
	if (lib == NULL) {
		lib = LTX_LIBDIR "/libltx.so.0";
		return access(lib, R_OK) == 0 ? lib : NULL;
	}
	if (stat(lib, &st) != 0)
		usage_error("%s %s: %s", what, lib, strerror(errno));
	if (!S_ISREG(st.st_mode) || access(lib, R_OK) != 0)
		usage_error("%s %s: not a readable file", what, lib);
	return lib;
}

static void random_token(char *token)
{
	uint64_t r = 0;

	if (getrandom(&r, sizeof(r), 0) != (ssize_t)sizeof(r))
		die(EX_INTERNAL, "getrandom: %s", strerror(errno));
	snprintf(token, LTX_STATSEG_TOKEN_LEN + 1, "%016llx",
		 (unsigned long long)r);
}

/* The program's status as ltxstat's: its exit status, or 128 + signal. */
static int status_of(const siginfo_t *si)
{
	return si->si_code == CLD_EXITED ? si->si_status : 128 + si->si_status;
}

static int run(char **argv, const char *lib_opt)
{
	const char *lib = find_lib(lib_opt), *level = stats_level();
	const char *old = getenv("LD_PRELOAD");
	char token[LTX_STATSEG_TOKEN_LEN + 1], path[160], *preload = NULL;
	struct ltx_statseg_expect e = { .check_owner = true, .uid = geteuid() };
	struct segment s;
	siginfo_t si;
	int p[2], err = 0, status;
	ssize_t n;
	pid_t pid;

	if (lib != NULL && asprintf(&preload, "%s%s%s", lib, old ? ":" : "",
				    old ? old : "") < 0)
		die(EX_INTERNAL, "out of memory");
	random_token(token);
	if (pipe2(p, O_CLOEXEC) != 0)
		die(EX_INTERNAL, "pipe: %s", strerror(errno));
	pid = fork();
	if (pid < 0)
		die(EX_INTERNAL, "fork: %s", strerror(errno));
	if (pid == 0) {
		char keep[64];

		/* The segment's name, known to ltxstat and the program
		 * only: LTX_STATS_KEEP=<pid>.<token> (ltx(7)). */
		snprintf(keep, sizeof(keep), "%ld.%s", (long)getpid(), token);
		setenv("LTX_STATS_KEEP", keep, 1);
		setenv("LTX_STATS", level, 1);
		if (preload != NULL)
			setenv("LD_PRELOAD", preload, 1);
		execvp(argv[0], argv);
		err = errno;
		if (write(p[1], &err, sizeof(err)) < 0)
			_exit(EX_INTERNAL);
		_exit(err == ENOENT ? EX_NOTFOUND : EX_NOEXEC);
	}
	child = pid;
	forward_signals();
	close(p[1]);
	n = read(p[0], &err, sizeof(err));
	close(p[0]);
	/* Wait without reaping: while the program is a zombie its pid is
	 * taken, so no other process removes its segment as stale. */
	while (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOWAIT) != 0)
		if (errno != EINTR)
			die(EX_INTERNAL, "waitid: %s", strerror(errno));
	if (n == (ssize_t)sizeof(err)) {
		waitpid(pid, &status, 0);
		die(err == ENOENT ? EX_NOTFOUND : EX_NOEXEC,
		    "cannot execute %s: %s", argv[0], strerror(err));
	}
	snprintf(path, sizeof(path), LTX_STATSEG_DIR "/ltx.%ld.%s", (long)pid,
		 token);
	if (access(path, F_OK) != 0) {
		waitpid(pid, &status, 0);
		if (status_of(&si) != 0)
			return status_of(&si);
		if (lib == NULL)
			die(EX_NOSEG,
			    "%s published no ltx statistics: there is no "
			    "libltx to preload (--lib, LTX_LIB), so it runs "
			    "on ltx only if linked with it, and ltxstat does "
			    "not follow the processes it starts",
			    argv[0]);
		die(EX_NOSEG,
		    "%s published no ltx statistics (it does not "
		    "use ltx, is set-user-ID, or uses ltx only in processes "
		    "it starts, which ltxstat does not follow)",
		    argv[0]);
	}
	seg_open(&s, path, &e, EX_NOSEG);
	err = seg_read(&s, pid);
	waitpid(pid, &status, 0);
	unlink(path);
	if (err != LTX_STATSEG_OK)
		refuse(&s, err);
	if (s.v.c->commits_ro + s.v.c->commits_rw + s.v.c->aborts == 0) {
		if (status_of(&si) != 0)
			return status_of(&si);
		die(EX_NOSEG,
		    "%s ran no transaction (it does not use ltx, or only "
		    "in processes it starts, which ltxstat does not follow)",
		    argv[0]);
	}
	report(&s.v);
	if (!(s.v.h->flags & LTX_STATSEG_FINAL))
		fprintf(out, "  (the program did not exit normally: figures "
			     "of its last refresh)\n");
	seg_close(&s);
	return status_of(&si);
}

static long parse_long(const char *s, long lo, long hi, const char *what)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end != '\0' || v < lo || v > hi)
		usage_error("bad %s '%s' (an integer from %ld to %ld)", what, s,
			    lo, hi);
	return v;
}

/* An output file: never through a symbolic link. */
static FILE *open_output(const char *path)
{
	int fd = open(path,
		      O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC,
		      0666);
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;

	if (f == NULL)
		usage_error("cannot write %s: %s%s", path, strerror(errno),
			    errno == ELOOP ? " (a symbolic link is not "
					     "followed)"
					   : "");
	return f;
}

int main(int argc, char **argv)
{
	const char *lib = NULL, *out_file = NULL, *file = NULL;
	long pid = 0, interval = 0, count = 0;
	int i;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (strcmp(a, "--") == 0) {
			i++;
			break;
		} else if (strcmp(a, "-o") == 0 || strcmp(a, "--lib") == 0 ||
			   strcmp(a, "-p") == 0 || strcmp(a, "-f") == 0) {
			if (i + 1 >= argc)
				usage_error("option %s needs an argument (%s)",
					    a,
					    a[1] == 'o'	  ? "a file"
					    : a[1] == 'p' ? "a process id"
					    : a[1] == 'f' ? "a segment file"
							  : "a library");
			if (a[1] == 'o')
				out_file = argv[++i];
			else if (a[1] == 'f')
				file = argv[++i];
			else if (a[1] == 'p')
				pid = parse_long(argv[++i], 1, 0x7fffffff,
						 "PID");
			else
				lib = argv[++i];
		} else if (strcmp(a, "--json") == 0) {
			json = true;
		} else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
			help();
		} else if (strcmp(a, "--version") == 0) {
			printf("ltxstat (ltx) %s\n", LTXSTAT_VERSION);
			return 0;
		} else if (a[0] == '-' && a[1] != '\0' &&
			   !(pid != 0 && isdigit((unsigned char)a[1]))) {
			usage_error("unknown option '%s'", a);
		} else {
			break; /* the program, or -p's INTERVAL (maybe bad) */
		}
	}
	if (pid != 0 && file != NULL)
		usage_error("-p and -f exclude each other");
	if (pid != 0) {
		if (i < argc)
			interval = parse_long(argv[i++], 1, 86400, "INTERVAL");
		if (i < argc)
			count = parse_long(argv[i++], 1, 1000000000, "COUNT");
		if (i < argc)
			usage_error("unexpected argument '%s'", argv[i]);
	} else if (file != NULL) {
		if (i < argc)
			usage_error("unexpected argument '%s'", argv[i]);
	} else if (i >= argc) {
		fputs(usage_text, stderr);
		return EX_USAGE_;
	}
	out = pid != 0 || file != NULL ? stdout : stderr;
	if (out_file != NULL)
		out = open_output(out_file);
	if (pid != 0)
		return follow(pid, interval, count);
	if (file != NULL)
		return read_file(file);
	return run(argv + i, lib);
}
