/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * libtraced's dlopen(), which the program's calls reach before libc's:
 * once libc's has loaded the object, the instrumented objects it brought
 * are read, told to the daemon and patched as the rules say before the
 * program gets the handle back (ft_dlopen_done()).  Without it a library
 * loaded late was found by the connection thread's rescan, up to a
 * second later, while the program was already running its code.
 *
 * It is exported under the version programs built against glibc 2.34
 * or later ask for (dlopen@GLIBC_2.34, libtraced.map), so the loader
 * binds their calls to it when libtraced comes before libc in the
 * search order, as it does for a program linked with it.  A program
 * that does not link libtraced, or one built against an older glibc,
 * calls libc's: its objects are found by the rescan (or, when libtraced
 * itself comes with the object, by libtraced's constructor).
 *
 * libc's dlopen() resolves a name without a slash along the search path
 * of the object that called it (its RUNPATH), and $ORIGIN in a name from
 * that object's directory; called from here it would use libtraced's.
 * So for those names the caller's path is searched first, here, with
 * what the loader says of the caller (dladdr1(), dlinfo()); a name found
 * nowhere on it goes to libc's unchanged (the cache, the default
 * directories, which do not depend on the caller).  libtraced's own
 * dlopen() calls (libelf) go to libc's directly: ft_dlopen_real().
 *
 * Any thread, no lock held on entry.  Inside a constructor the loader's
 * lock is held: everything here takes it again only on this thread (it
 * is recursive) and the wait (fconn.c) says why it cannot deadlock.
 */
#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#include "functrace.h"
#include "../internal.h"

#if defined(__x86_64__)
#define FT_DL_EM	EM_X86_64
#elif defined(__aarch64__)
#define FT_DL_EM	EM_AARCH64
#else
#define FT_DL_EM	0
#endif

static void *(*ft_libc_dlopen)(const char *, int);
static pthread_once_t ft_libc_once = PTHREAD_ONCE_INIT;

static void
ft_libc_dlopen_find(void)
{
	/* The next definition after libtraced: libc's. */
	*(void **)&ft_libc_dlopen = dlvsym(RTLD_NEXT, "dlopen", "GLIBC_2.34");
	if (ft_libc_dlopen == NULL)
		*(void **)&ft_libc_dlopen = dlsym(RTLD_NEXT, "dlopen");
}

/*
 * libc's dlopen(), bypassing ours: for libtraced's own loads, which must
 * not scan or wait (ft.lock may be held).  NULL with dlerror() set, as
 * dlopen().  Any thread.
 */
void *
ft_dlopen_real(const char *file, int mode)
{
	pthread_once(&ft_libc_once, ft_libc_dlopen_find);
	if (ft_libc_dlopen == NULL)
		return NULL;
	return ft_libc_dlopen(file, mode);
}

/* An ELF file the loader could load here (class and machine). */
static int
ft_loadable(const char *path)
{
	ElfW(Ehdr) eh;
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd == -1)
		return 0;
	n = pread(fd, &eh, sizeof(eh), 0);
	close(fd);
	return n == (ssize_t)sizeof(eh) &&
	    memcmp(eh.e_ident, ELFMAG, SELFMAG) == 0 &&
	    eh.e_ident[EI_CLASS] == (sizeof(void *) == 8 ? ELFCLASS64 :
	    ELFCLASS32) && eh.e_type == ET_DYN &&
	    (FT_DL_EM == 0 || eh.e_machine == FT_DL_EM);
}

struct ft_byname {
	const char	*name;
	int		 found;
};

static int
ft_byname_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct ft_byname *b = arg;
	const char *base;

	(void)size;
	if (info->dlpi_name == NULL || info->dlpi_name[0] == '\0')
		return 0;
	base = strrchr(info->dlpi_name, '/');
	base = base != NULL ? base + 1 : info->dlpi_name;
	if (strcmp(base, b->name) == 0)
		b->found = 1;
	return b->found;
}

/*
 * The file a name without a slash stands for when 'lm' asks for it:
 * the first loadable one along lm's search path up to the default
 * directories (which follow the cache: libc searches them itself).
 * 0 with the path in 'out', or -1.
 */
static int
ft_search(struct link_map *lm, const char *name, char *out, size_t size)
{
	Dl_serinfo sz, *si;
	unsigned int i;
	int rc = -1;

	if (dlinfo(lm, RTLD_DI_SERINFOSIZE, &sz) == -1 ||
	    (si = malloc(sz.dls_size)) == NULL)
		return -1;
	si->dls_size = sz.dls_size;
	si->dls_cnt = sz.dls_cnt;
	if (dlinfo(lm, RTLD_DI_SERINFO, si) == 0)
		for (i = 0; i < si->dls_cnt && rc == -1; i++) {
			if (si->dls_serpath[i].dls_flags & LA_SER_DEFAULT)
				break;
			if ((size_t)snprintf(out, size, "%s/%s",
			    si->dls_serpath[i].dls_name, name) < size &&
			    ft_loadable(out))
				rc = 0;
		}
	free(si);
	return rc;
}

/*
 * The directory of the object lm, as $ORIGIN stands for it.  Not with
 * dlinfo(RTLD_DI_ORIGIN): glibc 2.36 crashes there for an object whose
 * origin it never needed (l_origin NULL).  0, or -1.
 */
static int
ft_origin_of(const struct link_map *lm, char *out, size_t size)
{
	char buf[PATH_MAX], *slash;
	ssize_t n;

	if (lm->l_name == NULL || lm->l_name[0] == '\0') {
		/* The executable. */
		n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
		if (n <= 0)
			return -1;
		buf[n] = '\0';
	} else if (realpath(lm->l_name, buf) == NULL)
		return -1;
	slash = strrchr(buf, '/');
	if (slash == NULL || (size_t)(slash - buf) >= size)
		return -1;
	memcpy(out, buf, (size_t)(slash - buf));
	out[slash - buf] = '\0';
	return 0;
}

/* 'name' with $ORIGIN (or ${ORIGIN}) as 'origin'.  0, or -1. */
static int
ft_origin(const char *name, const char *origin, char *out, size_t size)
{
	size_t n = 0, ol = strlen(origin);
	const char *p;

	for (p = name; *p != '\0'; ) {
		size_t skip = 0;

		if (strncmp(p, "$ORIGIN", 7) == 0)
			skip = 7;
		else if (strncmp(p, "${ORIGIN}", 9) == 0)
			skip = 9;
		if (skip != 0 && n + ol < size) {
			memcpy(out + n, origin, ol);
			n += ol;
			p += skip;
		} else if (skip == 0 && n + 1 < size)
			out[n++] = *p++;
		else
			return -1;
	}
	out[n] = '\0';
	return strchr(out, '$') != NULL ? -1 : 0;
}

/*
 * libc's dlopen() of 'file' as the object with the code at 'caller'
 * would do it (see the top of the file).
 */
static void *
ft_dlopen_as(const char *file, int mode, const void *caller)
{
	char path[TRACED_PATH_MAX], origin[TRACED_PATH_MAX];
	struct ft_byname byname = { file, 0 };
	struct link_map *lm = NULL;
	Dl_info info;

	/* A setuid, setgid or capable program: libc's own rules for
	 * $ORIGIN and search paths (AT_SECURE), never this file's. */
	if (file == NULL || getauxval(AT_SECURE) != 0 ||
	    (strchr(file, '/') != NULL && strchr(file, '$') == NULL))
		return ft_dlopen_real(file, mode);
	if (dladdr1(caller, &info, (void **)&lm, RTLD_DL_LINKMAP) == 0 ||
	    lm == NULL)
		return ft_dlopen_real(file, mode);
	if (strchr(file, '$') != NULL) {
		/* $LIB and $PLATFORM do not depend on the caller. */
		if (ft_origin_of(lm, origin, sizeof(origin)) == 0 &&
		    ft_origin(file, origin, path, sizeof(path)) == 0)
			return ft_dlopen_real(path, mode);
		return ft_dlopen_real(file, mode);
	}
	/* Loaded already under that name: libc finds it by name. */
	dl_iterate_phdr(ft_byname_cb, &byname);
	if (!byname.found && ft_search(lm, file, path, sizeof(path)) == 0)
		return ft_dlopen_real(path, mode);
	return ft_dlopen_real(file, mode);
}

/*
 * The program's dlopen() (see the top of the file): libc's, then the
 * instrumented objects it brought patched.  Its result and dlerror()
 * are libc's.
 */
__attribute__((visibility("default"))) void *
dlopen(const char *file, int mode)
{
	void *h;

	h = ft_dlopen_as(file, mode, __builtin_return_address(0));
	if (h != NULL && !(mode & RTLD_NOLOAD))
		ft_dlopen_done();
	return h;
}
