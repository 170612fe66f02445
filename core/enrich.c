/*
 * enrich.c - the kernel's view and the peer's name in records (contract
 * in enrich.h).
 */
#include "enrich.h"

#include "progfd.h"
#include "quiet.h"

#include <string.h>

bool enrich_unseen(struct summary_fd *f)
{
	f->have_unseen = f->s.kind == KIND_TCP && !f->s.shared &&
			 tcpinfo_unseen(&f->s.ti, f->s.c.bytes[DIR_IN],
					f->s.c.bytes[DIR_OUT], f->unseen);
	return f->have_unseen;
}

bool enrich_read_live(const struct fdtab *t, struct summary_fd *f)
{
	struct fd_snapshot after;
	struct tcpinfo ti;
	bool ok;
	int got;

	memset(&f->s.ti, 0, sizeof(f->s.ti));
	f->have_unseen = false;
	f->busy = false;
	/* Every thread sandboxed (quiet.h): the kernel is not asked. */
	if (f->s.kind != KIND_TCP || sm_quiet())
		return false;
	/* The ticker's fd table is its own (progfd.h): the program's socket
	 * is reached through a copy of its fd. */
	got = progfd_get(f->s.fd);
	if (got < 0)
		return false;
	ok = tcpinfo_read(got, &ti);
	progfd_put(f->s.fd, got);
	if (!ok)
		return false;
	/* A call in the kernel during the read (its note set before its
	 * system call, cleared after it, just before its count): looked at
	 * between the read and the counts below, so that one still going is
	 * seen here; one that ended in between is counted in them, but for
	 * one caught between its clear and its count, whose bytes look
	 * unseen for this reading only (confirm_unseen's two readings).  The
	 * note is the fd's, not a direction's: a reader parked in recv makes
	 * the fd busy too (meter.c: confirm_unseen). */
	f->busy = __atomic_load_n(&t->slots[f->s.fd].inflight_sp,
				  __ATOMIC_RELAXED) != 0;
	/* The same connection before and after the read: a close retires
	 * the slot (new generation) before the real close, so an fd closed
	 * and reused meanwhile cannot pass. */
	if (!fdtab_snapshot(t, f->s.fd, &after) || after.gen != f->s.gen ||
	    after.kind != KIND_TCP)
		return false;
	f->s.ti = ti;
	/* Counted after the kernel was read: a call that finished in
	 * between is not mistaken for an unseen one. */
	f->have_unseen = tcpinfo_unseen(&ti, after.c.bytes[DIR_IN],
					after.c.bytes[DIR_OUT], f->unseen);
	return true;
}

void enrich_name(struct names *names, struct summary_fd *f)
{
	f->peer_name[0] = '\0';
	f->lookup_ns = 0;
	if (names)
		names_find(names, &f->s.peer, f->peer_name,
			   sizeof(f->peer_name), &f->lookup_ns);
}
