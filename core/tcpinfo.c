/*
 * tcpinfo.c - reading the kernel's per-connection TCP figures (contract in
 * tcpinfo.h).
 */
#include "tcpinfo.h"

#include <errno.h>
#include <linux/sockios.h>
#include <linux/tcp.h>
#include <netinet/in.h>
#include <stddef.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

/* The kernel's TCP states (include/net/tcp_states.h, a stable ABI). */
enum {
	ST_ESTABLISHED = 1,
	ST_SYN_SENT = 2,
	ST_FIN_WAIT1 = 4,
	ST_FIN_WAIT2 = 5,
	ST_TIME_WAIT = 6,
	ST_CLOSE = 7,
	ST_CLOSE_WAIT = 8,
	ST_LAST_ACK = 9,
	ST_LISTEN = TCPINFO_LISTEN,
	ST_CLOSING = 11,
};

/* True when the kernel's answer of len bytes reaches the end of field f. */
#define COVERS(len, f) \
	((len) >=      \
	 offsetof(struct tcp_info, f) + sizeof(((struct tcp_info *)0)->f))

/*
 * A socket that never completed a handshake: listening, connecting, or
 * closed before it connected (a refused connect).  The kernel has no
 * connection to tell about: rtt 0, rttvar its initial 250 ms, min_rtt "no
 * sample yet" (~0), pmtu 0.  A handshake gives an rtt sample and counts
 * the SYN in bytes_acked or bytes_received.
 */
static bool never_connected(const struct tcpinfo *ti)
{
	if (ti->state == ST_LISTEN)
		return true;
	if (ti->state != ST_SYN_SENT && ti->state != ST_CLOSE)
		return false;
	if ((ti->have & TI_BYTES) &&
	    (ti->bytes_acked || ti->bytes_received))
		return false;
	if (ti->have & TI_MIN_RTT)
		return ti->min_rtt_us == UINT32_MAX;
	return ti->rtt_us == 0;
}

void tcpinfo_map(const void *raw, size_t len, struct tcpinfo *ti)
{
	const struct tcp_info *k = raw;

	if (COVERS(len, tcpi_total_retrans)) {
		ti->have |= TI_BASE;
		ti->state = k->tcpi_state;
		ti->rtt_us = k->tcpi_rtt;
		ti->rttvar_us = k->tcpi_rttvar;
		ti->total_retrans = k->tcpi_total_retrans;
		ti->lost = k->tcpi_lost;
		ti->reordering = k->tcpi_reordering;
		ti->snd_cwnd = k->tcpi_snd_cwnd;
		ti->pmtu = k->tcpi_pmtu;
	}
	if (COVERS(len, tcpi_bytes_received)) {
		ti->have |= TI_BYTES;
		ti->bytes_acked = k->tcpi_bytes_acked;
		ti->bytes_received = k->tcpi_bytes_received;
	}
	if (COVERS(len, tcpi_min_rtt)) {
		ti->have |= TI_MIN_RTT;
		ti->min_rtt_us = k->tcpi_min_rtt;
	}
	if (COVERS(len, tcpi_delivery_rate)) {
		ti->have |= TI_DELIVERY;
		ti->delivery_rate = k->tcpi_delivery_rate;
	}
	if (COVERS(len, tcpi_sndbuf_limited)) {
		ti->have |= TI_LIMITS;
		ti->busy_us = k->tcpi_busy_time;
		ti->rwnd_limited_us = k->tcpi_rwnd_limited;
		ti->sndbuf_limited_us = k->tcpi_sndbuf_limited;
	}
	if (COVERS(len, tcpi_bytes_retrans)) {
		ti->have |= TI_BYTES_RETRANS;
		ti->bytes_retrans = k->tcpi_bytes_retrans;
		ti->bytes_sent = k->tcpi_bytes_sent;
		ti->notsent = k->tcpi_notsent_bytes;
	}
	if ((ti->have & TI_BASE) && never_connected(ti))
		memset(ti, 0, sizeof(*ti));
}

/* Whether the peer's FIN is in rcv_nxt, when the state alone says so: 0
 * or 1, or -1 for the states where it does not (CLOSE: both FINs or a
 * reset; the handshake states; LISTEN). */
static int fin_in_certain(unsigned state)
{
	switch (state) {
	case ST_ESTABLISHED:
	case ST_FIN_WAIT1:
	case ST_FIN_WAIT2:
		return 0;
	case ST_CLOSE_WAIT:
	case ST_CLOSING:
	case ST_LAST_ACK:
		return 1;
	default:
		return -1;
	}
}

unsigned tcpinfo_queues_known(const void *raw, size_t len,
			      uint64_t counted_in, struct tcpinfo *ti)
{
	const struct tcp_info *k = raw;
	unsigned known = 0;
	int fin;

	if (!(ti->have & TI_BASE) || (fin = fin_in_certain(ti->state)) < 0)
		return 0;
	/* SIOCINQ is rcv_nxt - copied_seq (less the FIN): nothing is
	 * unread when the application read every data byte received.  A
	 * count of ours short of what it read (a call we did not see)
	 * makes the two differ, and the kernel is asked. */
	if ((ti->have & TI_BYTES) && ti->bytes_received >= (uint64_t)fin &&
	    ti->bytes_received - (uint64_t)fin == counted_in) {
		ti->have |= TI_INQ;
		ti->inq = 0;
		known |= TI_INQ;
	}
	/* SIOCOUTQ is write_seq - snd_una: nothing in flight (packets_out,
	 * tcpi_unacked, is 0 exactly when snd_una == snd_nxt; the queue is
	 * purged only in CLOSE, excluded above) and nothing queued behind
	 * it (tcpi_notsent_bytes, write_seq - snd_nxt). */
	if ((ti->have & TI_BYTES_RETRANS) && COVERS(len, tcpi_unacked) &&
	    k->tcpi_unacked == 0 && ti->notsent == 0) {
		ti->have |= TI_OUTQ;
		ti->outq = 0;
		known |= TI_OUTQ;
	}
	return known;
}

/* TCP_INFO into *k (*len bytes of it) and mapped into *ti, both zeroed
 * first; false when it could not be read (errno then set). */
static bool get_info(int fd, struct tcp_info *k, socklen_t *len,
		     struct tcpinfo *ti)
{
	*len = sizeof(*k);
	memset(ti, 0, sizeof(*ti));
	memset(k, 0, sizeof(*k));
	if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, k, len) != 0)
		return false;
	tcpinfo_map(k, *len, ti);
	return true;
}

static bool read_ti(int fd, struct tcpinfo *ti, const uint64_t *counted_in)
{
	struct tcp_info k;
	socklen_t len;
	int saved = errno, q, early_inq = -1;
	unsigned known = 0;

	if (!get_info(fd, &k, &len, ti)) {
		errno = saved;
		return false;
	}
	if (!ti->have) {
		errno = saved;
		return true; /* never connected: nothing to tell */
	}
	/* The kernel loads tcpi_state before it locks the socket for the
	 * rest: a FIN processed in between is in bytes_received while the
	 * state still says ESTABLISHED (or FIN_WAIT), and read back as one
	 * unseen byte.  Exactly one byte over our count and the bytes still
	 * unread (SIOCINQ, asked only when some are: it leaves the FIN out
	 * once it is processed) in such a state is that race far more often
	 * than a byte we missed: read again, now that the FIN is in.  (With
	 * bytes unread, a helper's TLS proxies closing on a peer's
	 * close_notify said 1 byte unseen once in ~750 closes.)  The queue
	 * read here is kept for below unless the state is read again. */
	if (counted_in && (ti->have & TI_BYTES) &&
	    fin_in_certain(ti->state) == 0 &&
	    ti->bytes_received > *counted_in) {
		uint64_t over = ti->bytes_received - *counted_in;

		if (over > 1 && ioctl(fd, SIOCINQ, &q) == 0 && q >= 0) {
			early_inq = q;
			over -= (uint64_t)q < over ? (uint64_t)q : over;
		}
		if (over == 1) {
			early_inq = -1;
			if (!get_info(fd, &k, &len, ti)) {
				errno = saved;
				return false;
			}
		}
	}
	if (counted_in)
		known = tcpinfo_queues_known(&k, len, *counted_in, ti);
	/* A listening socket has no queues in this sense: EINVAL. */
	if (!(known & TI_INQ) && early_inq >= 0) {
		ti->have |= TI_INQ;
		ti->inq = (uint32_t)early_inq;
	} else if (!(known & TI_INQ) && ioctl(fd, SIOCINQ, &q) == 0 && q >= 0) {
		ti->have |= TI_INQ;
		ti->inq = (uint32_t)q;
	}
	if (!(known & TI_OUTQ) && ioctl(fd, SIOCOUTQ, &q) == 0 && q >= 0) {
		ti->have |= TI_OUTQ;
		ti->outq = (uint32_t)q;
	}
	errno = saved;
	return true;
}

bool tcpinfo_read(int fd, struct tcpinfo *ti)
{
	return read_ti(fd, ti, NULL);
}

bool tcpinfo_read_counted(int fd, struct tcpinfo *ti, uint64_t counted_in)
{
	return read_ti(fd, ti, &counted_in);
}

/* Our FIN is in the send sequence once it was queued. */
static bool fin_sent(unsigned state)
{
	return state == ST_FIN_WAIT1 || state == ST_FIN_WAIT2 ||
	       state == ST_CLOSING || state == ST_LAST_ACK ||
	       state == ST_TIME_WAIT;
}

/* The peer's FIN advanced rcv_nxt.  CLOSE with the fd still open is
 * reached through both FINs (time-wait, or LAST_ACK acked) or through a
 * reset: a FIN is assumed, which is exact in the first case and at most
 * one byte short in the other (never a false unseen byte). */
static bool fin_received(unsigned state)
{
	return state == ST_CLOSE_WAIT || state == ST_CLOSING ||
	       state == ST_LAST_ACK || state == ST_TIME_WAIT ||
	       state == ST_CLOSE;
}

static uint64_t over(uint64_t kernel, uint64_t counted)
{
	return kernel > counted ? kernel - counted : 0;
}

bool tcpinfo_unseen(const struct tcpinfo *ti, uint64_t counted_in,
		    uint64_t counted_out, uint64_t unseen[2])
{
	const unsigned need = TI_BASE | TI_BYTES | TI_INQ | TI_OUTQ;
	uint64_t wrote, read;

	unseen[0] = unseen[1] = 0;
	if ((ti->have & need) != need || ti->state == ST_LISTEN)
		return false;
	/* In CLOSE the send queue is gone (a reset or a disconnect purged
	 * it), and what the sequence numbers still say beyond the data sent
	 * is not data: a failed connect leaves 2 there, a disconnect
	 * (connect to AF_UNSPEC) the peer's largest window + 2. */
	if (ti->have & TI_BYTES_RETRANS) {
		/* Data sent once, plus data queued and not sent yet (whose
		 * last sequence number is our FIN when one is queued). */
		wrote = ti->bytes_sent - ti->bytes_retrans;
		if (ti->state != ST_CLOSE)
			wrote += ti->notsent;
		if (fin_sent(ti->state) && ti->notsent)
			wrote--;
	} else {
		/* Older kernels: snd_una - isn + the unacked queue.  The SYN
		 * is in it on the connecting side only: allowed for below. */
		wrote = ti->bytes_acked +
			(ti->state != ST_CLOSE ? ti->outq : 0);
		if (fin_sent(ti->state) && wrote)
			wrote--;
		if (wrote == counted_out + 1)
			wrote--;
	}
	read = ti->bytes_received >= ti->inq ? ti->bytes_received - ti->inq : 0;
	if (fin_received(ti->state) && read)
		read--;
	unseen[0] = over(read, counted_in);
	unseen[1] = over(wrote, counted_out);
	return true;
}

double tcpinfo_fraction(uint64_t t_us, uint64_t life_us)
{
	double f;

	if (!life_us)
		return 0.0;
	f = (double)t_us / (double)life_us;
	return f > 1.0 ? 1.0 : f;
}

const char *tcpinfo_limit(const struct tcpinfo *ti, uint64_t *us)
{
	uint64_t other, busy;

	if (!(ti->have & TI_LIMITS))
		return NULL;
	other = ti->rwnd_limited_us + ti->sndbuf_limited_us;
	busy = ti->busy_us > other ? ti->busy_us - other : 0;
	if (ti->rwnd_limited_us >= ti->sndbuf_limited_us &&
	    ti->rwnd_limited_us >= busy && ti->rwnd_limited_us) {
		*us = ti->rwnd_limited_us;
		return "rwnd";
	}
	if (ti->sndbuf_limited_us >= busy && ti->sndbuf_limited_us) {
		*us = ti->sndbuf_limited_us;
		return "sndbuf";
	}
	*us = busy;
	return busy ? "busy" : NULL;
}
