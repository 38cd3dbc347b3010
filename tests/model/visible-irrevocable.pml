/* SPDX-License-Identifier: MIT */
/* Promela model of the visible mode with an irrevocable transaction. */

/*
 * visible.pml plus what issue 13 added: one irrevocable transaction (it
 * holds the serial token, so there is never more than one) that never
 * fails on a line another transaction holds.  Threads 0 and 1 run
 * ordinary transactions (ATTEMPTS_0 and ATTEMPTS_1 attempts), each of the
 * kinds of visible.pml (INC_LT, INC_LTX, READ); thread IRR runs one
 * irrevocable transaction, of any of the three kinds, which may begin at
 * any point.  Two lines, x = data[0] and y = data[1], start equal.
 *
 * What is modelled, each shared access its own atomic step (sequential
 * consistency: the Dekker pairs of src/cd/visible.c and cd/cd.h need the
 * seq_cst orders the C code gives them), with the thread's own variables
 * updated in the same step:
 *   status   st[t], thread t's transaction: IDLE, ACTIVE, DOOMED,
 *            COMMITTING (tx.c, struct ltx_tx's status); begin stores
 *            ACTIVE
 *   LT       (visible.c, vis_load, read_lock) mark the reader slot; load
 *            the owner word; another's: take the mark back and doom
 *            itself (tx.c, ltx_tx_doom: store DOOMED); else load the
 *            line, then the status (tx.c, ltx_tx_load_at): not ACTIVE,
 *            the load returns 0 and the transaction is doomed
 *   LTX/ST   (visible.c, write_lock) CAS the owner word from 0 to our
 *            id; failing, doom itself.  Then load the other threads'
 *            reader marks (others_read: the three bytes lie in one 64-bit
 *            word, one load); a mark seen, let the word go and doom
 *            itself.  Letting go is a CAS from our id to 0 (d1d4045);
 *            with -DBROKEN_RELEASE it is the plain store of 0 that came
 *            before.  LTX then loads the line and the status, as LT does
 *   commit   (tx.c, ltx_tx_commit, commit_live, commit_point) read-only:
 *            load the status, ACTIVE commits; update: the CAS of the
 *            status from ACTIVE to COMMITTING, failing, abort.  Then write
 *            each line back in write-set order, store 0 in the owner
 *            words (visible.c, release_locks, committed), clear the
 *            marks, store IDLE
 *   abort    (tx.c, finish_abort, end_aborted; visible.c, release_locks,
 *            unlock_owner) each owner word held: a CAS from our id to 0;
 *            then the marks; store IDLE; then wait while the irrevocable
 *            thread is taking a line (cd.c, ltx_cd_take_wait; left out
 *            with -DBROKEN_TAKE_WAIT)
 * and for the irrevocable thread:
 *   holder   (tx.c, holder_state, doom_remote) load the holder's status:
 *            ACTIVE: CAS it to DOOMED, then AGAIN (look again); DOOMED:
 *            GONE; COMMITTING: BUSY; IDLE: AGAIN
 *   LT       (visible.c, read_lock, owner_in_way) mark; load the owner
 *            word; while another's, ask its holder: GONE, read under it;
 *            BUSY, wait (the mark kept) and load the word again; AGAIN,
 *            load it again.  Then load the line
 *   LTX/ST   (visible.c, write_lock, take_owner, readers_in_way) CAS the
 *            owner word from 0; failing: store the take mark
 *            (ltx_cd_take_begin), load the word, ask its holder, GONE:
 *            CAS the word from what was loaded to our id; clear the take
 *            mark (ltx_cd_take_end); BUSY: wait; not taken: CAS from 0
 *            again.  Then, for each other thread's reader mark: while it
 *            is set, ask its holder; GONE: next one; BUSY: wait, then
 *            from the first one again; AGAIN: look at it again
 *   commit   as the others', but it must win: nobody dooms it
 * A wait for a committing holder (ltx_wait_step in a loop) is a statement
 * that blocks until the holder's status is no longer COMMITTING, and
 * ltx_cd_take_wait one that blocks while the take mark is set: a wait
 * that could last forever is then a deadlock, an invalid end state.
 *
 * Abstracted away: live()'s load of the status at the start of each
 * operation (tx.c): a doomed transaction notices its doom at its next
 * load's status check or at its commit, as it does in C when the doom
 * lands just after live(); noticing earlier only lets its lines go
 * sooner, which the model covers by running the doomed thread's remaining
 * operations (none of them waits) before its abort.  A thread's cd id,
 * reader slot and status are fixed (ltx_cd_holder always finds it); one
 * line per bytelock (no false sharing, no unslotted readers); the
 * directory (cd/lines.h) is the held[] and marked[] arrays; the
 * irrevocable transaction is irrevocable from its begin (not one that
 * becomes irrevocable holding lines, tx.c, make_irrevocable); signal
 * handlers, release_held, write-set growth.
 *
 * Properties: a committed transaction read x == y (asserted at its
 * commit point); a line is written back only under its writer's own owner
 * word; the irrevocable transaction wins its commit point and ends; at the
 * end x == y == committed updates, and no owner word or mark is left; no
 * invalid end state.  Two broken variants must fail: -DBROKEN_RELEASE,
 * the bug of d1d4045, and -DBROKEN_TAKE_WAIT: the irrevocable thread sees
 * a transaction doomed, the transaction ends, the thread's next one takes
 * the same owner word, and the take's CAS then takes it from a live one.
 *
 * model-check: broken -DBROKEN_RELEASE -DBROKEN_TAKE_WAIT
 */

#define NL 2
#define NT 3			/* threads 0 and 1 ordinary, IRR irrevocable */
#define IRR 2
#ifndef ATTEMPTS
#define ATTEMPTS 3		/* model-check.sh's; make soak uses 5 */
#endif
/*
 * Three threads make many more interleavings than visible.pml's two:
 * make check gives each ordinary thread one attempt (3.2 million states),
 * make soak gives thread 1 two, so that a transaction begins after one
 * that the irrevocable one doomed (ltx_cd_take_wait's case; 12 million
 * states).  -DBROKEN_TAKE_WAIT needs that second transaction, so it has
 * it in make check too (it fails within 0.4 million states).
 */
#define ATTEMPTS_0 1
#ifdef BROKEN_TAKE_WAIT
#define ATTEMPTS_1 2
#else
#define ATTEMPTS_1 (ATTEMPTS / 2)
#endif

#define INC_LT 0
#define INC_LTX 1
#define READ 2

#define IDLE 0
#define ACTIVE 1
#define DOOMED 2
#define COMMITTING 3

#define GONE 0			/* enum ltx_holder */
#define BUSY 1
#define AGAIN 2

bool reader[NL * NT];		/* reader slot of thread t on line l: [l*NT+t] */
byte owner[NL];			/* the owner word: 0, or thread + 1 */
byte data[NL];
byte st[NT];			/* status of thread t's transaction */
bool taking;			/* between ltx_cd_take_begin and _end */
byte commits;			/* committed updates */
bool irr_committed;
byte done;

/*
 * Every step below is one shared access, with the thread's own variables
 * updated in the same atomic step (nobody else sees them).
 */

/* visible.c, vis_publish: write line l back (under our own owner word) */
#define WRITE_BACK(l) \
	atomic { \
		assert(owner[l] == me + 1); \
		data[l] = val[l] \
	}

/* visible.c, release_locks: the owner words (committed: a store of 0,
 * unlock_owner; else its CAS from our word), then the reader marks */
#define RELEASE(committed) \
	i = 0; \
	do \
	:: i == NL -> break \
	:: i < NL && held[i] && committed -> \
		atomic { owner[i] = 0; held[i] = false; i++ } \
	:: i < NL && held[i] && !committed -> \
		atomic { \
			if \
			:: owner[i] == me + 1 -> owner[i] = 0 \
			:: else -> skip \
			fi; \
			held[i] = false; i++ \
		} \
	:: i < NL && !held[i] -> i++ \
	od; \
	i = 0; \
	do \
	:: i == NL -> break \
	:: i < NL && marked[i] -> \
		atomic { reader[i * NT + me] = false; marked[i] = false; i++ } \
	:: i < NL && !marked[i] -> i++ \
	od; \
	atomic { i = 0; dirty[0] = false; dirty[1] = false; val[0] = 0; val[1] = 0 }

/* cd.c, ltx_cd_take_wait: -DBROKEN_TAKE_WAIT leaves it out */
#ifdef BROKEN_TAKE_WAIT
#define TAKE_WAIT skip
#else
#define TAKE_WAIT !taking
#endif

/* Ordinary threads: each attempt is a whole transaction. */
proctype ordinary(byte me; byte attempts)
{
	byte attempt, kind, a, b, x, i;
	bool doomed, ok;
	bool held[NL];		/* owner word taken (write-set entry's orec) */
	bool marked[NL];	/* reader slot marked (read-set entry) */
	bool dirty[NL];
	byte val[NL];

/* tx.c, ltx_tx_doom: store DOOMED (the release is the abort's) */
#define SELF_DOOM(out) atomic { st[me] = DOOMED; doomed = true; out = 0 }

/* x = line l (memory, or our buffer in E), then tx.c, ltx_tx_load_at's
 * load of our status: not ACTIVE, the load returns 0 and we are doomed */
#define LOAD(l, out) \
	atomic { \
		if \
		:: dirty[l] -> x = val[l] \
		:: else -> x = data[l] \
		fi \
	}; \
	atomic { \
		if \
		:: st[me] != ACTIVE -> doomed = true; out = 0 \
		:: else -> out = x \
		fi; \
		x = 0 \
	}

/* out = LT(line l): visible.c, vis_load and read_lock */
#define LT(l, out) \
	atomic { reader[l * NT + me] = true; marked[l] = true }; \
	ok = (owner[l] == 0); \
	if \
	:: ok -> LOAD(l, out) \
	:: else -> \
		atomic { reader[l * NT + me] = false; marked[l] = false }; \
		SELF_DOOM(out) \
	fi; \
	ok = false

#ifdef BROKEN_RELEASE
#define LET_GO(l) atomic { owner[l] = 0; held[l] = false }
#else
#define LET_GO(l) \
	atomic { \
		if \
		:: owner[l] == me + 1 -> owner[l] = 0 \
		:: else -> skip \
		fi; \
		held[l] = false \
	}
#endif

/* Another thread's mark on line l: others_read's load of the reader
 * word (one 64-bit word holds the three threads' bytes) */
#define OTHERS_READ(l) \
	(reader[l * NT + (me + 1) % NT] || reader[l * NT + (me + 2) % NT])

/* take line l in E: visible.c, write_lock */
#define ACQUIRE(l, out) \
	if \
	:: held[l] -> skip \
	:: else -> \
		atomic { \
			if \
			:: owner[l] == 0 -> owner[l] = me + 1; held[l] = true \
			:: else -> doomed = true \
			fi \
		}; \
		if \
		:: doomed -> SELF_DOOM(out) \
		:: else -> \
			ok = OTHERS_READ(l); \
			if \
			:: ok -> LET_GO(l); SELF_DOOM(out) \
			:: else -> skip \
			fi; \
			ok = false \
		fi \
	fi

#define LTX(l, out) \
	ACQUIRE(l, out); \
	if \
	:: doomed -> skip \
	:: else -> LOAD(l, out) \
	fi

#define ST(l, v) \
	ACQUIRE(l, x); \
	atomic { \
		if \
		:: !doomed -> val[l] = v; dirty[l] = true \
		:: else -> skip \
		fi \
	}

	attempt = 0;
	do
	:: attempt < attempts ->
		atomic {
			attempt++;
			doomed = false;
			st[me] = ACTIVE;	/* begin */
			if
			:: kind = INC_LT
			:: kind = INC_LTX
			:: kind = READ
			fi
		};
		if
		:: kind == INC_LT ->
			LT(0, a);
			if
			:: !doomed -> ST(0, a + 1)
			:: else -> skip
			fi;
			if
			:: !doomed -> LT(1, b)
			:: else -> skip
			fi;
			if
			:: !doomed -> ST(1, b + 1)
			:: else -> skip
			fi
		:: kind == INC_LTX ->
			LTX(1, b);
			if
			:: !doomed -> ST(1, b + 1)
			:: else -> skip
			fi;
			if
			:: !doomed -> LTX(0, a)
			:: else -> skip
			fi;
			if
			:: !doomed -> ST(0, a + 1)
			:: else -> skip
			fi
		:: kind == READ ->
			LT(0, a);
			if
			:: !doomed -> LT(1, b)
			:: else -> skip
			fi
		fi;
		/* COMMIT (tx.c, ltx_tx_commit, commit_live) */
		if
		:: doomed -> ok = false
		:: !doomed && kind == READ ->
			ok = (st[me] == ACTIVE)	/* load_status */
		:: !doomed && kind != READ ->
			atomic {		/* commit_point */
				ok = (st[me] == ACTIVE);
				if
				:: ok -> st[me] = COMMITTING; commits++
				:: else -> skip
				fi
			}
		fi;
		if
		:: ok ->
			assert(a == b);
			if
			:: kind == INC_LT ->
				WRITE_BACK(0); WRITE_BACK(1)
			:: kind == INC_LTX ->
				WRITE_BACK(1); WRITE_BACK(0)
			:: kind == READ -> skip
			fi;
			RELEASE(true);
			atomic { st[me] = IDLE; a = 0; b = 0; kind = 0; ok = false }
		:: else ->
			/* tx.c, finish_abort, end_aborted */
			RELEASE(false);
			atomic { st[me] = IDLE; a = 0; b = 0; kind = 0 };
			TAKE_WAIT
		fi
	:: else -> break
	od;
	done++
}

/* The irrevocable thread: one transaction, which must commit. */
proctype irrevocable()
{
	byte kind, a, b, i, o, h, t, s;
	bool taken;
	bool held[NL];
	bool marked[NL];
	bool dirty[NL];
	byte val[NL];

#undef me
#define me IRR

/* h = ltx_cd_holder(thread t): tx.c, holder_state: load the status;
 * ACTIVE: doom_remote, the CAS from ACTIVE to DOOMED, and AGAIN */
#define HOLDER(h) \
	s = st[t]; \
	if \
	:: s == ACTIVE -> \
		atomic { \
			if \
			:: st[t] == ACTIVE -> st[t] = DOOMED \
			:: else -> skip \
			fi; \
			h = AGAIN; s = 0 \
		} \
	:: s == DOOMED -> atomic { h = GONE; s = 0 } \
	:: s == COMMITTING -> atomic { h = BUSY; s = 0 } \
	:: s == IDLE -> h = AGAIN \
	fi

/* ltx_wait_step in a loop until thread t is no longer committing */
#define WAIT_COMMIT (st[t] != COMMITTING)

/* out = LT(line l): read_lock and owner_in_way, irrevocable; the status
 * check after the load is an assertion: nobody dooms us */
#define IRR_LT(l, out) \
	atomic { reader[l * NT + me] = true; marked[l] = true }; \
	atomic { o = owner[l]; t = o - 1 }; \
	do \
	:: o == 0 -> break \
	:: o != 0 -> \
		HOLDER(h); \
		if \
		:: h == GONE -> break \
		:: h == BUSY -> WAIT_COMMIT; atomic { o = owner[l]; t = o - 1 } \
		:: h == AGAIN -> atomic { o = owner[l]; t = o - 1 } \
		fi \
	od; \
	atomic { \
		out = data[l]; \
		assert(st[me] == ACTIVE); \
		o = 0; h = 0; t = 0 \
	}

/* take line l in E: write_lock, take_owner, readers_in_way */
#define IRR_ACQUIRE(l) \
	if \
	:: held[l] -> skip \
	:: else -> \
		do \
		:: atomic { owner[l] == 0 -> owner[l] = me + 1 }; break \
		:: else -> \
			taking = true;		/* ltx_cd_take_begin */ \
			atomic { o = owner[l]; t = o - 1; h = AGAIN }; \
			if \
			:: o != 0 -> HOLDER(h) \
			:: else -> skip \
			fi; \
			if \
			:: h == GONE -> \
				atomic { \
					if \
					:: owner[l] == o -> \
						owner[l] = me + 1; \
						taken = true \
					:: else -> skip \
					fi \
				} \
			:: else -> skip \
			fi; \
			taking = false;		/* ltx_cd_take_end */ \
			if \
			:: h == BUSY -> WAIT_COMMIT \
			:: else -> skip \
			fi; \
			if \
			:: taken -> \
				atomic { taken = false; o = 0; h = 0; t = 0 }; \
				break \
			:: else -> atomic { o = 0; h = 0; t = 0 } \
			fi \
		od; \
		held[l] = true; \
		t = 0; \
		do \
		:: t == NT -> break \
		:: t == me -> t++ \
		:: t < NT && t != me && !reader[l * NT + t] -> t++ \
		:: t < NT && t != me && reader[l * NT + t] -> \
			HOLDER(h); \
			if \
			:: h == GONE -> t++ \
			:: h == BUSY -> WAIT_COMMIT; t = 0 \
			:: h == AGAIN -> skip \
			fi \
		od; \
		atomic { t = 0; h = 0 } \
	fi

#define IRR_LTX(l, out) \
	IRR_ACQUIRE(l); \
	atomic { \
		if \
		:: dirty[l] -> out = val[l] \
		:: else -> out = data[l] \
		fi \
	}

#define IRR_ST(l, v) \
	IRR_ACQUIRE(l); \
	atomic { val[l] = v; dirty[l] = true }

	atomic {
		st[me] = ACTIVE;
		if
		:: kind = INC_LT
		:: kind = INC_LTX
		:: kind = READ
		fi
	};
	if
	:: kind == INC_LT ->
		IRR_LT(0, a); IRR_ST(0, a + 1); IRR_LT(1, b); IRR_ST(1, b + 1)
	:: kind == INC_LTX ->
		IRR_LTX(1, b); IRR_ST(1, b + 1); IRR_LTX(0, a); IRR_ST(0, a + 1)
	:: kind == READ ->
		IRR_LT(0, a); IRR_LT(1, b)
	fi;
	/* COMMIT: it must win its commit point */
	atomic {
		assert(st[me] == ACTIVE);
		if
		:: kind != READ -> st[me] = COMMITTING; commits++
		:: else -> skip
		fi;
		assert(a == b)
	};
	if
	:: kind == INC_LT -> WRITE_BACK(0); WRITE_BACK(1)
	:: kind == INC_LTX -> WRITE_BACK(1); WRITE_BACK(0)
	:: kind == READ -> skip
	fi;
	RELEASE(true);
	atomic { st[me] = IDLE; irr_committed = true }
}

init
{
	atomic {
		run ordinary(0, ATTEMPTS_0);
		run ordinary(1, ATTEMPTS_1);
		run irrevocable()
	}
	(done == 2 && irr_committed);
	assert(data[0] == commits && data[1] == commits);
	assert(owner[0] == 0 && owner[1] == 0);
	assert(!reader[0] && !reader[1] && !reader[2] &&
	       !reader[3] && !reader[4] && !reader[5])
}
