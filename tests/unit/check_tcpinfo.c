/*
 * check_tcpinfo.c - the kernel's TCP view: fields mapped only as far as the
 * kernel's answer reaches, and the unseen-bytes arithmetic (SYN, FIN,
 * queues) checked on real loopback connections moved by raw system calls.
 */
#include "../../core/enrich.h"
#include "../../core/tcpinfo.h"
#include "unit_util.h"

#include <arpa/inet.h>
#include <errno.h>
#include <linux/tcp.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/syscall.h>

START_TEST(test_tcpinfo_short_kernel_answer_maps_only_covered_fields)
{
	struct tcp_info k;
	struct tcpinfo ti;

	memset(&k, 0, sizeof(k));
	k.tcpi_rtt = 250;
	k.tcpi_bytes_acked = 99;
	k.tcpi_busy_time = 7;
	k.tcpi_bytes_retrans = 5;
	/* A 4.0 kernel: ends before tcpi_bytes_acked. */
	memset(&ti, 0, sizeof(ti));
	tcpinfo_map(&k, offsetof(struct tcp_info, tcpi_pacing_rate), &ti);
	ck_assert_uint_eq(ti.have, TI_BASE);
	ck_assert_uint_eq(ti.rtt_us, 250);
	ck_assert_uint_eq(ti.bytes_acked, 0);
	/* 4.10: limits yes, bytes_retrans no. */
	memset(&ti, 0, sizeof(ti));
	tcpinfo_map(&k, offsetof(struct tcp_info, tcpi_delivered), &ti);
	ck_assert_uint_eq(ti.have,
			  TI_BASE | TI_BYTES | TI_MIN_RTT | TI_DELIVERY | TI_LIMITS);
	ck_assert_uint_eq(ti.busy_us, 7);
	ck_assert_uint_eq(ti.bytes_retrans, 0);
	memset(&ti, 0, sizeof(ti));
	tcpinfo_map(&k, sizeof(k), &ti);
	ck_assert(ti.have & TI_BYTES_RETRANS);
	ck_assert_uint_eq(ti.bytes_retrans, 5);
	/* Nothing at all. */
	memset(&ti, 0, sizeof(ti));
	tcpinfo_map(&k, 4, &ti);
	ck_assert_uint_eq(ti.have, 0);
}
END_TEST

START_TEST(test_tcpinfo_unseen_needs_the_fields_and_never_goes_negative)
{
	struct tcpinfo ti;
	uint64_t u[2];

	memset(&ti, 0, sizeof(ti));
	ck_assert(!tcpinfo_unseen(&ti, 0, 0, u));
	ti.have = TI_BASE | TI_BYTES | TI_INQ | TI_OUTQ | TI_BYTES_RETRANS;
	ti.state = 1;
	ti.bytes_sent = 1000;
	ti.bytes_retrans = 100;
	ti.notsent = 50;
	ti.bytes_received = 300;
	ti.inq = 20;
	ck_assert(tcpinfo_unseen(&ti, 200, 900, u));
	ck_assert_uint_eq(u[0], 80);
	ck_assert_uint_eq(u[1], 50);
	ck_assert(tcpinfo_unseen(&ti, 999, 9999, u));
	ck_assert_uint_eq(u[0], 0);
	ck_assert_uint_eq(u[1], 0);
	ti.state = 10; /* listening */
	ck_assert(!tcpinfo_unseen(&ti, 0, 0, u));
	/* A kernel before 4.19: acked + outq, one byte allowed for the
	 * connecting side's SYN. */
	ti.state = 1;
	ti.have &= ~TI_BYTES_RETRANS;
	ti.bytes_acked = 501;
	ti.outq = 0;
	ck_assert(tcpinfo_unseen(&ti, 280, 500, u));
	ck_assert_uint_eq(u[1], 0);
	ck_assert(tcpinfo_unseen(&ti, 280, 400, u));
	ck_assert_uint_eq(u[1], 101);
}
END_TEST

START_TEST(test_tcpinfo_limit_names_the_biggest_timer)
{
	struct tcpinfo ti;
	uint64_t us = 0;

	memset(&ti, 0, sizeof(ti));
	ck_assert_ptr_null(tcpinfo_limit(&ti, &us));
	ti.have = TI_LIMITS;
	ck_assert_ptr_null(tcpinfo_limit(&ti, &us));
	ti.busy_us = 1000;
	ti.rwnd_limited_us = 800;
	ck_assert_str_eq(tcpinfo_limit(&ti, &us), "rwnd");
	ck_assert_uint_eq(us, 800);
	ti.rwnd_limited_us = 100;
	ti.sndbuf_limited_us = 50;
	ck_assert_str_eq(tcpinfo_limit(&ti, &us), "busy");
	ck_assert_uint_eq(us, 850);
	ck_assert(tcpinfo_fraction(500, 1000) == 0.5);
	ck_assert(tcpinfo_fraction(5000, 1000) == 1.0);
	ck_assert(tcpinfo_fraction(5, 0) == 0.0);
}
END_TEST

static void send_all(int fd, size_t n)
{
	static char buf[65536];

	while (n > 0) {
		ssize_t r = syscall(SYS_sendto, fd, buf,
				    n < sizeof(buf) ? n : sizeof(buf), 0, NULL,
				    0);

		ck_assert_int_gt(r, 0);
		n -= (size_t)r;
	}
}

static size_t recv_n(int fd, size_t n)
{
	static char buf[65536];
	size_t got = 0;

	while (got < n) {
		ssize_t r = syscall(SYS_recvfrom, fd, buf,
				    n - got < sizeof(buf) ? n - got
							  : sizeof(buf),
				    0, NULL, NULL);

		if (r <= 0)
			break;
		got += (size_t)r;
	}
	return got;
}

/* Poll until the kernel agrees fd's unsent and unacked queues are empty. */
static void settle(int fd)
{
	struct tcpinfo ti;
	int i;

	for (i = 0; i < 2000; i++) {
		ck_assert(tcpinfo_read(fd, &ti));
		if (ti.outq == 0)
			return;
		poll(NULL, 0, 1);
	}
	ck_abort_msg("send queue never drained");
}

START_TEST(test_tcpinfo_real_connection_unseen_is_exact_both_sides_with_fin)
{
	struct tcpinfo ti;
	uint64_t u[2];
	int c, s;
	char b;

	uu_tcp_pair(&c, &s);
	send_all(c, 100000);
	ck_assert_uint_eq(recv_n(s, 60000), 60000);
	/* Nothing counted by us: everything is unseen, exactly. */
	ck_assert(tcpinfo_read(c, &ti));
	ck_assert(tcpinfo_unseen(&ti, 0, 0, u));
	ck_assert_uint_eq(u[1], 100000);
	ck_assert_uint_eq(u[0], 0);
	ck_assert(tcpinfo_read(s, &ti));
	ck_assert(tcpinfo_unseen(&ti, 0, 0, u));
	ck_assert_uint_eq(u[0], 60000);
	ck_assert_uint_eq(u[1], 0);
	/* Counted: nothing unseen; the 40000 unread are in SIOCINQ. */
	ck_assert_uint_eq(ti.inq, 40000);
	ck_assert(tcpinfo_unseen(&ti, 60000, 0, u));
	ck_assert_uint_eq(u[0], 0);
	/* One FIN: the sender's in FIN_WAIT2 (its FIN acked), the reader's in
	 * CLOSE_WAIT (the FIN received and read): still exact either way. */
	ck_assert_uint_eq(recv_n(s, 40000), 40000);
	shutdown(c, SHUT_WR);
	ck_assert_uint_eq(recv_n(s, 1), 0); /* the FIN, read */
	settle(c);
	ck_assert(tcpinfo_read(c, &ti));
	ck_assert_uint_eq(ti.state, 5);
	ck_assert(tcpinfo_unseen(&ti, 0, 0, u));
	ck_assert_uint_eq(u[1], 100000);
	ck_assert(tcpinfo_unseen(&ti, 0, 100000, u));
	ck_assert_uint_eq(u[1], 0);
	ck_assert(tcpinfo_read(s, &ti));
	ck_assert_uint_eq(ti.state, 8);
	ck_assert(tcpinfo_unseen(&ti, 0, 0, u));
	ck_assert_uint_eq(u[0], 100000);
	ck_assert(tcpinfo_unseen(&ti, 100000, 0, u));
	ck_assert_uint_eq(u[0], 0);
	/* The FIN back: both end in CLOSE; still exact both ways. */
	send_all(s, 777);
	shutdown(s, SHUT_WR);
	ck_assert_uint_eq(recv_n(c, 777), 777);
	settle(s);
	ck_assert(tcpinfo_read(s, &ti));
	ck_assert(tcpinfo_unseen(&ti, 100000, 777, u));
	ck_assert_uint_eq(u[0], 0);
	ck_assert_uint_eq(u[1], 0);
	ck_assert(tcpinfo_unseen(&ti, 100000, 0, u));
	ck_assert_uint_eq(u[1], 777);
	ck_assert(tcpinfo_unseen(&ti, 0, 0, u));
	ck_assert_uint_eq(u[0], 100000);
	/* The accepting side's bytes_acked is exactly the data + its FIN. */
	ck_assert_uint_eq(ti.bytes_acked, 777 + 1);
	ck_assert(tcpinfo_read(c, &ti));
	ck_assert(tcpinfo_unseen(&ti, 777, 100000, u));
	ck_assert_uint_eq(u[0], 0);
	ck_assert_uint_eq(u[1], 0);
	ck_assert(tcpinfo_unseen(&ti, 0, 0, u));
	ck_assert_uint_eq(u[0], 777);
	ck_assert_uint_eq(u[1], 100000);
	ck_assert_int_eq(read(s, &b, 0), 0);
	close(c);
	close(s);
}
END_TEST

/* A made-up kernel answer in state st with the given counts. */
static void fake(struct tcp_info *k, struct tcpinfo *ti, unsigned st,
		 uint64_t received, unsigned unacked, unsigned notsent)
{
	memset(k, 0, sizeof(*k));
	memset(ti, 0, sizeof(*ti));
	k->tcpi_state = (uint8_t)st;
	k->tcpi_bytes_received = received;
	k->tcpi_unacked = unacked;
	k->tcpi_notsent_bytes = notsent;
	tcpinfo_map(k, sizeof(*k), ti);
}

/* A refused connect and a listener: no connection, no kernel view (not
 * rtt 0, rttvar 250 ms, min_rtt 4294967 ms); and in CLOSE the sequence
 * numbers' leftovers are not unsent data. */
START_TEST(test_tcpinfo_never_connected_shows_nothing)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t len = sizeof(a);
	struct tcp_info k;
	struct tcpinfo ti;
	uint64_t u[2];
	int l = socket(AF_INET, SOCK_STREAM, 0), c;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ck_assert_int_eq(bind(l, (struct sockaddr *)&a, sizeof(a)), 0);
	ck_assert_int_eq(listen(l, 1), 0);
	ck_assert(tcpinfo_read(l, &ti));
	ck_assert_uint_eq(ti.have, 0);
	ck_assert_int_eq(getsockname(l, (struct sockaddr *)&a, &len), 0);
	close(l); /* nothing listens on that port now */
	c = socket(AF_INET, SOCK_STREAM, 0);
	ck_assert_int_eq(connect(c, (struct sockaddr *)&a, sizeof(a)), -1);
	ck_assert_int_eq(errno, ECONNREFUSED);
	ck_assert(tcpinfo_read_counted(c, &ti, 0));
	ck_assert_uint_eq(ti.have, 0);
	ck_assert(!tcpinfo_unseen(&ti, 0, 0, u));
	close(c);
	/* A connection that did connect, then was reset: shown, and the 2
	 * the kernel's sequence numbers keep past its data are not data. */
	memset(&k, 0, sizeof(k));
	k.tcpi_state = 7; /* CLOSE */
	k.tcpi_min_rtt = 30;
	k.tcpi_bytes_acked = 11;
	k.tcpi_bytes_sent = 10;
	k.tcpi_notsent_bytes = 2;
	memset(&ti, 0, sizeof(ti));
	tcpinfo_map(&k, sizeof(k), &ti);
	ck_assert(ti.have & TI_BASE);
	ti.have |= TI_INQ | TI_OUTQ;
	ck_assert(tcpinfo_unseen(&ti, 0, 10, u));
	ck_assert_uint_eq(u[1], 0);
	ck_assert(tcpinfo_unseen(&ti, 0, 7, u));
	ck_assert_uint_eq(u[1], 3);
}
END_TEST

START_TEST(test_tcpinfo_queues_known_only_when_proven_empty)
{
	struct tcp_info k;
	struct tcpinfo ti;

	/* ESTABLISHED, every byte read, nothing in flight: both known. */
	fake(&k, &ti, 1, 500, 0, 0);
	ck_assert_uint_eq(tcpinfo_queues_known(&k, sizeof(k), 500, &ti),
			  TI_INQ | TI_OUTQ);
	ck_assert(ti.have & TI_INQ);
	ck_assert(ti.have & TI_OUTQ);
	ck_assert_uint_eq(ti.inq, 0);
	ck_assert_uint_eq(ti.outq, 0);
	/* A byte we did not count (or one unread): the kernel is asked. */
	fake(&k, &ti, 1, 500, 0, 0);
	ck_assert_uint_eq(tcpinfo_queues_known(&k, sizeof(k), 499, &ti),
			  TI_OUTQ);
	ck_assert(!(ti.have & TI_INQ));
	/* CLOSE_WAIT: bytes_received holds the peer's FIN. */
	fake(&k, &ti, 8, 501, 0, 0);
	ck_assert_uint_eq(tcpinfo_queues_known(&k, sizeof(k), 500, &ti),
			  TI_INQ | TI_OUTQ);
	fake(&k, &ti, 8, 500, 0, 0);
	ck_assert_uint_eq(tcpinfo_queues_known(&k, sizeof(k), 500, &ti),
			  TI_OUTQ);
	/* In flight, or queued: outq asked for. */
	fake(&k, &ti, 1, 0, 1, 0);
	ck_assert_uint_eq(tcpinfo_queues_known(&k, sizeof(k), 0, &ti), TI_INQ);
	fake(&k, &ti, 1, 0, 0, 10);
	ck_assert_uint_eq(tcpinfo_queues_known(&k, sizeof(k), 0, &ti), TI_INQ);
	/* CLOSE (both FINs, or a reset: the queue purged) and LISTEN: never. */
	fake(&k, &ti, 7, 0, 0, 0);
	ck_assert_uint_eq(tcpinfo_queues_known(&k, sizeof(k), 0, &ti), 0);
	fake(&k, &ti, 10, 0, 0, 0);
	ck_assert_uint_eq(tcpinfo_queues_known(&k, sizeof(k), 0, &ti), 0);
	/* A kernel without tcpi_notsent_bytes: outq asked for. */
	fake(&k, &ti, 1, 5, 0, 0);
	memset(&ti, 0, sizeof(ti));
	tcpinfo_map(&k, offsetof(struct tcp_info, tcpi_delivered), &ti);
	ck_assert_uint_eq(tcpinfo_queues_known(&k, sizeof(k), 5, &ti), TI_INQ);
}
END_TEST

static unsigned s_state(int fd)
{
	struct tcpinfo ti;

	ck_assert(tcpinfo_read(fd, &ti));
	return ti.state;
}

/* At a close, the counted reading must say what the kernel's ioctls say. */
static void same_queues(int fd, uint64_t counted_in)
{
	struct tcpinfo a, b;

	ck_assert(tcpinfo_read_counted(fd, &a, counted_in));
	ck_assert(tcpinfo_read(fd, &b));
	ck_assert_uint_eq(a.state, b.state);
	ck_assert_uint_eq(a.have, b.have);
	ck_assert_uint_eq(a.inq, b.inq);
	ck_assert_uint_eq(a.outq, b.outq);
}

START_TEST(test_tcpinfo_read_counted_agrees_with_the_ioctls)
{
	int c, s;

	uu_tcp_pair(&c, &s);
	send_all(c, 3000);
	ck_assert_uint_eq(recv_n(s, 1000), 1000);
	same_queues(s, 1000); /* 2000 unread: asked */
	same_queues(s, 0);    /* a count short of what was read: asked */
	ck_assert_uint_eq(recv_n(s, 2000), 2000);
	settle(c);
	same_queues(s, 3000); /* all read: known */
	same_queues(c, 0);
	/* The peer's FIN in (CLOSE_WAIT), not read yet, and read. */
	shutdown(c, SHUT_WR);
	settle(c);
	same_queues(s, 3000);
	ck_assert_uint_eq(s_state(s), 8);
	ck_assert_uint_eq(recv_n(s, 1), 0);
	same_queues(s, 3000);
	close(c);
	close(s);
}
END_TEST

START_TEST(test_tcpinfo_not_a_tcp_socket_reads_nothing_errno_kept)
{
	struct tcpinfo ti;
	int sv[2];

	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	errno = 1234;
	ck_assert(!tcpinfo_read(sv[0], &ti));
	ck_assert_int_eq(errno, 1234);
	ck_assert_uint_eq(ti.have, 0);
	ck_assert(!tcpinfo_read(-1, &ti));
	close(sv[0]);
	close(sv[1]);
}
END_TEST

START_TEST(test_enrich_live_reading_dropped_when_the_fd_changed_hands)
{
	struct fd_snapshot stale;
	struct summary_fd f;
	struct fdtab tab;
	int c, s;

	uu_tcp_pair(&c, &s);
	send_all(c, 5000);
	ck_assert_int_eq(fdtab_init(&tab, 1024), 0);
	fdtab_open(&tab, c, KIND_TCP, 1, NULL, NULL, &stale);
	memset(&f, 0, sizeof(f));
	ck_assert(fdtab_snapshot(&tab, c, &f.s));
	ck_assert(enrich_read_live(&tab, &f));
	ck_assert(f.s.ti.have & TI_BASE);
	ck_assert(f.have_unseen);
	ck_assert_uint_eq(f.unseen[DIR_OUT], 5000);
	/* Closed and reopened meanwhile: a new generation, no reading. */
	ck_assert(fdtab_retire(&tab, c, &stale));
	fdtab_open(&tab, c, KIND_TCP, 2, NULL, NULL, &stale);
	ck_assert(!enrich_read_live(&tab, &f));
	ck_assert_uint_eq(f.s.ti.have, 0);
	ck_assert(!f.have_unseen);
	/* Not TCP: nothing read. */
	f.s.kind = KIND_UDP;
	ck_assert(!enrich_read_live(&tab, &f));
	fdtab_destroy(&tab);
	close(c);
	close(s);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("tcpinfo");
	TCase *tc = tcase_create("tcpinfo");

	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_tcpinfo_short_kernel_answer_maps_only_covered_fields);
	tcase_add_test(tc, test_tcpinfo_unseen_needs_the_fields_and_never_goes_negative);
	tcase_add_test(tc, test_tcpinfo_limit_names_the_biggest_timer);
	tcase_add_test(tc, test_tcpinfo_real_connection_unseen_is_exact_both_sides_with_fin);
	tcase_add_test(tc, test_tcpinfo_queues_known_only_when_proven_empty);
	tcase_add_test(tc, test_tcpinfo_read_counted_agrees_with_the_ioctls);
	tcase_add_test(tc, test_tcpinfo_not_a_tcp_socket_reads_nothing_errno_kept);
	tcase_add_test(tc, test_tcpinfo_never_connected_shows_nothing);
	tcase_add_test(tc, test_enrich_live_reading_dropped_when_the_fd_changed_hands);
	suite_add_tcase(s, tc);
	return uu_run(s);
}
