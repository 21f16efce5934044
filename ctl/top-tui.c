/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * tracectl top on a terminal: ncurses draws the lines top.c renders,
 * refreshed every delay, and reads keys in between (getch() with a
 * timeout up to the next refresh, so a key acts at once and the
 * refresh keeps its pace).  ncurses follows the terminal's size
 * (SIGWINCH comes back as KEY_RESIZE, and the next draw fits it).
 *
 * The terminal is given back whatever happens: on q, on SIGINT and
 * SIGTERM (caught, then raised again once the screen is restored, so
 * the shell sees how top ended), and on any exit (atexit).  The filter
 * is edited on the bottom line without blocking: refreshes go on while
 * it is typed.  Main thread.
 */
#include <curses.h>
#include <locale.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "top.h"
#include "tracectl.h"

static volatile sig_atomic_t tui_signal;	/* the one that stops us */
static int tui_on;				/* the screen is ours */

static void
tui_catch(int sig)
{
	tui_signal = sig;
}

/* Give the terminal back, once. */
static void
tui_end(void)
{
	if (!tui_on)
		return;
	tui_on = 0;
	endwin();
}

static int64_t
tui_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int
tui_attr(int a)
{
	switch (a) {
	case TOP_LINE_TITLE:
		return A_BOLD;
	case TOP_LINE_HEADER:
		return A_REVERSE;
	case TOP_LINE_WARN:
		return A_BOLD | A_STANDOUT;
	default:
		return A_NORMAL;
	}
}

/* What the bottom line says: the keys, or the filter being typed. */
static void
tui_status(const struct top *t, int editing, const char *edit,
    int paused)
{
	int h = LINES;

	move(h - 1, 0);
	clrtoeol();
	if (editing) {
		attrset(A_BOLD);
		mvprintw(h - 1, 0, "filter (glob on event or session name, "
		    "Enter applies, Esc cancels): %s", edit);
		attrset(A_NORMAL);
		return;
	}
	attrset(A_REVERSE);
	mvprintw(h - 1, 0, "q quit  s sort: %s  r reverse  / filter  "
	    "1 events  2 threads  3 sessions  0 all  +/- delay  p %s",
	    top_sort_names[t->sort], paused ? "resume (PAUSED)" : "pause");
	attrset(A_NORMAL);
}

static void
tui_draw(const struct top *t, struct top_lines *l, int editing,
    const char *edit, int paused)
{
	size_t i;

	erase();
	top_lines_clear(l);
	top_render(t, l, COLS, LINES);
	for (i = 0; i < l->n && (int)i < LINES - 1; i++) {
		attrset(tui_attr(l->attr[i]));
		mvaddnstr((int)i, 0, l->text[i], COLS);
	}
	attrset(A_NORMAL);
	tui_status(t, editing, edit, paused);
	refresh();
}

/* A key while the filter is typed.  Returns 1 when typing ended. */
static int
tui_edit_key(struct top *t, int ch, char *edit, size_t size)
{
	size_t n = strlen(edit);

	switch (ch) {
	case '\n':
	case '\r':
	case KEY_ENTER:
		snprintf(t->filter, sizeof(t->filter), "%s", edit);
		return 1;
	case 27:			/* Esc */
		return 1;
	case KEY_BACKSPACE:
	case 127:
	case '\b':
		if (n > 0)
			edit[n - 1] = '\0';
		return 0;
	default:
		if (ch >= 0x20 && ch < 0x7f && n + 1 < size) {
			edit[n] = (char)ch;
			edit[n + 1] = '\0';
		}
		return 0;
	}
}

/*
 * A key.  Returns 1 to quit, 2 when the view must be computed again
 * (sort, filter), 3 to refresh at once, else 0.
 */
static int
tui_key(struct top *t, int ch, int *editing, char *edit, int *paused)
{
	switch (ch) {
	case 'q':
	case 'Q':
		return 1;
	case 's':
	case '>':
		t->sort = (enum top_sort)((t->sort + 1) % TOP_SORT_COUNT);
		return 2;
	case '<':
		t->sort = (enum top_sort)((t->sort + TOP_SORT_COUNT - 1) %
		    TOP_SORT_COUNT);
		return 2;
	case 'r':
		t->reverse = !t->reverse;
		return 2;
	case '/':
		*editing = 1;
		snprintf(edit, sizeof(t->filter), "%s", t->filter);
		return 0;
	case '0':
		t->pane = TOP_PANE_ALL;
		return 0;
	case '1':
		t->pane = TOP_PANE_EVENTS;
		return 0;
	case '2':
		t->pane = TOP_PANE_THREADS;
		return 0;
	case '3':
		t->pane = TOP_PANE_SESSIONS;
		return 0;
	case '+':
		t->delay = t->delay < 60 ? t->delay * 2 : t->delay;
		return 0;
	case '-':
		t->delay = t->delay > 0.2 ? t->delay / 2 : t->delay;
		return 0;
	case 'p':
	case ' ':
		*paused = !*paused;
		return 3;
	default:
		return 0;
	}
}

static int
tui_loop(struct top *t)
{
	struct top_lines l = { 0 };
	char edit[sizeof(t->filter)] = "";
	int64_t next = tui_now_ms(), now, wait;
	int ch, r, editing = 0, paused = 0;

	while (tui_signal == 0) {
		now = tui_now_ms();
		if (!paused && now >= next) {
			(void)top_ask(t);	/* unreachable: said on screen */
			top_compute(t);
			next += (int64_t)(t->delay * 1000);
			if (next <= now)
				next = now + (int64_t)(t->delay * 1000);
		}
		tui_draw(t, &l, editing, edit, paused);
		wait = paused ? 1000 : next - tui_now_ms();
		timeout(wait < 0 ? 0 : wait > 1000 ? 1000 : (int)wait);
		if ((ch = getch()) == ERR)
			continue;	/* a tick, a signal */
		if (editing) {
			if (tui_edit_key(t, ch, edit, sizeof(edit))) {
				editing = 0;
				top_compute(t);
			}
			continue;
		}
		r = tui_key(t, ch, &editing, edit, &paused);
		if (r == 1)
			break;
		if (r == 2)
			top_compute(t);
		if (r == 3 && !paused)
			next = tui_now_ms();
	}
	top_lines_clear(&l);
	free(l.text);
	free(l.attr);
	return 0;
}

/*
 * Show top until q, SIGINT or SIGTERM.  Returns EXIT_DONE; a signal is
 * raised again once the terminal is back.
 */
int
top_tui(struct top *t)
{
	struct sigaction sa;
	int sig;

	setlocale(LC_ALL, "");
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = tui_catch;	/* no SA_RESTART: getch() returns */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	atexit(tui_end);
	if (newterm(NULL, stdout, stdin) == NULL) {
		fputs("tracectl: top: cannot set up the terminal (is TERM "
		    "right?)\n", stderr);
		return EXIT_FAILED;
	}
	tui_on = 1;
	cbreak();
	noecho();
	nonl();
	keypad(stdscr, TRUE);
	curs_set(0);
	set_escdelay(25);
	tui_loop(t);
	tui_end();
	if ((sig = tui_signal) != 0) {
		signal(sig, SIG_DFL);
		raise(sig);
	}
	return EXIT_DONE;
}
