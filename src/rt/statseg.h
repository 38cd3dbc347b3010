/* SPDX-License-Identifier: MIT */
/* The statistics segment /dev/shm/ltx.<pid>: layout, writer and reader. */
#ifndef LTX_RT_STATSEG_H
#define LTX_RT_STATSEG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>

#include "rt/stats.h"

/*
 * Layout, version 3 (documented in ltx(7)).  All fields are little-endian,
 * naturally aligned, at fixed offsets; a header first, then the areas it
 * points to (offsets from the start of the segment):
 *
 *   header    struct ltx_statseg_header
 *   counters  struct ltx_stats (process totals), the fields of
 *             LTX_STATS_FIELDS (rt/stats.h) in order; header.fields names
 *             them, and a reader refuses a segment whose names differ from
 *             its own list (a writer built from another list)
 *   sites     nsites x struct ltx_statseg_site (top abort sites, by count)
 *   objects   nobjs x struct ltx_statseg_obj (objects the frames and the
 *             lines are in)
 *   lines     nlines x struct ltx_statseg_line (the lines conflicts were
 *             found on, most conflicts first)
 *
 * Synchronization: one writer, the process itself (its refresh thread, and
 * its exit handler, serialized by a mutex), any number of readers in other
 * processes.  The writer makes seq odd, rewrites everything after the
 * header's fixed part, then makes seq even again (a seqlock: release
 * stores; readers copy the segment and accept the copy only if seq was even
 * and unchanged around it).  A reader must still check the copy, as
 * ltx_statseg_parse does: the writer may be another version, or buggy.
 */
#define LTX_STATSEG_MAGIC   0x5354415453585400ull /* "\0TXSTATS" read LE */
#define LTX_STATSEG_VERSION 3

#define LTX_STATSEG_SITES      32
#define LTX_STATSEG_FRAMES     9 /* the site, then up to 8 callers */
#define LTX_STATSEG_OBJS       16
#define LTX_STATSEG_LINES      32
#define LTX_STATSEG_FIELDS_LEN 1024

/* header.flags */
#define LTX_STATSEG_FINAL 1u /* the process has exited: figures are final */
/* bus_t_read, bus_t_rfo and bus_writeback are counted: the visible mode,
 * or the invisible one's counted path (LTX_CAPACITY set); else they stay 0
 * (bus_busy is counted in both modes) */
#define LTX_STATSEG_BUS_COUNTED 2u

struct ltx_statseg_header {
	uint64_t magic;		/* LTX_STATSEG_MAGIC */
	uint32_t version;	/* LTX_STATSEG_VERSION */
	uint32_t header_size;	/* sizeof(struct ltx_statseg_header) */
	uint64_t size;		/* bytes of the whole segment */
	uint64_t seq;		/* seqlock: odd while being rewritten */
	int64_t pid;		/* the process */
	uint32_t flags;		/* LTX_STATSEG_* */
	uint32_t level;		/* LTX_STATS: 1, or 2 for stacks */
	uint64_t start_ns;	/* CLOCK_REALTIME when statistics began */
	uint64_t update_ns;	/* CLOCK_REALTIME of the last refresh */
	uint64_t refreshes;	/* refreshes so far */
	uint64_t tsc_hz;	/* cycle counter ticks per second (estimate) */
	uint32_t counters_off;	/* offset of the counters (struct ltx_stats) */
	uint32_t counters_size; /* their size */
	uint32_t sites_off;	/* offset of the site table */
	uint32_t site_size;	/* sizeof(struct ltx_statseg_site) */
	uint32_t nsites_max;	/* entries the table has room for */
	uint32_t nsites;	/* entries in use, most frequent first */
	uint32_t objs_off;	/* offset of the object table */
	uint32_t obj_size;	/* sizeof(struct ltx_statseg_obj) */
	uint32_t nobjs_max;
	uint32_t nobjs;
	uint32_t mode;	    /* LTX_MODE at the last refresh (rt/config.h) */
	uint32_t orec_bits; /* LTX_OREC_BITS (the table's size) */
	uint32_t lines_off; /* offset of the line table */
	uint32_t line_size; /* sizeof(struct ltx_statseg_line) */
	uint32_t nlines_max;
	uint32_t nlines;
	char command[256]; /* the command line, NUL-terminated */
	char fields[LTX_STATSEG_FIELDS_LEN]; /* LTX_STATS_NAMES, NUL-ended */
};

_Static_assert(sizeof(LTX_STATS_NAMES) <= LTX_STATSEG_FIELDS_LEN,
	       "the counters' names outgrew the segment header");

/* One frame: an address, where it is, and its symbol if the process knew. */
struct ltx_statseg_frame {
	uint64_t pc;  /* return address in the process */
	uint64_t off; /* pc - object base (or pc, for ET_EXEC objects) */
	int32_t obj;  /* index in the object table, or -1 */
	uint32_t pad;
	char func[80]; /* "name+0xoff" from dladdr, or "" */
};

/* An abort site: where the failing tm_* call was made, and its callers. */
struct ltx_statseg_site {
	uint64_t count;	  /* aborts attributed to this site */
	uint32_t kind;	  /* enum ltx_site_kind (rt/stats.h), 0 to 5 */
	uint32_t cause;	  /* TM_ABORT_* bits seen here */
	uint32_t nframes; /* 1 to LTX_STATSEG_FRAMES */
	uint32_t pad;
	struct ltx_statseg_frame frames[LTX_STATSEG_FRAMES];
};

struct ltx_statseg_obj {
	uint64_t base;	  /* load address */
	uint32_t is_exec; /* ET_EXEC: addresses are absolute */
	uint32_t pad;
	char path[240]; /* file name, NUL-terminated */
};

/*
 * A line conflicts were found on (struct ltx_stats_line, rt/stats.h, with
 * where it is).  A part is bytes one side of a conflict used (bit i: byte
 * i of the line); each part's name is that of its first byte.
 */
struct ltx_statseg_line {
	uint64_t addr;			      /* the line's first byte */
	uint64_t count[LTX_CONFLICT_CLASSES]; /* conflict aborts by class */
	uint64_t part[LTX_STATS_PARTS];	      /* byte masks; 0: unused */
	uint64_t off;	    /* addr - its object's base (addr: ET_EXEC) */
	uint64_t other;	    /* ALIAS: a line sharing its record, or 0 */
	uint64_t other_off; /* its offset in its object */
	int32_t obj;	    /* the object the line is in (a global), or -1 */
	int32_t other_obj;  /* the object other is in, or -1 */
	uint32_t bits;	    /* ALIAS: the LTX_OREC_BITS that separates them;
			     * LTX_STATS_NEVER: none; 0: no aliasing */
	uint32_t pad;
	char sym[LTX_STATS_PARTS][64]; /* the process's name of each part
					* (dladdr: exported symbols), or "" */
};

/* The whole segment, as the writer lays it out. */
struct ltx_statseg {
	struct ltx_statseg_header h;
	struct ltx_stats c;
	struct ltx_statseg_site sites[LTX_STATSEG_SITES];
	struct ltx_statseg_obj objs[LTX_STATSEG_OBJS];
	struct ltx_statseg_line lines[LTX_STATSEG_LINES];
};

/* ---- reader (statseg-read.c, also compiled into ltxstat) ---- */

enum ltx_statseg_error {
	LTX_STATSEG_OK = 0,
	LTX_STATSEG_ETRUNC = 1,	  /* shorter than its header says */
	LTX_STATSEG_EMAGIC = 2,	  /* not an ltx statistics segment */
	LTX_STATSEG_EVERSION = 3, /* another layout version, or counter list */
	LTX_STATSEG_ECORRUPT = 4, /* inconsistent fields */
	LTX_STATSEG_EBUSY = 5,	  /* being rewritten (seq odd): read again */
	LTX_STATSEG_ENOTREG = 6,  /* not a regular file (directory, FIFO...) */
	LTX_STATSEG_ETOOBIG = 7,  /* larger than any segment is */
	LTX_STATSEG_EOWNER = 8,	  /* owned by another user than the process */
	LTX_STATSEG_EINODE = 9,	  /* not the file the process has mapped */
	LTX_STATSEG_EPID = 10,	  /* its header names another process */
};

/*
 * Where a segment is and who may have written it.  The writer names its
 * segment /dev/shm/ltx.<pid>.<token>, the token 16 random hex digits (or
 * ltxstat's, through LTX_STATS_KEEP=<pid>.<token>), and creates it
 * exclusively: a file planted under a name another user can predict never
 * takes its place.  A reader of a running process trusts only the file the
 * process has mapped (/proc/<pid>/maps: same device and inode), owned by
 * the process's user, whose header names the process; it opens it without
 * following links and non-blocking, and reads at most LTX_STATSEG_SIZE_MAX
 * bytes, so a FIFO, a device or a huge sparse file costs it nothing.
 */
#define LTX_STATSEG_DIR	      "/dev/shm"
#define LTX_STATSEG_SIZE_MAX  (1u << 20) /* this version's is ~54 KiB */
#define LTX_STATSEG_TOKEN_LEN 16

_Static_assert(sizeof(struct ltx_statseg) <= LTX_STATSEG_SIZE_MAX,
	       "LTX_STATSEG_SIZE_MAX");

/*
 * ltx_statseg_name_pid: if name (a file name in LTX_STATSEG_DIR, without
 * the directory) is a segment's, ltx.<pid> or ltx.<pid>.<hex token>, its
 * pid; else 0.
 */
long ltx_statseg_name_pid(const char *name);

/* A statistics segment mapped by a process (a line of /proc/PID/maps). */
struct ltx_statseg_mapping {
	char path[128];	       /* LTX_STATSEG_DIR "/ltx.<pid>..." */
	uint64_t ino;	       /* its inode... */
	unsigned major, minor; /* ...on this device */
	bool deleted;	       /* removed from the directory since */
};

/*
 * ltx_statseg_maps_line: whether line, one line of /proc/<pid>/maps, maps
 * a statistics segment of process pid; if so, fills *m.
 */
bool ltx_statseg_maps_line(const char *line, long pid,
			   struct ltx_statseg_mapping *m);

/* What a reader knows a segment's file must be, beyond a segment. */
struct ltx_statseg_expect {
	bool check_owner;
	uid_t uid; /* owned by this user (the process's) */
	bool check_inode;
	unsigned major, minor; /* this device... */
	uint64_t ino;	       /* ...and inode (the one the process maps) */
};

/*
 * ltx_statseg_check_file: whether *st (fstat of the open file) can be the
 * segment *e describes: a regular file of a header's size to
 * LTX_STATSEG_SIZE_MAX bytes, and the owner and inode e asks for.  Returns
 * LTX_STATSEG_OK, ENOTREG, ETRUNC, ETOOBIG, EOWNER or EINODE.
 */
int ltx_statseg_check_file(const struct stat *st,
			   const struct ltx_statseg_expect *e);

/*
 * ltx_statseg_size: from head[0, len), the start of a file of file_size
 * bytes, the bytes to read: the size its header gives, once the magic,
 * version and header size are right and the size fits both the file and
 * LTX_STATSEG_SIZE_MAX.  Returns LTX_STATSEG_OK (*size set) or an error.
 */
int ltx_statseg_size(const void *head, size_t len, uint64_t file_size,
		     size_t *size);

/* A checked segment: pointers into the buffer that was parsed. */
struct ltx_statseg_view {
	const struct ltx_statseg_header *h;
	const struct ltx_stats *c;
	const struct ltx_statseg_site *sites;
	const struct ltx_statseg_obj *objs;
	const struct ltx_statseg_line *lines;
	uint32_t nsites, nobjs, nlines;
	uint32_t version; /* set even when the version is refused */
};

/*
 * ltx_statseg_parse: check that buf[0, len) is a complete, consistent
 * segment of this version and counter list and fill *view with pointers
 * into it.  Never reads outside the buffer, whatever it holds (buf must be
 * 8-byte aligned).
 * Returns LTX_STATSEG_OK or an enum ltx_statseg_error.
 */
int ltx_statseg_parse(const void *buf, size_t len,
		      struct ltx_statseg_view *view);

/* ltx_statseg_check_pid: LTX_STATSEG_OK if the parsed segment's header
 * names process pid, else LTX_STATSEG_EPID. */
int ltx_statseg_check_pid(const struct ltx_statseg_view *v, long pid);

/*
 * ltx_statseg_layout: clear *s and fill its header as this version lays a
 * segment out, for process pid (seq 0: readable, no figures yet).
 */
void ltx_statseg_layout(struct ltx_statseg *s, int64_t pid);

/* ltx_statseg_strerror: a short phrase for an enum ltx_statseg_error. */
const char *ltx_statseg_strerror(int err);

/*
 * ltx_statseg_resolve_fn: optional symbolizer for reports: writes the name
 * of the address at offset off in object obj of the view into buf -- a
 * frame's return address (data false): "function at file:line"; a datum
 * (data true): "symbol+0xN (object)" -- or returns 0 to keep the
 * segment's own name.
 */
typedef int (*ltx_statseg_resolve_fn)(void *ctx,
				      const struct ltx_statseg_view *v,
				      int32_t obj, uint64_t off, bool data,
				      char *buf, size_t len);

/*
 * Naming the frames of a view's abort sites and the data of its conflict
 * lines, the same way for the summary at exit and for ltxstat
 * (statseg-sym.c): a frame "function at file.c:LINE" where the object has
 * line information, else "function+0xOFF (object)" from its symbol table;
 * a datum "symbol+0xOFF (object)" from the symbol table (the object, a
 * global variable, holding it).  ltx_statseg_sym_new works out every name
 * at once (one addr2line per object) and returns the context for
 * ltx_statseg_sym_resolve, an ltx_statseg_resolve_fn; NULL if out of memory
 * (the resolver then knows nothing).  Not for signal handlers.
 */
struct ltx_statseg_sym;
struct ltx_statseg_sym *ltx_statseg_sym_new(const struct ltx_statseg_view *v);
int ltx_statseg_sym_resolve(void *ctx, const struct ltx_statseg_view *v,
			    int32_t obj, uint64_t off, bool data, char *buf,
			    size_t len);
void ltx_statseg_sym_free(struct ltx_statseg_sym *sym);

/*
 * ltx_statseg_elf_functions: for each of the n return addresses off[k] in
 * the object file fd (of size bytes; link-time addresses), the function
 * holding it from its symbol table into name[k] ("" if none) and the
 * offset into it into into[k].  Reads only 64-bit little-endian ELF, and
 * checks every offset and size of the file against size first.
 */
void ltx_statseg_elf_functions(int fd, uint64_t size, const uint64_t *off,
			       unsigned n, char (*name)[128], uint64_t *into);

/* ltx_statseg_elf_objects: the same for data addresses: the data object
 * (STT_OBJECT, a variable) holding each, if one does. */
void ltx_statseg_elf_objects(int fd, uint64_t size, const uint64_t *off,
			     unsigned n, char (*name)[128], uint64_t *into);

/* ltx_statseg_print: the summary table of ltxstat(1) and LTX_STATS=1. */
void ltx_statseg_print(FILE *out, const struct ltx_statseg_view *v,
		       ltx_statseg_resolve_fn resolve, void *ctx);

/* ltx_statseg_print_json: the same as one JSON object and a newline. */
void ltx_statseg_print_json(FILE *out, const struct ltx_statseg_view *v,
			    ltx_statseg_resolve_fn resolve, void *ctx);

/* Aborts in no row of aborts_by (counted before statistics were on). */
uint64_t ltx_statseg_unclassified(const struct ltx_stats *c);

/* Names of a TM_ABORT_* bit and an enum ltx_site_kind ("bit12" if none). */
const char *ltx_statseg_cause_name(unsigned bit, char *buf, size_t len);
const char *ltx_statseg_kind_name(unsigned kind);

/* ---- writer (statseg.c, in the library) ---- */

/*
 * ltx_statseg_source: where the writer gets its figures (the transaction
 * layer's ltx_stats_collect_all, tx/stats.h): the process totals into
 * *sum, the number of threads into *threads, and the top abort sites and
 * conflict lines into *t.  rt knows no descriptor: tx hands this function
 * in.
 */
typedef void (*ltx_statseg_source)(struct ltx_stats *sum, uint64_t *threads,
				   struct ltx_stats_tables *t);

/*
 * ltx_statseg_start: create /dev/shm/ltx.<pid> and the thread that
 * refreshes it from source every 100 ms; register the exit handler that
 * writes the final figures, prints the summary and removes the segment.
 * Idempotent within a process (the first call's source stays); in the
 * child of a fork, which leaves its parent's segment alone, the first call
 * creates the child's own.
 */
void ltx_statseg_start(ltx_statseg_source source);

#endif /* LTX_RT_STATSEG_H */
