/* SPDX-License-Identifier: MIT */
/* The libitm ABI as GCC's -fgnu-tm code calls it: types and entry points. */
#ifndef LTX_ITM_LIBITM_H
#define LTX_ITM_LIBITM_H

#include <stddef.h>
#include <stdint.h>

/*
 * Written from the Intel TM ABI specification and GCC's libitm.h as
 * summarized in the project's libitm-abi.md reference.  Every function
 * declared here is exported from libltx.so (visibility default; the
 * library is otherwise built with -fvisibility=hidden) under the version
 * nodes of libitm.map (src/libltx.map).
 */
#define _ITM_VERSION	     "1.0"
#define _ITM_VERSION_NO	     90
#define _ITM_noTransactionId 1

typedef uint64_t _ITM_transactionId_t;

typedef enum {
	outsideTransaction = 0,
	inRetryableTransaction,
	inIrrevocableTransaction
} _ITM_howExecuting;

typedef enum { modeSerialIrrevocable = 0 } _ITM_transactionState;

typedef enum {
	unknown = 0,
	userAbort = 1,
	userRetry = 2,
	TMConflict = 4,
	exceptionBlockAbort = 8,
	outerAbort = 16
} _ITM_abortReason;

typedef struct {
	int32_t reserved_1;
	int32_t flags;
	int32_t reserved_2;
	int32_t reserved_3;
	const char *psource;
} _ITM_srcLocation;

typedef void (*_ITM_userUndoFunction)(void *);
typedef void (*_ITM_userCommitFunction)(void *);

/* The vector types of the M64/M128/M256 barriers (x86-64). */
typedef int _ITM_TYPE_M64 __attribute__((vector_size(8), may_alias));
typedef float _ITM_TYPE_M128 __attribute__((vector_size(16), may_alias));
typedef float _ITM_TYPE_M256 __attribute__((vector_size(32), may_alias));

#pragma GCC visibility push(default)

uint32_t _ITM_beginTransaction(uint32_t properties, ...)
	__attribute__((returns_twice));
void _ITM_commitTransaction(void);
void _ITM_commitTransactionEH(void *exc_ptr);
void _ITM_abortTransaction(_ITM_abortReason reason) __attribute__((noreturn));
void _ITM_changeTransactionMode(_ITM_transactionState state);
_ITM_howExecuting _ITM_inTransaction(void);
_ITM_transactionId_t _ITM_getTransactionId(void);
int _ITM_versionCompatible(int version);
const char *_ITM_libraryVersion(void);
void _ITM_error(const _ITM_srcLocation *loc, int code)
	__attribute__((noreturn));
void _ITM_addUserCommitAction(_ITM_userCommitFunction fn,
			      _ITM_transactionId_t resuming, void *arg);
void _ITM_addUserUndoAction(_ITM_userUndoFunction fn, void *arg);
void _ITM_dropReferences(void *addr, size_t size);

void *_ITM_malloc(size_t size);
void *_ITM_calloc(size_t nmemb, size_t size);
void _ITM_free(void *ptr);

void _ITM_registerTMCloneTable(void *table, size_t npairs);
void _ITM_deregisterTMCloneTable(void *table);
void *_ITM_getTMCloneOrIrrevocable(void *fn);
void *_ITM_getTMCloneSafe(void *fn);

void *_ITM_cxa_allocate_exception(size_t size);
void _ITM_cxa_free_exception(void *obj);
void _ITM_cxa_throw(void *obj, void *tinfo, void (*dest)(void *))
	__attribute__((noreturn));
void *_ITM_cxa_begin_catch(void *exc);
void _ITM_cxa_end_catch(void);

void _ITM_LB(const void *addr, size_t size);

#pragma GCC visibility pop

#endif /* LTX_ITM_LIBITM_H */
