/* SPDX-License-Identifier: MIT */
/* Names for reports: sites by file:line or function+offset, data by symbol. */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rt/statseg.h"

/*
 * Shared by the library (the summary at exit) and ltxstat(1), so that both
 * name a site the same way.  For each object the sites' frames are in, in
 * one pass: the function holding each address, from the object's symbol
 * table (.symtab, else .dynsym: read here, every offset checked, since the
 * object may be anyone's), and its file and line from addr2line(1), run
 * once per object with every address.  A frame then reads
 * "function at file.c:LINE", or without line information "function+0xOFF
 * (object)", so two sites in one function differ.  The bytes of a conflict
 * line in an object (a global) are named by the variable holding them,
 * from the same symbol table: "variable+0xOFF (object)".
 *
 * Trust: the objects are named by the segment, which the process it
 * describes wrote.  Only a regular file owned by root or by the user
 * running this code is read, through a descriptor opened once (addr2line
 * gets /proc/self/fd/N, so the file checked is the file read); a program
 * with privileges its caller lacks runs no addr2line at all.
 */

#define ADDRS_MAX                                                              \
	(LTX_STATSEG_SITES * LTX_STATSEG_FRAMES +                              \
	 LTX_STATSEG_LINES * (LTX_STATS_PARTS + 2))
#define TABLE_MAX (64u << 20) /* a symbol or string table larger is skipped */

struct sym_frame {
	int32_t obj;
	bool data; /* a datum's address, not a return address */
	uint64_t off;
	char text[512];
};

struct ltx_statseg_sym {
	unsigned n;
	struct sym_frame f[ADDRS_MAX];
};

/* ---- the function holding an address, from the ELF symbol table ---- */

static bool read_at(int fd, void *buf, uint64_t len, uint64_t off)
{
	char *p = buf;

	while (len > 0) {
		ssize_t n = pread(fd, p, len, (off_t)off);

		if (n <= 0)
			return false;
		p += n;
		off += (uint64_t)n;
		len -= (uint64_t)n;
	}
	return true;
}

/* The section table entry i, if in the file. */
static bool section(int fd, const Elf64_Ehdr *eh, unsigned i, Elf64_Shdr *sh)
{
	return i < eh->e_shnum &&
	       read_at(fd, sh, sizeof(*sh),
		       eh->e_shoff + (uint64_t)i * sizeof(*sh));
}

/* The symbol of type want (STT_FUNC, STT_OBJECT) holding each address. */
static void elf_symbols(int fd, uint64_t size, const uint64_t *off, unsigned n,
			char (*name)[128], uint64_t *into, unsigned want_type)
{
	Elf64_Ehdr eh;
	Elf64_Shdr sym, str;
	Elf64_Sym *syms = NULL;
	char *strs = NULL;
	uint64_t nsyms;
	bool found = false;

	for (unsigned k = 0; k < n; k++)
		name[k][0] = '\0';
	if (!read_at(fd, &eh, sizeof(eh), 0) ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_ident[EI_DATA] != ELFDATA2LSB ||
	    eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shoff > size)
		return;
	/* .symtab if the object has one (all functions), else .dynsym. */
	for (int want = SHT_SYMTAB; !found && want >= SHT_SYMTAB;
	     want = want == SHT_SYMTAB ? SHT_DYNSYM : -1)
		for (unsigned i = 0; !found && i < eh.e_shnum && i < 65536; i++)
			found = section(fd, &eh, i, &sym) &&
				sym.sh_type == (unsigned)want;
	if (!found || sym.sh_entsize != sizeof(Elf64_Sym) ||
	    sym.sh_size > TABLE_MAX || sym.sh_offset > size ||
	    sym.sh_size > size - sym.sh_offset ||
	    !section(fd, &eh, sym.sh_link, &str) || str.sh_type != SHT_STRTAB ||
	    str.sh_size > TABLE_MAX || str.sh_offset > size ||
	    str.sh_size > size - str.sh_offset || str.sh_size == 0)
		return;
	nsyms = sym.sh_size / sizeof(Elf64_Sym);
	syms = malloc(sym.sh_size ? sym.sh_size : 1);
	strs = malloc(str.sh_size);
	if (syms == NULL || strs == NULL ||
	    !read_at(fd, syms, sym.sh_size, sym.sh_offset) ||
	    !read_at(fd, strs, str.sh_size, str.sh_offset))
		goto out;
	strs[str.sh_size - 1] = '\0';
	for (unsigned k = 0; k < n; k++) {
		const Elf64_Sym *best = NULL;

		/* A return address may follow the last instruction of its
		 * function (a call that does not return): a - 1.  A datum
		 * is where it is. */
		uint64_t a = want_type == STT_FUNC ? off[k] - 1 : off[k];

		for (uint64_t i = 0; i < nsyms; i++) {
			const Elf64_Sym *s = &syms[i];

			if (ELF64_ST_TYPE(s->st_info) != want_type ||
			    s->st_value == 0 || s->st_value > a ||
			    off[k] == 0 || s->st_name >= str.sh_size)
				continue;
			/* A variable of known size only, holding a. */
			if (want_type != STT_FUNC) {
				if (a - s->st_value < s->st_size)
					best = s;
				continue;
			}
			/* Inside it; or, sizes unknown, the closest below. */
			if (a - s->st_value < s->st_size ||
			    (s->st_size == 0 &&
			     (best == NULL || s->st_value > best->st_value)))
				best = s;
		}
		if (best != NULL) {
			snprintf(name[k], sizeof(name[k]), "%s",
				 strs + best->st_name);
			into[k] = off[k] - best->st_value;
		}
	}
out:
	free(syms);
	free(strs);
}

void ltx_statseg_elf_functions(int fd, uint64_t size, const uint64_t *off,
			       unsigned n, char (*name)[128], uint64_t *into)
{
	elf_symbols(fd, size, off, n, name, into, STT_FUNC);
}

void ltx_statseg_elf_objects(int fd, uint64_t size, const uint64_t *off,
			     unsigned n, char (*name)[128], uint64_t *into)
{
	elf_symbols(fd, size, off, n, name, into, STT_OBJECT);
}

/* ---- file and line, from addr2line ---- */

/* May this process run addr2line?  Not with privileges its caller lacks:
 * it would be found through the caller's PATH. */
static bool may_spawn(void)
{
	return getauxval(AT_SECURE) == 0;
}

/* The environment for addr2line: ours, less what would load ltx into it. */
static char **clean_environment(void)
{
	extern char **environ;
	size_t n = 0, k = 0;
	char **env;

	while (environ[n] != NULL)
		n++;
	env = calloc(n + 1, sizeof(*env));
	if (env == NULL)
		return NULL;
	for (size_t i = 0; i < n; i++)
		if (strncmp(environ[i], "LD_PRELOAD=", 11) != 0 &&
		    strncmp(environ[i], "LTX_", 4) != 0)
			env[k++] = environ[i];
	return env;
}

/* The scratch space of one object's names (on the heap: this may run at
 * exit on a thread with a small stack). */
struct names {
	char func[ADDRS_MAX][128];  /* from the symbol table */
	uint64_t into[ADDRS_MAX];   /* offset into func */
	char fn[ADDRS_MAX][128];    /* from addr2line (inlining known) */
	char where[ADDRS_MAX][128]; /* "file.c:LINE", or "" */
	char addrs[ADDRS_MAX][24];
	char *argv[ADDRS_MAX + 6];
	char out[ADDRS_MAX * 256];
};

/*
 * addr2line's "function\nfile:line\n" for each address (off - 1: a return
 * address follows its call), reading the object through fd: fills fn[k]
 * and where[k] ("file.c:LINE"), or leaves them "" when it does not know.
 */
static void addr2line(int fd, const uint64_t *off, unsigned n, struct names *nm)
{
	char fdpath[32], *line, *save = NULL;
	posix_spawn_file_actions_t fa;
	char **env = clean_environment();
	size_t got = 0;
	unsigned argc = 0, k = 0, field = 0;
	int p[2], status;
	pid_t pid;

	for (unsigned i = 0; i < n; i++)
		nm->fn[i][0] = nm->where[i][0] = '\0';
	if (env == NULL || pipe2(p, O_CLOEXEC) != 0) {
		free(env);
		return;
	}
	snprintf(fdpath, sizeof(fdpath), "/proc/self/fd/%d", fd);
	nm->argv[argc++] = "addr2line";
	nm->argv[argc++] = "-f";
	nm->argv[argc++] = "-C";
	nm->argv[argc++] = "-e";
	nm->argv[argc++] = fdpath;
	for (unsigned i = 0; i < n; i++) {
		snprintf(nm->addrs[i], sizeof(nm->addrs[i]), "0x%" PRIx64,
			 off[i] ? off[i] - 1 : 0);
		nm->argv[argc++] = nm->addrs[i];
	}
	nm->argv[argc] = NULL;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, p[1], 1);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	/* The object's descriptor stays open in addr2line (no O_CLOEXEC). */
	if (posix_spawnp(&pid, "addr2line", &fa, NULL, nm->argv, env) != 0)
		pid = -1;
	posix_spawn_file_actions_destroy(&fa);
	free(env);
	close(p[1]);
	while (pid > 0 && got < sizeof(nm->out) - 1) {
		ssize_t r =
			read(p[0], nm->out + got, sizeof(nm->out) - 1 - got);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	close(p[0]);
	/* The program's own SIGCHLD handler may reap it first: fine. */
	if (pid > 0)
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
	nm->out[got] = '\0';
	for (line = strtok_r(nm->out, "\n", &save); line != NULL && k < n;
	     line = strtok_r(NULL, "\n", &save), field ^= 1) {
		char *colon, *slash;

		if (field == 0) {
			if (strcmp(line, "??") != 0)
				snprintf(nm->fn[k], sizeof(nm->fn[k]), "%s",
					 line);
			continue;
		}
		if ((colon = strstr(line, " (discriminator")) != NULL)
			*colon = '\0';
		colon = strrchr(line, ':');
		slash = strrchr(line, '/');
		/* "??:0", "??:?", "file.c:?": no line known */
		if (colon != NULL && strncmp(line, "??", 2) != 0 &&
		    colon[1] >= '1' && colon[1] <= '9')
			snprintf(nm->where[k], sizeof(nm->where[k]), "%s",
				 slash ? slash + 1 : line);
		k++;
	}
}

/* ---- the names of a view's frames ---- */

/* The object's file, opened once, if it may be read (see Trust above). */
static int open_object(const char *path, uint64_t *size)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY);

	if (fd < 0)
		return -1;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
	    (st.st_uid != 0 && st.st_uid != geteuid())) {
		close(fd);
		return -1;
	}
	*size = (uint64_t)st.st_size;
	return fd;
}

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash != NULL ? slash + 1 : path;
}

/* The names of obj's addresses of one kind (code: return addresses). */
static void name_addresses(struct ltx_statseg_sym *sym,
			   const struct ltx_statseg_view *v, int32_t obj,
			   int fd, uint64_t size, bool data, bool spawn,
			   struct names *nm)
{
	uint64_t off[ADDRS_MAX] = { 0 };
	unsigned idx[ADDRS_MAX], n = 0;
	const char *file = base_name(v->objs[obj].path);

	for (unsigned i = 0; i < sym->n; i++)
		if (sym->f[i].obj == obj && sym->f[i].data == data) {
			idx[n] = i;
			off[n++] = sym->f[i].off;
		}
	if (n == 0)
		return;
	for (unsigned k = 0; k < n; k++)
		nm->fn[k][0] = nm->where[k][0] = '\0';
	if (data) {
		ltx_statseg_elf_objects(fd, size, off, n, nm->func, nm->into);
	} else {
		ltx_statseg_elf_functions(fd, size, off, n, nm->func, nm->into);
		if (spawn)
			addr2line(fd, off, n, nm);
	}
	for (unsigned k = 0; k < n; k++) {
		char *text = sym->f[idx[k]].text;
		size_t len = sizeof(sym->f[idx[k]].text);
		const char *fn = nm->fn[k][0] ? nm->fn[k] : nm->func[k];

		if (fn[0] != '\0' && nm->where[k][0] != '\0')
			snprintf(text, len, "%s at %s", fn, nm->where[k]);
		else if (data && nm->func[k][0] != '\0' && nm->into[k] == 0)
			snprintf(text, len, "%s (%s)", nm->func[k], file);
		else if (nm->func[k][0] != '\0')
			snprintf(text, len, "%s+0x%" PRIx64 " (%s)",
				 nm->func[k], nm->into[k], file);
	}
}

static void name_object(struct ltx_statseg_sym *sym,
			const struct ltx_statseg_view *v, int32_t obj,
			bool spawn)
{
	uint64_t size;
	struct names *nm = malloc(sizeof(*nm));
	int fd = nm != NULL ? open_object(v->objs[obj].path, &size) : -1;

	if (fd >= 0) {
		name_addresses(sym, v, obj, fd, size, false, spawn, nm);
		name_addresses(sym, v, obj, fd, size, true, spawn, nm);
		close(fd);
	}
	free(nm);
}

/* Add (obj, off) of one kind to the addresses to name, once. */
static void want(struct ltx_statseg_sym *sym, int32_t obj, uint64_t off,
		 bool data)
{
	if (obj < 0)
		return;
	for (unsigned j = 0; j < sym->n; j++)
		if (sym->f[j].obj == obj && sym->f[j].off == off &&
		    sym->f[j].data == data)
			return;
	if (sym->n < ADDRS_MAX) {
		sym->f[sym->n].obj = obj;
		sym->f[sym->n].data = data;
		sym->f[sym->n++].off = off;
	}
}

struct ltx_statseg_sym *ltx_statseg_sym_new(const struct ltx_statseg_view *v)
{
	struct ltx_statseg_sym *sym = calloc(1, sizeof(*sym));
	bool spawn = may_spawn();

	if (sym == NULL)
		return NULL;
	for (uint32_t i = 0; i < v->nsites; i++)
		for (uint32_t k = 0; k < v->sites[i].nframes; k++) {
			const struct ltx_statseg_frame *f =
				&v->sites[i].frames[k];

			if (f->pc != 0)
				want(sym, f->obj, f->off, false);
		}
	for (uint32_t i = 0; i < v->nlines; i++) {
		const struct ltx_statseg_line *l = &v->lines[i];

		want(sym, l->obj, l->off, true);
		for (unsigned p = 0; p < LTX_STATS_PARTS; p++)
			if (l->part[p] != 0)
				want(sym, l->obj,
				     l->off + (unsigned)__builtin_ctzll(
						      l->part[p]),
				     true);
		if (l->other != 0)
			want(sym, l->other_obj, l->other_off, true);
	}
	for (uint32_t o = 0; o < v->nobjs; o++)
		for (unsigned j = 0; j < sym->n; j++)
			if (sym->f[j].obj == (int32_t)o) {
				name_object(sym, v, (int32_t)o, spawn);
				break;
			}
	return sym;
}

int ltx_statseg_sym_resolve(void *ctx, const struct ltx_statseg_view *v,
			    int32_t obj, uint64_t off, bool data, char *buf,
			    size_t len)
{
	const struct ltx_statseg_sym *sym = ctx;

	(void)v;
	if (sym == NULL)
		return 0;
	for (unsigned j = 0; j < sym->n; j++)
		if (sym->f[j].obj == obj && sym->f[j].off == off &&
		    sym->f[j].data == data && sym->f[j].text[0] != '\0') {
			snprintf(buf, len, "%s", sym->f[j].text);
			return 1;
		}
	return 0;
}

void ltx_statseg_sym_free(struct ltx_statseg_sym *sym)
{
	free(sym);
}
