/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * The code tracegen writes.  For a provider P, trace.h declares P's
 * state array and struct traced_provider and, per event, an index macro
 * and two static inline functions: trace_NAME_enabled() and trace_NAME().
 * What trace_NAME() does depends on the backends chosen (any set):
 *
 *   traced  when the event's state byte is set, reserve a record on the
 *           thread's ring, store the arguments in the layout of
 *           proto/ring.h and commit it: one load and a branch when off;
 *   log     under the same test, print the event with its format on
 *           stderr (traced_log(), which the compiler checks as printf);
 *   dtrace  a SystemTap SDT probe provider:event, a nop until a tool
 *           attaches, whatever the state byte says;
 *   nop     nothing at all, the arguments still type-checked.
 *
 * trace.c defines, for traced and log, the state array, the provider
 * with its description (the events as normalized trace-events lines,
 * which the daemon parses back with tevents_parse()) and the
 * constructor and destructor that register it; for dtrace the probes'
 * semaphores.  A program built with only nop or dtrace does not need
 * libtraced.
 *
 * Record offsets are compile-time constants up to the first string
 * argument; from there on each is computed from the strings' sizes at
 * run time.  Everything the generated code declares starts with traced_
 * or trace_ (or P_NAME_semaphore, SystemTap's name), parameters that C++
 * or the included headers would misread get a '_' appended, and a
 * #line maps each signature and log format to its trace-events line, so
 * that a compiler's complaint points there.  The output must build
 * without warnings under -Wall -Wextra -Wshadow as C99 to C17 and
 * C++11 to C++20.  The generated text is plain ASCII whatever the input
 * holds.
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <traced.h>

#include "gen.h"
#include "ring.h"
#include "tevents.h"

/* Aim for this many characters per line of the description literal. */
#define GEN_DESC_COLS		64

static int
gen_is_word(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9') || c == '_';
}

/* Is name a C identifier of at most GEN_PROVIDER_MAX bytes?  1 or 0. */
int
gen_provider_valid(const char *name)
{
	size_t i;

	if (name[0] == '\0' || (name[0] >= '0' && name[0] <= '9'))
		return 0;
	for (i = 0; name[i] != '\0'; i++)
		if (!gen_is_word((unsigned char)name[i]) ||
		    i == GEN_PROVIDER_MAX)
			return 0;
	return 1;
}

/*
 * The default provider name of path into buf (see gen.h); 0, or -1 if
 * buf is smaller than GEN_PROVIDER_MAX + 1 bytes.
 */
int
gen_provider_from_path(const char *path, char *buf, size_t size)
{
	const char *base, *b, *e, *dot;
	char *dir = NULL, *real = NULL;
	size_t dl, n = 0, max;

	if (size < GEN_PROVIDER_MAX + 1)
		return -1;
	base = strrchr(path, '/');
	base = base != NULL ? base + 1 : path;
	if (strcmp(base, "trace-events") == 0) {
		/* The last component of the directory part. */
		dl = (size_t)(base - path);
		while (dl > 0 && path[dl - 1] == '/')
			dl--;
		if (base == path) {
			path = ".";
			dl = 1;
		}
		e = path + dl;
		for (b = e; b > path && b[-1] != '/'; b--)
			;
		if ((e - b == 1 && b[0] == '.') ||
		    (e - b == 2 && b[0] == '.' && b[1] == '.')) {
			if ((dir = strndup(path, dl)) != NULL)
				real = realpath(dir, NULL);
			b = e = "";
			if (real != NULL) {
				e = real + strlen(real);
				b = strrchr(real, '/');
				b = b != NULL ? b + 1 : real;
			}
		}
	} else {
		b = base;
		dot = strrchr(base, '.');
		e = dot != NULL && dot != base ? dot : base + strlen(base);
	}

	max = GEN_PROVIDER_MAX;
	if (b < e && b[0] >= '0' && b[0] <= '9')
		buf[n++] = '_';
	for (; b < e && n < max; b++)
		buf[n++] = gen_is_word((unsigned char)*b) ? *b : '_';
	buf[n] = '\0';
	if (n == 0)
		snprintf(buf, size, "app");
	free(real);
	free(dir);
	return 0;
}

int
gen_backends_parse(const char *list, unsigned *out, char *err,
    size_t errlen)
{
	static const struct {
		const char	*name;
		unsigned	 bit;
	} names[] = {
		{ "traced", GEN_BACKEND_TRACED },
		{ "log", GEN_BACKEND_LOG },
		{ "nop", GEN_BACKEND_NOP },
		{ "dtrace", GEN_BACKEND_DTRACE },
	};
	const char *s = list, *e;
	size_t i, n;

	*out = 0;
	for (;;) {
		e = strchr(s, ',');
		n = e != NULL ? (size_t)(e - s) : strlen(s);
		for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
			if (strlen(names[i].name) == n &&
			    strncmp(names[i].name, s, n) == 0)
				break;
		if (i == sizeof(names) / sizeof(names[0])) {
			snprintf(err, errlen, "unknown backend '%.*s': the "
			    "backends are traced, log, nop and dtrace",
			    (int)(n > 40 ? 40 : n), s);
			return -1;
		}
		*out |= names[i].bit;
		if (e == NULL)
			break;
		s = e + 1;
	}
	return 0;
}

/*
 * The generator's state.  The text goes to a memory stream first, so
 * that the line numbers the #line directives need can be counted; it
 * is copied to the caller's FILE at the end.
 */
struct gen {
	FILE		*mem;		/* owned */
	char		*buf;		/* mem's buffer */
	size_t		 size;
	size_t		 scanned;	/* buf[0..scanned) counted */
	unsigned long	 lines;		/* newlines in buf[0..scanned) */
	const struct gen_opts *o;	/* borrowed */
	const char	*prov;		/* o->provider */
	unsigned	 be;		/* o->backends, nop dropped if others */
	int		 lib;		/* traced or log: needs libtraced */
};

static int
gen_open(struct gen *g, const struct gen_opts *o)
{
	memset(g, 0, sizeof(*g));
	g->o = o;
	g->prov = o->provider;
	g->be = o->backends;
	if (g->be & ~GEN_BACKEND_NOP)
		g->be &= ~GEN_BACKEND_NOP;
	g->lib = (g->be & (GEN_BACKEND_TRACED | GEN_BACKEND_LOG)) != 0;
	g->mem = open_memstream(&g->buf, &g->size);
	return g->mem != NULL ? 0 : -1;
}

/* Copy the text to out and free it; 0, or -1 if any write failed. */
static int
gen_close(struct gen *g, FILE *out, int rc)
{
	if (fclose(g->mem) == EOF)
		rc = -1;
	if (rc == 0 && fwrite(g->buf, 1, g->size, out) != g->size)
		rc = -1;
	free(g->buf);
	return rc == 0 && !ferror(out) ? 0 : -1;
}

/* The number of the line the next byte written starts or continues. */
static unsigned long
gen_lineno(struct gen *g)
{
	fflush(g->mem);
	for (; g->scanned < g->size; g->scanned++)
		if (g->buf[g->scanned] == '\n')
			g->lines++;
	return g->lines + 1;
}

/* s as the body of a C string literal (for #line file names). */
static void
gen_cstr(FILE *out, const char *s)
{
	unsigned char c;

	for (; *s != '\0'; s++) {
		c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			fprintf(out, "\\%c", c);
		else if (c < 0x20 || c >= 0x7f)
			fprintf(out, "\\%03o", c);
		else
			fputc(c, out);
	}
}

/*
 * Make the next line count as line 'line' of the trace-events file, so
 * that the compiler's diagnostics about it point there; gen_line_back()
 * after it.  Only with an output name to come back to.
 */
static void
gen_line_to(struct gen *g, unsigned line)
{
	if (g->o->outname == NULL)
		return;
	fprintf(g->mem, "#line %u \"", line);
	gen_cstr(g->mem, g->o->srcname);
	fputs("\"\n", g->mem);
}

static void
gen_line_back(struct gen *g)
{
	if (g->o->outname == NULL)
		return;
	/* The line after this directive is line lineno + 1. */
	fprintf(g->mem, "#line %lu \"", gen_lineno(g) + 1);
	gen_cstr(g->mem, g->o->outname);
	fputs("\"\n", g->mem);
}

/*
 * Write s, which is going into a comment, with no way out of it: comment
 * delimiters are broken up (-Wcomment), and control characters and
 * non-ASCII bytes become '?' (no -Wbidi-chars, whatever the encoding).
 */
static void
gen_comment_text(FILE *out, const char *s, size_t n)
{
	size_t i;
	unsigned char c;

	for (i = 0; i < n; i++) {
		c = (unsigned char)s[i];
		if ((c < 0x20 && c != '\t') || c >= 0x7f)
			c = '?';
		fputc(c, out);
		if (i + 1 < n && ((c == '*' && s[i + 1] == '/') ||
		    (c == '/' && s[i + 1] == '*')))
			fputc(' ', out);
	}
}

static void
gen_banner(struct gen *g)
{
	static const char *const names[] = { "traced", "log", "nop",
	    "dtrace" };
	unsigned i, n = 0;

	fputs("/* Generated by tracegen from ", g->mem);
	gen_comment_text(g->mem, g->o->srcname, strlen(g->o->srcname));
	fputs(" for ", g->mem);
	for (i = 0; i < 4; i++)
		if (g->o->backends & (1u << i))
			fprintf(g->mem, "%s%s", n++ ? "," : "", names[i]);
	fputs(".  Do not edit. */\n", g->mem);
}

/* One event as its trace-events line, newline included; malloc'd. */
static char *
gen_event_line(const struct tevents_event *ev)
{
	char *s;
	int n;

	n = tevents_format(ev, NULL, 0);
	if (n < 0 || (s = malloc((size_t)n + 1)) == NULL)
		return NULL;
	tevents_format(ev, s, (size_t)n + 1);
	return s;
}

static void
gen_upper(FILE *out, const char *s)
{
	for (; *s != '\0'; s++)
		fputc(*s >= 'a' && *s <= 'z' ? *s - 'a' + 'A' : *s, out);
}

/* ---- parameter names ---------------------------------------------------- */

/* C++ keywords that are not C keywords (the parser refuses those). */
static const char *const gen_cxx_keywords[] = {
	"alignas", "alignof", "and", "and_eq", "asm", "bitand", "bitor",
	"catch", "char8_t", "char16_t", "char32_t", "class", "compl",
	"concept", "consteval", "constexpr", "constinit", "const_cast",
	"co_await", "co_return", "co_yield", "decltype", "delete",
	"dynamic_cast", "explicit", "export", "friend", "mutable",
	"namespace", "new", "noexcept", "not", "not_eq", "nullptr",
	"operator", "or", "or_eq", "private", "protected", "public",
	"reinterpret_cast", "requires", "static_assert", "static_cast",
	"template", "this", "thread_local", "throw", "try", "typeid",
	"typename", "using", "virtual", "wchar_t", "xor", "xor_eq",
	/* Names the generated code uses, and macros GNU C predefines. */
	"NULL", "uint8_t", "uint32_t", "uint64_t", "int64_t", "uintptr_t",
	"linux", "unix", "i386",
	NULL
};

static int
gen_name_in(const char *const *list, const char *s)
{
	for (; *list != NULL; list++)
		if (strcmp(*list, s) == 0)
			return 1;
	return 0;
}

/*
 * May 'name' be a parameter of the generated functions as it is?  Not
 * if C++ or the code around it gives it a meaning: a C++ keyword, a
 * name the generated code uses (traced_*), or a macro of the headers
 * it includes (all upper case, or PRI and SCN macros).
 */
static int
gen_name_safe(const char *name)
{
	const char *c;

	if (gen_name_in(gen_cxx_keywords, name) ||
	    strncmp(name, "traced_", 7) == 0 ||
	    strncmp(name, "PRI", 3) == 0 || strncmp(name, "SCN", 3) == 0)
		return 0;
	for (c = name; *c != '\0'; c++)
		if (*c >= 'a' && *c <= 'z')
			return 1;
	return 0;
}

#define GEN_PNAME_MAX	(TEVENTS_NAME_MAX + TEVENTS_ARGS_MAX + 2)

/*
 * The names of ev's parameters in the generated code: the argument
 * names, with '_' appended to those that are not safe (QEMU's files
 * have arguments called 'new' and 'typename'), as many times as it
 * takes to differ from every other argument.
 */
static void
gen_param_names(const struct tevents_event *ev,
    char names[TEVENTS_ARGS_MAX][GEN_PNAME_MAX])
{
	unsigned i, j;
	size_t n;
	int again;

	for (i = 0; i < ev->nargs; i++) {
		snprintf(names[i], GEN_PNAME_MAX, "%s", ev->args[i].name);
		if (gen_name_safe(names[i]))
			continue;
		do {
			n = strlen(names[i]);
			names[i][n] = '_';
			names[i][n + 1] = '\0';
			again = 0;
			for (j = 0; j < ev->nargs; j++)
				if (strcmp(ev->args[j].name, names[i]) == 0)
					again = 1;
		} while (again);
	}
}

/* ---- the traced backend: a record in the thread's ring ------------------ */

/* The expression storing argument 'a' (parameter 'pn') as a uint64_t. */
static void
gen_store(FILE *out, const struct tevents_arg *a, const char *pn,
    const char *at)
{
	fprintf(out, "\t\t\ttraced_put_u64(traced_r + %s, ", at);
	switch (a->cls) {
	case TEVENTS_SIGNED:
		fprintf(out, "(uint64_t)(int64_t)(%s));\n", pn);
		break;
	case TEVENTS_POINTER:
		fprintf(out, "(uint64_t)(uintptr_t)(%s));\n", pn);
		break;
	case TEVENTS_BOOL:
		fprintf(out, "(uint64_t)((%s) ? 1 : 0));\n", pn);
		break;
	case TEVENTS_UNSIGNED:
	case TEVENTS_STRING:
		fprintf(out, "(uint64_t)(%s));\n", pn);
		break;
	}
}

/*
 * The record, under the state test: sizes, offsets, reserve, stores,
 * commit.  Offsets follow proto/ring.h: integers at the next multiple
 * of 8, strings right after the previous argument.
 */
static void
gen_record(FILE *out, const struct tevents_event *ev, size_t idx,
    const char *provider, char pn[TEVENTS_ARGS_MAX][GEN_PNAME_MAX])
{
	/* End of the previous argument: a constant, or an expression once
	 * a string went before. */
	char end[2 * GEN_PNAME_MAX + 32], at[GEN_PNAME_MAX + 16];
	uint32_t cend = TRACED_REC_HDR_SIZE;
	int dyn = 0;
	unsigned i;

	for (i = 0; i < ev->nargs; i++)
		if (ev->args[i].cls == TEVENTS_STRING)
			fprintf(out, "\t\tuint32_t traced_n_%s = "
			    "traced_str_size(%s);\n", pn[i], pn[i]);
	for (i = 0; i < ev->nargs; i++) {
		if (ev->args[i].cls == TEVENTS_STRING) {
			if (dyn)
				fprintf(out, "\t\tuint32_t traced_o_%s = %s;\n",
				    pn[i], end);
			else
				fprintf(out, "\t\tuint32_t traced_o_%s = "
				    "%" PRIu32 ";\n", pn[i], cend);
			snprintf(end, sizeof(end), "traced_o_%s + traced_n_%s",
			    pn[i], pn[i]);
			dyn = 1;
		} else if (dyn) {
			fprintf(out, "\t\tuint32_t traced_o_%s = "
			    "traced_align8(%s);\n", pn[i], end);
			snprintf(end, sizeof(end), "traced_o_%s + 8", pn[i]);
		} else
			cend = traced_align8(cend) + 8;
	}
	if (dyn) {
		fprintf(out, "\t\tuint32_t traced_sz = traced_align8(%s);\n",
		    end);
		fprintf(out, "\t\tchar *traced_r = traced_reserve("
		    "traced_provider_%s.id_base + %zu, traced_sz);\n",
		    provider, idx);
	} else
		fprintf(out, "\t\tchar *traced_r = traced_reserve("
		    "traced_provider_%s.id_base + %zu, %" PRIu32 ");\n",
		    provider, idx, traced_align8(cend));

	fputs("\t\tif (traced_r != NULL) {\n", out);
	if (dyn)
		fputs("\t\t\ttraced_put_u64(traced_r + traced_sz - 8, 0);\n",
		    out);
	cend = TRACED_REC_HDR_SIZE;
	dyn = 0;
	for (i = 0; i < ev->nargs; i++) {
		if (ev->args[i].cls == TEVENTS_STRING) {
			fprintf(out, "\t\t\ttraced_put_str_arg(traced_r, "
			    "traced_o_%s, %s, traced_n_%s, %u);\n", pn[i],
			    pn[i], pn[i], i);
			dyn = 1;
			continue;
		}
		if (dyn)
			snprintf(at, sizeof(at), "traced_o_%s", pn[i]);
		else {
			cend = traced_align8(cend);
			snprintf(at, sizeof(at), "%" PRIu32, cend);
			cend += 8;
		}
		gen_store(out, &ev->args[i], pn[i], at);
	}
	if (dyn)
		fputs("\t\t\ttraced_commit(traced_sz);\n", out);
	else
		fprintf(out, "\t\t\ttraced_commit(%" PRIu32 ");\n",
		    traced_align8(cend));
	fputs("\t\t}\n", out);
}

/* ---- the other backends ------------------------------------------------- */

/*
 * The log backend: the event's format, checked by the compiler against
 * the arguments, printed by traced_log() with the event's name before
 * it.  On its own line, mapped to the trace-events line.
 */
static void
gen_log(struct gen *g, const struct tevents_event *ev,
    char pn[TEVENTS_ARGS_MAX][GEN_PNAME_MAX])
{
	/* An event without a format shows its arguments as name=value. */
	static const char *const conv[] = {
		[TEVENTS_SIGNED] = "\"%\" PRId64", [TEVENTS_UNSIGNED] =
		"\"%\" PRIu64", [TEVENTS_POINTER] = "\"%p\"",
		[TEVENTS_BOOL] = "\"%d\"", [TEVENTS_STRING] = "\"%s\"",
	};
	static const char *const cast[] = {
		[TEVENTS_SIGNED] = "(int64_t)", [TEVENTS_UNSIGNED] =
		"(uint64_t)", [TEVENTS_POINTER] = "(const void *)",
		[TEVENTS_BOOL] = "(int)", [TEVENTS_STRING] = "",
	};
	int deflt = ev->fmt[0] == '\0' && ev->nargs > ev->vcpu;
	unsigned i;

	gen_line_to(g, ev->line);
	/* "cpu=%p " before a format; without one, no trailing space. */
	fprintf(g->mem, "\t\ttraced_log(\"%s%s\"%s%s%s", ev->name,
	    ev->vcpu || ev->fmt[0] != '\0' ? " " : "",
	    !ev->vcpu ? "" : ev->fmt[0] != '\0' ? " " TEVENTS_VCPU_FMT :
	    " \"cpu=%p\"", ev->fmt[0] != '\0' ? " " : "", ev->fmt);
	for (i = ev->vcpu; deflt && i < ev->nargs; i++)
		fprintf(g->mem, " \" %s=\" %s", ev->args[i].name,
		    conv[ev->args[i].cls]);
	for (i = 0; i < ev->nargs; i++)
		fprintf(g->mem, ", %s%s", deflt && i >= ev->vcpu ?
		    cast[ev->args[i].cls] : "", pn[i]);
	fputs(");\n", g->mem);
	gen_line_back(g);
}

/*
 * The dtrace backend: a SystemTap SDT probe, provider:event, with the
 * arguments as they are.  A nop until a tool attaches; it marks the
 * probe's semaphore then, which trace_NAME_enabled() reads.
 */
static void
gen_probe(struct gen *g, const struct tevents_event *ev,
    char pn[TEVENTS_ARGS_MAX][GEN_PNAME_MAX])
{
	unsigned i;

	if (ev->nargs == 0)
		fprintf(g->mem, "\tSTAP_PROBE(%s, %s", g->prov, ev->name);
	else
		fprintf(g->mem, "\tSTAP_PROBE%u(%s, %s", ev->nargs, g->prov,
		    ev->name);
	for (i = 0; i < ev->nargs; i++)
		fprintf(g->mem, ", %s", pn[i]);
	fputs(");\n", g->mem);
}

/* The test of trace_NAME_enabled(), without the return. */
static void
gen_enabled_expr(struct gen *g, const struct tevents_event *ev, size_t idx)
{
	if (g->lib && (g->be & GEN_BACKEND_DTRACE))
		fprintf(g->mem, "__builtin_expect(traced_state_on("
		    "traced_state_%s, %zu) ||\n\t    __atomic_load_n(&%s_%s_"
		    "semaphore, __ATOMIC_RELAXED) != 0, 0)", g->prov, idx,
		    g->prov, ev->name);
	else if (g->lib)
		fprintf(g->mem, "__builtin_expect(traced_state_on("
		    "traced_state_%s, %zu), 0)", g->prov, idx);
	else if (g->be & GEN_BACKEND_DTRACE)
		fprintf(g->mem, "__builtin_expect(__atomic_load_n(&%s_%s_"
		    "semaphore, __ATOMIC_RELAXED) != 0, 0)", g->prov,
		    ev->name);
	else
		fputs("false", g->mem);
}

/*
 * A type as normalized, but 'bool' for '_Bool', which C++ does not
 * know (<stdbool.h> makes them the same type in C).
 */
static void
gen_type(FILE *out, const char *t)
{
	const char *b;
	size_t n;

	while ((b = strstr(t, "_Bool")) != NULL) {
		n = (size_t)(b - t);
		fwrite(t, 1, n, out);
		if ((n == 0 || !gen_is_word((unsigned char)b[-1])) &&
		    !gen_is_word((unsigned char)b[5]))
			fputs("bool", out);
		else
			fputs("_Bool", out);
		t = b + 5;
	}
	fputs(t, out);
}

/* The parameter list of trace_NAME(): the types as normalized. */
static void
gen_params(FILE *out, const struct tevents_event *ev,
    char pn[TEVENTS_ARGS_MAX][GEN_PNAME_MAX])
{
	const char *t;
	unsigned i;

	if (ev->nargs == 0)
		fputs("void", out);
	for (i = 0; i < ev->nargs; i++) {
		t = ev->args[i].type;
		if (i > 0)
			fputs(", ", out);
		gen_type(out, t);
		fprintf(out, "%s%s", t[0] != '\0' && t[strlen(t) - 1] == '*' ?
		    "" : " ", pn[i]);
	}
}

static int
gen_event(struct gen *g, const struct tevents_event *ev, size_t idx)
{
	char pn[TEVENTS_ARGS_MAX][GEN_PNAME_MAX];
	FILE *out = g->mem;
	char *line;
	unsigned i;

	if ((line = gen_event_line(ev)) == NULL)
		return -1;
	fputs("\n/* ", out);
	gen_comment_text(out, line, strlen(line) - 1);
	fputs(" */\n", out);
	free(line);
	gen_param_names(ev, pn);

	fputs("#define TRACE_", out);
	gen_upper(out, ev->name);
	fprintf(out, "_ID %zu\n", idx);

	fprintf(out, "static inline TRACED_NOTRACE bool\n"
	    "trace_%s_enabled(void)\n{\n"
	    "\treturn ", ev->name);
	gen_enabled_expr(g, ev, idx);
	fputs(";\n}\n", out);

	/* The signature carries the argument types: map it to the
	 * trace-events line, where a caller's mismatch comes from. */
	fputs("static inline TRACED_NOTRACE void\n", out);
	gen_line_to(g, ev->line);
	fprintf(out, "trace_%s(", ev->name);
	gen_params(out, ev, pn);
	fputs(")\n", out);
	gen_line_back(g);
	fputs("{\n", out);
	if (g->be & GEN_BACKEND_DTRACE)
		gen_probe(g, ev, pn);
	if (g->lib) {
		fprintf(out, "\tif (__builtin_expect(traced_state_on("
		    "traced_state_%s, %zu), 0)) {\n", g->prov, idx);
		if (g->be & GEN_BACKEND_TRACED)
			gen_record(out, ev, idx, g->prov, pn);
		if (g->be & GEN_BACKEND_LOG)
			gen_log(g, ev, pn);
		fputs("\t}\n", out);
	} else if (!(g->be & GEN_BACKEND_DTRACE))
		for (i = 0; i < ev->nargs; i++)
			fprintf(out, "\t(void)%s;\n", pn[i]);
	fputs("}\n", out);
	return 0;
}

/* Declarations of what trace.c defines. */
static void
gen_externs(struct gen *g, const struct tevents_file *f)
{
	size_t i;

	if (g->lib) {
		fprintf(g->mem, "extern uint8_t traced_state_%s[] "
		    "__attribute__((visibility(\"hidden\")));\n", g->prov);
		fprintf(g->mem, "extern struct traced_provider "
		    "traced_provider_%s "
		    "__attribute__((visibility(\"hidden\")));\n", g->prov);
	}
	if (g->be & GEN_BACKEND_DTRACE)
		for (i = 0; i < f->nevents; i++)
			fprintf(g->mem, "extern unsigned short %s_%s_semaphore "
			    "__attribute__((visibility(\"hidden\")));\n",
			    g->prov, f->events[i].name);
}

/* Write trace.h for f to out (see gen.h); 0, or -1 on a write error. */
int
gen_header(FILE *out, const struct tevents_file *f,
    const struct gen_opts *o)
{
	struct gen g;
	size_t i;
	int rc = 0;

	if (gen_open(&g, o) == -1)
		return -1;
	gen_banner(&g);
	fputs("#ifndef TRACE_", g.mem);
	gen_upper(g.mem, g.prov);
	fputs("_H_\n#define TRACE_", g.mem);
	gen_upper(g.mem, g.prov);
	fputs("_H_\n", g.mem);
	fputs("#include <stdbool.h>\n"
	    "#include <stddef.h>\n"
	    "#include <stdint.h>\n"
	    "#include <inttypes.h>\n"
	    "#include <sys/types.h>\n", g.mem);
	if (g.lib)
		fputs("#include <traced.h>\n", g.mem);
	else
		/* Never traced by function tracing: traced.h's gist. */
		fputs("#ifndef TRACED_NOTRACE\n"
		    "#define TRACED_NOTRACE "
		    "__attribute__((no_instrument_function))\n"
		    "#endif\n", g.mem);
	if (g.be & GEN_BACKEND_DTRACE)
		/* Probes carry their semaphore's address (see trace.c). */
		fputs("#ifndef _SDT_HAS_SEMAPHORES\n"
		    "#define _SDT_HAS_SEMAPHORES 1\n"
		    "#endif\n"
		    "#include <sys/sdt.h>\n", g.mem);
	fputs("#ifdef __cplusplus\n"
	    "extern \"C\" {\n"
	    "#endif\n", g.mem);
	gen_externs(&g, f);
	for (i = 0; i < f->nevents && rc == 0; i++)
		rc = gen_event(&g, &f->events[i], i);
	fputs("\n#ifdef __cplusplus\n"
	    "}\n"
	    "#endif\n"
	    "#endif\n", g.mem);
	return gen_close(&g, out, rc);
}

/*
 * s[0..n) as the body of C string literals, one per line, each of at
 * most GEN_DESC_COLS + 12 characters, broken after a space where
 * possible.  Octal escapes are always three digits, so a digit after
 * one cannot extend it; a '?' after a '?' is escaped so that no
 * trigraph forms under -std=c11.
 */
static void
gen_literal_lines(FILE *out, const char *s, size_t n)
{
	size_t i, col = 0;
	unsigned char c;

	for (i = 0; i < n; i++) {
		if (col == 0)
			fputs("\t\"", out);
		c = (unsigned char)s[i];
		if (c == '"' || c == '\\') {
			fprintf(out, "\\%c", c);
			col += 2;
		} else if (c == '\n') {
			fputs("\\n", out);
			col += 2;
		} else if (c == '?' && i > 0 && s[i - 1] == '?') {
			fputs("\\?", out);
			col += 2;
		} else if (c < 0x20 || c >= 0x7f) {
			fprintf(out, "\\%03o", c);
			col += 4;
		} else {
			fputc(c, out);
			col++;
		}
		/* Break after a space if there is one near the limit. */
		if ((col >= GEN_DESC_COLS && c == ' ') ||
		    col >= GEN_DESC_COLS + 12 || i + 1 == n) {
			fputs(i + 1 == n ? "\"" : "\"\n", out);
			col = 0;
		}
	}
}

/* The provider: state array, description, registration. */
static int
gen_provider(struct gen *g, const struct tevents_file *f)
{
	FILE *out = g->mem;
	const char *prov = g->prov;
	size_t i, pages;
	char *line;

	pages = (f->nevents + TRACED_STATE_PAGE - 1) / TRACED_STATE_PAGE;
	if (pages == 0)
		pages = 1;
	/* Declared first for -Wmissing-variable-declarations. */
	fprintf(out, "extern uint8_t traced_state_%s[] "
	    "__attribute__((visibility(\"hidden\")));\n", prov);
	fprintf(out, "extern struct traced_provider traced_provider_%s "
	    "__attribute__((visibility(\"hidden\")));\n\n", prov);
	fprintf(out, "uint8_t traced_state_%s[%zu * TRACED_STATE_PAGE]\n"
	    "    __attribute__((aligned(TRACED_STATE_PAGE), "
	    "visibility(\"hidden\")));\n\n", prov, pages);

	fprintf(out, "static const char traced_desc_%s[] =", prov);
	if (f->nevents == 0)
		fputs(" \"\"", out);
	for (i = 0; i < f->nevents; i++) {
		if ((line = gen_event_line(&f->events[i])) == NULL)
			return -1;
		fputc('\n', out);
		gen_line_to(g, f->events[i].line);
		gen_literal_lines(out, line, strlen(line));
		free(line);
	}
	fputs(";\n", out);
	if (f->nevents > 0)
		gen_line_back(g);
	fputc('\n', out);

	fprintf(out, "struct traced_provider traced_provider_%s\n"
	    "    __attribute__((visibility(\"hidden\"))) = {\n"
	    "\t.abi = TRACED_ABI_VERSION,\n"
	    "\t.nevents = %zu,\n"
	    "\t.name = \"%s\",\n"
	    "\t.desc = traced_desc_%s,\n"
	    "\t.desc_len = sizeof(traced_desc_%s) - 1,\n"
	    "\t.state_size = sizeof(traced_state_%s),\n"
	    "\t.state = traced_state_%s,\n"
	    "};\n\n", prov, f->nevents, prov, prov, prov, prov, prov);

	fprintf(out, "static TRACED_NOTRACE void __attribute__((constructor))\n"
	    "traced_ctor_%s(void)\n"
	    "{\n"
	    "\ttraced_provider_register(&traced_provider_%s);\n"
	    "}\n\n"
	    "static TRACED_NOTRACE void __attribute__((destructor))\n"
	    "traced_dtor_%s(void)\n"
	    "{\n"
	    "\ttraced_provider_unregister(&traced_provider_%s);\n"
	    "}\n", prov, prov, prov, prov);
	return 0;
}

/* Write trace.c for f to out (see gen.h); 0, or -1 on a write error. */
int
gen_source(FILE *out, const struct tevents_file *f,
    const struct gen_opts *o)
{
	struct gen g;
	size_t i;
	int rc = 0;

	if (gen_open(&g, o) == -1)
		return -1;
	gen_banner(&g);
	fputs("#include <stdint.h>\n", g.mem);
	if (g.lib)
		fputs("#include <traced.h>\n", g.mem);
	fputc('\n', g.mem);
	if (g.be & GEN_BACKEND_DTRACE) {
		/*
		 * One semaphore per probe, in .probes as SystemTap's dtrace
		 * -G makes them: a tool that attaches to the probe counts
		 * itself in it.
		 */
		for (i = 0; i < f->nevents; i++)
			fprintf(g.mem, "extern unsigned short %s_%s_semaphore "
			    "__attribute__((visibility(\"hidden\")));\n"
			    "unsigned short %s_%s_semaphore "
			    "__attribute__((section(\".probes\"), "
			    "visibility(\"hidden\")));\n", g.prov,
			    f->events[i].name, g.prov, f->events[i].name);
		fputc('\n', g.mem);
	}
	if (g.lib)
		rc = gen_provider(&g, f);
	else if (!(g.be & GEN_BACKEND_DTRACE))
		/* ISO C wants something in a translation unit. */
		fprintf(g.mem, "typedef int traced_nop_%s;\n", g.prov);
	return gen_close(&g, out, rc);
}
