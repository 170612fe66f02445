/*
 * state_fixture.h - what the suites of state files share (check_state,
 * check_killstep): a temporary directory DIR with the state directory
 * DIR/st, a config of the defaults writing JSON, a report that drops its
 * messages, and a meter opened in a state file as the preload opens it
 * (preload/durable.c).  Each suite includes it once.
 */
#ifndef SOCKMETER_STATE_FIXTURE_H
#define SOCKMETER_STATE_FIXTURE_H

#include "../../core/meter.h"
#include "../../core/state.h"
#include "unit_util.h"

#include <stdio.h>
#include <unistd.h>

static char dir[256];
static struct config cfg;

static void quiet(void *ctx, const char *msg)
{
	(void)ctx;
	(void)msg;
}

static void state_setup(void)
{
	uu_tmpdir(dir, sizeof(dir));
	config_defaults(&cfg);
	snprintf(cfg.state_dir, sizeof(cfg.state_dir), "%s/st", dir);
	cfg.format = FORMAT_JSON;
}

static void state_teardown(void)
{
	uu_rmtree(dir);
}

/*
 * state_open_meter - m in a state file st of cap slots, for this process
 * ("unit"), with the header naming the log the sink made, as the preload
 * does.  1 if the state file could not be made or is not durable, 2 if
 * the meter could not be set up in it, 0 once both are.
 */
static int state_open_meter(struct state *st, struct meter *m, uint32_t cap)
{
	struct meter_mem mem;
	struct meter_time now = {1000, 1700000000000000000ull};

	if (state_open(st, &cfg, "unit", (long)getpid(), cap, now.real_ns,
		       now.mono_ns, "x.log", quiet, NULL) != 0 ||
	    !st->durable)
		return 1;
	state_meter_mem(st, &mem);
	if (meter_init_at(m, &cfg, "unit", (long)getpid(), cap, now, quiet,
			  NULL, &mem) != 0)
		return 2;
	snprintf(st->hdr->log_path, sizeof(st->hdr->log_path), "%s",
		 m->sink.path);
	/* And a root process keeps it (preload/durable.c: keep_if_root),
	 * so that root's recovery believes a log there that is still
	 * empty. */
	if (geteuid() == 0)
		state_keep_log_path(st, m->sink.path);
	return 0;
}

#endif
