/* SPDX-License-Identifier: MIT */
/* The statistics segment's reader: checks, and the summary ltxstat prints. */
#include <ctype.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/sysmacros.h>

#include "rt/statseg.h"

/*
 * Shared by the library (the LTX_STATS=1 exit summary) and ltxstat(1).
 * ltx_statseg_parse trusts nothing in the buffer: every offset and count is
 * checked against the buffer's length before it is used, and every string
 * must end inside its field.
 */

static bool has_nul(const char *s, size_t n)
{
	return memchr(s, '\0', n) != NULL;
}

/* [off, off + n * size) lies inside [0, len). */
static bool inside(uint64_t off, uint64_t n, uint64_t size, uint64_t len)
{
	return off <= len && n <= (len - off) / (size ? size : 1) &&
	       off % 8 == 0;
}

int ltx_statseg_parse(const void *buf, size_t len, struct ltx_statseg_view *v)
{
	const struct ltx_statseg_header *h = buf;
	const char *base = buf;

	memset(v, 0, sizeof(*v));
	if (buf == NULL || len < sizeof(h->magic) + sizeof(h->version))
		return LTX_STATSEG_ETRUNC;
	if (h->magic != LTX_STATSEG_MAGIC)
		return LTX_STATSEG_EMAGIC;
	v->version = h->version;
	if (h->version != LTX_STATSEG_VERSION)
		return LTX_STATSEG_EVERSION;
	if (len < sizeof(*h))
		return LTX_STATSEG_ETRUNC;
	/* The same version from a build with another counter list. */
	if (strncmp(h->fields, LTX_STATS_NAMES, sizeof(h->fields)) != 0 ||
	    h->counters_size != sizeof(*v->c))
		return LTX_STATSEG_EVERSION;
	if (h->header_size != sizeof(*h) || h->size < sizeof(*h))
		return LTX_STATSEG_ECORRUPT;
	if (h->size > len)
		return LTX_STATSEG_ETRUNC;
	if (h->seq & 1)
		return LTX_STATSEG_EBUSY;
	if (h->pid <= 0 || h->counters_size != sizeof(*v->c) ||
	    h->site_size != sizeof(*v->sites) ||
	    h->obj_size != sizeof(*v->objs) ||
	    h->line_size != sizeof(*v->lines) || h->nsites > h->nsites_max ||
	    h->nobjs > h->nobjs_max || h->nlines > h->nlines_max ||
	    h->nsites_max > 4096 || h->nobjs_max > 4096 ||
	    h->nlines_max > 4096 || h->orec_bits > 64 ||
	    !has_nul(h->command, sizeof(h->command)) ||
	    !inside(h->counters_off, 1, h->counters_size, h->size) ||
	    !inside(h->sites_off, h->nsites_max, h->site_size, h->size) ||
	    !inside(h->objs_off, h->nobjs_max, h->obj_size, h->size) ||
	    !inside(h->lines_off, h->nlines_max, h->line_size, h->size) ||
	    h->counters_off < sizeof(*h) || h->sites_off < sizeof(*h) ||
	    h->objs_off < sizeof(*h) || h->lines_off < sizeof(*h))
		return LTX_STATSEG_ECORRUPT;
	v->h = h;
	v->c = (const void *)(base + h->counters_off);
	v->sites = (const void *)(base + h->sites_off);
	v->objs = (const void *)(base + h->objs_off);
	v->lines = (const void *)(base + h->lines_off);
	v->nsites = h->nsites;
	v->nobjs = h->nobjs;
	v->nlines = h->nlines;
	for (uint32_t i = 0; i < v->nobjs; i++)
		if (!has_nul(v->objs[i].path, sizeof(v->objs[i].path)) ||
		    v->objs[i].is_exec > 1)
			goto corrupt;
	for (uint32_t i = 0; i < v->nsites; i++) {
		const struct ltx_statseg_site *s = &v->sites[i];

		if (s->kind > 5 || s->nframes < 1 ||
		    s->nframes > LTX_STATSEG_FRAMES)
			goto corrupt;
		for (uint32_t k = 0; k < s->nframes; k++) {
			const struct ltx_statseg_frame *f = &s->frames[k];

			if (f->obj < -1 || f->obj >= (int32_t)v->nobjs ||
			    !has_nul(f->func, sizeof(f->func)))
				goto corrupt;
		}
	}
	for (uint32_t i = 0; i < v->nlines; i++) {
		const struct ltx_statseg_line *l = &v->lines[i];

		if (l->obj < -1 || l->obj >= (int32_t)v->nobjs ||
		    l->other_obj < -1 || l->other_obj >= (int32_t)v->nobjs ||
		    l->bits > LTX_STATS_NEVER || (l->addr & 63) != 0)
			goto corrupt;
		for (unsigned p = 0; p < LTX_STATS_PARTS; p++)
			if (!has_nul(l->sym[p], sizeof(l->sym[p])))
				goto corrupt;
	}
	return LTX_STATSEG_OK;
corrupt:
	memset(v, 0, sizeof(*v));
	v->version = LTX_STATSEG_VERSION;
	return LTX_STATSEG_ECORRUPT;
}

void ltx_statseg_layout(struct ltx_statseg *s, int64_t pid)
{
	memset(s, 0, sizeof(*s));
	s->h.magic = LTX_STATSEG_MAGIC;
	s->h.version = LTX_STATSEG_VERSION;
	s->h.header_size = sizeof(s->h);
	s->h.size = sizeof(*s);
	s->h.pid = pid;
	s->h.counters_off = offsetof(struct ltx_statseg, c);
	s->h.counters_size = sizeof(s->c);
	s->h.sites_off = offsetof(struct ltx_statseg, sites);
	s->h.site_size = sizeof(s->sites[0]);
	s->h.nsites_max = LTX_STATSEG_SITES;
	s->h.objs_off = offsetof(struct ltx_statseg, objs);
	s->h.obj_size = sizeof(s->objs[0]);
	s->h.nobjs_max = LTX_STATSEG_OBJS;
	s->h.lines_off = offsetof(struct ltx_statseg, lines);
	s->h.line_size = sizeof(s->lines[0]);
	s->h.nlines_max = LTX_STATSEG_LINES;
	snprintf(s->h.fields, sizeof(s->h.fields), "%s", LTX_STATS_NAMES);
}

long ltx_statseg_name_pid(const char *name)
{
	const char *p = name;
	long pid = 0;

	if (strncmp(p, "ltx.", 4) != 0)
		return 0;
	for (p += 4; *p >= '0' && *p <= '9'; p++) {
		if (pid > (0x7fffffffL - (*p - '0')) / 10)
			return 0;
		pid = pid * 10 + (*p - '0');
	}
	if (p == name + 4 || (p[0] != '\0' && p[0] != '.'))
		return 0;
	if (p[0] == '.') {
		const char *t = ++p;

		while ((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f'))
			p++;
		if (p == t || *p != '\0')
			return 0;
	}
	return pid;
}

/* A hexadecimal number of at most 16 digits at *s, then c. */
static bool hex_field(const char **s, uint64_t *v, char c)
{
	const char *p = *s;

	*v = 0;
	for (; isxdigit((unsigned char)*p) && p - *s < 16; p++)
		*v = *v << 4 | (uint64_t)(isdigit((unsigned char)*p)
						  ? *p - '0'
						  : (*p | 0x20) - 'a' + 10);
	if (p == *s || *p != c)
		return false;
	*s = p + 1;
	return true;
}

bool ltx_statseg_maps_line(const char *line, long pid,
			   struct ltx_statseg_mapping *m)
{
	/* start-end perms offset major:minor inode   path */
	static const char dir[] = LTX_STATSEG_DIR "/";
	const size_t dlen = sizeof(dir) - 1;
	const char *p = line, *path, *end;
	uint64_t x, major, minor, ino = 0;
	char name[sizeof(m->path) - sizeof(dir) + 1];
	size_t n;
	int digits = 0;

	memset(m, 0, sizeof(*m));
	if (pid <= 0 || !hex_field(&p, &x, '-') || !hex_field(&p, &x, ' '))
		return false;
	if (strnlen(p, 5) < 5 || p[4] != ' ')
		return false; /* rwxp */
	p += 5;
	if (!hex_field(&p, &x, ' ') || !hex_field(&p, &major, ':') ||
	    !hex_field(&p, &minor, ' '))
		return false;
	for (; *p >= '0' && *p <= '9' && digits < 19; p++, digits++)
		ino = ino * 10 + (uint64_t)(*p - '0');
	if (digits == 0 || *p != ' ')
		return false;
	while (*p == ' ')
		p++;
	path = p;
	end = path + strcspn(path, "\n");
	n = (size_t)(end - path);
	if (n >= 10 && memcmp(end - 10, " (deleted)", 10) == 0) {
		m->deleted = true;
		n -= 10;
	}
	if (n <= dlen || n - dlen >= sizeof(name) ||
	    memcmp(path, dir, dlen) != 0 || major > 0xfff || minor > 0xfffff)
		return false;
	memcpy(name, path + dlen, n - dlen);
	name[n - dlen] = '\0';
	if (ltx_statseg_name_pid(name) != pid)
		return false;
	snprintf(m->path, sizeof(m->path), "%s%s", dir, name);
	m->ino = ino;
	m->major = (unsigned)major;
	m->minor = (unsigned)minor;
	return true;
}

int ltx_statseg_check_file(const struct stat *st,
			   const struct ltx_statseg_expect *e)
{
	if (!S_ISREG(st->st_mode))
		return LTX_STATSEG_ENOTREG;
	if (st->st_size > (off_t)LTX_STATSEG_SIZE_MAX)
		return LTX_STATSEG_ETOOBIG;
	if (st->st_size < (off_t)sizeof(struct ltx_statseg_header))
		return LTX_STATSEG_ETRUNC;
	if (e != NULL && e->check_owner && st->st_uid != e->uid)
		return LTX_STATSEG_EOWNER;
	if (e != NULL && e->check_inode &&
	    ((uint64_t)st->st_ino != e->ino || major(st->st_dev) != e->major ||
	     minor(st->st_dev) != e->minor))
		return LTX_STATSEG_EINODE;
	return LTX_STATSEG_OK;
}

int ltx_statseg_size(const void *head, size_t len, uint64_t file_size,
		     size_t *size)
{
	struct ltx_statseg_header h;

	if (len < sizeof(h.magic) + sizeof(h.version))
		return LTX_STATSEG_ETRUNC;
	memcpy(&h, head, len < sizeof(h) ? len : sizeof(h));
	if (h.magic != LTX_STATSEG_MAGIC)
		return LTX_STATSEG_EMAGIC;
	if (h.version != LTX_STATSEG_VERSION)
		return LTX_STATSEG_EVERSION;
	if (len < sizeof(h))
		return LTX_STATSEG_ETRUNC;
	if (h.header_size != sizeof(h) || h.size < sizeof(h))
		return LTX_STATSEG_ECORRUPT;
	if (h.size > LTX_STATSEG_SIZE_MAX)
		return LTX_STATSEG_ETOOBIG;
	if (h.size > file_size)
		return LTX_STATSEG_ETRUNC;
	*size = (size_t)h.size;
	return LTX_STATSEG_OK;
}

int ltx_statseg_check_pid(const struct ltx_statseg_view *v, long pid)
{
	return v->h != NULL && v->h->pid == pid ? LTX_STATSEG_OK
						: LTX_STATSEG_EPID;
}

const char *ltx_statseg_strerror(int err)
{
	switch (err) {
	case LTX_STATSEG_OK:
		return "no error";
	case LTX_STATSEG_ETRUNC:
		return "truncated segment";
	case LTX_STATSEG_EMAGIC:
		return "not an ltx statistics segment (bad magic number)";
	case LTX_STATSEG_EVERSION:
		return "segment layout of another version of ltx";
	case LTX_STATSEG_ECORRUPT:
		return "corrupt segment (inconsistent fields)";
	case LTX_STATSEG_EBUSY:
		return "segment being rewritten";
	case LTX_STATSEG_ENOTREG:
		return "not a regular file";
	case LTX_STATSEG_ETOOBIG:
		return "larger than any statistics segment";
	case LTX_STATSEG_EOWNER:
		return "owned by another user than the process";
	case LTX_STATSEG_EINODE:
		return "not the file the process has mapped";
	case LTX_STATSEG_EPID:
		return "written for another process";
	default:
		return "unknown error";
	}
}

static const char *const cause_names[LTX_STATS_CAUSES] = {
	"explicit", "retry",  "conflict", "capacity", "debug",
	"nested",   "signal", "fault",	  "validate", "nomem",
};

const char *ltx_statseg_cause_name(unsigned bit, char *buf, size_t len)
{
	if (bit < LTX_STATS_CAUSES && cause_names[bit] != NULL)
		return cause_names[bit];
	snprintf(buf, len, "bit%u", bit);
	return buf;
}

const char *ltx_statseg_kind_name(unsigned kind)
{
	static const char *const names[] = { "other",	"read",	    "write",
					     "upgrade", "validate", "commit" };

	return kind < 6 ? names[kind] : "?";
}

#define ROW_KEY(id, key, label)	  #key,
#define ROW_LABEL(id, key, label) label,
static const char *const row_keys[] = { LTX_ABORT_ROWS_LIST(ROW_KEY) };
static const char *const row_labels[] = { LTX_ABORT_ROWS_LIST(ROW_LABEL) };

uint64_t ltx_statseg_unclassified(const struct ltx_stats *c)
{
	uint64_t rows = 0;

	for (unsigned r = 0; r < LTX_ABORT_ROWS; r++)
		rows += c->aborts_by[r];
	return c->aborts > rows ? c->aborts - rows : 0;
}

/* What each site kind means in a sentence of the table. */
static const char *kind_phrase(unsigned kind)
{
	static const char *const names[] = {
		"tm_abort or other", "conflict on LT",	"conflict on LTX/ST",
		"upgrade LT->ST",    "failed VALIDATE", "failed COMMIT",
	};

	return kind < 6 ? names[kind] : "?";
}

/* 1234567 -> "1,234,567" */
static const char *count(uint64_t n, char *buf, size_t len)
{
	char tmp[32];
	int k = snprintf(tmp, sizeof(tmp), "%" PRIu64, n), j = 0;

	for (int i = 0; i < k && (size_t)j + 2 < len; i++) {
		if (i > 0 && (k - i) % 3 == 0)
			buf[j++] = ',';
		buf[j++] = tmp[i];
	}
	buf[j] = '\0';
	return buf;
}

static double pct(uint64_t a, uint64_t b)
{
	return b ? 100.0 * (double)a / (double)b : 0.0;
}

static double elapsed_s(const struct ltx_statseg_view *v)
{
	if (v->h->update_ns <= v->h->start_ns)
		return 0.0;
	return (double)(v->h->update_ns - v->h->start_ns) / 1e9;
}

static double backoff_s(const struct ltx_statseg_view *v)
{
	return v->h->tsc_hz
		       ? (double)v->c->backoff_cycles / (double)v->h->tsc_hz
		       : 0.0;
}

static void rate(double per_s, char *buf, size_t len)
{
	if (per_s >= 1e6)
		snprintf(buf, len, "%8.3f M/sec", per_s / 1e6);
	else if (per_s >= 1e3)
		snprintf(buf, len, "%8.3f K/sec", per_s / 1e3);
	else
		snprintf(buf, len, "%8.3f /sec", per_s);
}

static void line(FILE *out, uint64_t n, int indent, const char *what,
		 const char *note)
{
	char b[32];

	fprintf(out, "  %15s  %*s%-*s %s\n", count(n, b, sizeof(b)), indent, "",
		26 - indent, what, note);
}

static void line_pct(FILE *out, uint64_t n, int indent, const char *what,
		     uint64_t of, const char *of_what)
{
	char note[64];

	snprintf(note, sizeof(note), "# %5.1f %%%s%s", pct(n, of),
		 of_what[0] ? " of " : "", of_what);
	line(out, n, indent, what, note);
}

/* A bus request count, or "not counted" where the mode does not count
 * it (the invisible mode's fast paths keep no per-line record). */
static void bus_line(FILE *out, bool counted, uint64_t n, const char *what)
{
	if (counted)
		line(out, n, 0, what, "");
	else
		fprintf(out, "  %15s  %s\n", "not counted", what);
}

static void hist(FILE *out, const char *what, const uint64_t *h)
{
	uint64_t total = 0;

	for (int b = 0; b < LTX_STATS_HIST; b++)
		total += h[b];
	if (total == 0)
		return;
	fprintf(out, "  %-26s", what);
	for (int b = 0; b < LTX_STATS_HIST; b++) {
		char range[24];

		if (h[b] == 0)
			continue;
		if (b == 0)
			snprintf(range, sizeof(range), "0");
		else if (b == 1)
			snprintf(range, sizeof(range), "1");
		else if (b == LTX_STATS_HIST - 1)
			snprintf(range, sizeof(range), ">=%llu",
				 1ull << (b - 1));
		else
			snprintf(range, sizeof(range), "%llu-%llu",
				 1ull << (b - 1), (1ull << b) - 1);
		fprintf(out, " %s: %.1f%%", range, pct(h[b], total));
	}
	fprintf(out, "\n");
}

static const char *frame_name(const struct ltx_statseg_view *v,
			      const struct ltx_statseg_frame *f,
			      ltx_statseg_resolve_fn resolve, void *ctx,
			      char *buf, size_t len)
{
	const char *obj = "?";

	if (resolve != NULL && resolve(ctx, v, f->obj, f->off, false, buf, len))
		return buf;
	if (f->obj >= 0) {
		obj = strrchr(v->objs[f->obj].path, '/');
		obj = obj ? obj + 1 : v->objs[f->obj].path;
	}
	if (f->func[0] != '\0')
		snprintf(buf, len, "%s (%s)", f->func, obj);
	else if (f->pc == 0)
		snprintf(buf, len, "(no access: signal or runtime)");
	else
		snprintf(buf, len, "%s+0x%" PRIx64, obj, f->off);
	return buf;
}

/* ---- conflict lines (issue 19) ---- */

#define CLASS_KEY(id, key, label)   #key,
#define CLASS_LABEL(id, key, label) label,
static const char *const class_keys[] = { LTX_CONFLICT_CLASSES_LIST(
	CLASS_KEY) };
static const char *const class_labels[] = { LTX_CONFLICT_CLASSES_LIST(
	CLASS_LABEL) };

static uint64_t line_total(const struct ltx_statseg_line *l)
{
	uint64_t n = 0;

	for (unsigned c = 0; c < LTX_CONFLICT_CLASSES; c++)
		n += l->count[c];
	return n;
}

/* The class with the most conflicts on l (the first of equals). */
static unsigned line_class(const struct ltx_statseg_line *l)
{
	unsigned best = LTX_CONFLICT_UNKNOWN;

	for (unsigned c = 0; c < LTX_CONFLICT_CLASSES; c++)
		if (l->count[c] > l->count[best] ||
		    (l->count[c] == l->count[best] && c < best &&
		     l->count[c] != 0))
			best = c;
	return best;
}

/* l's parts in the order of their first bytes. */
static unsigned line_parts(const struct ltx_statseg_line *l,
			   uint64_t part[LTX_STATS_PARTS],
			   unsigned which[LTX_STATS_PARTS])
{
	unsigned n = 0;

	for (unsigned p = 0; p < LTX_STATS_PARTS; p++) {
		unsigned at = n;

		if (l->part[p] == 0)
			continue;
		while (at > 0 && __builtin_ctzll(part[at - 1]) >
					 __builtin_ctzll(l->part[p])) {
			part[at] = part[at - 1];
			which[at] = which[at - 1];
			at--;
		}
		part[at] = l->part[p];
		which[at] = p;
		n++;
	}
	return n;
}

/* "0-7" or "0-3,8-11": the bytes of mask m. */
static const char *byte_ranges(uint64_t m, char *buf, size_t len)
{
	size_t k = 0;

	buf[0] = '\0';
	for (unsigned b = 0; b < 64 && k < len; b++) {
		unsigned e = b;
		int w;

		if (!(m >> b & 1))
			continue;
		while (e + 1 < 64 && (m >> (e + 1) & 1))
			e++;
		w = e == b ? snprintf(buf + k, len - k, "%s%u", k ? "," : "", b)
			   : snprintf(buf + k, len - k, "%s%u-%u", k ? "," : "",
				      b, e);
		k += w > 0 ? (size_t)w : 0;
		b = e;
	}
	return buf;
}

/* What the byte at off in obj is: a variable, else the process's own
 * name for it (sym), else where it is. */
static const char *datum_name(const struct ltx_statseg_view *v, int32_t obj,
			      uint64_t off, const char *sym,
			      ltx_statseg_resolve_fn resolve, void *ctx,
			      char *buf, size_t len)
{
	const char *o;

	if (obj < 0) {
		snprintf(buf, len, "heap");
		return buf;
	}
	if (resolve != NULL && resolve(ctx, v, obj, off, true, buf, len))
		return buf;
	o = strrchr(v->objs[obj].path, '/');
	o = o ? o + 1 : v->objs[obj].path;
	if (sym != NULL && sym[0] != '\0')
		snprintf(buf, len, "%s (%s)", sym, o);
	else
		snprintf(buf, len, "%s+0x%" PRIx64, o, off);
	return buf;
}

/* The name of part k (in address order) of l. */
static const char *part_name(const struct ltx_statseg_view *v,
			     const struct ltx_statseg_line *l, uint64_t part,
			     unsigned which, ltx_statseg_resolve_fn resolve,
			     void *ctx, char *buf, size_t len)
{
	return datum_name(v, l->obj, l->off + (unsigned)__builtin_ctzll(part),
			  l->sym[which], resolve, ctx, buf, len);
}

/* Strip " (object)" off a name, for the advice. */
static const char *bare(const char *name, char *buf, size_t len)
{
	const char *sp = strstr(name, " (");

	snprintf(buf, len, "%.*s", (int)(sp ? sp - name : (long)strlen(name)),
		 name);
	return buf;
}

/* What to do about line l: one sentence. */
static void line_advice(const struct ltx_statseg_view *v,
			const struct ltx_statseg_line *l,
			ltx_statseg_resolve_fn resolve, void *ctx, char *buf,
			size_t len)
{
	uint64_t part[LTX_STATS_PARTS];
	unsigned which[LTX_STATS_PARTS], n = line_parts(l, part, which);
	char name[256], b[256];

	switch (line_class(l)) {
	case LTX_CONFLICT_TRUE:
		snprintf(buf, len,
			 "the transactions use the same bytes: share "
			 "less (a copy per thread, combined later) or keep "
			 "the transactions short");
		break;
	case LTX_CONFLICT_FALSE:
		if (n < 2 || l->obj < 0) {
			snprintf(buf, len,
				 "pad or align the data so that what "
				 "different transactions use lies on "
				 "different lines (_Alignas(64), "
				 "tm_aligned_alloc(64, ...))");
			break;
		}
		part_name(v, l, part[1], which[1], resolve, ctx, name,
			  sizeof(name));
		snprintf(buf, len,
			 "pad or align the data so that %s starts a "
			 "line of its own (_Alignas(64))%s",
			 bare(name, b, sizeof(b)),
			 n > 2 ? ", and each part after it" : "");
		break;
	case LTX_CONFLICT_ALIAS:
		if (l->bits != 0 && l->bits != LTX_STATS_NEVER)
			snprintf(buf, len, "raise LTX_OREC_BITS to %u (now %u)",
				 l->bits, v->h->orec_bits);
		else
			snprintf(buf, len,
				 "the lines share an ownership "
				 "record at every LTX_OREC_BITS up to %u: "
				 "move one of them",
				 LTX_STATS_NEVER > 28 ? 28 : LTX_STATS_NEVER);
		break;
	default:
		snprintf(buf, len,
			 "none: the other side's bytes were not "
			 "known");
		break;
	}
}

/*
 * "  <19 columns>LEAD TEXT", TEXT broken at spaces so that no line is
 * wider than 79 columns, its next lines under its first word.
 */
static void wrapped(FILE *out, const char *lead, const char *text)
{
	int col = 19 + (int)strlen(lead), width = 79 - col;

	fprintf(out, "  %15s  %s", "", lead);
	while (*text != '\0') {
		int n = (int)strlen(text), cut = n;

		if (n > width) {
			for (cut = width; cut > 0 && text[cut] != ' '; cut--)
				;
			if (cut == 0)
				for (cut = width;
				     text[cut] != '\0' && text[cut] != ' ';
				     cut++)
					;
		}
		fprintf(out, "%.*s\n", cut, text);
		text += cut;
		while (*text == ' ')
			text++;
		if (*text != '\0')
			fprintf(out, "%*s", col, "");
	}
}

/* The conflict aborts by class, and the lines they were found on;
 * whether there were any. */
static bool print_lines(FILE *out, const struct ltx_statseg_view *v,
			ltx_statseg_resolve_fn resolve, void *ctx)
{
	const struct ltx_stats *c = v->c;
	uint64_t all = 0;
	/* text holds "0x" and 16 digits, a space and a whole name. */
	char b[32], name[512], text[sizeof(name) + 32];

	for (unsigned k = 0; k < LTX_CONFLICT_CLASSES; k++)
		all += c->conflict_class[k];
	if (all == 0)
		return false;
	fprintf(out, "\n  conflict aborts by class (of %s):\n",
		count(all, b, sizeof(b)));
	for (unsigned k = 0; k < LTX_CONFLICT_CLASSES; k++)
		line_pct(out, c->conflict_class[k], 0, class_labels[k], all,
			 "");
	if (v->nlines == 0)
		return true;
	fprintf(out, "\n  top conflict lines:\n");
	for (uint32_t i = 0; i < v->nlines && i < 10; i++) {
		const struct ltx_statseg_line *l = &v->lines[i];
		uint64_t part[LTX_STATS_PARTS];
		unsigned which[LTX_STATS_PARTS], n = line_parts(l, part, which);
		const char *sep = "";

		fprintf(out, "  %15s  0x%016" PRIx64 "  %s\n",
			count(line_total(l), b, sizeof(b)), l->addr,
			datum_name(v, l->obj, l->off, NULL, resolve, ctx, name,
				   sizeof(name)));
		fprintf(out, "  %15s  ", "");
		for (unsigned k = 0; k < LTX_CONFLICT_CLASSES; k++) {
			if (l->count[k] == 0)
				continue;
			fprintf(out, "%s%s %s", sep, class_labels[k],
				count(l->count[k], b, sizeof(b)));
			sep = ", ";
		}
		fputc('\n', out);
		for (unsigned p = 0; p < n; p++)
			fprintf(out, "  %15s  bytes %-12s %s\n", "",
				byte_ranges(part[p], b, sizeof(b)),
				part_name(v, l, part[p], which[p], resolve, ctx,
					  name, sizeof(name)));
		if (l->other != 0) {
			snprintf(text, sizeof(text), "0x%" PRIx64 " %s",
				 l->other,
				 datum_name(v, l->other_obj, l->other_off, NULL,
					    resolve, ctx, name, sizeof(name)));
			wrapped(out, "aliases with ", text);
		}
		line_advice(v, l, resolve, ctx, text, sizeof(text));
		wrapped(out, "advice: ", text);
	}
	if (c->lines_dropped)
		fprintf(out, "  %15s  conflicts on lines not kept\n",
			count(c->lines_dropped, b, sizeof(b)));
	return true;
}

static void print_sites(FILE *out, const struct ltx_statseg_view *v,
			ltx_statseg_resolve_fn resolve, void *ctx);

void ltx_statseg_print(FILE *out, const struct ltx_statseg_view *v,
		       ltx_statseg_resolve_fn resolve, void *ctx)
{
	const struct ltx_stats *c = v->c;
	uint64_t commits = c->commits_ro + c->commits_rw;
	uint64_t tries = commits + c->aborts;
	uint64_t unclassified = ltx_statseg_unclassified(c);
	double secs = elapsed_s(v);
	char note[64], b[32];

	fprintf(out,
		"\n Transaction statistics for '%s' (pid %" PRId64 ")%s:\n\n",
		v->h->command, v->h->pid,
		v->h->flags & LTX_STATSEG_FINAL ? "" : " (running)");
	rate(secs > 0 ? (double)commits / secs : 0.0, b, sizeof(b));
	snprintf(note, sizeof(note), "# %s", b);
	line(out, commits, 0, "commits", note);
	line_pct(out, c->commits_ro, 2, "read-only", commits, "");
	line_pct(out, c->commits_rw, 2, "update", commits, "");
	line_pct(out, c->aborts, 0, "aborts", tries, "transactions");
	/* Each abort in one row; the rest were not classified. */
	for (unsigned r = 0; r < LTX_ABORT_ROWS; r++)
		if (c->aborts_by[r] != 0)
			line_pct(out, c->aborts_by[r], 2, row_labels[r],
				 c->aborts, "");
	if (unclassified != 0)
		line_pct(out, unclassified, 2, "not classified (*)", c->aborts,
			 "");
	if (c->irrevocable || c->serial) {
		line(out, c->irrevocable, 0, "irrevocable runs", "");
		line(out, c->serial, 0, "serial runs", "");
	}
	if (c->bus_t_read || c->bus_t_rfo || c->bus_busy || c->bus_writeback) {
		/* As perf stat says <not counted>: a 0 beside BUSY answers
		 * would claim there were no requests. */
		bool counted = v->h->flags & LTX_STATSEG_BUS_COUNTED;

		bus_line(out, counted, c->bus_t_read, "bus T_READ");
		bus_line(out, counted, c->bus_t_rfo, "bus T_RFO");
		line(out, c->bus_busy, 0, "bus BUSY", "");
		bus_line(out, counted, c->bus_writeback, "bus write-backs");
		if (!counted)
			fprintf(out,
				"  %15s  not counted: the invisible mode "
				"counts these only while\n"
				"  %15s  LTX_CAPACITY is set (see "
				"tm_bus_stats(3))\n",
				"", "");
	}
	/* The list's plain counters (show LINE), when not zero. */
#define TEXT_LINE(name, dim, abi, show, what)                                  \
	LTX_STATS_LINE_##show(if (c->name != 0)                                \
				      line(out, c->name, 0, what, "");)
	LTX_STATS_FIELDS(TEXT_LINE)
#undef TEXT_LINE
	fprintf(out,
		"  %15.6f  %-26s # %5.1f %% of %" PRIu64
		" thread(s) x elapsed\n",
		backoff_s(v), "s backoff",
		secs > 0 && c->threads
			? 100.0 * backoff_s(v) / (secs * (double)c->threads)
			: 0.0,
		c->threads);
	fprintf(out, "  %15.6f  %-26s\n", secs, "s elapsed");
	if (unclassified != 0)
		fprintf(out, "  (*) aborted before LTX_STATS was on, or in a "
			     "signal handler\n");
	fputc('\n', out);
	hist(out, "retries per commit:", c->retries_hist);
	hist(out, "LT loads per commit:", c->reads_hist);
	hist(out, "lines written per commit:", c->writes_hist);
	if (v->h->level == 0)
		fprintf(out, "  (histograms need LTX_STATS=1)\n");
	if (v->nsites != 0)
		print_sites(out, v, resolve, ctx);
	if (print_lines(out, v, resolve, ctx) || v->nsites != 0)
		fputc('\n', out);
}

static void print_sites(FILE *out, const struct ltx_statseg_view *v,
			ltx_statseg_resolve_fn resolve, void *ctx)
{
	const struct ltx_stats *c = v->c;
	char b[32], name[512];

	fprintf(out, "\n  top abort sites (of %s aborts):\n",
		count(c->aborts, b, sizeof(b)));
	for (uint32_t i = 0; i < v->nsites && i < 10; i++) {
		const struct ltx_statseg_site *s = &v->sites[i];

		fprintf(out, "  %15s  %5.1f %%  %-19s %s\n",
			count(s->count, b, sizeof(b)), pct(s->count, c->aborts),
			kind_phrase(s->kind),
			frame_name(v, &s->frames[0], resolve, ctx, name,
				   sizeof(name)));
		for (uint32_t k = 1; k < s->nframes; k++)
			fprintf(out, "  %15s  %7s  %-19s   from %s\n", "", "",
				"",
				frame_name(v, &s->frames[k], resolve, ctx, name,
					   sizeof(name)));
	}
	if (c->sites_dropped)
		fprintf(out, "  %15s  aborts at sites not kept\n",
			count(c->sites_dropped, b, sizeof(b)));
}

/* A JSON string: quotes, backslashes and control characters escaped. */
static void json_str(FILE *out, const char *s)
{
	fputc('"', out);
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '"' || ch == '\\')
			fprintf(out, "\\%c", ch);
		else if (ch < 0x20)
			fprintf(out, "\\u%04x", ch);
		else
			fputc(ch, out);
	}
	fputc('"', out);
}

/* "key":n, or "key":[n,...] for an array field. */
static void json_words(FILE *out, const char *key, const uint64_t *a,
		       size_t bytes, bool array)
{
	fprintf(out, ",\"%s\":%s", key, array ? "[" : "");
	for (size_t i = 0; i < bytes / sizeof(*a); i++)
		fprintf(out, "%s%" PRIu64, i ? "," : "", a[i]);
	fputs(array ? "]" : "", out);
}

/* Every field of the list that --json shows, under its own name. */
#define JSON_TM(c, name)  JSON_STORED(c, name)
#define JSON_LTX(c, name) JSON_STORED(c, name)
#define JSON_STORED(c, name)                                                   \
	json_words(out, #name, (const uint64_t *)&(c)->name,                   \
		   sizeof((c)->name), sizeof((c)->name) != sizeof(uint64_t));
#define JSON_SUM(c, name)                                                      \
	json_words(out, #name, (const uint64_t[]){ LTX_STATS_SUM_##name(c) },  \
		   sizeof(uint64_t), false);
#define JSON_FIELD(name, dim, abi, show, what)                                 \
	LTX_STATS_JSON_##show(JSON_##abi(c, name))

/* ,"conflict_classes":{...},"lines":[...]: the conflict lines. */
static void json_lines(FILE *out, const struct ltx_statseg_view *v,
		       ltx_statseg_resolve_fn resolve, void *ctx)
{
	char name[512], b[256];

	fprintf(out, ",\"conflict_classes\":{");
	for (unsigned k = 0; k < LTX_CONFLICT_CLASSES; k++)
		fprintf(out, "%s\"%s\":%" PRIu64, k ? "," : "", class_keys[k],
			v->c->conflict_class[k]);
	fprintf(out, "},\"lines\":[");
	for (uint32_t i = 0; i < v->nlines; i++) {
		const struct ltx_statseg_line *l = &v->lines[i];
		uint64_t part[LTX_STATS_PARTS];
		unsigned which[LTX_STATS_PARTS], n = line_parts(l, part, which);

		fprintf(out,
			"%s{\"addr\":\"0x%" PRIx64 "\",\"what\":", i ? "," : "",
			l->addr);
		json_str(out, datum_name(v, l->obj, l->off, NULL, resolve, ctx,
					 name, sizeof(name)));
		fprintf(out, ",\"object\":");
		json_str(out, l->obj >= 0 ? v->objs[l->obj].path : "");
		fprintf(out, ",\"conflicts\":%" PRIu64 ",\"class\":\"%s\"",
			line_total(l), class_keys[line_class(l)]);
		for (unsigned k = 0; k < LTX_CONFLICT_CLASSES; k++)
			fprintf(out, ",\"%s\":%" PRIu64, class_keys[k],
				l->count[k]);
		fprintf(out, ",\"parts\":[");
		for (unsigned p = 0; p < n; p++) {
			fprintf(out,
				"%s{\"bytes\":\"%s\",\"mask\":\"0x%016" PRIx64
				"\",\"what\":",
				p ? "," : "",
				byte_ranges(part[p], b, sizeof(b)), part[p]);
			json_str(out,
				 part_name(v, l, part[p], which[p], resolve,
					   ctx, name, sizeof(name)));
			fputc('}', out);
		}
		fputc(']', out);
		if (l->other != 0) {
			fprintf(out,
				",\"shares_record_with\":{\"addr\":\"0x%" PRIx64
				"\",\"what\":",
				l->other);
			json_str(out,
				 datum_name(v, l->other_obj, l->other_off, NULL,
					    resolve, ctx, name, sizeof(name)));
			fputc('}', out);
		}
		if (l->bits != 0)
			fprintf(out, ",\"orec_bits_needed\":%s",
				l->bits == LTX_STATS_NEVER ? "null" : "");
		if (l->bits != 0 && l->bits != LTX_STATS_NEVER)
			fprintf(out, "%u", l->bits);
		line_advice(v, l, resolve, ctx, name, sizeof(name));
		fprintf(out, ",\"advice\":");
		json_str(out, name);
		fputc('}', out);
	}
	fputc(']', out);
}

void ltx_statseg_print_json(FILE *out, const struct ltx_statseg_view *v,
			    ltx_statseg_resolve_fn resolve, void *ctx)
{
	const struct ltx_stats *c = v->c;
	char name[512], cb[16];

	fprintf(out, "{\"version\":%u,\"pid\":%" PRId64 ",\"command\":",
		v->h->version, v->h->pid);
	json_str(out, v->h->command);
	fprintf(out,
		",\"final\":%s,\"mode\":\"%s\",\"bus_counted\":%s,"
		"\"elapsed_s\":%.6f,\"backoff_s\":%.6f,\"orec_bits\":%u",
		v->h->flags & LTX_STATSEG_FINAL ? "true" : "false",
		v->h->mode == 1 ? "visible" : "invisible",
		v->h->flags & LTX_STATSEG_BUS_COUNTED ? "true" : "false",
		elapsed_s(v), backoff_s(v), v->h->orec_bits);
	LTX_STATS_FIELDS(JSON_FIELD)
	fprintf(out, ",\"abort_causes\":{");
	for (unsigned bit = 0, first = 1; bit < LTX_STATS_CAUSES; bit++) {
		if (c->abort_cause[bit] == 0)
			continue;
		fprintf(out, "%s\"%s\":%" PRIu64, first ? "" : ",",
			ltx_statseg_cause_name(bit, cb, sizeof(cb)),
			c->abort_cause[bit]);
		first = 0;
	}
	fprintf(out, "},\"abort_rows\":{");
	for (unsigned r = 0; r < LTX_ABORT_ROWS; r++)
		fprintf(out, "%s\"%s\":%" PRIu64, r ? "," : "", row_keys[r],
			c->aborts_by[r]);
	fprintf(out, ",\"unclassified\":%" PRIu64 "},\"sites\":[",
		ltx_statseg_unclassified(c));
	for (uint32_t i = 0; i < v->nsites; i++) {
		const struct ltx_statseg_site *s = &v->sites[i];

		fprintf(out,
			"%s{\"count\":%" PRIu64 ",\"kind\":\"%s\","
			"\"causes\":%u,\"frames\":[",
			i ? "," : "", s->count, ltx_statseg_kind_name(s->kind),
			s->cause);
		for (uint32_t k = 0; k < s->nframes; k++) {
			const struct ltx_statseg_frame *f = &s->frames[k];

			fprintf(out, "%s{\"pc\":\"0x%" PRIx64 "\",\"object\":",
				k ? "," : "", f->pc);
			json_str(out, f->obj >= 0 ? v->objs[f->obj].path : "");
			fprintf(out,
				",\"offset\":\"0x%" PRIx64 "\",\"symbol\":",
				f->off);
			json_str(out, frame_name(v, f, resolve, ctx, name,
						 sizeof(name)));
			fputc('}', out);
		}
		fprintf(out, "]}");
	}
	fputc(']', out);
	json_lines(out, v, resolve, ctx);
	fprintf(out, "}\n");
}
