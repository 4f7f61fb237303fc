/* session.c - sessions: handles, use order (the least recently used is evicted first), idle
 * expiry, and the hand-over of a session's state between chains when a call commits, rolls
 * back or resets it. A session's state lives in one chain; when that chain's holder is lost,
 * every later call is told so until the session is reset. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "engine_internal.h"

static int64_t idle_ms(const struct engine *e)
{
	return (int64_t)(e->cfg->session_idle_s * 1000);
}

static void images_drop(struct session *s)
{
	for (size_t i = 0; i < s->n_images; i++)
		free(s->images[i].png);
	free(s->images);
	s->e->images_kept -= s->images_bytes;
	s->images = NULL;
	s->n_images = s->images_bytes = 0;
}

void session_keep_images(struct session *s, const struct run_outcome *o)
{
	struct engine *e = s->e;
	struct session *old;
	size_t bytes = 0;

	images_drop(s);
	for (size_t i = 0; i < o->n_images; i++)
		bytes += o->images[i].len;
	if (o->n_images == 0 || bytes > ENGINE_IMAGES_KEPT_MAX)
		return;
	/* Room first: the least recently used sessions' images go. */
	TAILQ_FOREACH(old, &e->sessions, link)
	{
		if (e->images_kept + bytes <= ENGINE_IMAGES_KEPT_MAX)
			break;
		if (old != s)
			images_drop(old);
	}
	s->images = calloc(o->n_images, sizeof(*s->images));
	for (size_t i = 0; s->images && i < o->n_images; i++) {
		s->images[i] = o->images[i];
		s->images[i].png = malloc(o->images[i].len);
		s->n_images = i + 1;
		if (!s->images[i].png) {
			images_drop(s);
			return;
		}
		memcpy(s->images[i].png, o->images[i].png, o->images[i].len);
		s->images_bytes += o->images[i].len;
		e->images_kept += o->images[i].len;
	}
}

const struct run_image *engine_session_images(const struct session *s, size_t *n)
{
	*n = s->n_images;
	return s->images;
}

static void session_free(struct session *s)
{
	struct engine *e = s->e;

	images_drop(s);

	if (s->chain) {
		struct chain *c = s->chain;
		session_drop_chain(s, c);
		chain_kill(c, KILL_DONE);
	}
	if (s->old) {
		struct chain *c = s->old;
		session_drop_chain(s, c);
		chain_kill(c, KILL_DONE);
	}
	timer_cancel(&s->idle);
	TAILQ_REMOVE(&e->sessions, s, link);
	e->n_sessions--;
	free(s->handle_copy);
	free(s);
}

/* An idle session expires; a busy one is looked at again when it could next expire. */
static void session_idle_fired(struct timer *t)
{
	struct session *s = t->data;
	struct engine *e = s->e;

	if (s->active || !TAILQ_EMPTY(&s->pending)) {
		timer_arm(&s->idle, now_ms() + idle_ms(e));
		return;
	}
	log_msg(LOG_INFO, "session %.8s… expired after %g s idle", s->handle,
	        e->cfg->session_idle_s);
	session_free(s);
}

void session_touch(struct session *s)
{
	struct engine *e = s->e;

	s->last_used = now_ms();
	TAILQ_REMOVE(&e->sessions, s, link);
	TAILQ_INSERT_TAIL(&e->sessions, s, link);
	timer_arm(&s->idle, s->last_used + idle_ms(e) + 1);
}

void sessions_evict(struct engine *e, unsigned int room)
{
	while (e->n_sessions + room > e->cfg->max_sessions) {
		struct session *s, *lru = NULL;

		TAILQ_FOREACH(s, &e->sessions, link)
		if (!s->active && TAILQ_EMPTY(&s->pending)) {
			lru = s;
			break;
		}
		if (!lru)
			break; /* every session is busy: allow more for now */
		log_msg(LOG_INFO, "session %.8s… evicted (least recently used of %u)", lru->handle,
		        e->cfg->max_sessions);
		session_free(lru);
	}
}

struct session *engine_session_new(struct engine *e)
{
	unsigned char raw[16];
	struct session *s;

	if (getrandom(raw, sizeof(raw), 0) != (ssize_t)sizeof(raw))
		return NULL;
	sessions_evict(e, 1);
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	for (size_t i = 0; i < sizeof(raw); i++)
		snprintf(s->handle + 2 * i, 3, "%02x", raw[i]);
	s->handle_copy = strdup(s->handle); /* engine_reserve tries again */
	s->e = e;
	TAILQ_INIT(&s->pending);
	timer_init(&s->idle, session_idle_fired, s);
	TAILQ_INSERT_TAIL(&e->sessions, s, link);
	e->n_sessions++;
	session_touch(s);
	return s;
}

struct session *engine_session_find(struct engine *e, const char *handle)
{
	struct session *s;

	TAILQ_FOREACH(s, &e->sessions, link)
	{
		if (strcmp(s->handle, handle) != 0)
			continue;
		if (!s->active && TAILQ_EMPTY(&s->pending) &&
		    now_ms() - s->last_used > idle_ms(e)) {
			session_free(s); /* expired, though its timer has not fired yet */
			return NULL;
		}
		return s;
	}
	return NULL;
}

const char *engine_session_handle(const struct session *s)
{
	return s->handle;
}

void session_committed(struct session *s, struct chain *c)
{
	if (s->old && s->old != c) {
		/* A reset call committed: the state it replaces goes. */
		struct chain *old = s->old;
		session_drop_chain(s, old);
		chain_kill(old, KILL_DONE);
	}
	s->chain = c;
	s->lost = 0;
	s->lost_why[0] = '\0';
}

void session_drop_chain(struct session *s, struct chain *c)
{
	if (s->chain == c) {
		/* A reset call that did not commit gives the old state back. */
		s->chain = s->old;
		s->old = NULL;
	} else if (s->old == c) {
		s->old = NULL;
	}
	c->session = NULL;
}

void session_lose(struct session *s, struct chain *c, const char *why)
{
	int was_state = s->old == c || (s->chain == c && !s->old);

	log_msg(LOG_WARN, "session %.8s…: its state is lost (%s)", s->handle, why);
	session_drop_chain(s, c);
	if (!was_state)
		return; /* a reset's chain: the state it was to replace is back */
	/* Lost until a reset commits (one in progress keeps its chain). */
	s->lost = 1;
	snprintf(s->lost_why, sizeof(s->lost_why), "%s", why);
}

void sessions_free_all(struct engine *e)
{
	while (!TAILQ_EMPTY(&e->sessions))
		session_free(TAILQ_FIRST(&e->sessions));
}
