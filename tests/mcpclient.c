/* mcpclient.c - the end-to-end tests' MCP client: runs the server on pipes, frames lines,
 * parses them with json-c, checks every stdout line is a JSON-RPC message.
 * Returns 0 or a negative errno, or NULL on timeout/EOF; never exits, never asserts. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "mcpclient.h"

#define READ_CHUNK   65536
#define PARSE_DEPTH  256
/* The most the client buffers from stdout while it is busy sending. */
#define BUF_HARD_MAX (2 * (size_t)MCPC_MAX_LINE)
/* Bytes kept of a one-shot command's stdout or stderr. */
#define CMD_OUT_MAX  (4u << 20)

extern char **environ;

int64_t mcpc_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int remaining(int64_t deadline)
{
	int64_t left = deadline - mcpc_now_ms();

	if (left < 0)
		return 0;
	return left > 1000000 ? 1000000 : (int)left;
}

static int set_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0)
		return -errno;
	return 0;
}

/* ---- Start and stop ---------------------------------------------------------------------- */

static void child_exec(const char *bin, const char *const *args, const char *const *env, int in_fd,
                       int out_fd, int err_fd)
{
	char *argv[64];
	size_t n = 0;

	if (dup2(in_fd, 0) < 0 || dup2(out_fd, 1) < 0 || dup2(err_fd, 2) < 0)
		_exit(126);
	/* Nothing of the test runner's (Criterion's pipes) reaches the server. */
	for (int fd = 3; fd < 1024; fd++)
		close(fd);
	for (size_t i = 0; env && env[i]; i++) {
		char *kv = strdup(env[i]), *eq = kv ? strchr(kv, '=') : NULL;

		if (!eq)
			_exit(126);
		*eq = '\0';
		setenv(kv, eq + 1, 1);
	}
	argv[n++] = strdup(bin);
	for (size_t i = 0; args && args[i] && n < 63; i++)
		argv[n++] = strdup(args[i]);
	argv[n] = NULL;
	signal(SIGPIPE, SIG_DFL);
	execve(bin, argv, environ);
	_exit(127);
}

int mcpc_start(struct mcpc *c, const char *bin, const char *const *args, const char *const *env)
{
	int in[2] = {-1, -1}, out[2] = {-1, -1}, err_fd = -1;
	int rc;

	memset(c, 0, sizeof(*c));
	c->pid = -1;
	c->in_fd = -1;
	c->out_fd = -1;
	c->next_id = 1;
	signal(SIGPIPE, SIG_IGN);

	snprintf(c->stderr_path, sizeof(c->stderr_path), "/tmp/safepy-e2e-stderr-XXXXXX");
	err_fd = mkostemp(c->stderr_path, O_CLOEXEC);
	if (err_fd < 0) {
		rc = -errno;
		c->stderr_path[0] = '\0';
		goto fail;
	}
	if (pipe2(in, O_CLOEXEC) < 0 || pipe2(out, O_CLOEXEC) < 0) {
		rc = -errno;
		goto fail;
	}
	c->pid = fork();
	if (c->pid < 0) {
		rc = -errno;
		goto fail;
	}
	if (c->pid == 0)
		child_exec(bin, args, env, in[0], out[1], err_fd);
	close(in[0]);
	close(out[1]);
	close(err_fd);
	c->in_fd = in[1];
	c->out_fd = out[0];
	if ((rc = set_nonblock(c->in_fd)) < 0 || (rc = set_nonblock(c->out_fd)) < 0) {
		mcpc_free(c);
		return rc;
	}
	return 0;
fail:
	for (int i = 0; i < 2; i++) {
		if (in[i] >= 0)
			close(in[i]);
		if (out[i] >= 0)
			close(out[i]);
	}
	if (err_fd >= 0)
		close(err_fd);
	if (c->stderr_path[0])
		unlink(c->stderr_path);
	c->pid = -1;
	return rc;
}

void mcpc_free(struct mcpc *c)
{
	if (c->pid > 0) {
		kill(c->pid, SIGKILL);
		while (waitpid(c->pid, &c->status, 0) < 0 && errno == EINTR)
			;
		c->pid = -1;
	}
	if (c->in_fd >= 0)
		close(c->in_fd);
	if (c->out_fd >= 0)
		close(c->out_fd);
	c->in_fd = c->out_fd = -1;
	for (size_t i = 0; i < c->nqueue; i++)
		json_object_put(c->queue[i]);
	c->nqueue = 0;
	free(c->buf);
	c->buf = NULL;
	c->len = c->cap = 0;
	if (c->stderr_path[0])
		unlink(c->stderr_path);
	c->stderr_path[0] = '\0';
}

/* ---- Reading stdout ---------------------------------------------------------------------- */

/* Read what is available on stdout into buf. Returns bytes read, 0 if none, -1 at EOF. */
static ssize_t drain_once(struct mcpc *c)
{
	ssize_t n;

	if (c->out_fd < 0)
		return -1;
	if (c->len >= BUF_HARD_MAX)
		return 0;
	if (c->cap - c->len < READ_CHUNK) {
		size_t ncap = c->cap ? c->cap * 2 : 2 * READ_CHUNK;
		char *nb;

		while (ncap - c->len < READ_CHUNK)
			ncap *= 2;
		nb = realloc(c->buf, ncap);
		if (!nb)
			return 0;
		c->buf = nb;
		c->cap = ncap;
	}
	n = read(c->out_fd, c->buf + c->len, READ_CHUNK);
	if (n > 0) {
		c->len += (size_t)n;
		return n;
	}
	if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
		close(c->out_fd);
		c->out_fd = -1;
		return -1;
	}
	return 0;
}

static void note_bad(struct mcpc *c, const char *line, size_t len)
{
	if (c->bad_lines++ == 0) {
		size_t n = len < sizeof(c->first_bad) - 1 ? len : sizeof(c->first_bad) - 1;

		memcpy(c->first_bad, line, n);
		c->first_bad[n] = '\0';
	}
}

/* Take one complete line out of buf: malloc'd, without its newline. NULL if none is held.
 * An over-long line is counted as bad and dropped. */
static char *take_line(struct mcpc *c)
{
	char *nl, *line;
	size_t n;

	if (c->len == 0)
		return NULL;
	nl = memchr(c->buf, '\n', c->len);
	if (!nl) {
		if (c->len > MCPC_MAX_LINE) {
			note_bad(c, c->buf, 64);
			c->len = 0;
		}
		if (c->out_fd < 0 && c->len > 0) {
			/* EOF in the middle of a line: it never was a message. */
			note_bad(c, c->buf, c->len);
			c->len = 0;
		}
		return NULL;
	}
	n = (size_t)(nl - c->buf);
	line = malloc(n + 1);
	if (!line)
		return NULL;
	memcpy(line, c->buf, n);
	line[n] = '\0';
	memmove(c->buf, nl + 1, c->len - n - 1);
	c->len -= n + 1;
	return line;
}

static int valid_id(json_object *id)
{
	return json_object_is_type(id, json_type_string) || json_object_is_type(id, json_type_int);
}

static int is_message(json_object *m)
{
	json_object *v, *id, *err;
	int has_result, has_error;

	if (!json_object_is_type(m, json_type_object))
		return 0;
	if (!json_object_object_get_ex(m, "jsonrpc", &v) ||
	    !json_object_is_type(v, json_type_string) || strcmp(json_object_get_string(v), "2.0"))
		return 0;
	if (json_object_object_get_ex(m, "method", &v)) {
		if (!json_object_is_type(v, json_type_string))
			return 0;
		if (json_object_object_get_ex(m, "id", &id) && !valid_id(id))
			return 0;
		return 1;
	}
	if (!json_object_object_get_ex(m, "id", &id))
		return 0;
	if (id && !valid_id(id))
		return 0;
	has_result = json_object_object_get_ex(m, "result", &v);
	has_error = json_object_object_get_ex(m, "error", &err);
	if (has_result == has_error)
		return 0;
	if (has_result)
		return json_object_is_type(v, json_type_object);
	if (!json_object_is_type(err, json_type_object))
		return 0;
	if (!json_object_object_get_ex(err, "code", &v) || !json_object_is_type(v, json_type_int))
		return 0;
	if (!json_object_object_get_ex(err, "message", &v) ||
	    !json_object_is_type(v, json_type_string))
		return 0;
	return 1;
}

int mcpc_is_jsonrpc(json_object *msg)
{
	size_t n;

	if (!json_object_is_type(msg, json_type_array))
		return is_message(msg);
	n = json_object_array_length(msg);
	if (n == 0)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!is_message(json_object_array_get_idx(msg, i)))
			return 0;
	return 1;
}

static json_object *parse_line(struct mcpc *c, const char *line)
{
	size_t len = strlen(line);
	struct json_tokener *tok = json_tokener_new_ex(PARSE_DEPTH);
	json_object *m = NULL;

	if (!tok)
		return NULL;
	if (len > 0)
		m = json_tokener_parse_ex(tok, line, (int)len);
	if (!m || json_tokener_get_error(tok) != json_tokener_success ||
	    json_tokener_get_parse_end(tok) != len || !mcpc_is_jsonrpc(m)) {
		json_object_put(m);
		m = NULL;
		note_bad(c, line, len);
	}
	json_tokener_free(tok);
	c->lines++;
	return m;
}

/* Next message from the stream (not the queue), within timeout_ms. */
static json_object *read_msg(struct mcpc *c, int timeout_ms)
{
	int64_t deadline = mcpc_now_ms() + timeout_ms;

	for (;;) {
		char *line = take_line(c);
		struct pollfd p;

		if (line) {
			json_object *m = parse_line(c, line);

			free(line);
			if (m)
				return m;
			continue;
		}
		if (c->out_fd < 0)
			return NULL;
		p.fd = c->out_fd;
		p.events = POLLIN;
		if (poll(&p, 1, remaining(deadline)) < 0 && errno != EINTR)
			return NULL;
		if (drain_once(c) == 0 && mcpc_now_ms() >= deadline)
			return NULL;
	}
}

static void enqueue(struct mcpc *c, json_object *m)
{
	if (c->nqueue == MCPC_MAX_QUEUED) {
		json_object_put(c->queue[0]);
		memmove(c->queue, c->queue + 1, (MCPC_MAX_QUEUED - 1) * sizeof(c->queue[0]));
		c->nqueue--;
	}
	c->queue[c->nqueue++] = m;
}

json_object *mcpc_next(struct mcpc *c, int timeout_ms)
{
	if (c->nqueue > 0) {
		json_object *m = c->queue[0];

		memmove(c->queue, c->queue + 1, (c->nqueue - 1) * sizeof(c->queue[0]));
		c->nqueue--;
		return m;
	}
	return read_msg(c, timeout_ms);
}

static int id_equal(json_object *a, json_object *b)
{
	if (json_object_is_type(a, json_type_int) && json_object_is_type(b, json_type_int))
		return json_object_get_int64(a) == json_object_get_int64(b);
	if (json_object_is_type(a, json_type_string) && json_object_is_type(b, json_type_string))
		return strcmp(json_object_get_string(a), json_object_get_string(b)) == 0;
	return 0;
}

static int msg_has_id(json_object *m, json_object *id)
{
	json_object *mid;

	if (!json_object_is_type(m, json_type_object) ||
	    json_object_object_get_ex(m, "method", NULL) ||
	    !json_object_object_get_ex(m, "id", &mid))
		return 0;
	return id_equal(mid, id);
}

json_object *mcpc_wait_id(struct mcpc *c, json_object *id, int timeout_ms)
{
	int64_t deadline = mcpc_now_ms() + timeout_ms;

	for (size_t i = 0; i < c->nqueue; i++) {
		if (msg_has_id(c->queue[i], id)) {
			json_object *m = c->queue[i];

			memmove(c->queue + i, c->queue + i + 1,
			        (c->nqueue - i - 1) * sizeof(c->queue[0]));
			c->nqueue--;
			return m;
		}
	}
	for (;;) {
		json_object *m = read_msg(c, remaining(deadline));

		if (!m)
			return NULL;
		if (msg_has_id(m, id))
			return m;
		enqueue(c, m);
	}
}

json_object *mcpc_wait_int_id(struct mcpc *c, int64_t id, int timeout_ms)
{
	json_object *jid = json_object_new_int64(id);
	json_object *m = mcpc_wait_id(c, jid, timeout_ms);

	json_object_put(jid);
	return m;
}

int mcpc_seen_id(struct mcpc *c, json_object *id, int timeout_ms)
{
	int64_t deadline = mcpc_now_ms() + timeout_ms;

	for (size_t i = 0; i < c->nqueue; i++)
		if (msg_has_id(c->queue[i], id))
			return 1;
	for (;;) {
		json_object *m = read_msg(c, remaining(deadline));
		int hit;

		if (!m)
			return 0;
		hit = msg_has_id(m, id);
		enqueue(c, m);
		if (hit)
			return 1;
	}
}

/* ---- Writing stdin ----------------------------------------------------------------------- */

int mcpc_send_raw(struct mcpc *c, const char *data, size_t n)
{
	while (n > 0) {
		struct pollfd p[2] = {{c->in_fd, POLLOUT, 0}, {c->out_fd, POLLIN, 0}};
		ssize_t w;

		if (c->in_fd < 0)
			return -EPIPE;
		if (poll(p, c->out_fd >= 0 && c->len < BUF_HARD_MAX ? 2 : 1, 10000) < 0 &&
		    errno != EINTR)
			return -errno;
		if (p[1].revents)
			drain_once(c);
		if (!(p[0].revents & (POLLOUT | POLLERR | POLLHUP)))
			continue;
		w = write(c->in_fd, data, n);
		if (w < 0) {
			if (errno == EAGAIN || errno == EINTR)
				continue;
			return -errno;
		}
		data += w;
		n -= (size_t)w;
	}
	return 0;
}

int mcpc_send(struct mcpc *c, const char *line)
{
	int rc = mcpc_send_raw(c, line, strlen(line));

	return rc < 0 ? rc : mcpc_send_raw(c, "\n", 1);
}

int mcpc_send_json(struct mcpc *c, json_object *msg)
{
	return mcpc_send(c, json_object_to_json_string_ext(msg, JSON_C_TO_STRING_PLAIN));
}

static json_object *new_message(const char *method, json_object *params)
{
	json_object *m = json_object_new_object();

	json_object_object_add(m, "jsonrpc", json_object_new_string("2.0"));
	json_object_object_add(m, "method", json_object_new_string(method));
	if (params)
		json_object_object_add(m, "params", params);
	return m;
}

int64_t mcpc_request_async(struct mcpc *c, const char *method, json_object *params)
{
	json_object *m = new_message(method, params);
	int64_t id = c->next_id++;

	json_object_object_add(m, "id", json_object_new_int64(id));
	mcpc_send_json(c, m);
	json_object_put(m);
	return id;
}

json_object *mcpc_request(struct mcpc *c, const char *method, json_object *params, int timeout_ms)
{
	return mcpc_wait_int_id(c, mcpc_request_async(c, method, params), timeout_ms);
}

int mcpc_notify(struct mcpc *c, const char *method, json_object *params)
{
	json_object *m = new_message(method, params);
	int rc = mcpc_send_json(c, m);

	json_object_put(m);
	return rc;
}

json_object *mcpc_initialize(struct mcpc *c, const char *version)
{
	json_object *p = json_object_new_object(), *info = json_object_new_object();
	json_object *r;

	json_object_object_add(p, "protocolVersion", json_object_new_string(version));
	json_object_object_add(p, "capabilities", json_object_new_object());
	json_object_object_add(info, "name", json_object_new_string("safepy-e2e"));
	json_object_object_add(info, "version", json_object_new_string("0.0.1"));
	json_object_object_add(p, "clientInfo", info);
	/* The first answer waits for the zygote and the layer probe: be generous. */
	r = mcpc_request(c, "initialize", p, 30000);
	if (r)
		mcpc_notify(c, "notifications/initialized", NULL);
	return r;
}

int64_t mcpc_call_async(struct mcpc *c, const char *code, const char *extra_args)
{
	json_object *p = json_object_new_object(), *args = json_object_new_object();

	json_object_object_add(args, "code", json_object_new_string(code));
	if (extra_args) {
		json_object *extra = json_tokener_parse(extra_args);

		if (!json_object_is_type(extra, json_type_object)) {
			json_object_put(extra);
			json_object_put(args);
			json_object_put(p);
			return -1;
		}
		json_object_object_foreach(extra, k, v)
		{
			json_object_object_add(args, k, json_object_get(v));
		}
		json_object_put(extra);
	}
	json_object_object_add(p, "name", json_object_new_string("run_python"));
	json_object_object_add(p, "arguments", args);
	return mcpc_request_async(c, "tools/call", p);
}

json_object *mcpc_call(struct mcpc *c, const char *code, const char *extra_args, int timeout_ms)
{
	int64_t id = mcpc_call_async(c, code, extra_args);

	return id < 0 ? NULL : mcpc_wait_int_id(c, id, timeout_ms);
}

/* ---- Looking into responses -------------------------------------------------------------- */

static json_object *member(json_object *o, const char *key)
{
	json_object *v;

	if (!json_object_is_type(o, json_type_object) || !json_object_object_get_ex(o, key, &v))
		return NULL;
	return v;
}

json_object *mcpc_result(json_object *resp)
{
	return member(resp, "result");
}

json_object *mcpc_error(json_object *resp)
{
	return member(resp, "error");
}

json_object *mcpc_structured(json_object *resp)
{
	return member(mcpc_result(resp), "structuredContent");
}

const char *mcpc_text(json_object *resp)
{
	json_object *content = member(mcpc_result(resp), "content"), *text;

	if (!json_object_is_type(content, json_type_array) || json_object_array_length(content) < 1)
		return NULL;
	text = member(json_object_array_get_idx(content, 0), "text");
	return json_object_is_type(text, json_type_string) ? json_object_get_string(text) : NULL;
}

const char *mcpc_sc_str(json_object *resp, const char *key)
{
	json_object *v = member(mcpc_structured(resp), key);

	return json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
}

const char *mcpc_status(json_object *resp)
{
	const char *s = mcpc_sc_str(resp, "status");

	return s ? s : "";
}

const char *mcpc_err_str(json_object *resp, const char *key)
{
	json_object *v = member(member(mcpc_structured(resp), "error"), key);

	return json_object_is_type(v, json_type_string) ? json_object_get_string(v) : "";
}

const char *mcpc_json(json_object *msg)
{
	return msg ? json_object_to_json_string_ext(msg, JSON_C_TO_STRING_PLAIN) : "(none)";
}

/* ---- Lifecycle --------------------------------------------------------------------------- */

void mcpc_close_stdin(struct mcpc *c)
{
	if (c->in_fd >= 0)
		close(c->in_fd);
	c->in_fd = -1;
}

static int try_reap(struct mcpc *c)
{
	pid_t r;

	if (c->pid <= 0)
		return 1;
	r = waitpid(c->pid, &c->status, WNOHANG);
	if (r == c->pid) {
		c->pid = -1;
		return 1;
	}
	return 0;
}

int mcpc_wait_exit(struct mcpc *c, int timeout_ms)
{
	int64_t deadline = mcpc_now_ms() + timeout_ms;

	for (;;) {
		json_object *m;

		if (try_reap(c)) {
			/* Collect what it wrote last; whatever is left is checked too. */
			while ((m = read_msg(c, 200)) != NULL)
				enqueue(c, m);
			return 0;
		}
		if (mcpc_now_ms() >= deadline)
			return -ETIMEDOUT;
		m = read_msg(c, 20);
		if (m)
			enqueue(c, m);
		else if (c->out_fd < 0)
			usleep(10000);
	}
}

int mcpc_signal(struct mcpc *c, int sig)
{
	if (c->pid <= 0)
		return -ESRCH;
	return kill(c->pid, sig) < 0 ? -errno : 0;
}

int mcpc_alive(struct mcpc *c)
{
	return !try_reap(c);
}

char *mcpc_stderr(struct mcpc *c)
{
	FILE *f = c->stderr_path[0] ? fopen(c->stderr_path, "re") : NULL;
	char *s = NULL;
	size_t len = 0, cap = 0;

	if (f) {
		char chunk[4096];
		size_t n;

		while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0) {
			if (len + n + 1 > cap) {
				char *ns;

				cap = (len + n + 1) * 2;
				ns = realloc(s, cap);
				if (!ns)
					break;
				s = ns;
			}
			memcpy(s + len, chunk, n);
			len += n;
		}
		fclose(f);
	}
	if (!s)
		return strdup("");
	s[len] = '\0';
	return s;
}

/* ---- Processes --------------------------------------------------------------------------- */

/* Start time and state of a process from /proc/PID/stat. Returns 0 or -errno. */
static int proc_stat(pid_t pid, unsigned long long *start, char *state)
{
	char path[64], buf[1024], *p;
	FILE *f;
	size_t n;
	int field;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	p = strrchr(buf, ')');
	if (!p || p[1] != ' ')
		return -EINVAL;
	p += 2;
	*state = *p;
	/* p is at field 3 (state); starttime is field 22. */
	for (field = 3; field < 22 && p; field++) {
		p = strchr(p, ' ');
		if (p)
			p++;
	}
	if (!p)
		return -EINVAL;
	*start = strtoull(p, NULL, 10);
	return 0;
}

/* Append the children of every thread of pid to pids (no duplicates). */
static int add_children(pid_t pid, pid_t *pids, int n, int max)
{
	char path[64];
	DIR *d;
	struct dirent *e;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (!d)
		return n;
	while ((e = readdir(d)) != NULL) {
		char cpath[320];
		FILE *f;
		int child;

		if (e->d_name[0] == '.')
			continue;
		snprintf(cpath, sizeof(cpath), "/proc/%d/task/%s/children", (int)pid, e->d_name);
		f = fopen(cpath, "re");
		if (!f)
			continue;
		while (fscanf(f, "%d", &child) == 1) {
			int dup = 0;

			for (int i = 0; i < n; i++)
				dup |= pids[i] == child;
			if (!dup && n < max)
				pids[n++] = child;
		}
		fclose(f);
	}
	closedir(d);
	return n;
}

int mcpc_descendants(pid_t pid, struct mcpc_proc *out, int max)
{
	pid_t pids[1024];
	int n = 0, cap = max < 1024 ? max : 1024, k = 0;
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)pid, (int)pid);
	if (access(path, R_OK) < 0)
		return -errno;
	n = add_children(pid, pids, 0, cap);
	for (int i = 0; i < n; i++)
		n = add_children(pids[i], pids, n, cap);
	for (int i = 0; i < n; i++) {
		char state;

		if (proc_stat(pids[i], &out[k].start, &state) == 0 && state != 'Z' && state != 'X')
			out[k++].pid = pids[i];
	}
	return k;
}

int mcpc_proc_alive(const struct mcpc_proc *p)
{
	unsigned long long start;
	char state;

	if (proc_stat(p->pid, &start, &state) < 0)
		return 0;
	return start == p->start && state != 'Z' && state != 'X';
}

int mcpc_wait_procs_gone(const struct mcpc_proc *procs, int n, int timeout_ms)
{
	int64_t deadline = mcpc_now_ms() + timeout_ms;

	for (;;) {
		int alive = 0;

		for (int i = 0; i < n; i++)
			alive += mcpc_proc_alive(&procs[i]);
		if (alive == 0 || mcpc_now_ms() >= deadline)
			return alive;
		usleep(20000);
	}
}

/* ---- One-shot commands ------------------------------------------------------------------- */

static void append(char **buf, size_t *len, const char *data, size_t n)
{
	char *nb;

	if (*len + n > CMD_OUT_MAX)
		n = CMD_OUT_MAX - *len;
	nb = realloc(*buf, *len + n + 1);
	if (!nb)
		return;
	memcpy(nb + *len, data, n);
	*len += n;
	nb[*len] = '\0';
	*buf = nb;
}

int mcpc_run_cmd(const char *bin, const char *const *args, const char *stdin_data, int timeout_ms,
                 char **out, char **err, int *status)
{
	return mcpc_run_cmd_len(bin, args, stdin_data, timeout_ms, out, NULL, err, NULL, status);
}

int mcpc_run_cmd_len(const char *bin, const char *const *args, const char *stdin_data,
                     int timeout_ms, char **out, size_t *out_len, char **err, size_t *err_len,
                     int *status)
{
	int in[2] = {-1, -1}, o[2] = {-1, -1}, e[2] = {-1, -1};
	size_t olen = 0, elen = 0, inlen = stdin_data ? strlen(stdin_data) : 0, inoff = 0;
	int64_t deadline = mcpc_now_ms() + timeout_ms;
	pid_t pid;
	int rc = 0;

	*out = strdup("");
	*err = strdup("");
	signal(SIGPIPE, SIG_IGN);
	if (pipe2(in, O_CLOEXEC) < 0 || pipe2(o, O_CLOEXEC) < 0 || pipe2(e, O_CLOEXEC) < 0) {
		rc = -errno;
		goto out;
	}
	pid = fork();
	if (pid < 0) {
		rc = -errno;
		goto out;
	}
	if (pid == 0)
		child_exec(bin, args, NULL, in[0], o[1], e[1]);
	close(in[0]);
	close(o[1]);
	close(e[1]);
	in[0] = o[1] = e[1] = -1;
	set_nonblock(in[1]);
	if (inlen == 0) {
		close(in[1]);
		in[1] = -1;
	}
	while (o[0] >= 0 || e[0] >= 0) {
		struct pollfd p[3] = {{o[0], POLLIN, 0}, {e[0], POLLIN, 0}, {in[1], POLLOUT, 0}};
		char chunk[8192];

		if (mcpc_now_ms() >= deadline) {
			kill(pid, SIGKILL);
			rc = -ETIMEDOUT;
			break;
		}
		if (poll(p, 3, remaining(deadline)) < 0 && errno != EINTR)
			break;
		for (int i = 0; i < 2; i++) {
			int *fd = i == 0 ? &o[0] : &e[0];
			ssize_t n;

			if (!p[i].revents)
				continue;
			n = read(*fd, chunk, sizeof(chunk));
			if (n > 0)
				append(i == 0 ? out : err, i == 0 ? &olen : &elen, chunk,
				       (size_t)n);
			else if (n == 0 || errno != EINTR) {
				close(*fd);
				*fd = -1;
			}
		}
		if (in[1] >= 0 && p[2].revents) {
			ssize_t n = write(in[1], stdin_data + inoff, inlen - inoff);

			if (n > 0)
				inoff += (size_t)n;
			if ((n < 0 && errno != EAGAIN && errno != EINTR) || inoff == inlen) {
				close(in[1]);
				in[1] = -1;
			}
		}
	}
	while (waitpid(pid, status, 0) < 0 && errno == EINTR)
		;
out:
	if (out_len)
		*out_len = olen;
	if (err_len)
		*err_len = elen;
	for (int i = 0; i < 2; i++) {
		if (in[i] >= 0)
			close(in[i]);
		if (o[i] >= 0)
			close(o[i]);
		if (e[i] >= 0)
			close(e[i]);
	}
	return rc;
}

int mcpc_fd_count(pid_t pid)
{
	char path[64];
	struct dirent *d;
	DIR *dir;
	int n = 0;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	dir = opendir(path);
	if (!dir)
		return -1;
	while ((d = readdir(dir)))
		if (d->d_name[0] != '.')
			n++;
	closedir(dir);
	return n;
}
