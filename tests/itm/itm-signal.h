/* SPDX-License-Identifier: MIT */
/* Helpers of the -fgnu-tm tests whose signal handlers run transactions:
 * a watchdog, and which threads take SIGALRM. */
#ifndef ITM_SIGNAL_H
#define ITM_SIGNAL_H

#include <signal.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "itm-test.h"

/* The program that start_watchdog watches over. */
static const char *watchdog_name;

static inline void on_watchdog(int sig)
{
	static const char msg[] = ": no progress (a transaction waits for "
				  "ever)\n";

	(void)sig;
	(void)!write(2, watchdog_name, strlen(watchdog_name));
	(void)!write(2, msg, sizeof(msg) - 1);
	_exit(2);
}

/* A run that hangs fails: SIGUSR2 after seconds, whose handler (no
 * transaction in it) says so and exits 2. */
static inline void start_watchdog(const char *name, int seconds)
{
	struct itimerspec wd = { { 0, 0 }, { seconds, 0 } };
	struct sigaction sa;
	struct sigevent ev;
	timer_t t;

	watchdog_name = name;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_watchdog;
	CHECK(sigaction(SIGUSR2, &sa, NULL) == 0);
	memset(&ev, 0, sizeof(ev));
	ev.sigev_notify = SIGEV_SIGNAL;
	ev.sigev_signo = SIGUSR2;
	CHECK(timer_create(CLOCK_MONOTONIC, &ev, &t) == 0);
	CHECK(timer_settime(t, 0, &wd, NULL) == 0);
}

/* SIGALRM blocked (how 0) or unblocked in the calling thread: the main
 * thread, which only waits, blocks it, so that the kernel gives it to
 * the workers, which unblock it. */
static inline void mask_sigalrm(int how)
{
	sigset_t alrm;

	sigemptyset(&alrm);
	sigaddset(&alrm, SIGALRM);
	CHECK(pthread_sigmask(how ? SIG_UNBLOCK : SIG_BLOCK, &alrm, NULL) == 0);
}

/* handler on SIGALRM (SA_RESTART) every usec microseconds from now,
 * taken by the workers only: the calling (main) thread blocks it. */
static inline void start_alarm(void (*handler)(int), long usec)
{
	struct itimerval it = { { 0, usec }, { 0, usec } };
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = handler;
	sa.sa_flags = SA_RESTART;
	CHECK(sigaction(SIGALRM, &sa, NULL) == 0);
	mask_sigalrm(0);
	CHECK(setitimer(ITIMER_REAL, &it, NULL) == 0);
}

static inline void stop_alarm(void)
{
	struct itimerval off;

	memset(&off, 0, sizeof(off));
	CHECK(setitimer(ITIMER_REAL, &off, NULL) == 0);
}

#endif /* ITM_SIGNAL_H */
