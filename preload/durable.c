/*
 * durable.c - the preload's side of the durable state (core/state.h): the
 * one struct state of this process, set up before metering starts, made
 * anew in a fork child, marked final and removed when the process ends
 * cleanly, and the ticker's recovery (after start, then once a minute) of
 * dead processes' files.
 */
#include "preload.h"
#include "warn.h"
#include "../core/procns.h"
#include "../core/rawsys.h"

#include "../core/recover.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* This process's state, and when the recovery chores are due (0: not
 * planned yet; UINT64_MAX: done): both in sm_core (preload.h). */
#define sm_state (sm_core.state)
#define chores_due (sm_core.chores_due)

/* Root's log path, kept where a process that drops root later cannot
 * change it (state_keep_log_path): its recovery by root may make that
 * log where nothing is yet.  A file not made yet (a fork child's, at its
 * first tracked fd) is kept when it is (file_made). */
static void keep_if_root(const char *log)
{
	if (geteuid() == 0 && sm_state.path[0])
		state_keep_log_path(&sm_state, log);
}

/* The header names the log as the sink expanded it; a forked child sets
 * its sink up at its first write only, so its path is expanded here. */
static void note_log_path(void)
{
	struct state_header *h = sm_state.hdr;
	const char *tmpl = sm_meter.cfg.log_path;
	char path[sizeof(h->log_path)], cwd[CONFIG_PATH_MAX];
	char full[sizeof(h->log_path)];

	if (!h)
		return;
	/* Whose log it is now (a uid change moves it): a recovery by root
	 * that has to create it gives it to that user. */
	__atomic_store_n(&h->uid, (uint32_t)procns_uid_outer((unsigned)geteuid()),
			 __ATOMIC_RELAXED);
	/* A log the sink refused (the default template's directory not
	 * this user's: sink_init, which marks it failing) has no path there;
	 * the header names it all the same, for the recovery that writes the
	 * records once the directory is usable.  Not a template that could
	 * not be made at all (a bad one, a working directory gone): no path,
	 * as ever (a relative one would land wherever a recovery runs). */
	bool refused = !sm_meter.sink_stale && !sm_meter.sink.to_stderr &&
		       !sm_meter.sink.path[0] && sm_meter.sink.failing;

	if (!sm_meter.sink_stale && !refused) {
		snprintf(h->log_path, sizeof(h->log_path), "%s",
			 sm_meter.sink.to_stderr ? "stderr" : sm_meter.sink.path);
		if (!sm_meter.sink.to_stderr)
			keep_if_root(sm_meter.sink.path);
		return;
	}
	if (strcmp(tmpl, "stderr") == 0 ||
	    sink_expand(tmpl, sm_meter.pid, sm_meter.prog,
			sm_meter.start.real_ns / 1000000000ull,
			procns_uid_outer((unsigned)geteuid()), path,
			sizeof(path)) != 0) {
		snprintf(h->log_path, sizeof(h->log_path), "%s",
			 refused ? "" : "stderr");
		return;
	}
	if (path[0] == '/' || !getcwd(cwd, sizeof(cwd)) ||
	    strlen(cwd) + 1 + strlen(path) >= sizeof(h->log_path))
		cwd[0] = '\0';
	/* Made in our own memory, then copied: what is kept is ours. */
	memset(full, 0, sizeof(full));
	if (cwd[0]) {
		memcpy(full, cwd, strlen(cwd));
		full[strlen(cwd)] = '/';
	}
	memcpy(full + strlen(full), path,
	       strnlen(path, sizeof(full) - 1 - strlen(full)));
	full[sizeof(full) - 1] = '\0';
	memcpy(h->log_path, full, sizeof(h->log_path));
	keep_if_root(full);
}

void sm_durable_log_moved(void)
{
	note_log_path();
}

int sm_durable_init(const struct config *cfg, const char *prog, long pid,
		    uint32_t cap, struct meter_time now,
		    config_report_fn report, void *ctx)
{
	struct meter_mem mem;
	int r;

	if (state_open(&sm_state, cfg, prog, pid, cap, now.real_ns, now.mono_ns,
		       "", report, ctx) != 0) {
		memset(&sm_state, 0, sizeof(sm_state));
		return meter_init(&sm_meter, cfg, prog, pid, cap, now, report,
				  ctx);
	}
	state_meter_mem(&sm_state, &mem);
	r = meter_init_at(&sm_meter, cfg, prog, pid, cap, now, report, ctx,
			  &mem);
	if (r) {
		state_discard(&sm_state);
		return r;
	}
	/* A log out of reach: its warning says whether the totals are
	 * kept for a recovery (a fork child's file is made later). */
	sm_meter.sink.kept = &sm_state.durable;
	note_log_path();
	return 0;
}

/* The child's file is made at its first tracked fd (state.c): its header
 * names the log then. */
static void file_made(struct state *st)
{
	(void)st;
	note_log_path();
}

/*
 * A fork child whose memory of ours could not be made its own (state.c's
 * state_after_fork) runs unmetered, as a sandboxed one does (preload.c's
 * fork_child): nothing of the parent's is written, and the child's
 * traffic is in no record, which the caller says.
 */
SM_FORK_PATH
int sm_durable_after_fork(long pid, struct meter_time now)
{
	bool fresh = sm_state.slots && sm_meter.tab.cap;
	int r;

	if (fresh) {
		r = state_after_fork(&sm_state, &sm_meter.cfg, sm_meter.prog,
				     pid, now.real_ns, now.mono_ns);
		if (r != 0) {
			__atomic_store_n(&sm_meter.tab.cap, 0,
					 __ATOMIC_RELAXED);
			return -r;
		}
		sm_state.made = file_made;
		/* The same addresses: the queue's and the totals' pointers
		 * stand. */
		sm_meter.durable = sm_state.ticker;
	}
	meter_after_fork(&sm_meter, pid, now, fresh);
	chores_due = 0;
	return 0;
}

/* Give back a start-up that succeeded (sm_durable_init), before any
 * other thread or wrapper used it: the meter's memory, then the state
 * file and its reservation. */
void sm_durable_give_back(void)
{
	meter_destroy(&sm_meter);
	state_discard(&sm_state);
}

void sm_durable_prepare_fork(void)
{
	if (sm_state.slots && sm_meter.tab.cap && !sm_quiet())
		state_prepare_fork(&sm_state);
}

SM_FORK_PATH
void sm_durable_ending(void)
{
	if (sm_state.hdr)
		state_set_status(&sm_state, STATE_ENDING);
}

SM_FORK_PATH
void sm_durable_end(enum sm_end how)
{
	if (sm_tls_foreign()) /* a child on a TLS of its own */
		return;
	switch (how) {
	case SM_END_EXIT:
		/* The exit record did not reach the log file (RLIMIT_FSIZE,
		 * a full disk, out of reach): recovery writes it later.  Not
		 * a stderr that is gone: recovery would print it elsewhere.
		 * Nor was it made (no memory for it: meter.c's
		 * unmade_batch), whatever the log: recovery makes it. */
		if ((!sm_meter.sink_stale && sm_meter.sink.failing &&
		     !sm_meter.sink.to_stderr) ||
		    sm_meter.last_unmade)
			state_set_status(&sm_state, STATE_UNWRITTEN);
		else
			state_remove(&sm_state);
		break;
	case SM_END_EXEC:
		/* The exec record did not reach the log either: the file stays
		 * as a live process's, so that the image that follows marks it
		 * an orphan for recovery (or recovery finds it once the pid is
		 * gone), as after an exec the library did not see.  Before, it
		 * was marked final and removed with its numbers. */
		if ((!sm_meter.sink_stale && sm_meter.sink.failing &&
		     !sm_meter.sink.to_stderr) ||
		    sm_meter.last_unmade)
			state_set_status(&sm_state, STATE_LIVE);
		else
			state_set_status(&sm_state, STATE_FINAL);
		break;
	case SM_END_EXEC_FAILED:
		state_set_status(&sm_state, STATE_LIVE);
		break;
	case SM_END_EXIT_UNWRITTEN:
		state_set_status(&sm_state, STATE_UNWRITTEN);
		break;
	}
}

bool sm_durable_file_wanted(void)
{
	return sm_state.slots && state_file_wanted(&sm_state);
}

void sm_durable_make_file(void)
{
	if (sm_state.slots)
		state_make_file(&sm_state);
}

bool sm_durable_dir_usable_by(unsigned uid)
{
	return state_dir_usable_by(sm_meter.cfg.state_dir, uid);
}

void sm_durable_say_refused(void)
{
	char dir[CONFIG_PATH_MAX], msg[CONFIG_PATH_MAX + 400];
	struct stat st;
	int err;

	/* Advice only for a directory this user cannot use; a file not made
	 * for another reason (no fd left, a full tmpfs) is said as it is
	 * (below).  A sandboxed ticker makes no system call it need not
	 * (quiet.h). */
	if (sm_quiet() || !state_refused_take(&sm_state))
		return;
	if (state_dir_expand(sm_meter.cfg.state_dir, dir, sizeof(dir)) != 0)
		snprintf(dir, sizeof(dir), "%s", sm_meter.cfg.state_dir);
	/* A FUSE mount (check_dir refused it): said without the stat below,
	 * which a server that does not answer would hold in this ticker for
	 * good (procns_fuse_mount; t_fuse_silent). */
	if (procns_fuse_mount(dir) == 1) {
		snprintf(msg, sizeof(msg),
			 "sockmeter: %s: the state directory %s is "
			 PROCNS_FUSE_SAYS ": its numbers have no state file, "
			 "and a kill loses them",
			 sm_meter.prog, dir);
		sm_warn(msg);
		return;
	}
	/* Out of reach altogether (a child forked after a chroot, or in a
	 * mount namespace without it): when the log is too, its warning
	 * says that the records are lost (README, Limits); when the log is
	 * in reach (stderr, the same path inside the new root), only a kill
	 * loses the numbers, which is said below (a helper's nsd workers
	 * lost theirs to a kill -9 without a word). */
	/* (Not followed: a link there, which check_dir refuses, could lead
	 * into a mount whose server never answers.) */
	err = lstat(dir, &st) == 0 ? 0 : errno;
	if (err == ENOENT && !sink_root_was_changed()) {
		/* Not made yet (a %u directory of the new user's): in reach
		 * when its parent is, made by nobody when that is closed to
		 * this user (state_dir_usable_by said so). */
		char parent[CONFIG_PATH_MAX], *slash;

		snprintf(parent, sizeof(parent), "%s", dir);
		while (strlen(parent) > 1 && parent[strlen(parent) - 1] == '/')
			parent[strlen(parent) - 1] = '\0';
		slash = strrchr(parent, '/');
		if (slash && slash != parent) {
			*slash = '\0';
			if (stat(parent, &st) == 0)
				err = EACCES; /* said as a directory closed */
		}
	}
	if (err && err != EACCES) {
		/* (As root too: state_dir_usable_by leaves the rest to a
		 * report this quiet child never makes.) */
		if (!sink_in_reach(&sm_meter.sink))
			return;
		snprintf(msg, sizeof(msg),
			 "sockmeter: %s: the state directory %s is out of "
			 "reach (%s): its numbers have no state file, and a "
			 "kill loses them",
			 sm_meter.prog, dir,
			 sink_root_was_changed()
				 ? "after a chroot, the path is looked up "
				   "inside the new root"
				 : strerror(err));
	} else if (state_dir_usable_by(sm_meter.cfg.state_dir,
				       (unsigned)geteuid())) {
		/* Usable, and no file all the same (a tmpfs filled since the
		 * parent made its own, no fd left): as a process that is not
		 * a fork child says it ("no room for a state file"), not
		 * nothing (a helper's child killed lost every number without
		 * a word).  Once in the family (warn.c): no pid in it. */
		err = state_refused_err(&sm_state);
		if (!err)
			return;
		snprintf(msg, sizeof(msg),
			 "sockmeter: %s: state directory %s: a forked child "
			 "could not make its state file (%s): its numbers are "
			 "in private memory only, and a kill loses them",
			 sm_meter.prog, dir, strerror(err));
	} else if (!err) {
		snprintf(msg, sizeof(msg),
			 "sockmeter: %s: the state directory %s (uid %u, mode "
			 "%o) is not usable by uid %u, which this process "
			 "runs as: its numbers have no state file, and a kill "
			 "loses them (use %%u in [state] dir, as the default "
			 "does)",
			 sm_meter.prog, dir, (unsigned)st.st_uid,
			 (unsigned)(st.st_mode & 07777), (unsigned)geteuid());
	} else {
		snprintf(msg, sizeof(msg),
			 "sockmeter: %s: the state directory %s cannot be used "
			 "by uid %u, which this process runs as: its numbers "
			 "have no state file, and a kill loses them",
			 sm_meter.prog, dir, (unsigned)geteuid());
	}
	sm_warn(msg);
}

void sm_durable_say_incomplete(void)
{
	char dir[CONFIG_PATH_MAX], msg[CONFIG_PATH_MAX + 480];
	char why[160] = "its file system is full";
	int err;

	/* A sandboxed ticker makes no system call it need not (quiet.h):
	 * state_dir_expand may ask for the uid. */
	if (sm_quiet() || !state_incomplete_take(&sm_state))
		return;
	if (state_dir_expand(sm_meter.cfg.state_dir, dir, sizeof(dir)) != 0)
		snprintf(dir, sizeof(dir), "%s", sm_meter.cfg.state_dir);
	err = __atomic_load_n(&sm_state.incomplete_err, __ATOMIC_ACQUIRE);
	/* The file system full, or memory refused (the process at its map
	 * count limit: a helper's run said "full" of a half-empty one). */
	if (err && !state_no_room(err))
		snprintf(why, sizeof(why), "its file's pages were refused: %s",
			 strerror(err));
	snprintf(msg, sizeof(msg),
		 "sockmeter: %s: state directory %s: no room to keep the "
		 "numbers of every fd (%s): those of some fds are in private "
		 "memory only, lost if the process is killed (a recovered "
		 "exit record then says \"incomplete\")",
		 sm_meter.prog, dir, why);
	sm_warn(msg);
}

void sm_durable_mark_exposed(void)
{
	char msg[480]; /* small: a handler's stack may be (the path cut) */
	int r;

	/* A sandboxed thread makes no system call it need not (quiet.h):
	 * it was marked before the sandbox (sm_confine_begin).  (The
	 * message without strerror: a handler's or a vfork child's.) */
	if (sm_quiet())
		return;
	r = state_mark_exposed(&sm_state);
	/* Removed meanwhile by the exit record another thread made (two
	 * threads, one calling setuid, one exit): nothing to say. */
	if (r == -ENOENT && __atomic_load_n(&sm_meter.finished, __ATOMIC_ACQUIRE))
		r = 0;
	if (r) {
		snprintf(msg, sizeof(msg),
			 "sockmeter: %.300s: cannot mark or remove this state "
			 "file before the change of user (errno %d); its "
			 "recovery will take its header's word",
			 sm_state.path, -r);
		sm_warn(msg);
	}
}

void sm_durable_pin_dir(void)
{
	state_pin_dir(&sm_state);
}

/* What a sandboxed process (its thread may not back a chunk itself:
 * quiet.h) keeps with a file behind it: the slots of the lowest fds, and
 * the next close records. */
#define SANDBOX_SLOTS 256
#define SANDBOX_RING_AHEAD 128

/* Back elements [first, first + n) of a region (mod wrap when wrap is
 * not 0), a chunk at a time: one already backed costs a load. */
static void back_span(void (*back)(void *, uint32_t),
		      const struct state_region *r, uint64_t first, uint64_t n,
		      uint64_t wrap)
{
	uint64_t step = r->elem && r->chunk >= r->elem ? r->chunk / r->elem : 1;
	uint64_t i;

	for (i = 0; i < n; i += step)
		back(&sm_state, (uint32_t)(wrap ? (first + i) % wrap : first + i));
	/* The last one, which the steps may have passed over. */
	if (n)
		back(&sm_state, (uint32_t)(wrap ? (first + n - 1) % wrap
						: first + n - 1));
}

void sm_durable_before_sandbox(void)
{
	uint64_t head;

	if (!sm_state.slots)
		return;
	back_span(state_back_slot, &sm_state.slot_region, 0,
		  SANDBOX_SLOTS < sm_state.cap ? SANDBOX_SLOTS : sm_state.cap,
		  0);
	head = __atomic_load_n(&sm_meter.q.sh->head, __ATOMIC_ACQUIRE);
	back_span(state_back_ring, &sm_state.ring_region, head,
		  SANDBOX_RING_AHEAD, CLOSEQ_CAP);
	/* The first spills' room (closeq.h): a sandboxed thread cannot back
	 * it, and a close into a full ring there finds those two (one
	 * chunk; the others, not backed, are passed over) rather than going
	 * the old way, through its stack. */
	back_span(state_back_ring, &sm_state.ring_region, CLOSEQ_CAP,
		  2 * CLOSEQ_SPILL_PLACES, 0);
}

void sm_durable_watch(uint64_t mono_ns)
{
	static uint64_t due;
	char msg[sizeof(sm_state.path) + CONFIG_NAME_MAX + 300];

	if (mono_ns < due || !sm_state.hdr)
		return;
	due = mono_ns + 1000000000u;
	if (!state_removed(&sm_state))
		return;
	snprintf(msg, sizeof(msg),
		 "sockmeter: %s: its state file %s was removed while it runs "
		 "(systemd-logind's RemoveIPC at the user's last logout, a tmp "
		 "cleaner?): its numbers are in memory only now; its exit "
		 "record is written as ever, but a kill would lose what "
		 "happened since its last record",
		 sm_meter.prog, sm_state.path);
	sm_warn(msg);
}

void sm_durable_lazy_ranges(struct lockall_set *s)
{
	state_lazy_ranges(&sm_state, s);
}

void sm_durable_chores(uint64_t mono_ns, const uint32_t *stop,
		       void (*between)(void *ctx), void *ctx)
{
	if (!sm_meter.cfg.state_enabled || chores_due == UINT64_MAX)
		return;
	if (chores_due == 0) {
		chores_due = mono_ns + RECOVER_AUTO_DELAY_NS;
		return;
	}
	if (mono_ns < chores_due)
		return;
	chores_due = mono_ns + RECOVER_AUTO_PERIOD_NS;
	/* Each file's image would be locked whole, and count against the
	 * program's RLIMIT_MEMLOCK: left to another process's recovery. */
	if (sm_future_locked())
		return;
	/* (Of other processes: to syslog, not to this one's stderr.) */
	recover_auto(&sm_meter.cfg, stop, between, ctx, sm_warn_syslog);
}
