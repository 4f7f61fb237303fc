/* loop.c - a single-threaded epoll loop: fds carry a struct watch with a callback.
 * Returns 0 or a negative errno. */
#include <errno.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

#include "supervisor.h"

static int epfd = -1;

int loop_init(void)
{
	if (epfd >= 0)
		return 0;
	epfd = epoll_create1(EPOLL_CLOEXEC);
	return epfd < 0 ? -errno : 0;
}

int loop_add(struct watch *w, uint32_t events)
{
	struct epoll_event ev = {.events = events, .data.ptr = w};

	return epoll_ctl(epfd, EPOLL_CTL_ADD, w->fd, &ev) < 0 ? -errno : 0;
}

int loop_mod(struct watch *w, uint32_t events)
{
	struct epoll_event ev = {.events = events, .data.ptr = w};

	return epoll_ctl(epfd, EPOLL_CTL_MOD, w->fd, &ev) < 0 ? -errno : 0;
}

void loop_del(struct watch *w)
{
	if (w->fd >= 0)
		epoll_ctl(epfd, EPOLL_CTL_DEL, w->fd, NULL);
}

int loop_run_once(int timeout_ms)
{
	struct epoll_event ev;
	int n;

	/* One event per wait: a callback may free any other watch, and a later event of the
	 * same batch would then point at freed memory. */
	n = epoll_wait(epfd, &ev, 1, timeout_ms);
	if (n < 0)
		return errno == EINTR ? 0 : -errno;
	if (n == 1) {
		struct watch *w = ev.data.ptr;
		if (w && w->fn)
			w->fn(w, ev.events);
	}
	return 0;
}

int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}
