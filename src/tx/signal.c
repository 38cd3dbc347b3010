/* SPDX-License-Identifier: MIT */
/* What a signal does to a transaction: doom it, sandbox faults, handlers. */
#define _GNU_SOURCE
#include <ltx/tm.h>

#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <ucontext.h>

#include "cd/cd.h"
#include "rt/jump.h"
#include "rt/signal.h"
#include "tx/desc.h"
#include "tx/serial.h"
#include "tx/tx.h"

/*
 * The article (section 8.2.5): a signal aborts the transaction it lands
 * in.  rt/signal.c interposes the application's handlers and calls these
 * hooks around each (async-signal-safe: no lock, no malloc):
 *  - fault: a fault (SIGSEGV/SIGBUS/SIGFPE raised by an instruction) in a
 *    transaction that has a checkpoint and is doomed, or whose reads no
 *    longer hold, restarts it (TM_ABORT_FAULT, the signal number in bits
 *    24-31); the application's handler does not run;
 *  - enter: a live, revocable transaction of the thread is doomed
 *    (TM_ABORT_SIGNAL, the signal number in bits 24-31); if the
 *    application's handler runs, ltx_self points to the thread's handler
 *    descriptor meanwhile, so transactions begun in the handler never
 *    touch the interrupted one; a handler interrupting such a handler gets
 *    ltx_refuse_tx (its transactions fail at once);
 *  - leave: a transaction the handler left open is abandoned, and ltx_self
 *    points to the interrupted descriptor again;
 *  - defer: an asynchronous signal that lands while the thread holds the
 *    serial token waits until the token is given back, one that lands
 *    past a commit point until the write-back is over (on_defer).
 */

/*
 * Doom the thread's transaction from a handler: only limit, cause and
 * status (see desc.h).  An irrevocable transaction is not doomed: it never
 * aborts; nor is one past its commit point.  Returns whether it doomed.
 */
static bool doom_from_handler(struct ltx_tx *tx, unsigned cause)
{
	if (tx == &ltx_boot_tx || tx == &ltx_refuse_tx || tx->cd.irrevocable)
		return false;
	if (__atomic_load_n(&tx->status, __ATOMIC_RELAXED) != LTX_ACTIVE)
		return false;
	__atomic_store_n(&tx->cd.limit, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&tx->cause,
			 __atomic_load_n(&tx->cause, __ATOMIC_RELAXED) | cause,
			 __ATOMIC_RELAXED);
	/* The interrupted code must see limit 0 before status DOOMED. */
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	__atomic_store_n(&tx->status, LTX_DOOMED, __ATOMIC_RELAXED);
	return true;
}

/*
 * A transaction doomed before this signal may hold lines all the same: an
 * operation that a first signal interrupted just before its lock's CAS
 * takes the line after that handler returned, and the transaction's next
 * operation, which would let go of it, has not run yet.  A second signal
 * lets go of them as the first did (release_held changes only what is
 * still ours: every step is a CAS from our own lock word, or a clear of
 * our own reader mark), or its handler's transaction would wait for the
 * line for ever (seen in the visible mode, with a handler updating the
 * line the interrupted loop updates).
 */
static bool doomed_may_hold(const struct ltx_tx *tx)
{
	return tx != &ltx_boot_tx && tx != &ltx_refuse_tx &&
	       !tx->cd.irrevocable &&
	       __atomic_load_n(&tx->status, __ATOMIC_RELAXED) == LTX_DOOMED;
}

/*
 * The fault sandbox: restart tx at its checkpoint if the fault can be
 * blamed on inconsistent data.  Returns only when it cannot.
 */
static void sandbox(struct ltx_tx *tx, int sig, ucontext_t *uc)
{
	const struct ltx_cd_ops *ops;
	unsigned cause =
		TM_ABORT_FAULT | TM_ABORT_RETRY | ((unsigned)sig << 24);
	int st;

	if (tx == &ltx_boot_tx || tx == &ltx_refuse_tx)
		return;
	st = __atomic_load_n(&tx->status, __ATOMIC_RELAXED);
	if (ltx_status_idle(st) || st == LTX_COMMITTING ||
	    tx->checkpoint == NULL || tx->cd.irrevocable)
		return;
	if (st == LTX_ACTIVE) {
		ops = ltx_cd_ops_of(tx->mode);
		if (ops->valid_now == NULL || ops->valid_now(&tx->cd))
			return; /* a real bug: let it have its way */
		doom_from_handler(tx, cause);
	} else {
		__atomic_store_n(&tx->cause,
				 __atomic_load_n(&tx->cause, __ATOMIC_RELAXED) |
					 cause,
				 __ATOMIC_RELAXED);
	}
	/* The checkpoint saved no mask: put back the interrupted one. */
	pthread_sigmask(SIG_SETMASK, &uc->uc_sigmask, NULL);
	ltx_checkpoint_ops(tx->checkpoint)->restart(tx->checkpoint, cause);
}

static void on_fault(int sig, void *uc)
{
	sandbox(ltx_self, sig, uc);
}

/*
 * The handlers running on this thread, innermost last: what ltx_self was
 * when each began, and where its frame is, so that a jump out of them
 * (siglongjmp, rt/jump.h) can undo what leave would have.  Deeper nesting
 * than MAX_FRAMES is not tracked (the jump hook then keeps what it cannot
 * see).  Thread-local, touched by the thread and its handlers only.
 */
#define MAX_FRAMES 8

struct handler_frame {
	struct ltx_tx *prev; /* ltx_self before the handler */
	uintptr_t sp;	     /* a stack address inside the handler's frame */
	uintptr_t alt_lo, alt_hi; /* the alternate stack it runs on, or 0 */
	unsigned own;		  /* ltx_own_syscall of the interrupted code */
};

static __thread struct handler_frame frames[MAX_FRAMES]
	__attribute__((tls_model("initial-exec")));
static __thread unsigned nframes __attribute__((tls_model("initial-exec")));

/* The handler that runs next is on the alternate signal stack: its range
 * (a jump to the thread's own stack leaves it whatever the addresses). */
static void alt_stack_of(struct handler_frame *f)
{
	stack_t ss;

	f->alt_lo = f->alt_hi = 0;
	if (sigaltstack(NULL, &ss) == 0 && (ss.ss_flags & SS_ONSTACK)) {
		f->alt_lo = (uintptr_t)ss.ss_sp;
		f->alt_hi = (uintptr_t)ss.ss_sp + ss.ss_size;
	}
}

static void *on_enter(int sig, bool handler)
{
	struct ltx_tx *cur = ltx_self, *use;

	/* The article: the signal aborts the transaction, and its lines go
	 * back at once (their slots are EMPTY), so that the handler's own
	 * transactions can take them.  The interrupted operation may be
	 * halfway: release_held touches the lock words only; the logs are
	 * emptied by the next slow path, which finds the transaction doomed.
	 * (An LTX interrupted in the few instructions between its lock and
	 * its load may load the line as the handler left it: a value for a
	 * doomed transaction, which its next operation or commit reports.) */
	if (doom_from_handler(cur, TM_ABORT_SIGNAL | ((unsigned)sig << 24)) ||
	    doomed_may_hold(cur))
		ltx_cd_ops_of(cur->mode)->release_held(&cur->cd);
	if (!handler)
		return NULL;
	/* Transactions in the handler run on the handler descriptor. */
	if (cur == &ltx_boot_tx)
		use = cur;
	else if (cur->parent == NULL && cur->handler_tx != NULL &&
		 cur != &ltx_refuse_tx)
		use = cur->handler_tx;
	else
		use = &ltx_refuse_tx;
	if (nframes < MAX_FRAMES) {
		struct handler_frame *f = &frames[nframes];

		f->prev = cur;
		f->sp = (uintptr_t)__builtin_frame_address(0);
		alt_stack_of(f);
		/* The handler's code is the program's: none of ltx's system
		 * calls, whatever it interrupted (rt/signal.h); on_leave puts
		 * the mark back, a jump out leaves it clear (on_jump). */
		f->own = ltx_own_syscall;
		ltx_own_syscall = 0;
		/* Counted once filled: a handler that interrupts this one
		 * sees it whole. */
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		nframes++;
	}
	ltx_self = use;
	return cur;
}

/* The handler is over (returned, or left by a jump): back to the
 * descriptor it interrupted; a transaction it left open is abandoned. */
static void handler_over(struct ltx_tx *cur)
{
	struct ltx_tx *use = ltx_self;

	if (use != cur && use != &ltx_refuse_tx) {
		use->checkpoint = NULL;
		ltx_tx_abort(use);
	}
	if (cur != &ltx_boot_tx) {
		ltx_self = cur;
	} else if (ltx_tx_is_spare(use)) {
		/* A thread without a descriptor: the spare its handler
		 * borrowed goes back, its transaction ended (tx.c). */
		ltx_self = &ltx_boot_tx;
		ltx_tx_give_back_spare(use);
	}
}

static void on_leave(void *token)
{
	struct ltx_tx *cur = token;

	if (nframes > 0 && frames[nframes - 1].prev == cur) {
		ltx_own_syscall = frames[nframes - 1].own;
		nframes--;
	}
	handler_over(cur);
}

/* Does a jump to stack pointer sp leave the handler of frame f? */
static bool leaves(const struct handler_frame *f, uintptr_t sp)
{
	if (f->alt_hi != 0)
		return sp < f->alt_lo || sp >= f->alt_hi || sp > f->sp;
	return sp > f->sp;
}

/*
 * A longjmp or siglongjmp (rt/jump.h) to stack pointer sp.  First the
 * handlers it leaves are over, as if they had returned (but for the mark
 * of ltx's own system calls: see below).  A transaction they interrupted
 * was doomed by the signal (the article: a jump out of the handler
 * aborts it): it ends now, unless it has a restart point that
 * the jump lands inside of (the block then restarts at its next
 * operation).  Then the restartable block of the current descriptor, if
 * the jump lands in its frame or an outer one: its transaction ends and
 * the block is forgotten (ltx_tx_leave_block).
 */
static void on_jump(uintptr_t sp)
{
	bool left_handler = false;
	struct ltx_tx *tx;

	while (nframes > 0 && leaves(&frames[nframes - 1], sp)) {
		struct ltx_tx *prev = frames[--nframes].prev;

		handler_over(prev);
		left_handler = true;
	}
	/* The jump lands in the program's code (no setjmp is made inside
	 * a system call that ltx marks as its own), out of whatever marked
	 * call the left handler interrupted: the mark stays clear, as
	 * on_enter made it. */
	if (left_handler)
		ltx_own_syscall = 0;
	tx = ltx_self;
	if (tx == &ltx_boot_tx || tx == &ltx_refuse_tx)
		return;
	if (tx->checkpoint != NULL && sp >= ltx_checkpoint_sp(tx->checkpoint)) {
		ltx_tx_leave_block(tx);
		return;
	}
	if (left_handler && tx->checkpoint == NULL &&
	    __atomic_load_n(&tx->status, __ATOMIC_RELAXED) == LTX_DOOMED)
		ltx_tx_abort(tx); /* no backoff: nobody retries it */
}

/*
 * Whether the interrupted context is at a system call (x86-64): the kernel
 * interrupted a blocking one, which returns -EINTR after the syscall
 * instruction, or will restart it, with the instruction pointer moved back
 * onto it (SA_RESTART, and the restart_syscall convention); or the signal
 * landed just before one.  Read only within the instruction's page.
 */
static bool at_syscall(const ucontext_t *uc)
{
#if defined(__x86_64__)
	const unsigned char *ip =
		(const unsigned char *)uc->uc_mcontext.gregs[REG_RIP];
	uintptr_t off = (uintptr_t)ip & 4095;

	if (off <= 4094 && ip[0] == 0x0f && ip[1] == 0x05)
		return true;
	return off >= 2 && uc->uc_mcontext.gregs[REG_RAX] == -EINTR &&
	       ip[-2] == 0x0f && ip[-1] == 0x05;
#else
	(void)uc;
	return false;
#endif
}

/*
 * A signal whose handler would run while this thread holds the serial
 * token (an irrevocable transaction, or an exclusive one: GCC's serial
 * modes, a GCC transaction of a thread alone) waits until the token is
 * given back (tx/serial.h, ltx_serial_release): such a transaction cannot
 * be doomed, and a transaction in the handler would wait for the token
 * for ever (the exclusive strength, or the serial fallback of one that
 * meets a line the holder keeps), with its holder stopped under it.  So
 * the handler runs right after the transaction, and transactions in it
 * run as on any thread.  The token names its holder's descriptor; the
 * thread's own stores to it are in order for its handler, and no other
 * thread stores this descriptor there, so a relaxed load tells.  Counted
 * from the CAS that takes the token, not from the flag or the status, so
 * that the steps around them (taking it before the begin, giving it back
 * after the end) are covered too.  Not deferred: a signal that interrupts
 * a system call of the program (a blocking read in an irrevocable
 * transaction must still see its EINTR, and the program's Ctrl-C handler
 * must still run), where the handler runs at once as before, and
 * transactions in it would wait.  ltx's own system calls, where it waits
 * holding the token (an exclusive transaction's wait for the others to
 * end, its heavy fence), are no such case: they are marked
 * (ltx_own_syscall) and the signal waits.
 *
 * A signal that lands past a commit point, while the transaction writes
 * back (LTX_COMMITTING), waits for the commit's end, whether or not the
 * thread holds the token: the transaction can no longer be doomed, it
 * holds its lines until the write-back is over, and a transaction in the
 * handler that needs one of them would fail for ever (a GCC transaction
 * or a TM_ATOMIC block would retry for ever) with the holder stopped
 * under it.  The write-back makes no blocking call, so the handler runs
 * soon, at ltx_tx_committed (tx/tx.h), and a system call there is none of
 * the program's (no EINTR to keep).  on_defer notes it in the descriptor
 * (signal_wait), which the commit's end reads after its status store;
 * rt/signal.c keeps the signal pending meanwhile (if it cannot, the
 * handler runs now, as before, and the flag costs the commit's end one
 * look at ltx_signal_deferred).
 */
static bool on_defer(void *uc)
{
	struct ltx_tx *cur = ltx_self;
	uintptr_t token;

	if (cur == &ltx_boot_tx || cur == &ltx_refuse_tx)
		return false;
	if (__atomic_load_n(&cur->status, __ATOMIC_RELAXED) == LTX_COMMITTING) {
		/* Past the commit point, writing back (above). */
		__atomic_store_n(&cur->signal_wait, 1, __ATOMIC_RELAXED);
		return true;
	}
	token = __atomic_load_n(&ltx_serial_token, __ATOMIC_RELAXED);
	if ((token & ~LTX_SERIAL_EXCL) != (uintptr_t)cur)
		return false;
	/* Deferred, unless it interrupted a system call of the program's
	 * (not one of ltx's own, rt/signal.h): that handler runs now. */
	return ltx_own_syscall != 0 || !at_syscall(uc);
}

bool ltx_tx_in_handler(void)
{
	return nframes != 0;
}

/* A handler was installed: a handler on a thread without a descriptor
 * will need a spare (tx.c), made now, outside handlers. */
static void on_installed(void)
{
	if (nframes == 0)
		ltx_tx_make_spares();
}

/* The commit is over: the signals that waited for it (ltx_tx_committed). */
bool ltx_tx_deliver_waiting(struct ltx_tx *tx)
{
	__atomic_store_n(&tx->signal_wait, 0, __ATOMIC_RELAXED);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	if (ltx_signal_deferred != 0)
		ltx_signal_deliver_deferred();
	return true;
}

void ltx_tx_signals_init(void)
{
	static const struct ltx_signal_hooks hooks = {
		.fault = on_fault,
		.enter = on_enter,
		.leave = on_leave,
		.defer = on_defer,
		.installed = on_installed,
	};

	ltx_signal_init(&hooks);
	ltx_jump_init(on_jump);
}
