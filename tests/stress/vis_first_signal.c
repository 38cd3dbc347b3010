/* SPDX-License-Identifier: MIT */
/*
 * The visible mode makes its lock table on its first transaction, inside
 * pthread_once.  A signal whose handler runs a transaction, landing there
 * on the same thread, made the handler call pthread_once again from
 * inside it: the thread waited for itself for ever (tests/itm
 * handler_exit hung about once in 150-400 runs in the visible mode).
 * Here the signal lands there every time: the program's own mmap, which
 * libltx calls, raises it when the table is mapped (the one
 * MAP_NORESERVE mapping after the descriptor and the orec table exist).
 * Passes if the handler's transaction and the interrupted one both
 * commit; a hang is ended by alarm() (SIGALRM kills: a failure).
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <ltx/tm.h>

static volatile sig_atomic_t armed, raised, handled;
static tm_word_t handler_word __attribute__((aligned(64)));
static tm_word_t main_word __attribute__((aligned(64)));

/* Stands in for libc's mmap (libltx's calls come here), by the system
 * call itself. */
void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	if (armed && !raised && (flags & MAP_NORESERVE)) {
		raised = 1;
		raise(SIGUSR1);
	}
	return (void *)syscall(SYS_mmap, addr, len, prot, flags, fd, off);
}

static void on_usr1(int sig)
{
	(void)sig;
	do
		tm_st(&handler_word, tm_lt(&handler_word) + 1);
	while (!tm_commit());
	handled++;
}

static void add(tm_word_t *w)
{
	do
		tm_st(w, tm_lt(w) + 1);
	while (!tm_commit());
}

int main(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	if (sigaction(SIGUSR1, &sa, NULL) != 0) {
		perror("sigaction");
		return 1;
	}
	alarm(10); /* a hang: killed by SIGALRM */
	/* The descriptor and the orec table first (an invisible transaction:
	 * no lock table yet), then the visible mode's first transaction. */
	add(&main_word);
	if (tm_config_set("LTX_MODE", "visible") != 0) {
		perror("tm_config_set LTX_MODE=visible");
		return 1;
	}
	armed = 1;
	add(&main_word);
	armed = 0;
	if (!raised) {
		fprintf(stderr, "vis_first_signal: the lock table was not "
				"mapped by the visible transaction\n");
		return 1;
	}
	if (handled != 1 || handler_word != 1 || main_word != 2) {
		fprintf(stderr,
			"vis_first_signal: handled %d, handler's word %lu, "
			"main's %lu (want 1, 1, 2)\n",
			(int)handled, (unsigned long)handler_word,
			(unsigned long)main_word);
		return 1;
	}
	printf("vis_first_signal: ok\n");
	return 0;
}
