/* SPDX-License-Identifier: MIT */
/* The statistics segment's writer: refresh thread, exit summary, cleanup. */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "arch/arch.h"
#include "rt/config.h"
#include "rt/stats.h"
#include "rt/statseg.h"

/*
 * One segment per process, /dev/shm/ltx.<pid>.<token> (rt/statseg.h says
 * why the token), written only here: by the refresh thread every
 * REFRESH_MS, and by the exit handler, which writes the final figures,
 * prints the summary (LTX_STATS_FILE or stderr) and removes the segment -
 * unless ltxstat(1) started the process and asked, through
 * LTX_STATS_KEEP=<pid>.<token>, to read the final figures itself from the
 * segment of that name.  Creating one removes the segments this user's
 * dead processes left (remove_stale).
 *
 * fork: the child gets a copy of this state, the parent's mapping and the
 * exit handler, but not the refresh thread, and seg_lock as it was at the
 * fork (perhaps held by that thread).  at_fork_child makes it a process of
 * its own: it forgets the parent's segment (unmapped, never rewritten or
 * removed by the child) and the lock.  The child starts a segment of its
 * own only when it uses ltx (tx calls ltx_statseg_start again), or, if it
 * ran transactions that did not, at exit.
 *
 * Synchronization: seg_lock guards everything here and serializes the
 * writers; readers in other processes follow the seqlock protocol of
 * rt/statseg.h.
 */
#define REFRESH_MS 100

static pthread_mutex_t seg_lock = PTHREAD_MUTEX_INITIALIZER;
static struct ltx_statseg *seg;
static char seg_name[64];
static bool started; /* this process tried to create its segment */
static bool stopped;
static bool keep_at_exit;
static bool hooked; /* at_exit and at_fork_child are registered */
static bool forked; /* a child of a process that had statistics on */
static uint64_t start_cycles, start_mono_ns;
static pthread_cond_t stop_cond = PTHREAD_COND_INITIALIZER;
static ltx_statseg_source source; /* the collector tx handed in */

static uint64_t now_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The object table entry for the object holding pc, added if new. */
static int object_of(uintptr_t pc, uint64_t *off, char *func, size_t flen)
{
	Dl_info info;
	const char *path;
	char exe[sizeof(seg->objs[0].path)];
	uint32_t i;
	bool is_exec;

	func[0] = '\0';
	*off = pc;
	if (pc == 0 || dladdr((void *)pc, &info) == 0 || info.dli_fbase == NULL)
		return -1;
	/* The first PT_LOAD of an ELF object maps its header. */
	is_exec = ((const Elf64_Ehdr *)info.dli_fbase)->e_type == ET_EXEC;
	*off = is_exec ? pc : pc - (uintptr_t)info.dli_fbase;
	if (info.dli_sname != NULL)
		snprintf(func, flen, "%s+0x%lx", info.dli_sname,
			 (unsigned long)(pc - (uintptr_t)info.dli_saddr));
	path = info.dli_fname;
	if (path == NULL || path[0] != '/') {
		/* The main program: its name as the kernel knows it. */
		ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

		if (n > 0) {
			exe[n] = '\0';
			path = exe;
		} else if (path == NULL) {
			path = "?";
		}
	}
	for (i = 0; i < seg->h.nobjs; i++)
		if (seg->objs[i].base == (uintptr_t)info.dli_fbase)
			return (int)i;
	if (i == LTX_STATSEG_OBJS)
		return -1;
	seg->objs[i].base = (uintptr_t)info.dli_fbase;
	seg->objs[i].is_exec = is_exec;
	snprintf(seg->objs[i].path, sizeof(seg->objs[i].path), "%s", path);
	seg->h.nobjs = i + 1;
	return (int)i;
}

static void fill_frame(struct ltx_statseg_frame *f, uintptr_t pc)
{
	memset(f, 0, sizeof(*f));
	f->pc = pc;
	f->obj = object_of(pc, &f->off, f->func, sizeof(f->func));
}

/*
 * Where line l is, and its parts' names as this process knows them
 * (dladdr: the exported symbols; statseg-sym.c reads the objects' full
 * symbol tables).  An address in no object is the heap's (or a stack's).
 */
static void fill_line(struct ltx_statseg_line *d,
		      const struct ltx_stats_line *l)
{
	char unused[8];

	memset(d, 0, sizeof(*d));
	d->addr = l->line;
	memcpy(d->count, l->count, sizeof(d->count));
	memcpy(d->part, l->part, sizeof(d->part));
	d->bits = (uint32_t)l->bits;
	d->obj = object_of(l->line, &d->off, unused, sizeof(unused));
	d->other = l->other;
	d->other_obj = l->other != 0 ? object_of(l->other, &d->other_off,
						 unused, sizeof(unused))
				     : -1;
	for (unsigned p = 0; p < LTX_STATS_PARTS; p++) {
		uint64_t off;

		if (l->part[p] != 0)
			(void)object_of(
				l->line + (unsigned)__builtin_ctzll(l->part[p]),
				&off, d->sym[p], sizeof(d->sym[p]));
	}
}

/* Rewrite the segment from the descriptors.  Caller holds seg_lock. */
static void refresh(uint32_t flags)
{
	static struct ltx_stats_site sites[LTX_STATSEG_SITES];
	static struct ltx_stats_line lines[LTX_STATSEG_LINES];
	struct ltx_stats_tables t = {
		.sites = sites,
		.max_sites = LTX_STATSEG_SITES,
		.lines = lines,
		.max_lines = LTX_STATSEG_LINES,
	};
	struct ltx_stats c;
	uint64_t threads, cyc, mono;
	unsigned n;

	source(&c, &threads, &t);
	n = t.nsites;
	c.threads = threads;

	/* Odd: readers discard what they copy until the even store below.
	 * The fence orders the odd store before the rewrite. */
	__atomic_store_n(&seg->h.seq, seg->h.seq + 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	seg->c = c;
	for (unsigned i = 0; i < n; i++) {
		struct ltx_statseg_site *d = &seg->sites[i];

		d->count = sites[i].count;
		d->kind = sites[i].kind;
		d->cause = sites[i].cause;
		fill_frame(&d->frames[0], sites[i].pc);
		d->nframes = 1;
		for (unsigned k = 0; k < sites[i].nstack; k++)
			fill_frame(&d->frames[d->nframes++], sites[i].stack[k]);
	}
	seg->h.nsites = n;
	for (unsigned i = 0; i < t.nlines; i++)
		fill_line(&seg->lines[i], &lines[i]);
	seg->h.nlines = t.nlines;
	cyc = ltx_cycles();
	mono = now_ns(CLOCK_MONOTONIC);
	if (mono - start_mono_ns >= 1000000)
		seg->h.tsc_hz = (uint64_t)((double)(cyc - start_cycles) * 1e9 /
					   (double)(mono - start_mono_ns));
	seg->h.update_ns = now_ns(CLOCK_REALTIME);
	seg->h.refreshes++;
	seg->h.mode = (uint32_t)ltx_config.mode;
	seg->h.orec_bits = (uint32_t)ltx_config.orec_bits;
	if (ltx_config.mode == LTX_MODE_VISIBLE || ltx_config.capacity != 0)
		flags |= LTX_STATSEG_BUS_COUNTED;
	seg->h.flags = flags;
	/* Pairs with the readers' acquire of seq after their copy. */
	__atomic_store_n(&seg->h.seq, seg->h.seq + 1, __ATOMIC_RELEASE);
}

static void *refresh_thread(void *arg)
{
	/* Running: the creator may go on (start_locked). */
	sem_post(arg);
	pthread_mutex_lock(&seg_lock);
	while (!stopped) {
		struct timespec until;

		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_nsec += REFRESH_MS * 1000000L;
		if (until.tv_nsec >= 1000000000L) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&stop_cond, &seg_lock, &until);
		if (!stopped)
			refresh(0);
	}
	pthread_mutex_unlock(&seg_lock);
	return NULL;
}

/*
 * LTX_STATS_FILE, opened as the caller could open it: never through a
 * symbolic link (O_NOFOLLOW: a link planted in a shared directory cannot
 * redirect the summary), and, in a program running with privileges its
 * caller lacks, with the caller's file-system identity (setfsuid), so it
 * never creates or truncates a file the caller could not write.  Non-
 * blocking, so a FIFO with no reader fails at once instead of hanging the
 * exit; only a regular file is truncated.  Returns a stream or NULL with
 * errno set.
 */
static FILE *open_summary_file(const char *path)
{
	bool priv = getuid() != geteuid() || getgid() != getegid();
	int old_uid = 0, old_gid = 0, fd, flags, err;
	struct stat st;
	FILE *f;

	if (priv) {
		old_gid = setfsgid(getgid());
		old_uid = setfsuid(getuid());
	}
	fd = open(path,
		  O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY |
			  O_CLOEXEC,
		  0666);
	err = errno;
	if (priv) {
		setfsuid((uid_t)old_uid);
		setfsgid((gid_t)old_gid);
	}
	if (fd < 0) {
		errno = err;
		return NULL;
	}
	if (fstat(fd, &st) != 0 ||
	    (S_ISREG(st.st_mode) && ftruncate(fd, 0) != 0) ||
	    (flags = fcntl(fd, F_GETFL)) < 0 ||
	    fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) != 0 ||
	    (f = fdopen(fd, "w")) == NULL) {
		err = errno;
		close(fd);
		errno = err;
		return NULL;
	}
	return f;
}

/* The exit summary, from the segment just written: to LTX_STATS_FILE, or
 * to stderr when that cannot be opened or written (said on stderr). */
static void print_summary(void)
{
	struct ltx_statseg_view v;
	const char *path = ltx_config.stats_file;
	struct ltx_statseg_sym *sym;
	FILE *out;

	/* A process that never used ltx (a shell the program runs, with
	 * the environment inherited) has nothing to say. */
	if (ltx_statseg_parse(seg, sizeof(*seg), &v) != LTX_STATSEG_OK ||
	    v.c->commits_ro + v.c->commits_rw + v.c->aborts == 0)
		return;
	/* Sites named as ltxstat names them. */
	sym = ltx_statseg_sym_new(&v);
	if (path[0] != '\0') {
		out = open_summary_file(path);
		if (out == NULL) {
			fprintf(stderr,
				"ltx: LTX_STATS_FILE: cannot open %s: "
				"%s%s; summary on stderr\n",
				path, strerror(errno),
				errno == ELOOP ? " (a symbolic link is not "
						 "followed)"
					       : "");
		} else {
			int err = 0;

			errno = 0;
			ltx_statseg_print(out, &v, ltx_statseg_sym_resolve,
					  sym);
			if (fflush(out) != 0 || ferror(out))
				err = errno ? errno : EIO;
			if (fclose(out) != 0 && err == 0)
				err = errno;
			if (err == 0) {
				ltx_statseg_sym_free(sym);
				return;
			}
			fprintf(stderr,
				"ltx: LTX_STATS_FILE: cannot write %s: "
				"%s; summary on stderr\n",
				path, strerror(err));
		}
	}
	ltx_statseg_print(stderr, &v, ltx_statseg_sym_resolve, sym);
	fflush(stderr);
	ltx_statseg_sym_free(sym);
}

static bool start_locked(bool thread);

static void at_exit(void)
{
	int cancel;

	/* Its writes are cancellation points too (ltx_statseg_start). */
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel);
	pthread_mutex_lock(&seg_lock);
	if (seg == NULL && forked && !stopped && source != NULL) {
		/* A child whose transactions never reached the statistics'
		 * slow paths (read-only commits): its own summary still. */
		struct ltx_stats_tables none = { 0 };
		struct ltx_stats c;
		uint64_t threads;

		source(&c, &threads, &none);
		if (c.commits_ro + c.commits_rw + c.aborts != 0)
			start_locked(false);
	}
	if (seg == NULL || stopped) {
		pthread_mutex_unlock(&seg_lock);
		pthread_setcancelstate(cancel, NULL);
		return;
	}
	stopped = true;
	pthread_cond_signal(&stop_cond);
	refresh(LTX_STATSEG_FINAL);
	if (!keep_at_exit) {
		print_summary();
		shm_unlink(seg_name);
	}
	pthread_mutex_unlock(&seg_lock);
	pthread_setcancelstate(cancel, NULL);
}

/* The child of a fork: the parent's segment and lock are the parent's. */
static void at_fork_child(void)
{
	/* Its only thread holds nothing: start from scratch. */
	seg_lock = (pthread_mutex_t)PTHREAD_MUTEX_INITIALIZER;
	stop_cond = (pthread_cond_t)PTHREAD_COND_INITIALIZER;
	if (seg != NULL)
		munmap(seg, sizeof(*seg));
	seg = NULL;
	forked = forked || started;
	started = false;
	stopped = false;
	keep_at_exit = false;
}

static void read_command(char *buf, size_t len)
{
	int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, buf, len - 1) : -1;

	if (fd >= 0)
		close(fd);
	if (n <= 0) {
		snprintf(buf, len, "?");
		return;
	}
	while (n > 0 && buf[n - 1] == '\0')
		n--;
	for (ssize_t i = 0; i < n; i++)
		if (buf[i] == '\0')
			buf[i] = ' ';
	buf[n] = '\0';
}

/*
 * Remove the segments that processes of this user left when they died
 * without their exit handler (killed, or replaced by exec): those whose
 * process no longer exists, and those of this pid (a former program of
 * this process: this one is about to create its own).  The name gives the
 * pid; only regular files owned by this user are touched, so a name that
 * another user planted stays (its owner's business, and the sticky bit's).
 * A process in its exit handler still exists, and so does one ltxstat has
 * not reaped yet, whose kept segment it is about to read.
 */
static void remove_stale(void)
{
	DIR *d = opendir(LTX_STATSEG_DIR);
	struct dirent *e;

	if (d == NULL)
		return;
	while ((e = readdir(d)) != NULL) {
		long pid = ltx_statseg_name_pid(e->d_name);
		struct stat st;

		if (pid <= 0 ||
		    fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) !=
			    0 ||
		    !S_ISREG(st.st_mode) || st.st_uid != geteuid())
			continue;
		if (pid == (long)getpid() ||
		    (kill((pid_t)pid, 0) != 0 && errno == ESRCH))
			unlinkat(dirfd(d), e->d_name, 0);
	}
	closedir(d);
}

/* LTX_STATS_KEEP=<pid>.<token>: if it names this process, the token. */
static bool kept_token(char *token)
{
	const char *keep = secure_getenv("LTX_STATS_KEEP"), *dot;
	char *end;
	long pid;

	if (keep == NULL)
		return false;
	pid = strtol(keep, &end, 10);
	dot = end;
	if (pid != (long)getpid() || *dot != '.' ||
	    strlen(dot + 1) != LTX_STATSEG_TOKEN_LEN ||
	    strspn(dot + 1, "0123456789abcdef") != LTX_STATSEG_TOKEN_LEN)
		return false;
	memcpy(token, dot + 1, LTX_STATSEG_TOKEN_LEN + 1);
	return true;
}

/* 16 random hex digits: a name no other user can predict. */
static void random_token(char *token)
{
	uint64_t r = 0;

	if (getrandom(&r, sizeof(r), GRND_NONBLOCK) != (ssize_t)sizeof(r))
		r = ltx_cycles() * 0x9e3779b97f4a7c15ull ^ (uint64_t)getpid();
	snprintf(token, LTX_STATSEG_TOKEN_LEN + 1, "%016llx",
		 (unsigned long long)r);
}

/* Create and map the segment, write it once, and (thread) start the
 * refresh thread.  Caller holds seg_lock.  Returns whether it exists. */
static bool start_locked(bool thread)
{
	char token[LTX_STATSEG_TOKEN_LEN + 1];
	pthread_attr_t attr;
	sigset_t all, old;
	pthread_t tid;
	sem_t running;
	void *p;
	int fd = -1;

	started = true;
	remove_stale();
	keep_at_exit = kept_token(token);
	/* Exclusive creation: never a file someone else made (O_EXCL also
	 * refuses a symbolic link, and shm_open adds O_NOFOLLOW). */
	for (int tries = 0; fd < 0 && tries < 4; tries++) {
		if (!keep_at_exit || tries > 0)
			random_token(token);
		snprintf(seg_name, sizeof(seg_name), "/ltx.%ld.%s",
			 (long)getpid(), token);
		fd = shm_open(seg_name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC,
			      0600);
		if (fd < 0 && errno == EEXIST && keep_at_exit) {
			/* Not ours: ltxstat will not find the figures; the
			 * summary is printed here at exit instead. */
			fprintf(stderr,
				"ltx: LTX_STATS: " LTX_STATSEG_DIR
				"%s exists already (not made by this "
				"process): using another name\n",
				seg_name);
			keep_at_exit = false;
		}
		if (fd < 0 && errno != EEXIST)
			break;
	}
	if (fd < 0) {
		fprintf(stderr,
			"ltx: LTX_STATS: cannot create " LTX_STATSEG_DIR
			"%s: %s\n",
			seg_name, strerror(errno));
		return false;
	}
	if (ftruncate(fd, sizeof(*seg)) != 0 ||
	    (p = mmap(NULL, sizeof(*seg), PROT_READ | PROT_WRITE, MAP_SHARED,
		      fd, 0)) == MAP_FAILED) {
		fprintf(stderr,
			"ltx: LTX_STATS: cannot map " LTX_STATSEG_DIR
			"%s: %s\n",
			seg_name, strerror(errno));
		close(fd);
		shm_unlink(seg_name);
		return false;
	}
	close(fd);
	start_cycles = ltx_cycles();
	start_mono_ns = now_ns(CLOCK_MONOTONIC);

	seg = p;
	ltx_statseg_layout(seg, getpid());
	seg->h.seq = 1; /* odd until the first refresh */
	seg->h.level = (uint32_t)ltx_config.stats;
	seg->h.start_ns = now_ns(CLOCK_REALTIME);
	read_command(seg->h.command, sizeof(seg->h.command));
	seg->h.seq = 0;
	refresh(0);
	if (!hooked) {
		/* Once per program image: a child inherits both. */
		hooked = true;
		atexit(at_exit);
		pthread_atfork(NULL, NULL, at_fork_child);
	}
	if (!thread)
		return true;

	/* The refresh thread takes none of the program's signals; it waits
	 * for seg_lock, which the caller holds, before its first refresh.
	 * This returns once the thread runs its own code: a fork made while
	 * it is still being set up would give the child whatever that set-up
	 * holds at the moment (under AddressSanitizer, its allocator's lock:
	 * the child's first allocation would wait forever), and a program
	 * (a test runner) may fork right after ltx starts. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	sem_init(&running, 0, 0);
	if (pthread_create(&tid, &attr, refresh_thread, &running) != 0)
		fprintf(stderr, "ltx: LTX_STATS: no refresh thread; the "
				"segment is written at exit only\n");
	else
		while (sem_wait(&running) != 0 && errno == EINTR)
			;
	sem_destroy(&running);
	pthread_attr_destroy(&attr);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return true;
}

/*
 * Any thread may start the export (tm_config_set of LTX_STATS, a fork
 * child's first use), and the start makes cancellation points (shm_open,
 * messages, the wait for the refresh thread) holding seg_lock: a thread
 * cancelled there would never give the lock back, and the next start or
 * the exit's summary would wait for it for ever.  So no cancellation is
 * acted on meanwhile; a pending one is at the caller's next point.
 */
void ltx_statseg_start(ltx_statseg_source from)
{
	int cancel;

	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel);
	pthread_mutex_lock(&seg_lock);
	/* The first call's collector stays (they are all the same one). */
	if (source == NULL)
		source = from;
	if (!started)
		start_locked(true);
	pthread_mutex_unlock(&seg_lock);
	pthread_setcancelstate(cancel, NULL);
}
