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
 */
#include "../config/config.h"
#include "../core/recover.h"
#include "../core/state.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void to_stderr(void *ctx, const char *msg)
{
	(void)ctx;
	fprintf(stderr, "%s\n", msg);
}

static const char *env(const char *name)
{
	return getenv(name);
}

static void quiet(void *ctx, const char *msg)
{
	(void)ctx;
	if (strncmp(msg, "sockmeter recover: ", 19) != 0 ||
	    !strstr(msg, "final records appended"))
		fprintf(stderr, "%s\n", msg);
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
