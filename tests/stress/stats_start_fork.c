/* SPDX-License-Identifier: MIT */
/*
 * A fork right after LTX_STATS starts its refresh thread: the child never
 * stalls.
 *
 * Each process that uses ltx with statistics on starts a refresh thread
 * (rt/statseg.c; a forked child that uses ltx starts its own).  If the
 * process forks while that thread is still starting, the child inherits
 * whatever the thread held at that moment: under AddressSanitizer, its
 * allocator's lock, taken while the sanitizer sets up a new thread, so
 * that the child's first allocation waits forever.  A test runner that
 * forks a child per test (Check) does exactly this at its first test.
 * ltx_statseg_start returns only once the thread runs its own code.
 *
 * ROUNDS times, the parent starts this program again, with LTX_STATS=1 in
 * its environment (so that its statistics and their thread start before
 * its main); that process runs one transaction and forks at once a
 * grandchild that starts a thread and joins it.  Each grandchild must be done
 * within 10 s (it takes microseconds), each child too.  Exit status 0 when all
 * are, 1 otherwise.  Without the wait in ltx_statseg_start, an
 * AddressSanitizer build stalls within a few dozen rounds; a build without
 * it cannot stall here (glibc's fork takes malloc's locks): the test is
 * for the sanitizer runs.
 */
#define _GNU_SOURCE
#include <ltx/tm.h>

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define ROUNDS	    200
#define LIMIT_POLLS 10000 /* of 1 ms: 10 s */

static tm_word_t cell[8] __attribute__((aligned(64)));

static void *noop(void *arg)
{
	return arg;
}

/* The exit status of pid, or -1 if it is not done within 10 s (then it
 * is killed). */
static int wait_limited(pid_t pid)
{
	struct timespec ms = { 0, 1000000 };
	int status;

	for (int i = 0; i < LIMIT_POLLS; i++) {
		pid_t r = waitpid(pid, &status, WNOHANG);

		if (r == pid)
			return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
		if (r < 0)
			return 128;
		nanosleep(&ms, NULL);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	return -1;
}

/* One round, in a process of its own: statistics were started before
 * main (LTX_STATS in its environment), or by its first transaction. */
static int round_process(void)
{
	pid_t pid;
	int rc;

	tm_st(&cell[0], 1);
	if (!tm_commit())
		return 3;
	pid = fork();
	if (pid < 0)
		return 4;
	if (pid == 0) {
		pthread_t t;

		if (pthread_create(&t, NULL, noop, NULL) != 0 ||
		    pthread_join(t, NULL) != 0)
			_exit(5);
		_exit(0);
	}
	rc = wait_limited(pid);
	if (rc == -1)
		fprintf(stderr, "stats_start_fork: a grandchild stalled "
				"(killed after 10 s)\n");
	else if (rc != 0)
		fprintf(stderr, "stats_start_fork: a grandchild exited %d\n",
			rc);
	return rc == 0 ? 0 : 2;
}

int main(int argc, char **argv)
{
	int bad = 0;

	if (argc == 2 && argv[1][0] == 'r')
		return round_process();
	/* Each round is a new process (this program again, "round"), whose
	 * statistics start before its main; the summaries are not wanted
	 * (a character device is written, never truncated). */
	if (setenv("LTX_STATS", "1", 1) != 0 ||
	    setenv("LTX_STATS_FILE", "/dev/null", 1) != 0) {
		perror("stats_start_fork: setenv");
		return 1;
	}
	for (int i = 0; i < ROUNDS && bad == 0; i++) {
		pid_t pid;
		int rc;

		fflush(NULL);
		pid = fork();
		if (pid < 0) {
			perror("stats_start_fork: fork");
			return 1;
		}
		if (pid == 0) {
			execl("/proc/self/exe", argv[0], "round", (char *)NULL);
			perror("stats_start_fork: exec");
			_exit(6);
		}
		rc = wait_limited(pid);
		if (rc != 0) {
			fprintf(stderr,
				"stats_start_fork: round %d: child %s %d\n", i,
				rc == -1 ? "stalled, status" : "exited", rc);
			bad = 1;
		}
	}
	if (bad == 0)
		printf("stats_start_fork: %d forks right after the statistics "
		       "started: none stalled\n",
		       ROUNDS);
	return bad;
}
