/*
 * enrich.h - what the ticker adds to a record beyond the wrapped calls'
 * counters: the kernel's view of a TCP connection (tcpinfo.h) with the
 * bytes the preload could not see, and the peer's host name (names.h).
 *
 * Off the data path: a close record's tcp_info was read just before the
 * real close (meter_closed); an open connection's is read here, for the
 * fds a record lists, and kept only when the fd still holds the same
 * connection afterwards (same generation).
 */
#ifndef SOCKMETER_ENRICH_H
#define SOCKMETER_ENRICH_H

#include "fdtab.h"
#include "names.h"
#include "summary.h"

#include <stdbool.h>

/*
 * enrich_read_live - read the kernel's view of f's open TCP connection into
 * f->s.ti and its unseen bytes into f->unseen.  Returns false, f->s.ti
 * left empty, when the fd is not TCP, the read failed, or the fd changed
 * hands meanwhile (the sample is dropped, never misattributed).
 * Context: ticker only.
 */
bool enrich_read_live(const struct fdtab *t, struct summary_fd *f);

/*
 * enrich_unseen - f->unseen from a sample already in f->s.ti (a close
 * record's) against f's counted bytes.  Returns f->have_unseen.
 * Context: ticker only.
 */
bool enrich_unseen(struct summary_fd *f);

/*
 * enrich_name - f->peer_name and f->lookup_ns from names (may be NULL).
 * Context: ticker only.
 */
void enrich_name(struct names *names, struct summary_fd *f);

#endif
