/*
 * tcpinfo.h - the kernel's view of one TCP connection: getsockopt(TCP_INFO)
 * and the unread / unsent queue lengths (SIOCINQ, SIOCOUTQ), kept in a
 * compact, pointer-free form that travels with a close record.
 *
 * Kernels differ in how much of struct tcp_info they fill: only the fields
 * the returned length covers are kept, and `have` says which (TI_* bits).
 * Reading is two or three system calls, all async-signal-safe; it is done
 * at close (just before the real close) and by the ticker for the TCP fds
 * a record lists, never on the data path.
 *
 * The kernel's count of what the application moved, checked against
 * Linux's tcp_output.c / tcp_input.c / tcp.c and measured on 6.18:
 *   written = tcpi_bytes_sent - tcpi_bytes_retrans + tcpi_notsent_bytes
 *             (data sent once, plus data queued and not yet sent; neither
 *             counts the SYN.  notsent is write_seq - snd_nxt, which holds
 *             our FIN once it is queued and not yet sent: states
 *             FIN_WAIT1, CLOSING, LAST_ACK with notsent > 0.)
 *             Kernels before 4.19 (no bytes_sent): tcpi_bytes_acked +
 *             SIOCOUTQ, which is snd_una - isn + (write_seq - snd_una):
 *             our FIN once sent, and our SYN on the connecting side only
 *             (measured: the accepting side's SYN-ACK is not in
 *             bytes_acked), so one byte is allowed for there.
 *   read    = tcpi_bytes_received - SIOCINQ (bytes_received counts the
 *             peer's FIN, never the SYN; SIOCINQ never counts the FIN:
 *             states CLOSE_WAIT, CLOSING, LAST_ACK take one off; so does
 *             CLOSE, reached with the fd still open after both FINs or
 *             after a reset: exact in the first case, in the second an
 *             unseen count one byte short, never a false unseen byte)
 * tcpinfo_unseen() takes the FIN off, and the difference with what the
 * wrapped calls counted is what the preload could not see (io_uring, raw
 * system calls, a connection used before we saw it).
 */
#ifndef SOCKMETER_TCPINFO_H
#define SOCKMETER_TCPINFO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Which fields a sample holds: a field group is kept only when the
 * kernel's struct tcp_info reached it. */
enum {
	TI_BASE = 1u << 0,     /* state, rtt, rttvar, retrans, lost,
				* reordering, snd_cwnd, pmtu */
	TI_BYTES = 1u << 1,    /* bytes_acked, bytes_received (4.1) */
	TI_MIN_RTT = 1u << 2,  /* min_rtt (4.6) */
	TI_DELIVERY = 1u << 3, /* delivery_rate (4.9) */
	TI_LIMITS = 1u << 4,   /* busy, rwnd_limited, sndbuf_limited (4.10) */
	TI_BYTES_RETRANS = 1u << 5, /* bytes_retrans, bytes_sent (4.19) */
	TI_INQ = 1u << 6,	    /* inq: SIOCINQ worked */
	TI_OUTQ = 1u << 7,	    /* outq: SIOCOUTQ worked */
};

/* tcpi_state of a listening socket (include/net/tcp_states.h). */
#define TCPINFO_LISTEN 10

/* One reading; all-zero (have 0) means none. */
struct tcpinfo {
	uint8_t have;  /* TI_* bits */
	uint8_t state; /* TCP_ESTABLISHED... (linux/tcp.h) */
	uint32_t rtt_us, rttvar_us, min_rtt_us;
	uint32_t total_retrans; /* segments retransmitted, whole life */
	uint32_t lost, reordering, snd_cwnd, pmtu;
	uint32_t inq, outq; /* bytes unread / not yet acked */
	uint32_t notsent;   /* bytes queued, not yet sent (FIN in) */
	uint64_t bytes_retrans;
	uint64_t delivery_rate; /* bytes per second */
	uint64_t busy_us, rwnd_limited_us, sndbuf_limited_us;
	uint64_t bytes_acked, bytes_received;
	uint64_t bytes_sent; /* data bytes sent, retransmits included */
};

/*
 * tcpinfo_read - read fd's TCP_INFO, SIOCINQ and SIOCOUTQ into *ti.
 * Returns true when TCP_INFO could be read (ti->have says what is in it);
 * false, with *ti zeroed, when it could not (not a TCP socket, closed).
 * errno is left as it was.
 * Context: any thread and signal handler (async-signal-safe).
 */
bool tcpinfo_read(int fd, struct tcpinfo *ti);

/*
 * tcpinfo_read_counted - tcpinfo_read at a close, where a queue the
 * kernel's TCP_INFO already proves empty is not asked for again: SIOCINQ
 * when counted_in (the bytes the wrapped calls counted in) is every data
 * byte received, SIOCOUTQ when nothing is in flight or queued; each only
 * in the states where that reading is certain (tcpinfo_queues_known).
 * What it fills is what tcpinfo_read would; a close of a connection whose
 * exchange finished costs one system call instead of three.
 * Context: any thread and signal handler (async-signal-safe).
 */
bool tcpinfo_read_counted(int fd, struct tcpinfo *ti, uint64_t counted_in);

/*
 * tcpinfo_queues_known - with *ti already mapped from the kernel's struct
 * tcp_info at raw (len bytes), set inq and/or outq to 0 (and their TI_
 * bits) where that struct proves them empty: returns the TI_INQ / TI_OUTQ
 * bits it set, 0 when the state does not allow it (CLOSE, the handshake,
 * LISTEN) or a queue may hold bytes.  Context: any thread.
 */
unsigned tcpinfo_queues_known(const void *raw, size_t len,
			      uint64_t counted_in, struct tcpinfo *ti);

/*
 * tcpinfo_map - add to *ti (zeroed by the caller) the fields of the kernel's
 * struct tcp_info at raw that its first len bytes cover; ti->have says
 * which.  Context: any thread and signal handler.
 */
void tcpinfo_map(const void *raw, size_t len, struct tcpinfo *ti);

/*
 * tcpinfo_unseen - what the kernel says the application wrote and read
 * (FIN taken off) minus what the wrapped calls counted (counted_in,
 * counted_out), never below zero, into unseen[0] (in) and unseen[1] (out).
 * Returns false, with both zero, when ti lacks the fields it needs (old
 * kernel, a listening socket, a failed read).
 * Context: any thread.
 */
bool tcpinfo_unseen(const struct tcpinfo *ti, uint64_t counted_in,
		    uint64_t counted_out, uint64_t unseen[2]);

/* tcpinfo_fraction - part of a life of life_us microseconds that a timer of
 * t_us covers, 0..1 (0 when life_us is 0).  Context: any thread. */
double tcpinfo_fraction(uint64_t t_us, uint64_t life_us);

/* tcpinfo_limit - the name of the biggest limitation timer of ti ("busy",
 * "rwnd", "sndbuf"), or NULL when ti has none.  busy counts only the
 * time not otherwise limited (the kernel's busy includes the other two).
 * Context: any thread. */
const char *tcpinfo_limit(const struct tcpinfo *ti, uint64_t *us);

#endif
