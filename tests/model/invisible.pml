/* SPDX-License-Identifier: MIT */
/* Promela model of the invisible mode's protocol (src/cd/invisible.[ch]). */

/*
 * Two threads, two lines, one orec per line (as with a large table).  Each
 * thread makes up to ATTEMPTS transaction attempts; each attempt is, by a
 * nondeterministic choice, one of
 *   INC_LT   a = LT x; ST x a+1; b = LT y; ST y b+1   (read, then upgrade)
 *   INC_LTX  a = LTX y; ST y a+1; b = LTX x; ST x b+1 (other order)
 *   READ     a = LT x; b = LT y                        (read-only)
 * x and y start equal and every update adds one to both, so
 *   - a transaction that commits must have read a == b (no inconsistent
 *     read: opacity restricted to committed transactions), asserted at
 *     its commit;
 *   - at the end x == y == the number of committed updates (no lost
 *     update), asserted once both threads are done;
 *   - no thread ever blocks: the verifier's invalid-end-state check (no
 *     deadlock) covers it, since a thread that could not finish would sit
 *     outside its end state.
 *
 * What is modelled, step by step, with each shared access its own atomic
 * step (sequential consistency; the C code's acquire/release orders are
 * what makes that sound, see src/cd/invisible.h):
 *   begin:    lazily, at the first operation, after its first read of the
 *             orec (the fast path's order): snapshot = the last clock
 *             value the thread saw (lazy: at its last commit or extension)
 *   LT:       v1 = orec; if locked by us: read our buffer or memory;
 *             locked by other: doomed; v1 > snapshot: extend (revalidate
 *             the read set at a later clock) or doomed; else x = data;
 *             v2 = orec; v1 != v2: retry; else log (line, v1), return x
 *   LTX/ST:   v = orec; ours: use the entry; other's: doomed; too new:
 *             extend or doomed; else CAS(orec, v, LOCKED|me) (encounter-time
 *             ownership), keeping v as the entry's old version
 *   commit:   read-only: done.  Else ts = ++clock (fetch-add); if ts !=
 *             snapshot + 1 validate the read set (the read set holds no
 *             versions: each orec must be <= snapshot or locked by us);
 *             in the order the lines were taken, write each line back and
 *             release its orec at ts
 *   abort:    release each orec at its old version
 * With -DBROKEN, read validation always succeeds and the re-read of the
 * orec after a load is skipped (as LTX_TEST_BREAK_READ_VALIDATION does in
 * C); the verifier must then find a violation.
 *
 * model-check: broken -DBROKEN
 */

#define NL 2
#ifndef ATTEMPTS
#define ATTEMPTS 2		/* per thread; make soak uses 3 */
#endif
#define LOCKED 64		/* orec >= LOCKED: locked by thread orec - LOCKED */

#define INC_LT 0
#define INC_LTX 1
#define READ 2

byte orec[NL];
byte data[NL];
byte clock;
byte commits;			/* committed updates */
byte done;

proctype thread(byte me)
{
	byte snap, attempt, kind, i, v, x, ts, a, b, now, first;
	byte seen; /* the last clock value this thread saw: the lazy snapshot */
	bool doomed, ok, begun;
	bool rs_has[NL];		/* read set: lines read (no versions) */
	bool ws_held[NL];		/* write set: orec held, old version */
	byte ws_old[NL];
	bool ws_dirty[NL];
	byte ws_val[NL];

/* extend: revalidate the read set; on success move the snapshot to now. */
#ifdef BROKEN
#define VALID(l) true
#else
#define VALID(l) (orec[l] <= snap || orec[l] == LOCKED + me)
#endif
#define EXTEND(result) \
	now = clock; \
	result = true; \
	i = 0; \
	do \
	:: i < NL -> \
		if \
		:: rs_has[i] && !VALID(i) -> result = false \
		:: else -> skip \
		fi; \
		i++ \
	:: else -> break \
	od; \
	if \
	:: result -> snap = now; seen = now \
	:: else -> skip \
	fi

#ifdef BROKEN
#define RELOAD_OK(l, v1) true
#else
#define RELOAD_OK(l, v1) (orec[l] == v1)
#endif

/* out = LT(line l); sets doomed on failure */
#define BEGIN \
	if \
	:: !begun -> snap = seen; begun = true \
	:: else -> skip \
	fi

#define LT(l, out) \
	do \
	:: doomed -> out = 0; break \
	:: else -> \
		v = orec[l]; \
		BEGIN; \
		if \
		:: v == LOCKED + me -> \
			if \
			:: ws_dirty[l] -> out = ws_val[l] \
			:: else -> out = data[l] \
			fi; \
			break \
		:: v >= LOCKED && v != LOCKED + me -> doomed = true \
		:: v < LOCKED && v > snap -> \
			EXTEND(ok); \
			if \
			:: !ok -> doomed = true \
			:: else -> skip \
			fi \
		:: v < LOCKED && v <= snap -> \
			x = data[l]; \
			if \
			:: RELOAD_OK(l, v) -> \
				rs_has[l] = true; \
				out = x; break \
			:: else -> skip	/* changed under us: again */ \
			fi \
		fi \
	od

/* take line l in E (LTX/ST); sets doomed on failure */
#define ACQUIRE(l) \
	do \
	:: doomed || ws_held[l] -> break \
	:: else -> \
		v = orec[l]; \
		BEGIN; \
		if \
		:: v >= LOCKED -> doomed = true	/* not ours: ws_held */ \
		:: v < LOCKED && v > snap -> \
			EXTEND(ok); \
			if \
			:: !ok -> doomed = true \
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
	od

/* temporaries are dead between operations: zero them (fewer states) */
#define CLEAN v = 0; x = 0; now = 0; ok = false; i = 0

#define LTX(l, out) \
	ACQUIRE(l); \
	if \
	:: doomed -> out = 0 \
	:: !doomed && ws_dirty[l] -> out = ws_val[l] \
	:: !doomed && !ws_dirty[l] -> out = data[l] \
	fi

#define ST(l, val) \
	ACQUIRE(l); \
	if \
	:: !doomed -> ws_val[l] = val; ws_dirty[l] = true \
	:: else -> skip \
	fi

/* release every held orec: at ts if written (commit), else at old */
#define RELEASE(committed) \
	i = 0; \
	do \
	:: i < NL -> \
		if \
		:: ws_held[i] && committed && ws_dirty[i] -> skip /* done */ \
		:: ws_held[i] && !(committed && ws_dirty[i]) -> \
			orec[i] = ws_old[i] \
		:: else -> skip \
		fi; \
		ws_held[i] = false; ws_dirty[i] = false; rs_has[i] = false; \
		i++ \
	:: else -> break \
	od

	attempt = 0;
	do
	:: attempt < ATTEMPTS ->
		attempt++;
		doomed = false;
		begun = false;
		if
		:: kind = INC_LT
		:: kind = INC_LTX
		:: kind = READ
		fi;
		if
		:: kind == INC_LT ->
			LT(0, a); CLEAN; ST(0, a + 1); CLEAN;
			LT(1, b); CLEAN; ST(1, b + 1); CLEAN
		:: kind == INC_LTX ->
			LTX(1, b); CLEAN; ST(1, b + 1); CLEAN;
			LTX(0, a); CLEAN; ST(0, a + 1); CLEAN
		:: kind == READ ->
			LT(0, a); CLEAN; LT(1, b); CLEAN
		fi;
		/* COMMIT */
		if
		:: doomed -> RELEASE(false)
		:: !doomed && kind == READ ->
			/* read-only: every read was valid at the snapshot */
			assert(a == b);
			RELEASE(false)
		:: !doomed && kind != READ ->
			atomic { clock++; ts = clock };
			ok = true;
			if
			:: ts != snap + 1 -> EXTEND(ok)
			:: else -> skip
			fi;
			if
			:: ok ->
				assert(a == b);
				/* one pass in write-set order: write back
				 * a line, then release its orec at ts */
				data[first] = ws_val[first];
				orec[first] = ts;
				data[1 - first] = ws_val[1 - first];
				orec[1 - first] = ts;
				commits++;
				seen = ts;
				RELEASE(true)
			:: else -> RELEASE(false)
			fi
		fi;
		CLEAN; a = 0; b = 0; ts = 0; snap = 0; kind = 0; first = 0;
		ws_val[0] = 0; ws_val[1] = 0; ws_old[0] = 0; ws_old[1] = 0
	:: else -> break
	od;
	done++
}

init
{
	atomic {
		run thread(0);
		run thread(1)
	}
	done == 2;
	assert(data[0] == commits && data[1] == commits);
	/* every orec released */
	assert(orec[0] < LOCKED && orec[1] < LOCKED)
}
