/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * The objects loaded in the process, as function tracing sees them.
 * dl_iterate_phdr() gives each one's load base, segments and build id
 * (its PT_NOTE, in memory); the ELF file gives its symbols and where
 * its sites are, read with libelf (elfutils), which this file opens
 * with dlopen() the first time and closes again when nothing turned out
 * to be instrumented, so that a program without instrumented code
 * neither links nor keeps it.
 *
 * A site is the first instruction of a function, after endbr64 if it
 * has one: five one-byte nops from -fpatchable-function-entry=5 (listed
 * in __patchable_function_entries) or one five-byte nop from -pg
 * -mfentry -mnop-mcount -mrecord-mcount (listed in __mcount_loc).  The
 * lists are read from memory, where the loader relocated them; a site
 * is kept only if it lies in an executable segment of its object, at
 * the start of a function symbol, and holds what its kind says.  An
 * object whose symbols reference __cyg_profile_func_enter was built
 * with -finstrument-functions: all its functions are listed (kind 'i').
 *
 * For each instrumented object the process owns a state memfd: one
 * byte per function, which the daemon writes (trace it or not), then a
 * struct traced_func_stat per function, which the process writes.  The
 * hot path finds a function's byte and stats by address through one
 * open-addressing table (ft_ftab), rebuilt and republished when objects
 * come; an old table is never freed (a thread may still read it).
 *
 * Connection thread or tracer API, under ft.lock.
 */
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <libelf.h>

#include "functrace.h"
#include "../internal.h"

#define FT_SCAN_MAX	256		/* objects looked at per scan */
#if defined(__x86_64__)
#define FT_EM		EM_X86_64
#elif defined(__aarch64__)
#define FT_EM		EM_AARCH64
#else
#define FT_EM		0
#endif

/* The libelf functions used, from dlopen("libelf.so.1"). */
static struct {
	void		*h;
	unsigned	(*version)(unsigned);
	Elf		*(*begin)(int, Elf_Cmd, Elf *);
	int		(*end)(Elf *);
	Elf_Scn		*(*nextscn)(Elf *, Elf_Scn *);
	Elf64_Shdr	*(*getshdr)(Elf_Scn *);
	Elf64_Ehdr	*(*getehdr)(Elf *);
	Elf_Data	*(*getdata)(Elf_Scn *, Elf_Data *);
	char		*(*strptr)(Elf *, size_t, size_t);
	int		(*getshdrstrndx)(Elf *, size_t *);
	const char	*(*errmsg)(int);
} le;

static int
ft_libelf_open(void)
{
	if (le.h != NULL)
		return 0;
	le.h = ft_dlopen_real("libelf.so.1", RTLD_NOW | RTLD_LOCAL);
	if (le.h == NULL) {
		DEBUG("function tracing: cannot load libelf.so.1 (%s): no "
		    "function is traced (apt-get install libelf1)", dlerror());
		return -1;
	}
#define LE(f, n)	(*(void **)&le.f = dlsym(le.h, n)) == NULL
	if (LE(version, "elf_version") || LE(begin, "elf_begin") ||
	    LE(end, "elf_end") || LE(nextscn, "elf_nextscn") ||
	    LE(getshdr, "elf64_getshdr") || LE(getehdr, "elf64_getehdr") ||
	    LE(getdata, "elf_getdata") || LE(strptr, "elf_strptr") ||
	    LE(getshdrstrndx, "elf_getshdrstrndx") ||
	    LE(errmsg, "elf_errmsg") || le.version(EV_CURRENT) == EV_NONE) {
#undef LE
		DEBUG("function tracing: libelf.so.1 lacks what we need");
		dlclose(le.h);
		memset(&le, 0, sizeof(le));
		return -1;
	}
	return 0;
}

static void
ft_libelf_close(void)
{
	if (le.h != NULL)
		dlclose(le.h);
	memset(&le, 0, sizeof(le));
}

/* ---- what dl_iterate_phdr says ----------------------------------------- */

struct ft_obj {
	uintptr_t	 base;
	char		 path[TRACED_PATH_MAX];
	uintptr_t	 lo, hi;
	uint8_t		 build_id[TRACED_BUILD_ID_MAX];
	uint32_t	 build_id_len;
	int		 nseg;
	struct {
		uintptr_t	 start, end;
		int		 prot;
	}		 seg[8];
	int		 reloaded;	/* a module of that name and base is
					   another load of it */
};

struct ft_objs {
	struct ft_obj	*o;
	int		 n;
	unsigned long long adds, subs;
};

static int ft_obj_reloaded(const struct ft_obj *o);

/* The NT_GNU_BUILD_ID note of a PT_NOTE segment in memory. */
static void
ft_build_id(struct ft_obj *o, const unsigned char *p, size_t len)
{
	const unsigned char *end = p + len;
	Elf64_Nhdr nh;

	while ((size_t)(end - p) >= sizeof(nh)) {
		size_t nsz, dsz;

		memcpy(&nh, p, sizeof(nh));
		nsz = (nh.n_namesz + 3) & ~3u;
		dsz = (nh.n_descsz + 3) & ~3u;
		p += sizeof(nh);
		if (nsz > (size_t)(end - p) || dsz > (size_t)(end - p) - nsz)
			return;
		if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
		    memcmp(p, "GNU", 4) == 0 && nh.n_descsz > 0 &&
		    nh.n_descsz <= TRACED_BUILD_ID_MAX) {
			memcpy(o->build_id, p + nsz, nh.n_descsz);
			o->build_id_len = nh.n_descsz;
			return;
		}
		p += nsz + dsz;
	}
}

static int
ft_phdr_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct ft_objs *objs = arg;
	struct ft_obj *o;
	int i;

	(void)size;
	objs->adds = info->dlpi_adds;
	objs->subs = info->dlpi_subs;
	if (objs->n >= FT_SCAN_MAX)
		return 0;
	o = &objs->o[objs->n];
	memset(o, 0, sizeof(*o));
	o->base = info->dlpi_addr;
	o->lo = UINTPTR_MAX;
	if (info->dlpi_name == NULL || info->dlpi_name[0] == '\0') {
		/* The executable (the first one), or the vDSO. */
		if (objs->n != 0)
			return 0;
		snprintf(o->path, sizeof(o->path), "[exe]");
	} else
		snprintf(o->path, sizeof(o->path), "%s", info->dlpi_name);
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t s = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type == PT_LOAD) {
			if (s < o->lo)
				o->lo = s;
			if (s + ph->p_memsz > o->hi)
				o->hi = s + ph->p_memsz;
			if (o->nseg < 8) {
				o->seg[o->nseg].start = s;
				o->seg[o->nseg].end = s + ph->p_memsz;
				o->seg[o->nseg].prot =
				    (ph->p_flags & PF_R ? PROT_READ : 0) |
				    (ph->p_flags & PF_W ? PROT_WRITE : 0) |
				    (ph->p_flags & PF_X ? PROT_EXEC : 0);
				o->nseg++;
			}
		} else if (ph->p_type == PT_NOTE && o->build_id_len == 0)
			ft_build_id(o, (const unsigned char *)s, ph->p_memsz);
	}
	if (o->lo == UINTPTR_MAX)
		return 0;
	/* Here, under the loader's lock: it cannot be unmapped meanwhile. */
	o->reloaded = ft_obj_reloaded(o);
	objs->n++;
	return 0;
}

/* ---- reading one object's functions ---------------------------------- */

/* Toolchain and system libraries: never built with our flags. */
static const char *const ft_skip[] = {
	"ld-linux", "libc.so", "libc-", "libm.so", "libpthread", "libdl.",
	"librt.", "libgcc_s", "libstdc++", "libelf", "libz.so", "libzstd",
	"liblzma", "libbz2", "libtraced", "libsystemd", "libcap", "libgcrypt",
	"libgpg-error", "liblz4", "libselinux", "libpcre", "libresolv",
	"libnss_", "libcrypt", "libmvec", "libasan", "libubsan", "libtsan",
	"liblsan", "libevent", "libsqlite3", "libcmocka", "libjansson",
	"linux-vdso",
};

static int
ft_skipped(const char *path)
{
	const char *b = strrchr(path, '/');
	size_t i;

	b = b != NULL ? b + 1 : path;
	for (i = 0; i < sizeof(ft_skip) / sizeof(ft_skip[0]); i++)
		if (strncmp(b, ft_skip[i], strlen(ft_skip[i])) == 0)
			return 1;
	return 0;
}

/*
 * Could the object in file 'fd' be instrumented?  A presence test only,
 * cheap enough for every object of every program: its section names
 * (a site list) and its dynamic string table (the -finstrument-functions
 * hook), read with pread().  Everything else (symbols, sites) is read
 * with libelf, loaded only when this says yes.  1 or 0.
 */
static int
ft_elf_candidate(int fd)
{
	static const char hook[] = "__cyg_profile_func_enter";
	Elf64_Ehdr eh;
	Elf64_Shdr *sh = NULL;
	char *strs = NULL, *dyn = NULL;
	size_t i, n;
	int yes = 0;

	if (pread(fd, &eh, sizeof(eh), 0) != (ssize_t)sizeof(eh) ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shnum == 0 ||
	    eh.e_shnum > 4096 || eh.e_shstrndx >= eh.e_shnum)
		return 0;
	n = eh.e_shnum;
	if ((sh = calloc(n, sizeof(*sh))) == NULL ||
	    pread(fd, sh, n * sizeof(*sh), (off_t)eh.e_shoff) !=
	    (ssize_t)(n * sizeof(*sh)) ||
	    sh[eh.e_shstrndx].sh_size > (1u << 20) ||
	    (strs = calloc(1, sh[eh.e_shstrndx].sh_size + 1)) == NULL ||
	    pread(fd, strs, sh[eh.e_shstrndx].sh_size,
	    (off_t)sh[eh.e_shstrndx].sh_offset) !=
	    (ssize_t)sh[eh.e_shstrndx].sh_size)
		goto out;
	for (i = 0; i < n && !yes; i++) {
		const char *name;

		if (sh[i].sh_name >= sh[eh.e_shstrndx].sh_size)
			continue;
		name = strs + sh[i].sh_name;
		if (strcmp(name, "__patchable_function_entries") == 0 ||
		    strcmp(name, "__mcount_loc") == 0)
			yes = 1;
		else if ((strcmp(name, ".dynstr") == 0 ||
		    strcmp(name, ".strtab") == 0) &&
		    sh[i].sh_size < (64u << 20) &&
		    (dyn = malloc(sh[i].sh_size)) != NULL) {
			if (pread(fd, dyn, sh[i].sh_size,
			    (off_t)sh[i].sh_offset) == (ssize_t)sh[i].sh_size &&
			    memmem(dyn, sh[i].sh_size, hook, sizeof(hook)) !=
			    NULL)
				yes = 1;
			free(dyn);
			dyn = NULL;
		}
	}
out:
	free(sh);
	free(strs);
	return yes;
}

struct ft_sym {
	uintptr_t	 start;		/* absolute */
	uint32_t	 size;
	const char	*name;		/* into libelf's data */
	int		 global;
};

static int
ft_sym_cmp(const void *a, const void *b)
{
	const struct ft_sym *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	/* Of two names for one address, the global, then the shorter. */
	if (x->global != y->global)
		return y->global - x->global;
	return (int)strlen(x->name) - (int)strlen(y->name);
}

static int
ft_in_exec_seg(const struct ft_module *m, uintptr_t a, size_t len)
{
	int i;

	for (i = 0; i < m->nseg; i++)
		if ((m->seg[i].prot & PROT_EXEC) && a >= m->seg[i].start &&
		    a + len <= m->seg[i].end)
			return 1;
	return 0;
}

static const unsigned char ft_nop5[5] = { 0x0f, 0x1f, 0x44, 0x00, 0x00 };
static const unsigned char ft_nops[5] = { 0x90, 0x90, 0x90, 0x90, 0x90 };
static const unsigned char ft_endbr[4] = { 0xf3, 0x0f, 0x1e, 0xfa };

/*
 * The kind of the site at 'a' ('p' or 'm', as its list says), checked
 * against its bytes: 0 if they are not a site of that kind.  A site
 * this process already patched (a call) counts too.
 */
static char
ft_site_kind(const struct ft_module *m, uintptr_t a, char listed)
{
	const unsigned char *p = (const unsigned char *)a;

	if (!ft_in_exec_seg(m, a, FT_SITE_LEN))
		return 0;
	if (memcmp(p, ft_nop5, 5) == 0)
		return listed;
	if (listed == FUNCTAB_KIND_PATCHABLE && memcmp(p, ft_nops, 5) == 0)
		return listed;
	if (p[0] == 0xe8 && m->tramp != 0) {
		int32_t rel;

		memcpy(&rel, p + 1, 4);
		if (a + 5 + (uintptr_t)(intptr_t)rel == m->tramp)
			return listed;
	}
	return 0;
}

/*
 * Do m's sites hold what m says of them: a call to its trampoline where
 * patched, one five-byte nop where converted?  A dlclose() and a
 * dlopen() of the same file at the same base give fresh text, which
 * the counters of the old load do not describe (it would never be
 * patched again, or be written as if converted).  1 or 0.  Under
 * ft.lock, with m known to be mapped.
 */
int
ft_module_intact(const struct ft_module *m)
{
	const unsigned char *p;
	uint32_t k;
	int32_t rel;

	for (k = 0; k < m->nfuncs; k++) {
		const struct ft_func *f = &m->funcs[k];

		if (f->site == 0 || (!f->patched && !f->converted))
			continue;
		p = (const unsigned char *)f->site;
		if (!f->patched) {
			if (memcmp(p, ft_nop5, 5) != 0)
				return 0;
			continue;
		}
		memcpy(&rel, p + 1, 4);
		if (p[0] != 0xe8 || m->tramp == 0 ||
		    f->site + 5 + (uintptr_t)(intptr_t)rel != m->tramp)
			return 0;
	}
	return 1;
}

/*
 * Is object o, just found by dl_iterate_phdr(), a new load of a module
 * of the same name at the same base, rather than that module?  Another
 * build id, other segments, or sites that are not as the module left
 * them.  ft.lock and the loader's lock held.
 */
static int
ft_obj_reloaded(const struct ft_obj *o)
{
	const struct ft_module *m;

	for (m = ft.modules; m != NULL; m = m->next)
		if (!m->gone && m->base == o->base &&
		    strcmp(m->dlname, o->path) == 0)
			break;
	if (m == NULL)
		return 0;
	if (m->build_id_len != o->build_id_len ||
	    memcmp(m->build_id, o->build_id, o->build_id_len) != 0 ||
	    m->nseg != o->nseg || memcmp(m->seg, o->seg, sizeof(m->seg)) != 0)
		return 1;
	return !ft_module_intact(m);
}


struct ft_site {
	uintptr_t	 addr;
	char		 kind;
};

static int
ft_site_cmp(const void *a, const void *b)
{
	const struct ft_site *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* Add a site list (in memory, relocated) of 'size' bytes at 'addr'. */
static int
ft_sites_add(struct ft_site **sites, size_t *n, const struct ft_module *m,
    uintptr_t addr, uint64_t size, char kind)
{
	size_t k, count = size / sizeof(uint64_t);
	struct ft_site *ns;
	uint64_t v;

	if (addr < m->lo || addr + size > m->hi || size > (64u << 20))
		return 0;
	ns = reallocarray(*sites, *n + count, sizeof(**sites));
	if (ns == NULL)
		return -1;
	*sites = ns;
	for (k = 0; k < count; k++) {
		memcpy(&v, (const void *)(addr + k * sizeof(v)), sizeof(v));
		if (v == 0)
			continue;	/* a discarded function */
		ns[*n].addr = (uintptr_t)v;
		ns[*n].kind = kind;
		(*n)++;
	}
	return 0;
}

/*
 * Read the symbols and sites of module m from its file 'fd'.  Fills
 * m->funcs; leaves it empty when the object is not instrumented or
 * cannot be read (said under TRACED_DEBUG).  0, or -1 out of memory.
 */
static int
ft_module_read(struct ft_module *m, int fd)
{
	struct ft_site *sites = NULL;
	struct ft_sym *syms = NULL;
	size_t nsites = 0, nsyms = 0, cap = 0, i, j, shstrndx;
	Elf_Scn *scn = NULL, *symscn = NULL, *dynscn = NULL;
	int rc = -1, instrument = 0;
	Elf64_Shdr *sh;
	Elf64_Ehdr *eh;
	Elf *elf;

	elf = le.begin(fd, ELF_C_READ_MMAP, NULL);
	if (elf == NULL || (eh = le.getehdr(elf)) == NULL ||
	    (FT_EM != 0 && eh->e_machine != FT_EM) ||
	    le.getshdrstrndx(elf, &shstrndx) != 0) {
		DEBUG("function tracing: %s: not an ELF file of this machine "
		    "we can read (%s)", m->path, le.errmsg(-1));
		rc = 0;
		goto out;
	}
	while ((scn = le.nextscn(elf, scn)) != NULL) {
		const char *name;

		if ((sh = le.getshdr(scn)) == NULL)
			continue;
		name = le.strptr(elf, shstrndx, sh->sh_name);
		if (sh->sh_type == SHT_SYMTAB)
			symscn = scn;
		else if (sh->sh_type == SHT_DYNSYM)
			dynscn = scn;
#if defined(__x86_64__)
		/* Sites are patched on x86-64 only; elsewhere only
		 * -finstrument-functions objects are traced. */
		else if (name != NULL && (sh->sh_flags & SHF_ALLOC) &&
		    (strcmp(name, "__mcount_loc") == 0 ||
		    strcmp(name, "__patchable_function_entries") == 0) &&
		    ft_sites_add(&sites, &nsites, m, m->base + sh->sh_addr,
		    sh->sh_size, name[2] == 'm' ? FUNCTAB_KIND_MCOUNT :
		    FUNCTAB_KIND_PATCHABLE) == -1)
			goto out;
#endif
		else if (name != NULL && strcmp(name, ".note.gnu.build-id") ==
		    0 && m->build_id_len > 0) {
			Elf_Data *d = le.getdata(scn, NULL);

			/* The file on disk is not what was loaded. */
			if (d != NULL && (d->d_size < 16 + m->build_id_len ||
			    memcmp((const char *)d->d_buf + 16, m->build_id,
			    m->build_id_len) != 0)) {
				DEBUG("function tracing: %s changed on disk "
				    "since it was loaded: not traced",
				    m->path);
				rc = 0;
				goto out;
			}
		}
	}
	if (symscn == NULL)
		symscn = dynscn;
	/* The symbol tables say whether -finstrument-functions was used. */
	for (j = 0; j < 2; j++) {
		Elf_Scn *ss = j == 0 ? symscn : dynscn;
		Elf_Data *d;
		size_t k, n;

		if (ss == NULL || (j == 1 && dynscn == symscn) ||
		    (sh = le.getshdr(ss)) == NULL ||
		    (d = le.getdata(ss, NULL)) == NULL ||
		    sh->sh_entsize != sizeof(Elf64_Sym))
			continue;
		n = d->d_size / sizeof(Elf64_Sym);
		for (k = 1; k < n; k++) {
			const Elf64_Sym *s = (const Elf64_Sym *)d->d_buf + k;
			const char *name = le.strptr(elf, sh->sh_link,
			    s->st_name);

			if (name == NULL || name[0] == '\0')
				continue;
			if (s->st_shndx == SHN_UNDEF) {
				if (strcmp(name, "__cyg_profile_func_enter") ==
				    0)
					instrument = 1;
				continue;
			}
			if (j == 1 || ELF64_ST_TYPE(s->st_info) != STT_FUNC ||
			    s->st_value == 0 ||
			    strncmp(name, "__cyg_profile_func_", 19) == 0 ||
			    !functab_name_ok(name))
				continue;
			if (nsyms == cap) {
				struct ft_sym *ns;

				cap = cap ? cap * 2 : 256;
				ns = reallocarray(syms, cap, sizeof(*syms));
				if (ns == NULL)
					goto out;
				syms = ns;
			}
			syms[nsyms].start = m->base + s->st_value;
			syms[nsyms].size = s->st_size > UINT32_MAX ?
			    UINT32_MAX : (uint32_t)s->st_size;
			syms[nsyms].name = name;
			syms[nsyms].global =
			    ELF64_ST_BIND(s->st_info) != STB_LOCAL;
			nsyms++;
		}
	}
	if (nsites == 0 && !instrument) {
		rc = 0;
		goto out;
	}
	if (nsyms > 0)
		qsort(syms, nsyms, sizeof(*syms), ft_sym_cmp);
	if (nsites > 0)
		qsort(sites, nsites, sizeof(*sites), ft_site_cmp);
	/* One function per start address. */
	for (i = 0, j = 0; i < nsyms; i++)
		if (j == 0 || syms[i].start != syms[j - 1].start)
			syms[j++] = syms[i];
	nsyms = j;
	m->funcs = calloc(nsyms ? nsyms : 1, sizeof(*m->funcs));
	m->names = malloc(1);
	if (m->funcs == NULL || m->names == NULL)
		goto out;
	m->names_len = 0;
	for (i = 0, j = 0; i < nsyms; i++) {
		struct ft_func *f = &m->funcs[m->nfuncs];
		uintptr_t s = syms[i].start;
		const unsigned char *p = (const unsigned char *)s;
		size_t nl = strlen(syms[i].name) + 1;
		char *nn;

		memset(f, 0, sizeof(*f));
		/* Its site, if listed: at its start, or after endbr64. */
		while (j < nsites && sites[j].addr < s)
			j++;
		if (j < nsites && sites[j].addr == s)
			f->kind = ft_site_kind(m, s, sites[j].kind);
		else if (j < nsites && sites[j].addr == s + 4 &&
		    ft_in_exec_seg(m, s, 4) && memcmp(p, ft_endbr, 4) == 0)
			f->kind = ft_site_kind(m, s + 4, sites[j].kind);
		if (f->kind != 0)
			f->site = sites[j].addr;
		else if (instrument && syms[i].size > 0)
			f->kind = FUNCTAB_KIND_INSTRUMENT;
		else
			continue;
		if (f->site != 0 && memcmp((const void *)f->site, ft_nop5, 5)
		    == 0)
			f->converted = 1;
		f->start = s;
		f->size = syms[i].size;
		nn = realloc(m->names, m->names_len + nl);
		if (nn == NULL)
			goto out;
		m->names = nn;
		memcpy(m->names + m->names_len, syms[i].name, nl);
		f->name = (uint32_t)m->names_len;
		m->names_len += nl;
		m->nfuncs++;
	}
	if (m->nfuncs > TRACED_FUNCS_MAX)
		m->nfuncs = TRACED_FUNCS_MAX;
	DEBUG("function tracing: %s: %u functions (%zu sites listed%s)",
	    m->path, m->nfuncs, nsites, instrument ?
	    ", -finstrument-functions" : "");
	rc = 0;
out:
	if (rc == -1 && m->funcs != NULL) {
		free(m->funcs);
		m->funcs = NULL;
		m->nfuncs = 0;
	}
	if (elf != NULL)
		le.end(elf);
	free(syms);
	free(sites);
	return rc;
}

const char *
ft_func_name(const struct ft_module *m, const struct ft_func *f)
{
	return m->names + f->name;
}

/*
 * The table text and the state memfd of an instrumented module.  0, or
 * -1 (the module then stays untraced).
 */
static int
ft_module_state(struct ft_module *m)
{
	char line[FUNCTAB_LINE_MAX + 1];
	size_t cap = 4096, stats_off;
	uint32_t i;
	int n, fd;
	void *p;

	m->desc = malloc(cap);
	if (m->desc == NULL)
		return -1;
	m->desc_len = 0;
	for (i = 0; i < m->nfuncs; i++) {
		const struct ft_func *f = &m->funcs[i];

		n = functab_format_line(line, sizeof(line), f->start - m->base,
		    f->size, f->kind, m->names + f->name);
		if (n < 0)
			return -1;
		if (m->desc_len + (size_t)n > cap) {
			char *nd;

			while (m->desc_len + (size_t)n > cap)
				cap *= 2;
			if (cap > TRACED_DESC_MAX ||
			    (nd = realloc(m->desc, cap)) == NULL)
				return -1;
			m->desc = nd;
		}
		memcpy(m->desc + m->desc_len, line, (size_t)n);
		m->desc_len += (size_t)n;
	}
	stats_off = ((size_t)m->nfuncs + 4095) / 4096 * 4096;
	m->stats_off = (uint32_t)stats_off;
	m->state_size = stats_off + (size_t)m->nfuncs * TRACED_FUNC_STAT_SIZE;
	fd = memfd_create("traced-funcs", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd == -1)
		return -1;
	if (ftruncate(fd, (off_t)m->state_size) == -1 ||
	    fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW) == -1 ||
	    (p = mmap(NULL, m->state_size, PROT_READ | PROT_WRITE, MAP_SHARED,
	    fd, 0)) == MAP_FAILED) {
		close(fd);
		return -1;
	}
	m->state = p;
	m->state_fd = fd;
	return 0;
}

/* ---- the table of the hot path ---------------------------------------- */

static int
ft_ftab_rebuild_locked(void)
{
	struct ft_module *m;
	struct ft_ftab *tab;
	uint64_t n = 0, size = 64, i, k;

	for (m = ft.modules; m != NULL; m = m->next)
		if (!m->gone && m->state != NULL)
			n += m->nfuncs;
	while (size < 2 * n)
		size *= 2;
	tab = calloc(1, sizeof(*tab) + size * sizeof(tab->slot[0]));
	if (tab == NULL)
		return -1;
	tab->mask = size - 1;
	tab->prev = ft_ftab;
	for (m = ft.modules; m != NULL; m = m->next) {
		if (m->gone || m->state == NULL)
			continue;
		for (k = 0; k < m->nfuncs; k++) {
			const struct ft_func *f = &m->funcs[k];
			uintptr_t key = f->site != 0 ? f->site : f->start;

			for (i = (key * UINT64_C(0x9e3779b97f4a7c15)) >> 20; ;
			    i++) {
				struct ft_fref *r = &tab->slot[i & tab->mask];

				if (r->key == key)
					break;
				if (r->key == 0) {
					r->key = key;
					r->state = m->state + k;
					r->stat = (struct traced_func_stat *)
					    (void *)(m->state + m->stats_off) +
					    k;
					break;
				}
			}
		}
	}
	/* Pairs with the acquire in ft_lookup(); the old one stays. */
	__atomic_store_n(&ft_ftab, tab, __ATOMIC_RELEASE);
	return 0;
}

/* ---- scanning --------------------------------------------------------- */

/*
 * m was unloaded: never touch it again.  Its patched sites went with
 * its text, so they no longer count as patched.  Under ft.lock.
 */
void
ft_module_forget(struct ft_module *m)
{
	uint32_t k;

	m->gone = 1;
	for (k = 0; k < m->nfuncs; k++)
		if (m->funcs[k].patched) {
			m->funcs[k].patched = 0;
			ft.patched--;
		}
}

static int
ft_self_marker(void)
{
	return 0;
}

/*
 * Bring ft.modules in line with the objects loaded now: new ones are
 * numbered, read and given their state; those gone are marked so.
 * Returns 1 if something changed, 0 if not, -1 on failure.  Locked.
 */
int
ft_modules_scan_locked(void)
{
	struct ft_objs objs;
	struct ft_module *m, **tail;
	int i, fd, rc, changed = 0, added_funcs = 0, lost_funcs = 0;
	int opened = 0;
	uintptr_t self = (uintptr_t)ft_self_marker;

	memset(&objs, 0, sizeof(objs));
	objs.o = mmap(NULL, FT_SCAN_MAX * sizeof(*objs.o),
	    PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (objs.o == MAP_FAILED)
		return -1;
	dl_iterate_phdr(ft_phdr_cb, &objs);
	if (ft.scanned && objs.adds == ft.adds && objs.subs == ft.subs) {
		munmap(objs.o, FT_SCAN_MAX * sizeof(*objs.o));
		return 0;
	}
	ft.scanned = 1;
	ft.adds = objs.adds;
	ft.subs = objs.subs;
	/*
	 * Gone: no longer loaded at the same base with the same path, or
	 * loaded again there (a new module below).  Its sites went with
	 * its text; its state stays (the old lookup table points in it).
	 */
	for (m = ft.modules; m != NULL; m = m->next) {
		if (m->gone)
			continue;
		for (i = 0; i < objs.n; i++)
			if (objs.o[i].base == m->base &&
			    strcmp(objs.o[i].path, m->dlname) == 0 &&
			    !objs.o[i].reloaded)
				break;
		if (i == objs.n) {
			DEBUG("function tracing: %s unloaded", m->path);
			ft_module_forget(m);
			changed = 1;
			if (m->state != NULL)
				lost_funcs = 1;
		}
	}
	for (tail = &ft.modules; *tail != NULL; tail = &(*tail)->next)
		;
	for (i = 0; i < objs.n; i++) {
		const struct ft_obj *o = &objs.o[i];

		for (m = ft.modules; m != NULL; m = m->next)
			if (!m->gone && m->base == o->base &&
			    strcmp(m->dlname, o->path) == 0)
				break;
		if (m != NULL)
			continue;
		if (ft.nmodules >= TRACED_MODULES_MAX)
			break;
		if ((m = calloc(1, sizeof(*m))) == NULL ||
		    (m->path = strdup(o->path)) == NULL ||
		    (m->dlname = strdup(o->path)) == NULL) {
			if (m != NULL)
				free(m->path);
			free(m);
			break;
		}
		m->index = ft.nmodules++;
		m->base = o->base;
		m->lo = o->lo;
		m->hi = o->hi;
		m->state_fd = -1;
		memcpy(m->build_id, o->build_id, sizeof(m->build_id));
		m->build_id_len = o->build_id_len;
		m->nseg = o->nseg;
		memcpy(m->seg, o->seg, sizeof(m->seg));
		m->is_self = self >= o->lo && self < o->hi && m->index != 0;
		if (m->index == 0) {
			/* The executable's real path, for the session. */
			char exe[TRACED_PATH_MAX];
			ssize_t n = readlink("/proc/self/exe", exe,
			    sizeof(exe) - 1);

			if (n > 0) {
				char *p;

				exe[n] = '\0';
				if ((p = strdup(exe)) != NULL) {
					free(m->path);
					m->path = p;
				}
			}
		}
		*tail = m;
		tail = &m->next;
		changed = 1;
		if (m->is_self || ft.unsupported ||
		    (m->index != 0 && ft_skipped(m->path)))
			continue;
		fd = open(m->index == 0 ? "/proc/self/exe" : m->path,
		    O_RDONLY | O_CLOEXEC);
		if (fd == -1) {
			DEBUG("function tracing: %s: %s: not traced", m->path,
			    strerror(errno));
			continue;
		}
		if (!ft_elf_candidate(fd)) {
			close(fd);
			continue;
		}
		if (!opened) {
			if (ft_libelf_open() == -1) {
				ft.unsupported = 1;
				close(fd);
				continue;
			}
			opened = 1;
		}
		rc = ft_module_read(m, fd);
		close(fd);
		if (rc == -1)
			continue;
		if (m->nfuncs > 0 && ft_module_state(m) == -1) {
			DEBUG("function tracing: %s: no state memfd (%s): "
			    "not traced", m->path, strerror(errno));
			free(m->funcs);
			m->funcs = NULL;
			m->nfuncs = 0;
		}
		if (m->nfuncs > 0)
			added_funcs = 1;
	}
	munmap(objs.o, FT_SCAN_MAX * sizeof(*objs.o));
	if (added_funcs)
		ft.have_funcs = 1;
	/*
	 * libelf stays only while it is of use: for good once something is
	 * instrumented.  Then a later scan never dlopen()s it, which on the
	 * connection thread, under ft.lock, would wait for the loader's
	 * lock while a constructor inside dlopen() held it and called
	 * dlopen() in turn (ours, which takes ft.lock).
	 */
	if (opened && !ft.have_funcs)
		ft_libelf_close();
	if ((added_funcs || lost_funcs) && ft_ftab_rebuild_locked() == -1)
		return -1;
	return changed;
}

/*
 * In the child of fork(): the state memfds are the parent's, which its
 * daemon writes.  Give each module a copy of its own at the same
 * address (the lookup table points into it).  Only system calls.
 * Returns 0, or -1 if one failed (that module keeps a private copy).
 */
int
ft_state_memfd_atfork_child(void)
{
	struct ft_module *m;
	int fd, rc = 0;

	for (m = ft.modules; m != NULL; m = m->next) {
		if (m->state == NULL)
			continue;
		m->sent = 0;
		fd = memfd_create("traced-funcs", MFD_CLOEXEC |
		    MFD_ALLOW_SEALING);
		if (fd != -1 && ftruncate(fd, (off_t)m->state_size) == 0 &&
		    pwrite(fd, m->state, m->state_size, 0) ==
		    (ssize_t)m->state_size &&
		    fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW) == 0 &&
		    mmap(m->state, m->state_size, PROT_READ | PROT_WRITE,
		    MAP_SHARED | MAP_FIXED, fd, 0) != MAP_FAILED) {
			close(m->state_fd);
			m->state_fd = fd;
			continue;
		}
		if (fd != -1)
			close(fd);
		rc = -1;
		/* Keep the bytes, privately: not the parent's any more. */
		{
			void *tmp = mmap(NULL, m->state_size,
			    PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

			if (tmp != MAP_FAILED) {
				memcpy(tmp, m->state, m->state_size);
				if (mremap(tmp, m->state_size, m->state_size,
				    MREMAP_MAYMOVE | MREMAP_FIXED, m->state) ==
				    MAP_FAILED)
					munmap(tmp, m->state_size);
			}
		}
		close(m->state_fd);
		m->state_fd = -1;
	}
	return rc;
}
