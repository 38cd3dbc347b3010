/* SPDX-License-Identifier: MIT */
/* Promela model of the visible mode's protocol (DESIGN.md, "visible"). */

/*
 * The faithful mode: a per-line reader/writer lock mirrors the article's
 * MESI states.  LT marks the thread's reader slot of the line (S), then
 * checks for a writer; LTX/ST take the line's writer field (E) with a CAS,
 * then check that no other thread's reader slot is marked ("writers need no
 * readers").  The requester loses: whoever finds the line held by another
 * is doomed and lets go of everything; nobody waits, and nobody dooms
 * anybody else, so a live transaction's reads stay valid to its commit and
 * there is no read-set validation.  Commit writes the buffered words back,
 * then clears the writer fields and the reader slots.
 *
 * Each marking and each check is its own atomic step (sequential
 * consistency: the C code needs a full fence between a thread's mark and
 * its check of the other side, the Dekker pattern, for this to hold).
 *
 * The transactions and properties are those of invisible.pml: two threads,
 * two lines, INC_LT / INC_LTX / READ attempts; committed transactions read
 * x == y; at the end x == y == committed updates; every lock released; no
 * invalid end state (no deadlock).  With -DBROKEN the writer does not check
 * for readers, and the verifier must find a violation.
 *
 * model-check: broken -DBROKEN
 */

#define NL 2
#define NT 2
#ifndef ATTEMPTS
#define ATTEMPTS 3		/* per thread; make soak uses more */
#endif

#define INC_LT 0
#define INC_LTX 1
#define READ 2

bool reader[NL * NT];		/* reader slot of thread t on line l: [l*NT+t] */
byte writer[NL];		/* 0, or owner + 1 */
byte data[NL];
byte commits;
byte done;

proctype thread(byte me)
{
	byte attempt, kind, a, b;
	bool doomed;
	bool ws_dirty[NL];
	byte ws_val[NL];

#define OTHER (1 - me)

/* out = LT(line l) */
#define LT(l, out) \
	if \
	:: doomed -> out = 0 \
	:: !doomed && writer[l] == me + 1 -> \
		if \
		:: ws_dirty[l] -> out = ws_val[l] \
		:: else -> out = data[l] \
		fi \
	:: !doomed && writer[l] != me + 1 -> \
		reader[l * NT + me] = true; \
		if \
		:: writer[l] != 0 -> doomed = true; out = 0 \
		:: else -> out = data[l] \
		fi \
	fi

#ifdef BROKEN
#define READERS_OTHER(l) false
#else
#define READERS_OTHER(l) reader[l * NT + OTHER]
#endif

/* take line l in E */
#define ACQUIRE(l) \
	if \
	:: doomed || writer[l] == me + 1 -> skip \
	:: else -> \
		atomic { \
			if \
			:: writer[l] == 0 -> writer[l] = me + 1 \
			:: else -> doomed = true \
			fi \
		}; \
		if \
		:: !doomed && READERS_OTHER(l) -> doomed = true \
		:: else -> skip \
		fi \
	fi

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

/* drop line l: writer field (if ours), then the reader slot */
#define DROP(l) \
	if \
	:: writer[l] == me + 1 -> writer[l] = 0 \
	:: else -> skip \
	fi; \
	reader[l * NT + me] = false; \
	ws_dirty[l] = false; ws_val[l] = 0

	attempt = 0;
	do
	:: attempt < ATTEMPTS ->
		attempt++;
		doomed = false;
		if
		:: kind = INC_LT
		:: kind = INC_LTX
		:: kind = READ
		fi;
		if
		:: kind == INC_LT ->
			LT(0, a); ST(0, a + 1); LT(1, b); ST(1, b + 1)
		:: kind == INC_LTX ->
			LTX(1, b); ST(1, b + 1); LTX(0, a); ST(0, a + 1)
		:: kind == READ ->
			LT(0, a); LT(1, b)
		fi;
		/* COMMIT: a live transaction always commits */
		if
		:: !doomed ->
			assert(a == b);
			if
			:: kind != READ ->
				data[0] = ws_val[0];
				data[1] = ws_val[1];
				commits++
			:: else -> skip
			fi
		:: else -> skip
		fi;
		DROP(0);
		DROP(1);
		a = 0; b = 0; kind = 0
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
	done == NT;
	assert(data[0] == commits && data[1] == commits);
	assert(writer[0] == 0 && writer[1] == 0);
	assert(!reader[0] && !reader[1] && !reader[2] && !reader[3])
}
