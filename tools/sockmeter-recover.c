/*
 * sockmeter-recover - write the final records of metered processes that
 * died without writing them (killed, OOM, a stuck exit), from their state
 * files, into their own logs; see core/recover.h and docs/state.md.
 *
 *   sockmeter-recover [-q] [DIR]
 *
 * DIR defaults to the state directory the library would use with the same
 * environment (SOCKMETER_CONFIG's [state] dir, SOCKMETER_STATE).  Run by
 * `sockmeter recover`.  Exit status: 0, 1 when DIR cannot be read, 2 for
 * a usage error.
 *
 *   sockmeter-recover --log-path NAME PID [--any-uid]
 *
 * For the launcher: the log path the library would use for program NAME
 * as pid PID with the same environment, read by the library's own config
 * code (the launcher's guess from the ini file differed: a ';' in a path,
 * a commented section header, format = prometheus, a blank or refused
 * SOCKMETER_LOG), with %t as '*'; "stderr"; or nothing and status 3 when
 * the program is not metered (enabled = false, SOCKMETER=off, skip).
 * --any-uid: %u as "[0-9]*" (the logs a program that changed user wrote
 * as that user: the default path follows the uid that writes).
 */
#include "../config/config.h"
#include "../core/procns.h"
#include "../core/recover.h"
#include "../core/sink.h"
#include "../core/state.h"

#include <unistd.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* msg on stderr, one line, its control characters (C0, DEL and C1 as
 * UTF-8) shown as '?': a message names a dead process's program and log
 * path as its header says, which the process could have rewritten with
 * a terminal's escape sequences (a reviewer's proof). */
static void say_clean(const char *msg)
{
	const unsigned char *s = (const unsigned char *)msg;
	char line[8192];
	size_t o = 0;

	for (; *s && o < sizeof(line) - 1; s++) {
		if (*s == 0xc2 && s[1] >= 0x80 && s[1] < 0xa0) {
			line[o++] = '?';
			s++;
		} else {
			line[o++] = *s < 0x20 || *s == 0x7f ? '?' : (char)*s;
		}
	}
	line[o] = '\0';
	fprintf(stderr, "%s\n", line);
}

static void to_stderr(void *ctx, const char *msg)
{
	(void)ctx;
	say_clean(msg);
}

static const char *env(const char *name)
{
	return getenv(name);
}

static void quiet(void *ctx, const char *msg)
{
	(void)ctx;
	/* A recovery done is not a problem: neither is one with nothing
	 * to write (a process that had no connection). */
	if (strncmp(msg, "sockmeter recover: ", 19) != 0 ||
	    (!strstr(msg, "final records appended") &&
	     !strstr(msg, "final numbers written") &&
	     !strstr(msg, "it had no connection: no record to write")))
		say_clean(msg);
}

static void silent(void *ctx, const char *msg)
{
	(void)ctx, (void)msg; /* the program says them */
}

static int log_path(const char *name, const char *pid, bool any_uid)
{
	struct config cfg;
	char tmpl[CONFIG_PATH_MAX], out[CONFIG_PATH_MAX + 64], *q;
	const char *t, *base = strrchr(name, '/');
	size_t n = 0;

	base = base ? base + 1 : name;
	config_load(&cfg, env, silent, NULL);
	if (!cfg.enabled || config_skips_program(&cfg, base))
		return 3;
	t = cfg.log_path;
	if (cfg.format == FORMAT_PROMETHEUS &&
	    strcmp(t, CONFIG_DEFAULT_LOG) == 0)
		t = CONFIG_DEFAULT_PROM;
	if (strcmp(t, "stderr") == 0) {
		printf("stderr\n");
		return 0;
	}
	/* %t (the start time, unknown here) as \001, then '*'; %u as
	 * \002, then "[0-9]*", with any_uid (a number: "*" matched
	 * /tmp/sockmeter-it.X, a test's directory, beside the uids'). */
	for (; *t && n + 2 < sizeof(tmpl); t++) {
		if (t[0] == '%' && t[1] == 't') {
			tmpl[n++] = '\001';
			t++;
		} else if (t[0] == '%' && any_uid && t[1] == 'u') {
			tmpl[n++] = '\002';
			t++;
		} else if (t[0] == '%' && t[1]) {
			tmpl[n++] = *t++;
			tmpl[n++] = *t;
		} else {
			tmpl[n++] = *t;
		}
	}
	tmpl[n] = '\0';
	if (sink_expand(tmpl, atol(pid), base, 0,
			procns_uid_outer((unsigned)geteuid()), out,
			sizeof(out)) != 0)
		return 1;
	for (q = out; *q; q++)
		if (*q == '\001')
			putchar('*');
		else if (*q == '\002')
			fputs("[0-9]*", stdout);
		else
			putchar(*q);
	putchar('\n');
	return 0;
}

int main(int argc, char **argv)
{
	struct recover_opts o = {.stderr_here = true,
				 .retry_unwritten = true,
				 .report = to_stderr};
	struct recover_stats st;
	struct config cfg;
	char dir[CONFIG_PATH_MAX];
	const char *arg = NULL;
	int i;

	if (argc == 4 && strcmp(argv[1], "--log-path") == 0)
		return log_path(argv[2], argv[3], false);
	if (argc == 5 && strcmp(argv[1], "--log-path") == 0 &&
	    strcmp(argv[4], "--any-uid") == 0)
		return log_path(argv[2], argv[3], true);
	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "-q") == 0) {
			o.report = quiet;
		} else if (strcmp(argv[i], "-h") == 0 ||
			   strcmp(argv[i], "--help") == 0) {
			printf("usage: sockmeter recover [-q] [DIR]\n");
			return 0;
		} else if (argv[i][0] == '-' || arg) {
			fprintf(stderr,
				"usage: sockmeter recover [-q] [DIR]\n");
			return 2;
		} else {
			arg = argv[i];
		}
	}
	if (!arg) {
		config_load(&cfg, env, to_stderr, NULL);
		/* The library would use no directory: there is none to
		 * default to (the default one, looked at all the same,
		 * recovered files a user who turned the state off did not
		 * expect). */
		if (!cfg.state_enabled) {
			if (o.report == to_stderr)
				fprintf(stderr,
					"sockmeter recover: the state is off "
					"([state] enabled = false or "
					"SOCKMETER_STATE=off): no state "
					"directory to recover; name one: "
					"sockmeter recover DIR\n");
			return 0;
		}
		if (state_dir_expand(cfg.state_dir, dir, sizeof(dir)) != 0) {
			fprintf(stderr,
				"sockmeter recover: state dir too long\n");
			return 1;
		}
		arg = dir;
	}
	if (recover_dir(arg, &o, &st) != 0)
		return 1;
	if (o.report == to_stderr)
		fprintf(stderr,
			"sockmeter recover: %s: %u recovered, %u removed "
			"(final records already written), %u still running, "
			"%u left alone, %u kept (log not writable), %u "
			"another user's\n",
			arg, st.recovered, st.removed, st.alive, st.skipped,
			st.unwritten, st.foreign);
	/* Numbers that reached no log: the caller should know. */
	return st.unwritten || st.foreign ? 1 : 0;
}
