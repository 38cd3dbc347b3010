/* SPDX-License-Identifier: MIT */
/* Statistics across fork: a child leaves its parent's segment alone. */
#define _GNU_SOURCE
#include <ltx/tm.h>

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/*
 * With LTX_STATS on and two threads committing updates without pause (so
 * that a fork often catches one inside a counter update, or the refresh
 * thread inside a rewrite), the process forks 1000 children.  Half of them
 * exit at once; the other half run one transaction first.  Every child
 * must exit within 1 s (none may wait for a lock or a counter update that
 * a thread of the parent held at the fork: those threads do not exist in
 * the child), a child that ran a transaction must see its own figures
 * (1 commit, 1 thread: not its parent's) and print its own summary, one
 * that did not must print none, and the parent's segment must still be
 * there afterwards, live (not marked final), with the parent's pid.
 * Exit status 0 when all of that holds, 1 otherwise.
 */

#define CHILDREN 1000
#define SLOW_NS	 1000000000ll /* 1 s */

/* The workers' lines, and the children's own (no worker touches it, so no
 * child meets a line a worker held at the fork). */
static tm_word_t cells[2][8] __attribute__((aligned(64)));
static tm_word_t child_cell[8] __attribute__((aligned(64)));
static volatile int stop;
static int running; /* workers that have committed once */

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

static void *worker(void *arg)
{
	tm_word_t *c = arg;
	bool counted = false;

	while (!stop) {
		tm_st(&c[0], tm_lt(&c[0]) + 1);
		tm_commit();
		if (!counted) {
			__atomic_add_fetch(&running, 1, __ATOMIC_RELEASE);
			counted = true;
		}
	}
	return NULL;
}

/* The statistics segment this process maps, from /proc/PID/maps. */
static bool find_segment(pid_t pid, char *path, size_t len)
{
	char maps[64], line[512];
	FILE *f;
	bool found = false;

	snprintf(maps, sizeof(maps), "/proc/%ld/maps", (long)pid);
	f = fopen(maps, "r");
	if (f == NULL)
		return false;
	while (!found && fgets(line, sizeof(line), f) != NULL) {
		char *p = strstr(line, "/dev/shm/ltx.");

		if (p != NULL && strstr(p, " (deleted)") == NULL) {
			p[strcspn(p, "\n")] = '\0';
			snprintf(path, len, "%s", p);
			found = true;
		}
	}
	fclose(f);
	return found;
}

/* The child's life: maybe one transaction, then exit(3) as usual. */
static void child(int i, const char *dir)
{
	struct tm_stats s = { .size = sizeof(s) };
	char file[300];

	/* The summary goes to stderr: keep it (LTX_STATS_FILE is a
	 * start-up setting, closed while the parent's threads seem live). */
	snprintf(file, sizeof(file), "%s/summary.%d", dir, i);
	if (freopen(file, "w", stderr) == NULL)
		_exit(10);
	if (i % 2 == 1) {
		tm_st(&child_cell[0], 1);
		if (!tm_commit())
			_exit(11);
		if (tm_stats_get(&s) != 0 || s.commits != 1 || s.threads != 1)
			_exit(12);
	}
	exit(0);
}

int main(void)
{
	char dir[] = "/tmp/ltx-fork.XXXXXX", seg[300], file[300];
	pthread_t t[2];
	int slow = 0, stuck = 0, failed = 0, fail = 0;
	long long worst = 0;
	struct stat st;
	FILE *f;

	if (mkdtemp(dir) == NULL || tm_config_set("LTX_STATS", "1") != 0) {
		perror("stats_fork: setup");
		return 1;
	}
	tm_st(&child_cell[0], 0); /* this thread uses ltx too */
	tm_commit();
	if (!find_segment(getpid(), seg, sizeof(seg))) {
		fprintf(stderr, "stats_fork: no segment mapped at start\n");
		return 1;
	}
	for (int k = 0; k < 2; k++)
		pthread_create(&t[k], NULL, worker, cells[k]);
	/* Fork beside threads that count, not beside threads being set up:
	 * a new thread's start-up in the C library or a sanitizer takes
	 * locks ltx has no part in (under GCC 12's AddressSanitizer, which
	 * has no fork handler, a child forked then inherits its allocator's
	 * lock held, and its first allocation of that size waits for ever:
	 * seen as child 1 stuck in the refresh thread's start-up). */
	while (__atomic_load_n(&running, __ATOMIC_ACQUIRE) < 2)
		usleep(1000);
	for (int i = 0; i < CHILDREN; i++) {
		long long t0 = now_ns(), dt;
		pid_t pid = fork();
		int status = 0;

		if (pid < 0) {
			perror("stats_fork: fork");
			return 1;
		}
		if (pid == 0)
			child(i, dir);
		for (;;) {
			pid_t w = waitpid(pid, &status, WNOHANG);

			dt = now_ns() - t0;
			if (w == pid)
				break;
			if (dt > 10 * SLOW_NS) {
				kill(pid, SIGKILL);
				waitpid(pid, &status, 0);
				stuck++;
				break;
			}
			usleep(200);
		}
		if (dt > worst)
			worst = dt;
		if (dt > SLOW_NS)
			slow++;
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
			if (failed++ < 5)
				fprintf(stderr,
					"stats_fork: child %d: status "
					"0x%x\n",
					i, status);
		}
	}
	stop = 1;
	for (int k = 0; k < 2; k++)
		pthread_join(t[k], NULL);
	printf("stats_fork: %d children, slowest exit %.1f ms, %d over 1 s, "
	       "%d stuck, %d failed\n",
	       CHILDREN, (double)worst / 1e6, slow, stuck, failed);
	if (slow || stuck || failed)
		fail = 1;

	/* The parent's segment: still there, live, the parent's. */
	if (stat(seg, &st) != 0) {
		fprintf(stderr, "stats_fork: %s is gone\n", seg);
		fail = 1;
	} else {
		struct {
			unsigned long long magic;
			unsigned version, header_size;
			unsigned long long size, seq;
			long long pid;
			unsigned flags;
		} h;

		f = fopen(seg, "r");
		if (f == NULL || fread(&h, sizeof(h), 1, f) != 1) {
			fprintf(stderr, "stats_fork: cannot read %s\n", seg);
			fail = 1;
		} else if (h.pid != getpid() || (h.flags & 1)) {
			fprintf(stderr,
				"stats_fork: %s: pid %lld, flags %u: "
				"rewritten by a child\n",
				seg, h.pid, h.flags);
			fail = 1;
		}
		if (f != NULL)
			fclose(f);
	}

	/* A child that ran a transaction printed its own summary; one that
	 * did not, none. */
	snprintf(file, sizeof(file), "%s/summary.1", dir);
	f = fopen(file, "r");
	if (f == NULL) {
		fprintf(stderr, "stats_fork: the child that used ltx printed "
				"no summary\n");
		fail = 1;
	} else {
		char line[256];
		bool one = false;

		while (fgets(line, sizeof(line), f) != NULL)
			if (strstr(line, " 1  commits ") != NULL)
				one = true;
		fclose(f);
		if (!one) {
			fprintf(stderr, "stats_fork: the child's summary does "
					"not show its 1 commit\n");
			fail = 1;
		}
	}
	snprintf(file, sizeof(file), "%s/summary.0", dir);
	if (stat(file, &st) != 0 || st.st_size != 0) {
		fprintf(stderr, "stats_fork: a child that did not use ltx "
				"printed a summary\n");
		fail = 1;
	}
	for (int i = 0; i < CHILDREN; i++) {
		snprintf(file, sizeof(file), "%s/summary.%d", dir, i);
		unlink(file);
	}
	rmdir(dir);
	return fail;
}
