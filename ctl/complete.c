/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * Shell completion: 'tracectl completion bash|zsh|fish' prints a script
 * for that shell, and the script asks 'tracectl completion words WORD...'
 * what to offer each time the user presses TAB.  The scripts hold no
 * list of their own: the candidates come from the command table this
 * tracectl was built with (proto/commands.def, its "complete" column),
 * so the three shells offer the same words, and a command added to the
 * table is completed without touching a script.
 *
 * The answer is one candidate per line, already filtered by the word
 * being completed, and ":dirs" or ":files" when the shell should offer
 * names from the file system itself (it knows how to quote them, expand
 * '~' and show them).  Session ids are asked of the running daemon,
 * through a callback (tracectl.c talks to daemons; this file does not).
 *
 * Everything here reads a static table and the words of a command line,
 * which may be anything: an unknown command or a word too many gets no
 * candidate, never an error, since a shell shows whatever is printed.
 */
#include <stdio.h>
#include <string.h>

#include "command.h"
#include "tracectl.h"

/* Longest word of a "complete" column, slot or option. */
#define SPEC_WORD_MAX	128

/* Most positional words looked at, and forms in one column. */
#define POS_MAX		64
#define FORMS_MAX	8

/* What a completion needs besides the words. */
struct comp {
	FILE		*out;
	const char	*cur;		/* the word under completion */
	const char	*rdir;		/* -r DIR among the words, or NULL */
	complete_sessions_cb sessions;
};

/*
 * Copy the next word of 'spec' (from *p, up to a space) into buf and
 * move *p past it.  Returns 0, or -1 at the end of the spec (or of a
 * form: the word ';').
 */
static int
spec_next(const char **p, char *buf, size_t size)
{
	const char	*s = *p, *e;
	size_t		 len;

	while (*s == ' ')
		s++;
	if (*s == '\0' || (*s == ';' && (s[1] == ' ' || s[1] == '\0')))
		return -1;
	for (e = s; *e != '\0' && *e != ' '; e++)
		;
	len = (size_t)(e - s) < size - 1 ? (size_t)(e - s) : size - 1;
	memcpy(buf, s, len);
	buf[len] = '\0';
	*p = e;
	return 0;
}

/*
 * The start of each form of 'spec' (the parts between " ; ") in forms[].
 * Returns how many.
 */
static int
spec_forms(const char *spec, const char *forms[FORMS_MAX])
{
	const char	*s = spec;
	int		 n = 0;

	forms[n++] = spec;
	while (n < FORMS_MAX && (s = strstr(s, " ; ")) != NULL) {
		s += 3;
		forms[n++] = s;
	}
	return n;
}

/*
 * Is 'word' an option of 'spec'?  Returns 0 if not, 1 if it takes no
 * value, 2 if it does (its slot then in 'slot').
 */
static int
spec_option(const char *spec, const char *word, char *slot, size_t size)
{
	char		 w[SPEC_WORD_MAX];
	const char	*p = spec, *eq;
	size_t		 len;

	for (;;) {
		if (spec_next(&p, w, sizeof(w)) == -1) {
			if (*p == '\0')
				return 0;
			p++;		/* the next form */
			continue;
		}
		if (w[0] != '-')
			continue;
		eq = strchr(w, '=');
		len = eq != NULL ? (size_t)(eq - w) : strlen(w);
		if (strlen(word) != len || strncmp(w, word, len) != 0)
			continue;
		if (eq == NULL)
			return 1;
		snprintf(slot, size, "%s", eq + 1);
		return 2;
	}
}

/*
 * The slot of positional argument j in the form that starts at 'form'
 * (a slot ending in "..." stands for every later one too), into buf.
 * Returns 0, or -1 when the form has no such argument.
 */
static int
form_slot(const char *form, int j, char *buf, size_t size)
{
	char		 w[SPEC_WORD_MAX];
	const char	*p = form;
	size_t		 len;
	int		 i = 0;

	while (spec_next(&p, w, sizeof(w)) == 0) {
		if (w[0] == '-')
			continue;
		len = strlen(w);
		if (len > 3 && strcmp(w + len - 3, "...") == 0) {
			w[len - 3] = '\0';
			snprintf(buf, size, "%s", w);
			return 0;
		}
		if (i++ == j) {
			snprintf(buf, size, "%s", w);
			return 0;
		}
	}
	return -1;
}

/* Is 'word' one of the literal alternatives of 'slot'? */
static int
slot_literal(const char *slot, const char *word)
{
	const char	*s = slot, *e;
	size_t		 len = strlen(word);

	for (; *s != '\0'; s = *e != '\0' ? e + 1 : e) {
		e = strchr(s, '|');
		if (e == NULL)
			e = s + strlen(s);
		if (*s == '@' || (*s >= 'A' && *s <= 'Z'))
			continue;
		if ((size_t)(e - s) == len && strncmp(s, word, len) == 0)
			return 1;
	}
	return 0;
}

/* Does 'slot' take any word (a placeholder or a class among its
 * alternatives)? */
static int
slot_free(const char *slot)
{
	const char	*s;

	for (s = slot; *s != '\0'; s++)
		if ((s == slot || s[-1] == '|') &&
		    (*s == '@' || (*s >= 'A' && *s <= 'Z')))
			return 1;
	return 0;
}

static void
offer(const struct comp *c, const char *word, size_t len)
{
	if (len >= strlen(c->cur) && strncmp(word, c->cur,
	    strlen(c->cur)) == 0)
		fprintf(c->out, "%.*s\n", (int)len, word);
}

/*
 * Word j of the command names, given the words before it: the first
 * words, or the second words of the commands whose first word starts
 * with pos[0] ("in" for "info").
 */
static void
offer_command(const struct comp *c, int j, char *const pos[])
{
	const struct command_def *t;
	const char	*sp;
	size_t		 i, k, n, len;

	t = command_table(&n);
	for (i = 0; i < n; i++) {
		sp = strchr(t[i].name, ' ');
		len = sp != NULL ? (size_t)(sp - t[i].name) :
		    strlen(t[i].name);
		if (j == 0) {
			/* "info" once, though several commands start so. */
			for (k = 0; k < i; k++)
				if (strncmp(t[k].name, t[i].name, len) == 0 &&
				    (t[k].name[len] == ' ' ||
				    t[k].name[len] == '\0'))
					break;
			if (k == i)
				offer(c, t[i].name, len);
		} else if (j == 1 && sp != NULL &&
		    strlen(pos[0]) <= len && pos[0][0] != '\0' &&
		    strncmp(t[i].name, pos[0], strlen(pos[0])) == 0)
			offer(c, sp + 1, strlen(sp + 1));
	}
}

/* Offer each alternative of 'slot' for positional argument j. */
static void
offer_slot(const struct comp *c, const char *slot, int j, char *const pos[])
{
	const char	*s = slot, *e;

	for (; *s != '\0'; s = *e != '\0' ? e + 1 : e) {
		e = strchr(s, '|');
		if (e == NULL)
			e = s + strlen(s);
		if (*s >= 'A' && *s <= 'Z')
			continue;	/* free text */
		if (strncmp(s, "@dir", 4) == 0 && s + 4 == e)
			fputs(":dirs\n", c->out);
		else if (strncmp(s, "@file", 5) == 0 && s + 5 == e)
			fputs(":files\n", c->out);
		else if (strncmp(s, "@session", 8) == 0 && s + 8 == e) {
			if (c->sessions != NULL)
				c->sessions(c->rdir, c->cur, c->out);
		} else if (strncmp(s, "@command", 8) == 0 && s + 8 == e)
			offer_command(c, j, pos);
		else if (*s != '@')
			offer(c, s, (size_t)(e - s));
	}
}

/* Offer the options of 'spec' (for a word that starts with '-'). */
static void
offer_options(const struct comp *c, const char *spec)
{
	char		 w[SPEC_WORD_MAX];
	const char	*p = spec, *eq;

	for (;;) {
		if (spec_next(&p, w, sizeof(w)) == -1) {
			if (*p == '\0')
				return;
			p++;
			continue;
		}
		if (w[0] != '-')
			continue;
		eq = strchr(w, '=');
		offer(c, w, eq != NULL ? (size_t)(eq - w) : strlen(w));
	}
}

/*
 * Complete the word after args[0..nargs) by 'spec' (a "complete"
 * column).  Options may come anywhere; the other words are positional
 * and choose among the forms.
 */
static void
complete_args(const struct comp *c, const char *spec, int nargs,
    char *const args[])
{
	const char	*forms[FORMS_MAX];
	char		*pos[POS_MAX], slot[SPEC_WORD_MAX];
	int		 alive[FORMS_MAX], nforms, npos = 0, any, a, f, j;

	for (a = 0; a < nargs; a++) {
		switch (args[a][0] == '-' && args[a][1] != '\0' ?
		    spec_option(spec, args[a], slot, sizeof(slot)) : 0) {
		case 2:
			if (++a == nargs) {
				/* The word under completion is its value. */
				offer_slot(c, slot, 0, pos);
				return;
			}
			continue;
		case 1:
			continue;
		default:
			if (npos == POS_MAX)
				return;
			pos[npos++] = args[a];
		}
	}
	if (c->cur[0] == '-' && (spec[0] == '-' ||
	    strstr(spec, " -") != NULL)) {
		offer_options(c, spec);
		return;
	}

	/* Word by word, a form that has the word as a literal beats one
	 * that merely takes any word there. */
	nforms = spec_forms(spec, forms);
	for (f = 0; f < nforms; f++)
		alive[f] = 1;
	for (j = 0; j < npos; j++) {
		any = 0;
		for (f = 0; f < nforms; f++)
			if (alive[f] && form_slot(forms[f], j, slot,
			    sizeof(slot)) == 0 && slot_literal(slot, pos[j]))
				any = 1;
		for (f = 0; f < nforms; f++) {
			if (!alive[f])
				continue;
			if (form_slot(forms[f], j, slot, sizeof(slot)) == -1)
				alive[f] = 0;
			else if (!slot_literal(slot, pos[j]) &&
			    (any || !slot_free(slot)))
				alive[f] = 0;
		}
	}
	for (f = 0; f < nforms; f++)
		if (alive[f] && form_slot(forms[f], npos, slot,
		    sizeof(slot)) == 0)
			offer_slot(c, slot, npos, pos);
}

/*
 * The candidates for the last word.  Contract in tracectl.h.
 */
int
complete_words(int n, char **words, const char *global, FILE *out,
    complete_sessions_cb sessions)
{
	const struct command_def *def;
	struct comp	 c;
	char		 slot[SPEC_WORD_MAX];
	int		 i = 0, consumed;

	if (n < 1)
		return EXIT_DONE;
	c.out = out;
	c.cur = words[n - 1];
	c.rdir = NULL;
	c.sessions = sessions;
	n--;			/* words[0..n): before the cursor's */

	/* Global options, as getopt reads them: up to the command. */
	while (i < n && words[i][0] == '-' && words[i][1] != '\0') {
		if (strcmp(words[i], "--") == 0) {
			i++;
			break;
		}
		if (strncmp(words[i], "--runtime-dir=", 14) == 0)
			c.rdir = words[i] + 14;
		if (spec_option(global, words[i], slot, sizeof(slot)) != 2) {
			i++;
			continue;
		}
		if (i + 1 == n) {
			offer_slot(&c, slot, 0, NULL);
			return EXIT_DONE;
		}
		if (strcmp(words[i], "-r") == 0 ||
		    strcmp(words[i], "--runtime-dir") == 0)
			c.rdir = words[i + 1];
		i += 2;
	}
	if (i == n) {
		if (c.cur[0] == '-')
			offer_options(&c, global);
		else
			offer_command(&c, 0, NULL);
		return EXIT_DONE;
	}
	def = command_lookup(n - i, words + i, &consumed, NULL, 0);
	if (def == NULL) {
		/* "info" alone, or abbreviated: the second words. */
		if (n - i == 1)
			offer_command(&c, 1, words + i);
		return EXIT_DONE;
	}
	complete_args(&c, def->complete, n - i - consumed,
	    words + i + consumed);
	return EXIT_DONE;
}

/*
 * The scripts.  Each hands the words before the cursor, and the word
 * under it, to the tracectl the user typed (the one on PATH if what was
 * typed is not a path to a program), and turns ":dirs" and ":files"
 * into the shell's own name completion.
 */
static const char script_bash[] =
"# bash completion for tracectl(1), printed by 'tracectl completion bash'.\n"
"# Installed as /usr/share/bash-completion/completions/tracectl; or add\n"
"# 'source <(tracectl completion bash)' to ~/.bashrc.  tracectl itself\n"
"# says what to offer ('tracectl completion words WORD...'), from the\n"
"# commands it knows.  Needs nothing from the bash-completion package.\n"
"\n"
"_tracectl()\n"
"{\n"
"\tlocal cmd=${COMP_WORDS[0]} cur=${COMP_WORDS[COMP_CWORD]} line names=\n"
"\tCOMPREPLY=()\n"
"\t[ -x \"$cmd\" ] || cmd=tracectl\n"
"\twhile IFS= read -r line; do\n"
"\t\tcase $line in\n"
"\t\t:dirs)\tnames=-d ;;\n"
"\t\t:files)\tnames=-f ;;\n"
"\t\t?*)\tCOMPREPLY+=(\"$line\") ;;\n"
"\t\tesac\n"
"\tdone < <(\"$cmd\" completion words \\\n"
"\t    \"${COMP_WORDS[@]:1:COMP_CWORD}\" 2>/dev/null)\n"
"\tif [ -n \"$names\" ]; then\n"
"\t\tcompopt -o filenames 2>/dev/null\n"
"\t\tlocal IFS=$'\\n'\n"
"\t\tCOMPREPLY+=($(compgen $names -- \"$cur\"))\n"
"\tfi\n"
"}\n"
"\n"
"complete -F _tracectl tracectl\n";

static const char script_zsh[] =
"#compdef tracectl\n"
"# zsh completion for tracectl(1), printed by 'tracectl completion zsh'.\n"
"# Installed as /usr/share/zsh/vendor-completions/_tracectl (any directory\n"
"# of $fpath will do, before compinit runs); or add\n"
"# 'source <(tracectl completion zsh)' to ~/.zshrc after compinit.\n"
"# tracectl itself says what to offer ('tracectl completion words\n"
"# WORD...'), from the commands it knows.\n"
"\n"
"_tracectl() {\n"
"\tlocal cmd=${words[1]} line names=\n"
"\tlocal -a cands\n"
"\t[[ -x $cmd ]] || cmd=tracectl\n"
"\tfor line in \"${(@f)$(\"$cmd\" completion words \\\n"
"\t    \"${(@)words[2,CURRENT-1]}\" \"$PREFIX\" 2>/dev/null)}\"; do\n"
"\t\tcase $line in\n"
"\t\t(:dirs) names=dirs ;;\n"
"\t\t(:files) names=files ;;\n"
"\t\t(?*) cands+=(\"$line\") ;;\n"
"\t\tesac\n"
"\tdone\n"
"\t(( $#cands )) && compadd -a cands\n"
"\t[[ $names = dirs ]] && _files -/\n"
"\t[[ $names = files ]] && _files\n"
"\treturn 0\n"
"}\n"
"\n"
"# Autoloaded from $fpath, this file is the body of _tracectl: run it.\n"
"# Sourced, it registers the function.\n"
"if [[ $funcstack[1] = _tracectl ]]; then\n"
"\t_tracectl \"$@\"\n"
"else\n"
"\tcompdef _tracectl tracectl\n"
"fi\n";

static const char script_fish[] =
"# fish completion for tracectl(1), printed by 'tracectl completion fish'.\n"
"# Installed as /usr/share/fish/vendor_completions.d/tracectl.fish (or\n"
"# ~/.config/fish/completions/tracectl.fish); or run\n"
"# 'tracectl completion fish | source'.  tracectl itself says what to\n"
"# offer ('tracectl completion words WORD...'), from the commands it\n"
"# knows.\n"
"\n"
"function __tracectl_complete\n"
"\tset -l toks (commandline -opc)\n"
"\tset -l cur (commandline -ct)\n"
"\tset -l cmd $toks[1]\n"
"\ttest -x \"$cmd\"; or set cmd tracectl\n"
"\tset -e toks[1]\n"
"\tfor line in ($cmd completion words $toks \"$cur\" 2>/dev/null)\n"
"\t\tswitch $line\n"
"\t\t\tcase :dirs\n"
"\t\t\t\t__fish_complete_directories \"$cur\"\n"
"\t\t\tcase :files\n"
"\t\t\t\t__fish_complete_path \"$cur\"\n"
"\t\t\tcase '?*'\n"
"\t\t\t\tprintf '%s\\n' $line\n"
"\t\tend\n"
"\tend\n"
"end\n"
"\n"
"complete -c tracectl -f -a '(__tracectl_complete)'\n";

/*
 * Print a shell's script.  Contract in tracectl.h.
 */
int
complete_script(const char *shell, FILE *out)
{
	if (strcmp(shell, "bash") == 0)
		fputs(script_bash, out);
	else if (strcmp(shell, "zsh") == 0)
		fputs(script_zsh, out);
	else if (strcmp(shell, "fish") == 0)
		fputs(script_fish, out);
	else
		return -1;
	return 0;
}
