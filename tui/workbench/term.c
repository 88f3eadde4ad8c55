/*
 * term — see term.h.  Everything that must be undone on exit is recorded
 * here, so term_stop() (also run from atexit) leaves a usable shell.
 */
#include "tui/workbench/term.h"

#include "core/err.h"
#include "core/sb.h"
#include "views/sanitize.h"
#include "views/view.h"

#include <curses.h>
#include <term.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static bool active, lost;
static int saved_stderr = -1, parked = -1;
static int sig_pipe[2] = {-1, -1};

static struct sigaction curses_winch; /* the handler curses installed */

static void on_signal(int sig)
{
	int saved = errno;
	char c = sig == SIGHUP ? 'H' : sig == SIGWINCH ? 'W' : 'T';
	if (sig_pipe[1] >= 0 && write(sig_pipe[1], &c, 1) < 0) {
		/* Pipe full: an event is already pending. */
	}
	errno = saved;
}

/* A resize: curses's own handler notes it (its next read gives KEY_RESIZE)
 * and the pipe wakes the main loop's poll, which a signal that arrives
 * while the loop is busy elsewhere (pumping a run's output) would not: the
 * screen would keep its old size until the next key. */
static void on_winch(int sig)
{
	if (curses_winch.sa_flags & SA_SIGINFO) {
		if (curses_winch.sa_sigaction)
			curses_winch.sa_sigaction(sig, NULL, NULL);
	} else if (curses_winch.sa_handler != SIG_DFL && curses_winch.sa_handler != SIG_IGN) {
		curses_winch.sa_handler(sig);
	}
	on_signal(sig);
}

static void park_stderr(void)
{
	char path[] = "/tmp/optloop-stderr.XXXXXX";
	int fd = mkstemp(path);

	if (fd < 0)
		return;
	unlink(path);
	fflush(stderr);
	saved_stderr = dup(STDERR_FILENO);
	if (saved_stderr < 0 || dup2(fd, STDERR_FILENO) < 0) {
		close(fd);
		return;
	}
	parked = fd;
}

static void replay_stderr(void)
{
	char buf[4096];
	ssize_t n;

	if (parked < 0)
		return;
	fflush(stderr);
	dup2(saved_stderr, STDERR_FILENO);
	close(saved_stderr);
	saved_stderr = -1;
	if (lseek(parked, 0, SEEK_SET) == 0)
		while ((n = read(parked, buf, sizeof(buf))) > 0)
			if (write(STDERR_FILENO, buf, (size_t)n) < 0)
				break;
	close(parked);
	parked = -1;
}

/* What curses needs, checked before it starts: initscr() prints "Error
 * opening terminal" and exits the process on an unknown TERM. */
static int term_check(struct err *e)
{
	static const char scripts[] =
		"use the subcommands (optloop status, verify, log, commit) in scripts";
	const char *t = getenv("TERM");
	int er = 0;

	if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO))
		return err_set(e, ERR_USAGE,
			       "the workbench needs a terminal (stdin and stdout are not both "
			       "terminals); %s",
			       scripts);
	if (!t || !*t)
		return err_set(e, ERR_USAGE,
			       "the workbench needs to know the terminal's type, and TERM is not set; "
			       "set it (export TERM=xterm-256color, or what your terminal is), or %s",
			       scripts);
	if (setupterm(t, STDOUT_FILENO, &er) != OK) {
		if (er == 0)
			return err_set(e, ERR_USAGE,
				       "TERM=%s is a terminal type this machine's terminfo does not "
				       "know; set TERM to one it knows (xterm-256color, screen-256color, "
				       "tmux-256color) or install its entry (Debian: ncurses-term)",
				       t);
		if (er == 1)
			return err_set(e, ERR_USAGE,
				       "TERM=%s is a hard-copy terminal: the workbench needs a screen; "
				       "%s",
				       t, scripts);
		return err_set(e, ERR_USAGE,
			       "the terminfo database cannot be found (TERM=%s); install ncurses-base "
			       "or set TERMINFO to where it is, or %s",
			       t, scripts);
	}
	const char *cup = tigetstr("cup");
	del_curterm(cur_term);
	cur_term = NULL;
	if (!cup || cup == (const char *)-1)
		return err_set(e, ERR_USAGE,
			       "TERM=%s cannot move the cursor, which the workbench needs; set TERM "
			       "to your terminal's type (xterm-256color, screen-256color), or %s",
			       t, scripts);
	return 0;
}

int term_start(struct err *e)
{
	struct sigaction sa;
	int rc;

	if ((rc = term_check(e)) < 0)
		return rc;
	if (pipe(sig_pipe) == 0) {
		for (int i = 0; i < 2; i++) {
			fcntl(sig_pipe[i], F_SETFL, fcntl(sig_pipe[i], F_GETFL) | O_NONBLOCK);
			fcntl(sig_pipe[i], F_SETFD, FD_CLOEXEC);
		}
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGHUP, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	park_stderr();
	/* newterm, unlike initscr, returns NULL instead of exiting */
	if (!newterm(NULL, stdout, stdin)) {
		replay_stderr();
		return err_set(e, ERR_USAGE, "cannot start the terminal (TERM=%s); set TERM to a known type",
			       getenv("TERM") ? getenv("TERM") : "");
	}
	active = true;
	atexit(term_stop);
	if (sigaction(SIGWINCH, NULL, &curses_winch) == 0) {
		struct sigaction wa;
		memset(&wa, 0, sizeof(wa));
		wa.sa_handler = on_winch;
		sigemptyset(&wa.sa_mask);
		sigaction(SIGWINCH, &wa, NULL);
	}
	raw();
	noecho();
	nonl();
	keypad(stdscr, TRUE);
	nodelay(stdscr, TRUE);
	set_escdelay(25);
	curs_set(0);
	const char *nc = getenv("NO_COLOR");
	theme_init(!(nc && *nc));
	return 0;
}

void term_stop(void)
{
	if (active) {
		active = false;
		if (!lost) {
			curs_set(1);
			endwin();
		}
	}
	replay_stderr();
}

void term_lost(void)
{
	lost = true;
}

int term_signal_fd(void)
{
	return sig_pipe[0];
}

enum term_signal term_take_signal(void)
{
	char c;

	if (sig_pipe[0] < 0 || read(sig_pipe[0], &c, 1) != 1)
		return TSIG_NONE;
	return c == 'H' ? TSIG_HUP : c == 'W' ? TSIG_WINCH : TSIG_TERM;
}

int term_run_child(const char *cmd, const char *dir, char *const *args, size_t nargs, int *status,
		   struct err *e)
{
	struct sigaction ign, old_int, old_quit;
	size_t n = nargs;
	int ws = 0;
	pid_t pid;

	const char **argv = xcalloc(n + 5, sizeof(*argv));
	argv[0] = "/bin/sh";
	argv[1] = "-c";
	argv[2] = xasprintf("%s \"$@\"", cmd);
	argv[3] = "optloop-editor"; /* $0 */
	for (size_t i = 0; i < n; i++)
		argv[4 + i] = args[i];

	/* While it runs the terminal is its own: Ctrl-C and Ctrl-\ are its
	 * keys, never the workbench's end. */
	memset(&ign, 0, sizeof(ign));
	ign.sa_handler = SIG_IGN;
	sigemptyset(&ign.sa_mask);
	sigaction(SIGINT, &ign, &old_int);
	sigaction(SIGQUIT, &ign, &old_quit);
	def_prog_mode();
	endwin();
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		signal(SIGINT, SIG_DFL);
		signal(SIGQUIT, SIG_DFL);
		signal(SIGPIPE, SIG_DFL);
		if (saved_stderr >= 0)
			dup2(saved_stderr, STDERR_FILENO);
		if (dir && chdir(dir) < 0)
			_exit(126);
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	int err_no = errno;
	while (pid > 0 && waitpid(pid, &ws, 0) < 0 && errno == EINTR)
		;
	reset_prog_mode();
	clearok(curscr, TRUE);
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGQUIT, &old_quit, NULL);
	free((char *)argv[2]);
	free(argv);
	if (pid < 0)
		return err_set(e, ERR_IO, "cannot start %s: %s", cmd, strerror(err_no));
	*status = WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
	return 0;
}
