/*
 * udp_mmsg - send K datagrams of varied, known sizes between two UDP
 * sockets on 127.0.0.1 with sendmmsg, in batches, and receive them with
 * recvmmsg.
 *
 *   udp_mmsg [K] [BATCH]          (defaults 200 and 8)
 *
 * Each batch is sent completely, then received completely, so the socket
 * buffer never overflows and no datagram is lost.  Prints, one per line:
 *   send_fd= recv_fd= send_port= recv_port= messages= sent_bytes=
 *   sendmmsg_calls= recv_bytes= recvmmsg_calls= received=
 * Exits 0 when every datagram arrived intact, 1 otherwise.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#define MAX_BATCH 64
#define MAX_SIZE 1500

static size_t size_of(int i)
{
	/* 1 .. 1500 bytes, scattered, plus a few zero-length datagrams. */
	if (i % 50 == 7)
		return 0;
	return 1 + (size_t)((i * 7919 + 13) % MAX_SIZE);
}

static int udp_bound(struct sockaddr_in *a)
{
	socklen_t len = sizeof(*a);
	int fd = socket(AF_INET, SOCK_DGRAM, 0);

	if (fd < 0)
		return -1;
	memset(a, 0, sizeof(*a));
	a->sin_family = AF_INET;
	a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(fd, (struct sockaddr *)a, sizeof(*a)) != 0 ||
	    getsockname(fd, (struct sockaddr *)a, &len) != 0)
		return -1;
	return fd;
}

int main(int argc, char **argv)
{
	static char sbuf[MAX_BATCH][MAX_SIZE], rbuf[MAX_BATCH][MAX_SIZE + 1];
	struct mmsghdr sv[MAX_BATCH], rv[MAX_BATCH];
	struct iovec siov[MAX_BATCH], riov[MAX_BATCH];
	struct sockaddr_in sa, ra;
	struct timeval tv = { 5, 0 };
	int k = argc > 1 ? atoi(argv[1]) : 200;
	int batch = argc > 2 ? atoi(argv[2]) : 8;
	long long sent = 0, got = 0;
	int scalls = 0, rcalls = 0, received = 0, bad = 0, i;
	int sfd, rfd;

	if (batch < 1 || batch > MAX_BATCH || k < 0)
		return 2;
	sfd = udp_bound(&sa);
	rfd = udp_bound(&ra);
	if (sfd < 0 || rfd < 0 ||
	    connect(sfd, (struct sockaddr *)&ra, sizeof(ra)) != 0) {
		perror("udp setup");
		return 2;
	}
	setsockopt(rfd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));

	for (i = 0; i < k; i += batch) {
		int n = k - i < batch ? k - i : batch, j, done;

		memset(sv, 0, sizeof(sv));
		for (j = 0; j < n; j++) {
			memset(sbuf[j], 'a' + (i + j) % 26, MAX_SIZE);
			siov[j].iov_base = sbuf[j];
			siov[j].iov_len = size_of(i + j);
			sv[j].msg_hdr.msg_iov = &siov[j];
			sv[j].msg_hdr.msg_iovlen = 1;
		}
		for (done = 0; done < n;) {
			int r = sendmmsg(sfd, sv + done, (unsigned)(n - done), 0);

			if (r < 0) {
				perror("sendmmsg");
				return 2;
			}
			scalls++;
			for (j = done; j < done + r; j++)
				sent += sv[j].msg_len;
			done += r;
		}
		for (done = 0; done < n;) {
			int r;

			memset(rv, 0, sizeof(rv));
			for (j = 0; j < n - done; j++) {
				riov[j].iov_base = rbuf[j];
				riov[j].iov_len = sizeof(rbuf[j]);
				rv[j].msg_hdr.msg_iov = &riov[j];
				rv[j].msg_hdr.msg_iovlen = 1;
			}
			r = recvmmsg(rfd, rv, (unsigned)(n - done),
				     MSG_WAITFORONE, NULL);
			if (r < 0) {
				perror("recvmmsg");
				return 2;
			}
			rcalls++;
			for (j = 0; j < r; j++) {
				size_t want = size_of(i + done + j);

				got += rv[j].msg_len;
				received++;
				if (rv[j].msg_len != want ||
				    (want && rbuf[j][0] != 'a' + (i + done + j) % 26))
					bad++;
			}
			done += r;
		}
	}
	printf("send_fd=%d\nrecv_fd=%d\nsend_port=%d\nrecv_port=%d\n", sfd, rfd,
	       ntohs(sa.sin_port), ntohs(ra.sin_port));
	printf("messages=%d\nsent_bytes=%lld\nsendmmsg_calls=%d\n", k, sent,
	       scalls);
	printf("recv_bytes=%lld\nrecvmmsg_calls=%d\nreceived=%d\n", got, rcalls,
	       received);
	close(sfd);
	close(rfd);
	return bad || received != k || got != sent;
}
