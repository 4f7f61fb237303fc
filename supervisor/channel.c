/* channel.c - our end of a chain's channel: a non-blocking stream socket with SO_PASSCRED, so
 * the kernel says which process wrote each byte. Frames in are assembled with a fixed header
 * buffer and an exact-size payload (no shuffling of buffers), at most a budget of bytes per
 * call; frames out are queued and sent as the socket takes them. Whatever a worker writes is
 * a claim: this file only frames it, chain.c judges it. Functions return 0 or -errno. */
#include <errno.h>
#include <fcntl.h>
#include <linux/sockios.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "engine_internal.h"

/* Bytes queued for a worker at most: a few frames of the largest size. */
#define CHANNEL_TX_MAX (4 * (size_t)IPC_FRAME_MAX)

int channel_open(struct channel *ch, int fd, int peer, watch_fn fn, void *data)
{
	int one = 1, rc;

	memset(ch, 0, sizeof(*ch));
	ch->w = (struct watch){.fd = fd, .fn = fn, .data = data};
	ch->peer = peer;
	if (fcntl(fd, F_SETFL, O_NONBLOCK) < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &one, sizeof(one)) < 0)
		return -errno;
	rc = loop_add(&ch->w, EPOLLIN);
	return rc;
}

static void close_fds(const struct ipc_recv_info *info);

static void frame_reset(struct channel *ch)
{
	free(ch->payload);
	ch->payload = NULL;
	ch->payload_len = ch->payload_got = 0;
	ch->hdr_len = 0;
	ch->sender = 0;
}

void channel_close(struct channel *ch)
{
	if (ch->w.fd >= 0) {
		loop_del(&ch->w);
		close(ch->w.fd);
		ch->w.fd = -1;
	}
	if (ch->peer >= 0) {
		close(ch->peer);
		ch->peer = -1;
	}
	frame_reset(ch);
	free(ch->tx);
	ch->tx = NULL;
	ch->tx_len = ch->tx_off = ch->tx_cap = 0;
}

size_t channel_discard(struct channel *ch)
{
	static unsigned char buf[ENGINE_READ_PER_TURN];
	size_t dropped = ch->tx_len - ch->tx_off;

	free(ch->tx);
	ch->tx = NULL;
	ch->tx_len = ch->tx_off = ch->tx_cap = 0;
	if (ch->w.fd >= 0)
		(void)loop_mod(&ch->w, EPOLLIN);
	/* At most what the socket buffers hold: we send nothing while we drain. */
	while (ch->peer >= 0) {
		struct ipc_recv_info info;
		ssize_t n = ipc_recv(ch->peer, buf, sizeof(buf), MSG_DONTWAIT, &info);

		close_fds(&info);
		if (n <= 0)
			break;
		dropped += (size_t)n;
	}
	return dropped;
}

void channel_forget(struct channel *ch, pid_t pid)
{
	if (ch->sender == pid && (ch->hdr_len || ch->payload))
		frame_reset(ch);
}

int channel_partial(const struct channel *ch, pid_t pid)
{
	return (ch->hdr_len || ch->payload) && (!pid || ch->sender == pid);
}

void channel_flush(struct channel *ch)
{
	while (ch->tx && ch->tx_off < ch->tx_len) {
		ssize_t n = send(ch->w.fd, ch->tx + ch->tx_off, ch->tx_len - ch->tx_off,
		                 MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN) {
				(void)loop_mod(&ch->w, EPOLLIN | EPOLLOUT);
				return;
			}
			break; /* every reader is gone: their exits tell the story */
		}
		ch->tx_off += (size_t)n;
	}
	free(ch->tx);
	ch->tx = NULL;
	ch->tx_len = ch->tx_off = ch->tx_cap = 0;
	if (ch->w.fd >= 0)
		(void)loop_mod(&ch->w, EPOLLIN);
}

/* Room for n more bytes after what is pending. The pending bytes move to the front only when
 * at least as many were sent since they last moved (so a byte is moved at most once for each
 * byte sent); otherwise the buffer doubles. Since pending + n never passes CHANNEL_TX_MAX, it
 * stays below twice that. Returns 0 or -ENOMEM. */
static int tx_room(struct channel *ch, size_t n)
{
	size_t pending = ch->tx_len - ch->tx_off, cap = ch->tx_cap ? ch->tx_cap : 4096;
	char *buf;

	if (ch->tx_cap - ch->tx_len >= n)
		return 0;
	if (ch->tx_off >= pending && ch->tx_cap - pending >= n) {
		memmove(ch->tx, ch->tx + ch->tx_off, pending);
		ch->tx_off = 0;
		ch->tx_len = pending;
		return 0;
	}
	while (cap < pending + n || cap <= ch->tx_cap)
		cap *= 2;
	buf = malloc(cap);
	if (!buf)
		return -ENOMEM;
	if (pending)
		memcpy(buf, ch->tx + ch->tx_off, pending);
	free(ch->tx);
	ch->tx = buf;
	ch->tx_off = 0;
	ch->tx_len = pending;
	ch->tx_cap = cap;
	return 0;
}

/* Queue a frame (header, prefix, body) after what is pending; with nothing pending it goes
 * straight to the socket, and memory is needed only for what the socket did not take. fd
 * goes with the frame's first bytes, so it is sent only when nothing is pending. Returns 0,
 * -EAGAIN (an fd, and bytes pending or a full socket), -ENOMEM, or the error of a socket
 * whose readers are gone when an fd was to go (without one, their exits tell the rest). */
static int send_frame(struct channel *ch, char type, const void *prefix, size_t plen,
                      const void *body, size_t blen, int fd)
{
	unsigned char hdr[IPC_FRAME_HEADER];
	struct iovec iov[3] = {
	    {.iov_base = hdr, .iov_len = sizeof(hdr)},
	    {.iov_base = (void *)(uintptr_t)prefix, .iov_len = plen},
	    {.iov_base = (void *)(uintptr_t)body, .iov_len = blen},
	};
	size_t pending, n = IPC_FRAME_HEADER + plen + blen, sent = 0, off;

	if (plen + blen > IPC_FRAME_MAX)
		return -EMSGSIZE;
	if (fd >= 0 && ch->tx)
		channel_flush(ch);
	if (fd >= 0 && ch->tx)
		return -EAGAIN;
	pending = ch->tx ? ch->tx_len - ch->tx_off : 0;
	/* A worker that asks and never reads its answers is not let to fill our memory. */
	if (pending + n > CHANNEL_TX_MAX)
		return -ENOBUFS;
	ipc_frame_header_put(hdr, type, (uint32_t)(plen + blen));
	if (!pending) {
		ssize_t k = ipc_sendv_fd(ch->w.fd, iov, 3, fd, MSG_DONTWAIT);
		if (k < 0 && (fd >= 0 || k != -EAGAIN))
			return fd >= 0 ? (int)k : 0;
		sent = k < 0 ? 0 : (size_t)k;
		if (sent == n)
			return 0;
	}
	if (tx_room(ch, n - sent) < 0)
		return -ENOMEM; /* with bytes of it sent: the stream is broken, the caller ends it */
	off = ch->tx_len;
	for (int i = 0; i < 3; i++) {
		size_t skip = sent < iov[i].iov_len ? sent : iov[i].iov_len;
		if (iov[i].iov_len > skip)
			memcpy(ch->tx + off, (char *)iov[i].iov_base + skip, iov[i].iov_len - skip);
		off += iov[i].iov_len - skip;
		sent -= skip;
	}
	ch->tx_len = off;
	channel_flush(ch);
	return 0;
}

int channel_send(struct channel *ch, char type, const void *prefix, size_t plen, const void *body,
                 size_t blen)
{
	return send_frame(ch, type, prefix, plen, body, blen, -1);
}

int channel_send_fd(struct channel *ch, char type, const void *prefix, size_t plen,
                    const void *body, size_t blen, int fd)
{
	return send_frame(ch, type, prefix, plen, body, blen, fd);
}

static void close_fds(const struct ipc_recv_info *info)
{
	for (size_t i = 0; i < info->n_fds; i++)
		(void)close(info->fds[i]);
}

/* Feed n bytes from one writer into the frame being assembled; each whole frame goes to
 * the chain. fds came with these bytes: they belong to the first frame completed here. The
 * payload buffer has the size the header claims (untouched pages of a large one cost
 * nothing until written). */
static void feed(struct channel *ch, struct chain *c, const unsigned char *p, size_t n,
                 struct ipc_recv_info *info)
{
	while (n > 0 && ch->w.fd >= 0) {
		size_t k;

		if (ch->hdr_len < IPC_FRAME_HEADER) {
			uint32_t len;
			k = IPC_FRAME_HEADER - ch->hdr_len;
			k = k < n ? k : n;
			memcpy(ch->hdr + ch->hdr_len, p, k);
			ch->hdr_len += k;
			p += k;
			n -= k;
			if (ch->hdr_len < IPC_FRAME_HEADER)
				break;
			if (ipc_frame_header_get(ch->hdr, &ch->type, &len) < 0) {
				/* Larger than any frame: its writer's fault. */
				pid_t who = ch->sender;
				frame_reset(ch);
				chain_on_frame(c, who, 0, NULL, 0, NULL, 0);
				return;
			}
			if (!(ch->payload = malloc((size_t)len + 1))) {
				/* No memory for it: ours. */
				pid_t who = ch->sender;
				frame_reset(ch);
				chain_on_nomem(c, who);
				return;
			}
			ch->payload_len = len;
			ch->payload_got = 0;
		}
		k = ch->payload_len - ch->payload_got;
		k = k < n ? k : n;
		memcpy(ch->payload + ch->payload_got, p, k);
		ch->payload_got += k;
		p += k;
		n -= k;
		if (ch->payload_got == ch->payload_len) {
			char *payload = ch->payload;
			size_t len = ch->payload_len;
			pid_t who = ch->sender;
			char type = ch->type;

			payload[len] = '\0';
			ch->payload = NULL;
			ch->payload_len = ch->payload_got = ch->hdr_len = 0;
			chain_on_frame(c, who, type, payload, len, info->fds, info->n_fds);
			free(payload);
			info->n_fds = 0; /* the chain took them or closed them */
		}
	}
}

int channel_read(struct channel *ch, struct chain *c, size_t budget)
{
	static unsigned char buf[ENGINE_READ_PER_TURN];

	while (ch->w.fd >= 0 && budget > 0) {
		struct ipc_recv_info info;
		size_t want = budget < sizeof(buf) ? budget : sizeof(buf);
		ssize_t n = ipc_recv(ch->w.fd, buf, want, MSG_DONTWAIT, &info);

		if (n == -EAGAIN)
			return 0;
		if (n < 0 || (n == 0 && info.n_fds == 0)) {
			close_fds(&info);
			return -EPIPE;
		}
		if (info.truncated) {
			/* Fds cut off: more than a frame carries, or no room for them here. */
			close_fds(&info);
			chain_on_fds_cut(c, info.sender);
			continue;
		}
		if (info.sender <= 0) {
			/* A writer the kernel did not name: a violation. */
			close_fds(&info);
			chain_on_frame(c, info.sender, 0, NULL, 0, NULL, 0);
			continue;
		}
		if (ch->sender && ch->sender != info.sender && (ch->hdr_len || ch->payload)) {
			/* Another process writes while a frame of the first is unfinished: the
			 * first was killed mid-frame, or two writers interleave. Drop the torn
			 * frame; the chain judges its writer. */
			pid_t who = ch->sender;
			frame_reset(ch);
			chain_on_frame(c, who, 0, NULL, 0, NULL, 0);
		}
		ch->sender = info.sender;
		feed(ch, c, buf, (size_t)n, &info);
		close_fds(&info);
		budget -= (size_t)n;
	}
	return budget == 0 ? 1 : 0;
}

size_t channel_unread(const struct channel *ch)
{
	int queued = 0;

	/* A Unix socket's output queue holds what the peer has not received yet, the fds that
	 * ride on it included. */
	if (ioctl(ch->w.fd, SIOCOUTQ, &queued) < 0 || queued < 0)
		return SIZE_MAX;
	return (size_t)queued + (ch->tx_len - ch->tx_off);
}
