/* SPDX-License-Identifier: MIT */
/* Signals: interposed sigaction/signal, the wrapper, the fault sandbox. */
#define _GNU_SOURCE
#include <ltx/tm.h>

#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <string.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#include "arch/arch.h"
#include "rt/peek.h"
#include "rt/signal.h"

#define EXPORT __attribute__((visibility("default")))

/* libc's sigaction, under the name glibc exports for this purpose. */
extern int __sigaction(int sig, const struct sigaction *act,
		       struct sigaction *oact);

static int real_sigaction(int sig, const struct sigaction *act,
			  struct sigaction *oact)
{
	return __sigaction(sig, act, oact);
}

/*
 * The application's dispositions.  Synchronization: a seqlock with two
 * slots per signal, so that readers never wait for a writer.  Writers
 * (sigaction calls, and the wrapper for SA_RESETHAND) serialize on
 * table_lock with every signal blocked, so no reader ever interrupts a
 * writer on its own thread.  A writer fills the slot seq does not select,
 * then publishes it with a release increment of seq; a reader loads seq
 * (acquire, pairs with that increment), copies the slot it selects, and
 * retries if seq moved meanwhile (the slot may then be rewritten).
 */
struct app_disposition {
	unsigned seq;
	int known; /* the slot holds what the kernel had (writers only) */
	struct sigaction sa[2];
};

static struct app_disposition table[NSIG];

/* The transaction layer's hooks (set once, before any wrapper runs). */
static struct ltx_signal_hooks hooks;
static int table_lock;

static void app_get(int sig, struct sigaction *out)
{
	struct app_disposition *d = &table[sig];

	for (;;) {
		unsigned s = __atomic_load_n(&d->seq, __ATOMIC_ACQUIRE);

		__builtin_memcpy(out, &d->sa[s & 1], sizeof(*out));
		/* Keep the copy before the recheck. */
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (__atomic_load_n(&d->seq, __ATOMIC_RELAXED) == s)
			return;
		ltx_cpu_relax();
	}
}

static void lock_table(sigset_t *saved)
{
	sigset_t all;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, saved);
	/* Acquire pairs with the release in unlock_table. */
	while (__atomic_exchange_n(&table_lock, 1, __ATOMIC_ACQUIRE))
		ltx_cpu_relax();
}

static void unlock_table(const sigset_t *saved)
{
	__atomic_store_n(&table_lock, 0, __ATOMIC_RELEASE);
	pthread_sigmask(SIG_SETMASK, saved, NULL);
}

/* Under the lock: the current slot, read from the kernel the first time. */
static struct sigaction *app_current(int sig)
{
	struct app_disposition *d = &table[sig];

	if (!d->known) {
		real_sigaction(sig, NULL, &d->sa[d->seq & 1]);
		d->known = 1;
	}
	return &d->sa[d->seq & 1];
}

/* Under the lock: publish a new disposition for sig. */
static void app_set(int sig, const struct sigaction *sa)
{
	struct app_disposition *d = &table[sig];

	d->sa[(d->seq + 1) & 1] = *sa;
	d->known = 1;
	/* Pairs with the acquire load of seq in app_get. */
	__atomic_store_n(&d->seq, d->seq + 1, __ATOMIC_RELEASE);
}

static bool is_fault_signal(int sig)
{
	return sig == SIGSEGV || sig == SIGBUS || sig == SIGFPE;
}

/* A signal the kernel raised for the instruction that runs (a fault, a
 * trap, a bad system call): it comes again if the handler is put off. */
static bool is_synchronous(int sig, const siginfo_t *si)
{
	return (is_fault_signal(sig) || sig == SIGILL || sig == SIGTRAP ||
		sig == SIGSYS) &&
	       si != NULL && si->si_code > 0;
}

static bool is_handler(const struct sigaction *sa)
{
	return sa->sa_handler != SIG_DFL && sa->sa_handler != SIG_IGN;
}

static void wrapper(int sig, siginfo_t *si, void *uc);

/* Under the lock: tell the kernel what runs for sig, given the app's sa. */
static int install(int sig, const struct sigaction *app)
{
	struct sigaction k;

	if (!is_handler(app) && !is_fault_signal(sig))
		return real_sigaction(sig, app, NULL);
	k = *app;
	k.sa_sigaction = wrapper;
	k.sa_flags = (is_handler(app) ? app->sa_flags : 0) | SA_SIGINFO;
	if (!is_handler(app))
		sigemptyset(&k.sa_mask);
	return real_sigaction(sig, &k, NULL);
}

/* The default action of a fault: restore it and let it happen again. */
static void default_fault(int sig, const siginfo_t *si)
{
	struct sigaction dfl;

	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	sigemptyset(&dfl.sa_mask);
	real_sigaction(sig, &dfl, NULL);
	/* A fault re-executes its instruction on return; a sent one must
	 * be sent again (it stays pending until the handler returns). */
	if (si == NULL || si->si_code <= 0)
		raise(sig);
}

__thread uint64_t ltx_signal_deferred
	__attribute__((tls_model("initial-exec")));

__thread unsigned ltx_own_syscall __attribute__((tls_model("initial-exec")));

/*
 * Defer sig (rt/signal.h): blocked first, so that the copy sent next
 * stays pending even under SA_NODEFER, and in the interrupted context's
 * mask, which the kernel restores on return.  Its bit is set before the
 * send: nothing but this thread reads it, and the release of the token
 * that looks at it (tx/serial.h) runs in this thread after the handler
 * returns.  Returns false, with the signal unblocked again, if it could
 * not be sent (a full queue of real-time signals): the handler then runs
 * now.
 */
static bool defer(int sig, const siginfo_t *si, ucontext_t *uc)
{
	uint64_t bit = (uint64_t)1 << (sig - 1);
	siginfo_t again = *si;
	sigset_t one;

	sigemptyset(&one);
	sigaddset(&one, sig);
	pthread_sigmask(SIG_BLOCK, &one, NULL);
	/* One read-modify-write: another signal's wrapper may nest here and
	 * defer its own. */
	__atomic_fetch_or(&ltx_signal_deferred, bit, __ATOMIC_RELAXED);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	/* To the thread itself, any si_code is allowed (a copy of what the
	 * kernel sent, with the sender's pid and uid). */
	if (syscall(SYS_rt_tgsigqueueinfo, getpid(), (pid_t)syscall(SYS_gettid),
		    sig, &again) != 0) {
		__atomic_fetch_and(&ltx_signal_deferred, ~bit,
				   __ATOMIC_RELAXED);
		pthread_sigmask(SIG_UNBLOCK, &one, NULL);
		return false;
	}
	sigaddset(&uc->uc_sigmask, sig);
	return true;
}

void ltx_signal_deliver_deferred(void)
{
	/* Taken and cleared in one step, before the unblock: a handler that
	 * runs at the unblock sees none. */
	uint64_t bits =
		__atomic_exchange_n(&ltx_signal_deferred, 0, __ATOMIC_RELAXED);
	sigset_t set;

	sigemptyset(&set);
	for (int sig = 1; sig <= 64 && sig < NSIG; sig++)
		if (bits & ((uint64_t)1 << (sig - 1)))
			sigaddset(&set, sig);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	pthread_sigmask(SIG_UNBLOCK, &set, NULL);
}

static void wrapper(int sig, siginfo_t *si, void *uc)
{
	int saved_errno = errno;
	struct sigaction app;
	bool fault = is_fault_signal(sig) && si != NULL && si->si_code > 0;
	void *token;

	/* A copy that met memory another thread freed (rt/peek.h). */
	if (fault && sig != SIGFPE && ltx_peek_fixup(uc)) {
		errno = saved_errno;
		return;
	}
	/* The transaction layer's say first: a fault it blames on
	 * inconsistent data restarts a transaction (no return). */
	if (fault && hooks.fault != NULL)
		hooks.fault(sig, uc);
	app_get(sig, &app);
	/* Not a one-shot handler: the kernel has already put the default
	 * action back, which the copy sent again would meet. */
	if (is_handler(&app) && !(app.sa_flags & SA_RESETHAND) && si != NULL &&
	    !is_synchronous(sig, si) && sig <= 64 && hooks.defer != NULL &&
	    hooks.defer(uc) && defer(sig, si, uc)) {
		errno = saved_errno;
		return;
	}
	token = hooks.enter != NULL ? hooks.enter(sig, is_handler(&app)) : NULL;
	if (!is_handler(&app)) {
		/* Only the fault signals are wrapped without a handler. */
		if (app.sa_handler == SIG_DFL || fault)
			default_fault(sig, si);
		errno = saved_errno;
		return;
	}
	if (app.sa_flags & SA_RESETHAND) {
		/* The kernel has reset it; say so to sigaction() too. */
		struct sigaction dfl;
		sigset_t saved;

		memset(&dfl, 0, sizeof(dfl));
		dfl.sa_handler = SIG_DFL;
		lock_table(&saved);
		app_set(sig, &dfl);
		unlock_table(&saved);
	}
	errno = saved_errno;
	if (app.sa_flags & SA_SIGINFO)
		app.sa_sigaction(sig, si, uc);
	else
		app.sa_handler(sig);
	saved_errno = errno;
	if (hooks.leave != NULL)
		hooks.leave(token);
	errno = saved_errno;
}

static bool managed(int sig)
{
	return sig > 0 && sig < NSIG && sig != SIGKILL && sig != SIGSTOP;
}

EXPORT int sigaction(int sig, const struct sigaction *act,
		     struct sigaction *oact)
{
	sigset_t saved;
	int rc = 0;

	if (!managed(sig))
		return real_sigaction(sig, act, oact);
	lock_table(&saved);
	if (oact != NULL)
		*oact = *app_current(sig);
	if (act != NULL) {
		rc = install(sig, act);
		if (rc == 0)
			app_set(sig, act);
	}
	unlock_table(&saved);
	if (rc == 0 && act != NULL && is_handler(act) &&
	    hooks.installed != NULL)
		hooks.installed();
	return rc;
}

static sighandler_t set_handler(int sig, sighandler_t h, int flags)
{
	struct sigaction sa, old;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = h;
	sa.sa_flags = flags;
	sigemptyset(&sa.sa_mask);
	if (sigaction(sig, &sa, &old) != 0)
		return SIG_ERR;
	return old.sa_handler;
}

/* signal(3): glibc's BSD semantics (restart, handler stays, sig blocked). */
EXPORT sighandler_t signal(int sig, sighandler_t h)
{
	return set_handler(sig, h, SA_RESTART);
}

EXPORT sighandler_t bsd_signal(int sig, sighandler_t h)
{
	return set_handler(sig, h, SA_RESTART);
}

/* sysv_signal(3): reset to the default on delivery, not blocked. */
EXPORT sighandler_t sysv_signal(int sig, sighandler_t h)
{
	return set_handler(sig, h, SA_RESETHAND | SA_NODEFER);
}

void ltx_signal_init(const struct ltx_signal_hooks *h)
{
	static const int faults[] = { SIGSEGV, SIGBUS, SIGFPE };
	sigset_t saved;

	hooks = *h;
	lock_table(&saved);
	for (size_t i = 0; i < sizeof(faults) / sizeof(faults[0]); i++) {
		int sig = faults[i];
		struct sigaction cur = *app_current(sig);

		/* A handler there already is the app's (or was made by
		 * libc before us): it stays the app's, behind the wrapper. */
		install(sig, &cur);
	}
	unlock_table(&saved);
}
