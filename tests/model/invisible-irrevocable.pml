/* SPDX-License-Identifier: MIT */
/* Promela model of the invisible mode with an irrevocable transaction. */

/*
 * invisible.pml plus what issue 13 added: one irrevocable transaction
 * (the serial token's holder, so never more than one) that never fails on
 * a line another transaction holds.  Threads 0 and 1 run ordinary
 * transactions (one attempt each; make soak gives thread 1 two), of the
 * kinds of invisible.pml (INC_LT, INC_LTX, READ); thread IRR runs one
 * irrevocable transaction of any of the three kinds, beginning at any
 * point.  Two lines, x = data[0] and y = data[1], start equal; one orec
 * per line.
 *
 * Each shared access is its own atomic step (sequential consistency; the
 * C code's orders are argued in src/cd/invisible.[ch] and cd/cd.h), with
 * the thread's own variables updated in the same step.  Ordinary threads
 * do what invisible.pml's do (its comment lists the steps: lazy snapshot,
 * LT's seqlock read, extension, encounter-time locking by CAS, commit
 * with validation, write-back and release at ts, abort), plus:
 *   status   st[t], thread t's transaction: IDLE, ACTIVE, DOOMED,
 *            COMMITTING (tx.c); begin stores ACTIVE; a failure stores
 *            DOOMED (tx.c, ltx_tx_doom)
 *   loads    after each load of a line, the status (tx.c, ltx_tx_load_at):
 *            not ACTIVE, the load returns 0 and the transaction is doomed
 *   extend   the read set, then every orec locked still our lock word
 *            (invisible.c, extend, locks_held)
 *   commit   read-only: load the status, ACTIVE commits; update: the
 *            clock's fetch-add, validation (ltx_inv_prepare), then the
 *            commit point, the CAS of the status from ACTIVE to
 *            COMMITTING (tx.c, commit_point); failing, abort
 *   abort    each orec held: a CAS from our lock word to its old version
 *            (invisible.c, unlock_entry); with -DBROKEN_RELEASE a plain
 *            store, which undoes a take.  Then store IDLE and wait while
 *            the irrevocable thread is taking a line (tx.c, end_aborted;
 *            cd.c, ltx_cd_take_wait; left out with -DBROKEN_TAKE_WAIT)
 * and the irrevocable thread (invisible.c, inv_load, acquire, lock_orec,
 * take_held; tx.c, holder_state, doom_remote):
 *   access   LT, LTX and ST all take the line in E: load the orec;
 *            unlocked at any version: CAS it to our lock word; locked by
 *            another: store the take mark (ltx_cd_take_begin), load the
 *            orec, ask its holder (load its status; ACTIVE: CAS it to
 *            DOOMED, look again; DOOMED: take; COMMITTING: wait; IDLE:
 *            look again), to take: CAS the orec from the word loaded to
 *            ours (the entry TAKEN); clear the take mark; then look again
 *            unless taken
 *   commit   the clock's fetch-add, no validation, the commit point (it
 *            must win: nobody dooms it); write back and release each orec
 *            in write-set order: at ts if stored or TAKEN, else at its old
 *            version (ltx_inv_released_version)
 * A wait for a committing holder blocks until its status is no longer
 * COMMITTING, and ltx_cd_take_wait while the take mark is set: a wait that
 * could last forever is a deadlock, an invalid end state.
 *
 * Abstracted away: live()'s status load at the start of each operation
 * (as in visible-irrevocable.pml: a doomed transaction notices at its
 * next load's check, its extension or its commit); the fast paths of
 * cd/invisible.h (modelled: the slow paths of invisible.c, which the fast
 * paths shortcut); a lock word names the holding thread, not a write-set
 * entry (chains, write-set growth); the irrevocable transaction is
 * irrevocable from its begin (not inv_make_irrevocable); signal handlers.
 *
 * Properties: a committed transaction read x == y; a line is written back
 * only under its writer's own lock word; the irrevocable transaction wins
 * its commit point and ends; at the end x == y == committed updates and
 * no orec is locked; no invalid end state.  Two broken variants must
 * fail: -DBROKEN_RELEASE (a doomed holder's abort unlocks the orec the
 * irrevocable thread took from it) and -DBROKEN_TAKE_WAIT (the holder the
 * taker saw doomed ends, its thread's next transaction locks the orec
 * again with the same lock word, and the take's CAS succeeds on a live
 * transaction).
 *
 * model-check: broken -DBROKEN_RELEASE -DBROKEN_TAKE_WAIT
 */

#define NL 2
#define NT 3			/* threads 0 and 1 ordinary, IRR irrevocable */
#define IRR 2
#ifndef ATTEMPTS
#define ATTEMPTS 3		/* model-check.sh's; make soak uses 5 */
#endif
/* make soak gives thread 1 a second transaction, which may begin after
 * one the irrevocable thread doomed (ltx_cd_take_wait's case); so does
 * -DBROKEN_TAKE_WAIT, which needs it */
#define ATTEMPTS_0 1
#ifdef BROKEN_TAKE_WAIT
#define ATTEMPTS_1 2
#define TAKE_WAIT skip
#else
#define ATTEMPTS_1 (ATTEMPTS / 2)
#define TAKE_WAIT !taking	/* cd.c, ltx_cd_take_wait */
#endif
#define LOCKED 64		/* orec >= LOCKED: locked by thread orec - LOCKED */

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

byte orec[NL];
byte data[NL];
byte clock;
byte st[NT];			/* status of thread t's transaction */
bool taking;			/* between ltx_cd_take_begin and _end */
byte commits;			/* committed updates */
bool irr_committed;
byte done;

/* Write line l back (under our own lock word) and release its orec at
 * version rv (ltx_inv_publish). */
#define PUBLISH(l, rv) \
	atomic { \
		assert(orec[l] == LOCKED + me); \
		if \
		:: ws_dirty[l] -> data[l] = ws_val[l] \
		:: else -> skip \
		fi \
	}; \
	orec[l] = rv

proctype ordinary(byte me; byte attempts)
{
	byte snap, attempt, kind, i, v, x, ts, a, b, now, first;
	byte seen; /* the last clock value this thread saw: the lazy snapshot */
	bool doomed, ok, begun;
	bool rs_has[NL];		/* read set: lines read (no versions) */
	bool ws_held[NL];		/* write set: orec held, old version */
	byte ws_old[NL];
	bool ws_dirty[NL];
	byte ws_val[NL];

#define SELF_DOOM atomic { st[me] = DOOMED; doomed = true }

/* tx.c, ltx_tx_load_at: our status, after the load of x */
#define CHECKED(out) \
	atomic { \
		if \
		:: st[me] != ACTIVE -> doomed = true; out = 0 \
		:: else -> out = x \
		fi; \
		x = 0 \
	}

/* the read set still valid (ltx_inv_reads_valid): one orec load each */
#define READS_VALID(result) \
	result = true; \
	i = 0; \
	do \
	:: i == NL -> break \
	:: i < NL && rs_has[i] -> \
		atomic { \
			result = result && \
				 (orec[i] <= snap || orec[i] == LOCKED + me); \
			i++ \
		} \
	:: i < NL && !rs_has[i] -> i++ \
	od; \
	i = 0

/* extend: the clock, the read set, our locks (locks_held) */
#define EXTEND(result) \
	now = clock; \
	READS_VALID(result); \
	do \
	:: i == NL -> break \
	:: i < NL && ws_held[i] -> \
		atomic { result = result && orec[i] == LOCKED + me; i++ } \
	:: i < NL && !ws_held[i] -> i++ \
	od; \
	atomic { \
		i = 0; \
		if \
		:: result -> snap = now; seen = now \
		:: else -> skip \
		fi; \
		now = 0 \
	}

#define BEGIN \
	if \
	:: !begun -> snap = seen; begun = true \
	:: else -> skip \
	fi

/* out = LT(line l) (invisible.c, inv_load and read_word) */
#define LT(l, out) \
	do \
	:: doomed -> out = 0; break \
	:: else -> \
		atomic { v = orec[l]; BEGIN }; \
		if \
		:: v == LOCKED + me -> \
			atomic { \
				if \
				:: ws_dirty[l] -> x = ws_val[l] \
				:: else -> x = data[l] \
				fi \
			}; \
			CHECKED(out); \
			break \
		:: v >= LOCKED && v != LOCKED + me -> SELF_DOOM \
		:: v < LOCKED && v > snap -> \
			EXTEND(ok); \
			if \
			:: !ok -> SELF_DOOM \
			:: else -> skip \
			fi \
		:: v < LOCKED && v <= snap -> \
			x = data[l]; \
			if \
			:: orec[l] == v -> \
				rs_has[l] = true; \
				CHECKED(out); \
				break \
			:: else -> x = 0	/* changed under us: again */ \
			fi \
		fi \
	od; \
	atomic { v = 0; ok = false }

/* take line l in E (invisible.c, acquire and lock_orec) */
#define ACQUIRE(l) \
	do \
	:: doomed || ws_held[l] -> break \
	:: else -> \
		atomic { v = orec[l]; BEGIN }; \
		if \
		:: v >= LOCKED -> SELF_DOOM	/* not ours: ws_held */ \
		:: v < LOCKED && v > snap -> \
			EXTEND(ok); \
			if \
			:: !ok -> SELF_DOOM \
			:: else -> skip \
			fi \
		:: v < LOCKED && v <= snap -> \
			atomic { \
				if \
				:: orec[l] == v -> \
					orec[l] = LOCKED + me; \
					ws_held[l] = true; ws_old[l] = v; \
					if \
					:: !ws_held[1 - l] -> first = l \
					:: else -> skip \
					fi \
				:: else -> skip	/* changed: look again */ \
				fi \
			} \
		fi \
	od; \
	atomic { v = 0; ok = false }

#define LTX(l, out) \
	ACQUIRE(l); \
	if \
	:: doomed -> out = 0 \
	:: else -> \
		atomic { \
			if \
			:: ws_dirty[l] -> x = ws_val[l] \
			:: else -> x = data[l] \
			fi \
		}; \
		CHECKED(out) \
	fi

#define ST(l, val) \
	ACQUIRE(l); \
	atomic { \
		if \
		:: !doomed -> ws_val[l] = val; ws_dirty[l] = true \
		:: else -> skip \
		fi \
	}

#ifdef BROKEN_RELEASE
#define UNLOCK(l) orec[l] = ws_old[l]
#else
#define UNLOCK(l) \
	if \
	:: orec[l] == LOCKED + me -> orec[l] = ws_old[l] \
	:: else -> skip \
	fi
#endif

/* abort (invisible.c, inv_release, unlock_entry) */
#define RELEASE \
	i = 0; \
	do \
	:: i == NL -> break \
	:: i < NL && ws_held[i] -> atomic { UNLOCK(i); ws_held[i] = false; i++ } \
	:: i < NL && !ws_held[i] -> i++ \
	od; \
	i = 0

/* the logs emptied, dead variables zeroed (fewer states) */
#define RESET \
	a = 0; b = 0; ts = 0; snap = 0; kind = 0; first = 0; \
	ok = false; x = 0; \
	rs_has[0] = false; rs_has[1] = false; \
	ws_held[0] = false; ws_held[1] = false; \
	ws_dirty[0] = false; ws_dirty[1] = false; \
	ws_val[0] = 0; ws_val[1] = 0; ws_old[0] = 0; ws_old[1] = 0

	attempt = 0;
	do
	:: attempt < attempts ->
		atomic {
			attempt++;
			doomed = false;
			begun = false;
			st[me] = ACTIVE;	/* begin */
			if
			:: kind = INC_LT
			:: kind = INC_LTX
			:: kind = READ
			fi
		};
		if
		:: kind == INC_LT ->
			LT(0, a); ST(0, a + 1); LT(1, b); ST(1, b + 1)
		:: kind == INC_LTX ->
			LTX(1, b); ST(1, b + 1); LTX(0, a); ST(0, a + 1)
		:: kind == READ ->
			LT(0, a); LT(1, b)
		fi;
		/* COMMIT (tx.c, ltx_tx_commit, commit_live) */
		if
		:: doomed -> ok = false
		:: !doomed && kind == READ ->
			ok = (st[me] == ACTIVE)
		:: !doomed && kind != READ ->
			atomic { clock++; ts = clock };
			ok = true;
			if
			:: ts != snap + 1 -> READS_VALID(ok)
			:: else -> skip
			fi;
			if
			:: ok ->
				atomic {	/* commit_point */
					ok = (st[me] == ACTIVE);
					if
					:: ok -> st[me] = COMMITTING; commits++
					:: else -> skip
					fi
				}
			:: else -> skip
			fi
		fi;
		if
		:: ok ->
			assert(a == b);
			if
			:: kind != READ ->
				PUBLISH(first, ts);
				PUBLISH(1 - first, ts);
				seen = ts
			:: else -> skip
			fi;
			atomic { st[me] = IDLE; RESET }
		:: else ->
			RELEASE;
			atomic { st[me] = IDLE; RESET };
			TAKE_WAIT
		fi
	:: else -> break
	od;
	done++
}

proctype irrevocable()
{
	byte kind, a, b, v, h, t, s, ts, first;
	bool ws_held[NL];
	bool ws_taken[NL];		/* LTX_WENTRY_TAKEN (and _BUMP) */
	byte ws_old[NL];
	bool ws_dirty[NL];
	byte ws_val[NL];

#undef me
#define me IRR

/* h = ltx_cd_holder for thread t (tx.c, holder_state, doom_remote) */
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

#define FIRST(l) \
	if \
	:: !ws_held[1 - l] -> first = l \
	:: else -> skip \
	fi

/* take line l in E: acquire, lock_orec, take_held */
#define IRR_ACQUIRE(l) \
	do \
	:: ws_held[l] -> break \
	:: else -> \
		v = orec[l]; \
		if \
		:: v < LOCKED -> \
			atomic { \
				if \
				:: orec[l] == v -> \
					orec[l] = LOCKED + me; \
					ws_held[l] = true; ws_old[l] = v; \
					FIRST(l) \
				:: else -> skip \
				fi \
			} \
		:: v >= LOCKED -> \
			taking = true;		/* ltx_cd_take_begin */ \
			atomic { v = orec[l]; h = AGAIN }; \
			if \
			:: v >= LOCKED -> t = v - LOCKED; HOLDER(h) \
			:: else -> skip \
			fi; \
			if \
			:: h == GONE -> \
				atomic { \
					if \
					:: orec[l] == v -> \
						orec[l] = LOCKED + me; \
						ws_held[l] = true; \
						ws_taken[l] = true; \
						FIRST(l) \
					:: else -> skip \
					fi \
				} \
			:: else -> skip \
			fi; \
			taking = false;		/* ltx_cd_take_end */ \
			if \
			:: h == BUSY -> (st[t] != COMMITTING) \
			:: else -> skip \
			fi; \
			atomic { h = 0; t = 0 } \
		fi; \
		v = 0 \
	od

#define IRR_LTX(l, out) \
	IRR_ACQUIRE(l); \
	atomic { \
		if \
		:: ws_dirty[l] -> out = ws_val[l] \
		:: else -> out = data[l] \
		fi; \
		assert(st[me] == ACTIVE)	/* ltx_tx_load_at's check */ \
	}

#define IRR_ST(l, val) \
	IRR_ACQUIRE(l); \
	atomic { ws_val[l] = val; ws_dirty[l] = true }

/* ltx_inv_released_version */
#define RV(l) (ws_dirty[l] || ws_taken[l] -> ts : ws_old[l])

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
		IRR_LTX(0, a); IRR_ST(0, a + 1); IRR_LTX(1, b); IRR_ST(1, b + 1)
	:: kind == INC_LTX ->
		IRR_LTX(1, b); IRR_ST(1, b + 1); IRR_LTX(0, a); IRR_ST(0, a + 1)
	:: kind == READ ->
		IRR_LTX(0, a); IRR_LTX(1, b)
	fi;
	/* COMMIT: every line is held, so no validation; it must win */
	atomic { clock++; ts = clock };
	atomic {
		assert(st[me] == ACTIVE && a == b);
		st[me] = COMMITTING;
		if
		:: kind != READ -> commits++
		:: else -> skip
		fi
	};
	PUBLISH(first, RV(first));
	PUBLISH(1 - first, RV(1 - first));
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
	assert(orec[0] < LOCKED && orec[1] < LOCKED)
}
