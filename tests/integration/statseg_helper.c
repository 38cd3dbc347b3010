/* SPDX-License-Identifier: MIT */
/* ltxstat-test.sh's helper: hostile segments, and a measuring runner. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "rt/statseg.h"

/*
 * statseg_helper plant FILE PID
 *	Write a well-formed segment claiming to be process PID's, with
 *	invented figures (123,456,789 commits): what an attacker would plant.
 * statseg_helper serve MODE [legacy]
 *	Publish a hostile segment as this process's own: create it in
 *	/dev/shm under this pid's name (ltx.<pid>.0123456789abcdef, or with
 *	legacy the old ltx.<pid>), map it, print "ready", and wait to be
 *	killed.  MODE: huge (a 16 GiB sparse file), otherpid (a good segment
 *	naming pid 1), nobody (a good segment owned by user nobody: run as
 *	root).
 * statseg_helper measure CMD [ARGS...]
 *	Run CMD and print "status=S maxrss_kb=K ms=T": its exit status (128 +
 *	signal if killed), its peak resident memory and how long it ran.
 * statseg_helper sigdfl CMD [ARGS...]
 *	Run CMD with SIGINT and SIGQUIT at their defaults (a shell starts a
 *	background command with both ignored, and exec keeps that).
 */

static void fail(const char *what)
{
	fprintf(stderr, "statseg_helper: %s: %s\n", what, strerror(errno));
	exit(2);
}

static void fill(struct ltx_statseg *s, long pid)
{
	ltx_statseg_layout(s, pid);
	s->h.start_ns = 1;
	s->h.update_ns = 1000000001;
	s->c.threads = 1;
	s->c.commits_rw = 123456789;
	snprintf(s->h.command, sizeof(s->h.command), "planted");
}

static int plant(const char *file, long pid)
{
	struct ltx_statseg *s = calloc(1, sizeof(*s));
	FILE *f = fopen(file, "w");

	if (s == NULL || f == NULL)
		fail(file);
	fill(s, pid);
	if (fwrite(s, sizeof(*s), 1, f) != 1 || fclose(f) != 0)
		fail(file);
	free(s);
	return 0;
}

static int serve(const char *mode, int legacy)
{
	char path[128];
	struct ltx_statseg *s = calloc(1, sizeof(*s));
	off_t size = sizeof(*s);
	int fd;

	if (legacy)
		snprintf(path, sizeof(path), "/dev/shm/ltx.%ld",
			 (long)getpid());
	else
		snprintf(path, sizeof(path),
			 "/dev/shm/ltx.%ld.0123456789abcdef", (long)getpid());
	fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0600);
	if (s == NULL || fd < 0)
		fail(path);
	fill(s, getpid());
	if (strcmp(mode, "huge") == 0) {
		size = (off_t)16 << 30;
	} else if (strcmp(mode, "otherpid") == 0) {
		s->h.pid = 1;
	} else if (strcmp(mode, "nobody") == 0) {
		struct passwd *pw = getpwnam("nobody");

		if (pw == NULL || fchown(fd, pw->pw_uid, pw->pw_gid) != 0)
			fail("chown nobody");
	} else {
		fprintf(stderr, "statseg_helper: unknown mode %s\n", mode);
		return 2;
	}
	if (pwrite(fd, s, sizeof(*s), 0) != (ssize_t)sizeof(*s) ||
	    ftruncate(fd, size) != 0 ||
	    mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0) == MAP_FAILED)
		fail(path);
	close(fd);
	printf("ready %s\n", path);
	fflush(stdout);
	for (;;)
		pause();
}

static int measure(char **argv)
{
	struct timespec t0, t1;
	struct rusage ru;
	int status;
	pid_t pid;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	pid = fork();
	if (pid < 0)
		fail("fork");
	if (pid == 0) {
		execvp(argv[0], argv);
		_exit(127);
	}
	if (wait4(pid, &status, 0, &ru) != pid)
		fail("wait4");
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("status=%d maxrss_kb=%ld ms=%ld\n",
	       WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status),
	       ru.ru_maxrss,
	       (long)((t1.tv_sec - t0.tv_sec) * 1000 +
		      (t1.tv_nsec - t0.tv_nsec) / 1000000));
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 4 && strcmp(argv[1], "plant") == 0)
		return plant(argv[2], atol(argv[3]));
	if ((argc == 3 || argc == 4) && strcmp(argv[1], "serve") == 0)
		return serve(argv[2], argc == 4);
	if (argc >= 3 && strcmp(argv[1], "measure") == 0)
		return measure(argv + 2);
	if (argc >= 3 && strcmp(argv[1], "sigdfl") == 0) {
		signal(SIGINT, SIG_DFL);
		signal(SIGQUIT, SIG_DFL);
		execvp(argv[2], argv + 2);
		fail(argv[2]);
	}
	fprintf(stderr, "usage: statseg_helper plant FILE PID | serve MODE "
			"[legacy] | measure|sigdfl CMD [ARGS...]\n");
	return 2;
}
