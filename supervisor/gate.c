/* gate.c - the fork gate, the supervisor's side. Every fork a chain's process attempts waits
 * in the kernel as a seccomp user notification on the chain's listener; the chain decides
 * what it means (chain_on_park), and this file delivers the answer: let the fork happen, make
 * it return a command word, or refuse it with EPERM. With the supervisor gone the listener
 * closes and the kernel fails every such fork with ENOSYS. Functions return 0 or -errno. */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <seccomp.h>
#include <sys/epoll.h>

#include "engine_internal.h"

static void gate_event(struct watch *w, uint32_t events)
{
	struct chain *c = w->data;
	struct seccomp_notif *req = NULL;
	struct seccomp_notif_resp *resp = NULL;

	if ((events & (EPOLLHUP | EPOLLERR)) && !(events & EPOLLIN)) {
		/* Every process of the chain is gone. */
		gate_close(c);
		return;
	}
	if (seccomp_notify_alloc(&req, &resp) < 0)
		return;
	if (seccomp_notify_receive(w->fd, req) < 0) {
		/* The requester died meanwhile (libseccomp reports every failure alike). */
		if (events & EPOLLHUP)
			gate_close(c);
		seccomp_notify_free(req, resp);
		return;
	}
	/* A process writes its frames (a RESULT) before it parks: read them first, so the
	 * park is judged in the state they lead to. */
	if (c->ch.w.fd >= 0)
		(void)channel_read(&c->ch, c, ENGINE_READ_DRAIN);
	if (c->listener.fd >= 0)
		chain_on_park(c, (pid_t)req->pid, req->id);
	seccomp_notify_free(req, resp);
	engine_kick(c->e);
}

int gate_open(struct chain *c, int fd)
{
	int rc;

	c->listener = (struct watch){.fd = fd, .fn = gate_event, .data = c};
	rc = loop_add(&c->listener, EPOLLIN);
	if (rc < 0) {
		close(fd);
		c->listener.fd = -1;
	}
	return rc;
}

void gate_close(struct chain *c)
{
	if (c->listener.fd < 0)
		return;
	loop_del(&c->listener);
	close(c->listener.fd);
	c->listener.fd = -1;
}

static int respond(struct chain *c, uint64_t id, int64_t val, int32_t error, uint32_t flags)
{
	struct seccomp_notif_resp resp;
	int rc;

	if (c->listener.fd < 0)
		return -EBADF;
	memset(&resp, 0, sizeof(resp));
	resp.id = id;
	resp.val = val;
	resp.error = error;
	resp.flags = flags;
	rc = seccomp_notify_respond(c->listener.fd, &resp);
	return rc < 0 ? rc : 0;
}

int gate_continue(struct chain *c, struct proc *p)
{
	if (!p->parked)
		return -EINVAL;
	p->parked = 0;
	return respond(c, p->notif, 0, 0, SECCOMP_USER_NOTIF_FLAG_CONTINUE);
}

int gate_command(struct chain *c, struct proc *p, enum ipc_park_cmd cmd, uint32_t arg)
{
	if (!p->parked)
		return -EINVAL;
	p->parked = 0;
	return respond(c, p->notif, (int64_t)ipc_park_word(cmd, arg), 0, 0);
}

void gate_refuse(struct chain *c, uint64_t id)
{
	(void)respond(c, id, 0, -EPERM, 0);
}
