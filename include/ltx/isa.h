/* SPDX-License-Identifier: MIT */
/* The article's spelling of the TM instructions (Drepper 8.2, Herlihy & Moss).
 */
#ifndef LTX_ISA_H
#define LTX_ISA_H

#include <ltx/tm.h>

/*
 * With these, Figure 8.4 of the article compiles as printed once its
 * "... delay ..." lines are deleted (ltx applies the delay inside a failing
 * VALIDATE() or COMMIT()) and its data_t is defined.  See tm_lt(3) and
 * tm_validate(3).
 *
 *   LT(x)      shared transactional load of the object x
 *   LTX(x)     exclusive transactional load of the object x
 *   ST(&x, v)  transactional store of v into x
 *   VALIDATE() is the transaction still on track?  false: it was aborted
 *   COMMIT()   publish the transaction; false: it was aborted
 *   ABORT()    abort the transaction now
 */
#define LT(x)	   TM_LT(x)
#define LTX(x)	   TM_LTX(x)
#define ST(p, v)   TM_ST(*(p), (v))
#define VALIDATE() tm_validate()
#define COMMIT()   tm_commit()
#define ABORT()	   tm_abort()

#endif /* LTX_ISA_H */
