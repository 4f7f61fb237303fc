/* loop.c - a single-threaded epoll loop: fds carry a struct watch with a callback, and timers
 * fire in deadline order. Returns 0 or a negative errno. */
#include <errno.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

#include "supervisor.h"

static int epfd = -1;
/* Armed timers, earliest first. */
static TAILQ_HEAD(, timer) timers = TAILQ_HEAD_INITIALIZER(timers);

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

void timer_init(struct timer *t, timer_fn fn, void *data)
{
	t->at = 0;
	t->armed = 0;
	t->fn = fn;
	t->data = data;
}

void timer_arm(struct timer *t, int64_t at)
{
	struct timer *x;

	timer_cancel(t);
	t->at = at;
	t->armed = 1;
	/* Most timers are armed for later than those already waiting: search from the end. */
	TAILQ_FOREACH_REVERSE(x, &timers, timer_list, link)
	if (x->at <= at)
		break;
	if (x)
		TAILQ_INSERT_AFTER(&timers, x, t, link);
	else
		TAILQ_INSERT_HEAD(&timers, t, link);
}

void timer_cancel(struct timer *t)
{
	if (!t->armed)
		return;
	TAILQ_REMOVE(&timers, t, link);
	t->armed = 0;
}

/* Run the timers that are due. A callback may arm or cancel any timer, so take one at a
 * time from the head. Bounded: a timer armed again for now runs on the next turn. */
static void timers_run(void)
{
	int64_t now = now_ms();
	unsigned int budget = 1024;
	struct timer *t;

	while ((t = TAILQ_FIRST(&timers)) && t->at <= now && budget-- > 0) {
		TAILQ_REMOVE(&timers, t, link);
		t->armed = 0;
		t->fn(t);
	}
}

int loop_run_once(int timeout_ms)
{
	struct timer *t = TAILQ_FIRST(&timers);
	struct epoll_event ev;
	int n;

	if (t) {
		int64_t wait = t->at - now_ms();
		if (wait < 0)
			wait = 0;
		if (timeout_ms < 0 || wait < timeout_ms)
			timeout_ms = (int)(wait > 60000 ? 60000 : wait);
	}
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
	timers_run();
	return 0;
}

int64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}
