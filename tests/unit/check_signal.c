/* SPDX-License-Identifier: MIT */
/* Signals: handler wrapping, doom on delivery, handler transactions, the
 * fault sandbox, in every mode (the signal storm over bank transfers is
 * stress/check_signal_storm.c).  Not for TSan (signal handlers touching
 * the descriptor). */
#define _GNU_SOURCE
#include <ltx/tm.h>

#include <check.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ltx-test.h"

static volatile sig_atomic_t hits;
static volatile sig_atomic_t handler_saw_tx;
static tm_word_t a __attribute__((aligned(64)));
static tm_word_t b __attribute__((aligned(64)));

static void count_hit(int sig)
{
	(void)sig;
	hits++;
	handler_saw_tx = tm_in_transaction();
}

START_TEST(test_sigaction_reports_application_handler)
{
	struct sigaction sa, old;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = count_hit;
	sa.sa_flags = SA_RESTART | SA_NODEFER;
	sigemptyset(&sa.sa_mask);
	sigaddset(&sa.sa_mask, SIGUSR2);
	ck_assert_int_eq(sigaction(SIGUSR1, &sa, NULL), 0);
	ck_assert_int_eq(sigaction(SIGUSR1, NULL, &old), 0);
	ck_assert_ptr_eq(old.sa_handler, count_hit);
	ck_assert_int_eq(old.sa_flags & (SA_RESTART | SA_NODEFER | SA_SIGINFO),
			 SA_RESTART | SA_NODEFER);
	ck_assert(sigismember(&old.sa_mask, SIGUSR2));
	ck_assert_ptr_eq(signal(SIGUSR1, SIG_DFL), count_hit);
	ck_assert_ptr_eq(signal(SIGUSR1, count_hit), SIG_DFL);
	hits = 0;
	raise(SIGUSR1);
	ck_assert_int_eq(hits, 1);
	signal(SIGUSR1, SIG_DFL);
}
END_TEST

START_TEST(test_resethand_handler_runs_once_then_default)
{
	struct sigaction old;

	ltx_test_set_handler(SIGUSR2, count_hit, SA_RESETHAND);
	hits = 0;
	raise(SIGUSR2);
	ck_assert_int_eq(hits, 1);
	ck_assert_int_eq(sigaction(SIGUSR2, NULL, &old), 0);
	ck_assert_ptr_eq(old.sa_handler, SIG_DFL);
}
END_TEST

START_TEST(test_fault_signals_report_default_disposition)
{
	struct sigaction old;

	ck_assert_int_eq(sigaction(SIGSEGV, NULL, &old), 0);
	ck_assert_ptr_eq(old.sa_handler, SIG_DFL);
}
END_TEST

START_TEST(test_signal_dooms_the_transaction_it_lands_in)
{
	unsigned st;

	if (!ltx_test_use_mode(_i))
		return;
	ltx_test_set_handler(SIGUSR1, count_hit, 0);
	hits = 0;
	a = 3;
	tm_st(&a, tm_lt(&a) + 1);
	raise(SIGUSR1);
	ck_assert_int_eq(hits, 1);
	ck_assert_uint_eq(tm_lt(&b), 0); /* doomed: loads return 0 */
	ck_assert(!tm_commit());
	st = tm_status();
	ck_assert(st & TM_ABORT_SIGNAL);
	ck_assert_uint_eq(TM_ABORT_CODE(st), SIGUSR1);
	ck_assert_uint_eq(a, 3);
	/* Outside a transaction a signal dooms nothing. */
	raise(SIGUSR1);
	ck_assert_int_eq(hits, 2);
	tm_st(&a, 4);
	ck_assert(tm_commit());
	ck_assert_uint_eq(a, 4);
	signal(SIGUSR1, SIG_DFL);
}
END_TEST

static void handler_transaction(int sig)
{
	(void)sig;
	hits++;
	handler_saw_tx = tm_in_transaction();
	TM_ATOMIC
		tm_st(&b, tm_lt(&b) + 1);
}

START_TEST(test_handler_transaction_leaves_interrupted_one_intact)
{
	if (!ltx_test_use_mode(_i))
		return;
	ltx_test_set_handler(SIGUSR1, handler_transaction, 0);
	a = 10;
	b = 0;
	hits = 0;
	handler_saw_tx = 1;
	/* Live transaction holding a: the handler's own one commits. */
	tm_st(&a, tm_ltx(&a) + 1);
	raise(SIGUSR1);
	ck_assert_int_eq(hits, 1);
	ck_assert_int_eq(handler_saw_tx, 0);
	ck_assert_uint_eq(b, 1);
	ck_assert(tm_in_transaction());
	ck_assert(!tm_commit());
	ck_assert_uint_eq(a, 10);
	/* The interrupted thread's descriptor still works. */
	TM_ATOMIC
		tm_st(&a, tm_lt(&a) + 1);
	ck_assert_uint_eq(a, 11);
	signal(SIGUSR1, SIG_DFL);
}
END_TEST

/*
 * A transaction in a signal handler runs in the mode set last: the
 * handler's descriptor, idle, is set for a new LTX_MODE as the thread's
 * own is.  (It was left in the former mode: the invisible mode's fast
 * paths, which count no bus request.)
 */
START_TEST(test_handler_transaction_runs_in_the_mode_set_since)
{
	struct tm_bus_stats before, after;

	if (!ltx_test_use_mode(0))
		return;
	ltx_test_set_handler(SIGUSR1, handler_transaction, 0);
	a = 0;
	b = 0;
	hits = 0;
	/* The thread's descriptor, and with it the handler's. */
	TM_ATOMIC
		tm_st(&a, tm_lt(&a) + 1);
	raise(SIGUSR1);
	ck_assert_uint_eq(b, 1);
	if (!ltx_test_use_mode(1))
		return;
	ck_assert_int_eq(tm_bus_stats(&before), 0);
	raise(SIGUSR1);
	ck_assert_int_eq(hits, 2);
	ck_assert_uint_eq(b, 2);
	ck_assert_int_eq(tm_bus_stats(&after), 0);
	/* The visible mode's T_READ of b (and its T_RFO). */
	ck_assert_uint_gt(after.t_read, before.t_read);
	signal(SIGUSR1, SIG_DFL);
}
END_TEST

/*
 * A signal that lands in an irrevocable transaction does not doom it: its
 * handler runs when the transaction ends, not inside it (the transaction
 * holds the serial token: tx/signal.c, on_defer).
 */
START_TEST(test_irrevocable_transaction_is_not_doomed_by_signal)
{
	sigset_t pending;

	if (!ltx_test_use_mode(_i))
		return;
	ltx_test_set_handler(SIGUSR1, count_hit, 0);
	a = 1;
	hits = 0;
	handler_saw_tx = 1;
	ck_assert(tm_irrevocable());
	tm_st(&a, 2);
	raise(SIGUSR1);
	ck_assert_int_eq(hits, 0);
	/* Pending, as a blocked signal is. */
	ck_assert_int_eq(sigpending(&pending), 0);
	ck_assert(sigismember(&pending, SIGUSR1));
	ck_assert(tm_commit());
	ck_assert_int_eq(hits, 1);
	ck_assert_int_eq(handler_saw_tx, 0);
	ck_assert_uint_eq(a, 2);
	/* Delivered once, and no longer blocked. */
	ck_assert_int_eq(sigpending(&pending), 0);
	ck_assert(!sigismember(&pending, SIGUSR1));
	raise(SIGUSR1);
	ck_assert_int_eq(hits, 2);
	signal(SIGUSR1, SIG_DFL);
}
END_TEST

static void handler_increments_a(int sig)
{
	(void)sig;
	hits++;
	TM_ATOMIC
		tm_st(&a, tm_lt(&a) + 1);
}

/*
 * A handler's transaction on the line an interrupted irrevocable
 * transaction holds.  Run inside it, the handler's transaction could
 * never have the line (the holder does not let go of it until it
 * commits, and it does not run again until the handler returns), and its
 * serial fallback would wait for the token for ever.  It runs after the
 * commit, and sees it.
 */
START_TEST(test_handler_transaction_runs_after_the_irrevocable_one)
{
	if (!ltx_test_use_mode(_i))
		return;
	ltx_test_set_handler(SIGUSR1, handler_increments_a, 0);
	a = 1;
	hits = 0;
	ck_assert(tm_irrevocable());
	tm_st(&a, tm_lt(&a) + 1);
	raise(SIGUSR1);
	ck_assert_int_eq(hits, 0);
	ck_assert_uint_eq(tm_lt(&a), 2);
	ck_assert(tm_commit());
	ck_assert_int_eq(hits, 1);
	ck_assert_uint_eq(a, 3);
	signal(SIGUSR1, SIG_DFL);
}
END_TEST

/*
 * Signals from another thread, as fast as it can send them, at a thread
 * that commits updates of a in a loop, with a handler whose transaction
 * updates a too.  Some land past the commit point, while the thread
 * writes a back (LTX_COMMITTING): that transaction cannot be doomed, and
 * the handler's could never have a, its holder stopped under it.  The
 * handler runs right after the commit (tx/signal.c, on_defer), so every
 * increment counts: a ends at the loop's count plus the handler's.
 */
#define STORM_COMMITS 20000
#define STORM_HITS    2000

static volatile unsigned long storm_commits;
static pthread_t storm_target;
static volatile int storm_done;

static void *storm_sender(void *arg)
{
	(void)arg;
	while (!storm_done) {
		pthread_kill(storm_target, SIGUSR1);
		for (volatile int i = 0; i < 200; i++)
			;
	}
	return NULL;
}

START_TEST(test_handler_transaction_waits_for_a_commit_writing_back)
{
	pthread_t sender;

	if (!ltx_test_use_mode(_i))
		return;
	ltx_test_set_handler(SIGUSR1, handler_increments_a, SA_RESTART);
	a = 0;
	hits = 0;
	storm_done = 0;
	storm_target = pthread_self();
	ck_assert_int_eq(pthread_create(&sender, NULL, storm_sender, NULL), 0);
	/* At least STORM_COMMITS, and until some signals came. */
	storm_commits = 0;
	while (storm_commits < STORM_COMMITS || hits < STORM_HITS) {
		TM_ATOMIC
			tm_st(&a, tm_lt(&a) + 1);
		storm_commits++;
	}
	storm_done = 1;
	ck_assert_int_eq(pthread_join(sender, NULL), 0);
	signal(SIGUSR1, SIG_IGN);
	ck_assert_uint_eq(a, storm_commits + (tm_word_t)hits);
	signal(SIGUSR1, SIG_DFL);
}
END_TEST

static int alarm_pipe[2];

/*
 * A blocking system call in an irrevocable transaction is still
 * interrupted by a signal: its handler runs at once, and the call fails
 * with EINTR (no SA_RESTART), as without a transaction.
 */
START_TEST(test_blocking_call_in_irrevocable_transaction_sees_eintr)
{
	struct itimerval it = { { 0, 0 }, { 0, 50000 } };
	char c;
	ssize_t n;

	if (!ltx_test_use_mode(_i))
		return;
	ck_assert_int_eq(pipe(alarm_pipe), 0);
	ltx_test_set_handler(SIGALRM, count_hit, 0);
	hits = 0;
	ck_assert(tm_irrevocable());
	tm_st(&a, 5);
	ck_assert_int_eq(setitimer(ITIMER_REAL, &it, NULL), 0);
	n = read(alarm_pipe[0], &c, 1); /* nobody writes: blocks */
	ck_assert_int_eq(n, -1);
	ck_assert_int_eq(errno, EINTR);
	ck_assert_int_eq(hits, 1); /* at once, in the transaction */
	ck_assert(tm_commit());
	ck_assert_uint_eq(a, 5);
	signal(SIGALRM, SIG_DFL);
	close(alarm_pipe[0]);
	close(alarm_pipe[1]);
}
END_TEST

/* The zombie: a pointer read, then freed and unmapped by a commit. */
struct node {
	tm_word_t value;
};

static tm_word_t shared_word;
static volatile int zombie_stage;

static void *free_and_unmap(void *arg)
{
	struct node *n;

	(void)arg;
	while (__atomic_load_n(&zombie_stage, __ATOMIC_ACQUIRE) != 1)
		sched_yield();
	n = (struct node *)tm_lt(&shared_word);
	tm_st(&shared_word, 0);
	if (arg != NULL) {
		/* Visible mode: the reader holds the line shared, so this
		 * writer's request is refused (the requester loses) and no
		 * zombie can arise; the node stays mapped. */
		ck_assert(!tm_commit());
		ck_assert(tm_status() & TM_ABORT_CONFLICT);
		__atomic_store_n(&zombie_stage, 2, __ATOMIC_RELEASE);
		return NULL;
	}
	ck_assert(tm_commit());
	ck_assert_int_eq(munmap(n, (size_t)sysconf(_SC_PAGESIZE)), 0);
	__atomic_store_n(&zombie_stage, 2, __ATOMIC_RELEASE);
	return NULL;
}

START_TEST(test_zombie_dereferencing_unmapped_memory_restarts)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	struct node *n = mmap(NULL, page, PROT_READ | PROT_WRITE,
			      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	volatile int runs = 0;
	volatile unsigned why = 0;
	volatile tm_word_t got = 1;
	bool visible = strcmp(ltx_test_modes[_i], "visible") == 0;
	pthread_t t;

	if (!ltx_test_use_mode(_i))
		return;
	ck_assert_ptr_ne(n, MAP_FAILED);
	n->value = 77;
	shared_word = (tm_word_t)n;
	zombie_stage = 0;
	ck_assert_int_eq(pthread_create(&t, NULL, free_and_unmap,
					visible ? (void *)1 : NULL),
			 0);
	TM_ATOMIC {
		struct node *p;

		if (runs++ == 1)
			why = tm_status();
		p = (struct node *)tm_lt(&shared_word);
		if (runs == 1) {
			__atomic_store_n(&zombie_stage, 1, __ATOMIC_RELEASE);
			while (__atomic_load_n(&zombie_stage,
					       __ATOMIC_ACQUIRE) != 2)
				sched_yield();
		}
		got = p != NULL ? tm_lt(&p->value) : 0;
	}
	pthread_join(t, NULL);
	if (visible) {
		/* Visible: the reader was never doomed. */
		ck_assert_int_eq(runs, 1);
		ck_assert_uint_eq(got, 77);
		ck_assert_int_eq(munmap(n, page), 0);
		return;
	}
	ck_assert_int_eq(runs, 2);
	ck_assert_uint_eq(got, 0);
	ck_assert(why & (TM_ABORT_FAULT | TM_ABORT_CONFLICT));
	if (why & TM_ABORT_FAULT)
		ck_assert_uint_eq(TM_ABORT_CODE(why), SIGSEGV);
}
END_TEST

static tm_word_t null_holder;

/* In a child: a NULL dereference in a valid transaction. */
/* The NULL store is the point of the test: UBSan must not catch it first. */
__attribute__((no_sanitize("undefined"))) static int
run_null_deref_child(bool with_handler)
{
	pid_t pid = fork();
	int status;

	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		if (with_handler)
			signal(SIGSEGV, (void (*)(int))_exit);
		alarm(20);
		TM_ATOMIC {
			volatile tm_word_t *p =
				(volatile tm_word_t *)tm_lt(&null_holder);

			*p = 1;
		}
		_exit(0);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	return status;
}

START_TEST(test_null_dereference_in_valid_transaction_kills)
{
	int status;

	if (!ltx_test_use_mode(_i))
		return;
	null_holder = 0;
	status = run_null_deref_child(false);
	ck_assert(WIFSIGNALED(status));
	ck_assert_int_eq(WTERMSIG(status), SIGSEGV);
	/* With an application handler, the handler gets it (_exit(11)). */
	status = run_null_deref_child(true);
	ck_assert(WIFEXITED(status));
	ck_assert_int_eq(WEXITSTATUS(status), SIGSEGV);
}
END_TEST

/*
 * A thread that used transactions lets go of its descriptor as it exits
 * (ltx's thread-specific destructor).  A handler that ran on it after that
 * would have its transactions take a new descriptor and make state for
 * it, locking and calling malloc in a signal handler: a deadlock when the
 * signal had interrupted libc's own teardown holding the heap's lock
 * (seen: a GCC transaction in a SIGALRM handler, landing in
 * __libc_thread_freeres).  From the release on, the thread's signals are
 * blocked: here a destructor that runs after ltx's (in a later round of
 * destructors) finds SIGUSR1 blocked, and the SIGUSR1 it sends its own
 * thread never runs the handler there.
 */
static pthread_key_t late_key;
static volatile pid_t exiting_tid;
static volatile sig_atomic_t ran_on_exiting, late_saw_blocked, late_ran;

static void handler_on_which_thread(int sig)
{
	(void)sig;
	if (gettid() == exiting_tid)
		ran_on_exiting = 1;
	TM_ATOMIC
		tm_st(&b, tm_lt(&b) + 1);
}

static void late_destructor(void *arg)
{
	sigset_t cur;

	/* Round 1 may come before ltx's destructor: again in round 2. */
	if (arg == (void *)1) {
		pthread_setspecific(late_key, (void *)2);
		return;
	}
	exiting_tid = gettid();
	pthread_sigmask(SIG_SETMASK, NULL, &cur);
	late_saw_blocked = sigismember(&cur, SIGUSR1);
	pthread_kill(pthread_self(), SIGUSR1);
	late_ran = 1;
}

static void *exiting_thread(void *arg)
{
	sigset_t usr1;

	(void)arg;
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	pthread_sigmask(SIG_UNBLOCK, &usr1, NULL);
	TM_ATOMIC
		tm_st(&a, tm_lt(&a) + 1);
	pthread_setspecific(late_key, (void *)1);
	return NULL;
}

START_TEST(test_no_handler_runs_on_a_thread_past_its_descriptor)
{
	pthread_t t;
	sigset_t usr1, saved;

	if (!ltx_test_use_mode(_i))
		return;
	ltx_test_set_handler(SIGUSR1, handler_on_which_thread, 0);
	a = b = 0;
	ran_on_exiting = late_saw_blocked = late_ran = 0;
	exiting_tid = 0;
	ck_assert_int_eq(pthread_key_create(&late_key, late_destructor), 0);
	/* Only the exiting thread takes SIGUSR1 (it unblocks it). */
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &usr1, &saved);
	ck_assert_int_eq(pthread_create(&t, NULL, exiting_thread, NULL), 0);
	ck_assert_int_eq(pthread_join(t, NULL), 0);
	pthread_sigmask(SIG_SETMASK, &saved, NULL);
	ck_assert_int_eq(late_ran, 1);
	ck_assert_uint_eq(a, 1);
	ck_assert_int_eq(ran_on_exiting, 0);
	ck_assert_int_eq(late_saw_blocked, 1);
	ck_assert_uint_eq(b, 0);
	pthread_key_delete(late_key);
	signal(SIGUSR1, SIG_DFL);
}
END_TEST

/*
 * A handler's transaction on a thread that has never used ltx, landing
 * while the thread is inside malloc: the handler may take no lock the
 * thread may hold and may not allocate.  (It took the thread's
 * descriptor there, with the registry lock and posix_memalign: a
 * deadlock on the heap's lock when the signal had interrupted a
 * malloc of the same arena.)  No thread has used ltx before: the first
 * handler's transaction is the process's first.  Each round is a new
 * thread that loops on malloc and free of blocks too big for glibc's
 * thread cache (so each call takes its arena's lock) until its handler
 * has run once.
 */
#define FRESH_ROUNDS 300

static volatile sig_atomic_t fresh_ran;

static void handler_on_fresh_thread(int sig)
{
	(void)sig;
	TM_ATOMIC
		tm_st(&b, tm_lt(&b) + 1);
	fresh_ran = 1;
}

/* Unblock SIGUSR1, say so in *ready (if not NULL), and malloc and free
 * until *stop (no ltx call). */
static void malloc_until(volatile sig_atomic_t *ready,
			 volatile sig_atomic_t *stop)
{
	sigset_t usr1;
	unsigned i = 0;

	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	pthread_sigmask(SIG_UNBLOCK, &usr1, NULL);
	if (ready != NULL)
		*ready = 1;
	while (!*stop) {
		char *p = malloc(2048 + (i++ % 64) * 64);

		if (p == NULL)
			abort();
		p[0] = (char)i;
		free(p);
	}
}

static void *malloc_loop(void *arg)
{
	malloc_until(arg, &fresh_ran);
	return NULL;
}

START_TEST(test_handler_on_a_thread_without_descriptor_inside_malloc)
{
	sigset_t usr1, saved;

	if (!ltx_test_use_mode(_i))
		return;
	ltx_test_set_handler(SIGUSR1, handler_on_fresh_thread, 0);
	b = 0;
	/* Only the round's thread takes SIGUSR1 (it unblocks it). */
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &usr1, &saved);
	for (unsigned r = 0; r < FRESH_ROUNDS; r++) {
		volatile sig_atomic_t ready = 0;
		pthread_t t;

		fresh_ran = 0;
		ck_assert_int_eq(
			pthread_create(&t, NULL, malloc_loop, (void *)&ready),
			0);
		while (!ready)
			sched_yield();
		for (volatile unsigned spin = 0; spin < r % 97 * 50; spin++)
			;
		ck_assert_int_eq(pthread_kill(t, SIGUSR1), 0);
		ck_assert_int_eq(pthread_join(t, NULL), 0);
	}
	pthread_sigmask(SIG_SETMASK, &saved, NULL);
	ck_assert_uint_eq(b, FRESH_ROUNDS);
	signal(SIGUSR1, SIG_DFL);
}
END_TEST

/*
 * More threads without a descriptor than there are spares, each in a
 * handler's transaction at once: the handlers that find every spare out
 * wait for one (refused, their increments would be lost).  Six threads loop on
 * malloc and free, the test sends each of them SIGUSR1 over and over; every
 * handler adds one to b, counts itself and sleeps a little before it returns
 * (keeping its spare); b must equal the handlers run, and no run may hang.
 */
#define CROWD_THREADS 6
#define CROWD_SIGNALS 200

static volatile sig_atomic_t crowd_stop;
static unsigned long crowd_handled;

static void handler_in_crowd(int sig)
{
	(void)sig;
	TM_ATOMIC
		tm_st(&b, tm_lt(&b) + 1);
	__atomic_add_fetch(&crowd_handled, 1, __ATOMIC_RELAXED);
	/* The spare stays borrowed until the handler returns: a while, so
	 * that more handlers than spares overlap (nanosleep: safe here). */
	nanosleep(&(struct timespec){ 0, 200000 }, NULL);
}

static void *crowd_loop(void *arg)
{
	(void)arg;
	malloc_until(NULL, &crowd_stop);
	return NULL;
}

START_TEST(test_more_handlers_without_descriptors_than_spares)
{
	pthread_t t[CROWD_THREADS];
	sigset_t usr1, saved;

	if (!ltx_test_use_mode(_i))
		return;
	ltx_test_set_handler(SIGUSR1, handler_in_crowd, 0);
	tm_st(&a, 1);
	ck_assert(tm_commit());
	b = 0;
	crowd_handled = 0;
	crowd_stop = 0;
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &usr1, &saved);
	for (int i = 0; i < CROWD_THREADS; i++)
		ck_assert_int_eq(pthread_create(&t[i], NULL, crowd_loop, NULL),
				 0);
	for (int n = 0; n < CROWD_SIGNALS; n++) {
		for (int i = 0; i < CROWD_THREADS; i++)
			ck_assert_int_eq(pthread_kill(t[i], SIGUSR1), 0);
		usleep(100);
	}
	crowd_stop = 1;
	for (int i = 0; i < CROWD_THREADS; i++)
		ck_assert_int_eq(pthread_join(t[i], NULL), 0);
	pthread_sigmask(SIG_SETMASK, &saved, NULL);
	/* Signals sent while one is pending merge: at least one each. */
	ck_assert_uint_ge(crowd_handled, CROWD_THREADS);
	ck_assert_uint_eq(b, crowd_handled);
	signal(SIGUSR1, SIG_DFL);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("signal");
	TCase *tc = tcase_create("signal");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_sigaction_reports_application_handler);
	tcase_add_test(tc, test_resethand_handler_runs_once_then_default);
	tcase_add_test(tc, test_fault_signals_report_default_disposition);
	tcase_add_loop_test(tc, test_signal_dooms_the_transaction_it_lands_in,
			    0, LTX_TEST_NMODES);
	tcase_add_loop_test(
		tc, test_handler_transaction_leaves_interrupted_one_intact, 0,
		LTX_TEST_NMODES);
	tcase_add_test(tc, test_handler_transaction_runs_in_the_mode_set_since);
	tcase_add_loop_test(
		tc, test_no_handler_runs_on_a_thread_past_its_descriptor, 0,
		LTX_TEST_NMODES);
	tcase_add_loop_test(
		tc, test_irrevocable_transaction_is_not_doomed_by_signal, 0,
		LTX_TEST_NMODES);
	tcase_add_loop_test(
		tc, test_blocking_call_in_irrevocable_transaction_sees_eintr, 0,
		LTX_TEST_NMODES);
	tcase_add_loop_test(tc,
			    test_zombie_dereferencing_unmapped_memory_restarts,
			    0, LTX_TEST_NMODES);
	tcase_add_loop_test(tc,
			    test_null_dereference_in_valid_transaction_kills, 0,
			    LTX_TEST_NMODES);
	suite_add_tcase(s, tc);
	/* A hang is the failure here: a short timeout. */
	tc = tcase_create("deferred");
	tcase_set_timeout(tc, 20);
	tcase_add_loop_test(
		tc, test_handler_transaction_runs_after_the_irrevocable_one, 0,
		LTX_TEST_NMODES);
	tcase_add_loop_test(
		tc, test_handler_transaction_waits_for_a_commit_writing_back, 0,
		LTX_TEST_NMODES);
	tcase_add_loop_test(
		tc, test_handler_on_a_thread_without_descriptor_inside_malloc,
		0, LTX_TEST_NMODES);
	tcase_add_loop_test(tc,
			    test_more_handlers_without_descriptors_than_spares,
			    0, LTX_TEST_NMODES);
	suite_add_tcase(s, tc);
	return ltx_test_run(s);
}
