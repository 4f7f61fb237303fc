/* runcmd.c - `safepy run`: one call in the same sandbox as the server. Prints the code's
 * stdout to stdout, its stderr and any error to stderr, then the result's repr. The exit
 * status says how it ended (see run_exit_status). */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "supervisor.h"

struct run_state {
	struct engine *engine;
	int finished;
	int status;
	int interrupted;
};

static struct run_state R;

/* 0 ok, 1 Python error, 3 timeout, 4 memory, 5 output, 6 crash, 7 sandbox violation,
 * 8 cancelled; 2 is a usage error. */
static int run_exit_status(enum run_status s)
{
	static const int codes[] = {
	    [RUN_OK] = 0,
	    [RUN_ERROR] = 1,
	    [RUN_TIMEOUT] = 3,
	    [RUN_MEMORY_LIMIT] = 4,
	    [RUN_OUTPUT_LIMIT] = 5,
	    [RUN_CRASHED] = 6,
	    [RUN_SANDBOX_VIOLATION] = 7,
	    [RUN_CANCELLED] = 8,
	};
	return codes[s];
}

static void print_outcome(const struct run_outcome *o)
{
	if (o->stdout_text)
		fputs(o->stdout_text, stdout);
	fflush(stdout);
	if (o->stderr_text)
		fputs(o->stderr_text, stderr);
	if (o->status == RUN_OK) {
		if (o->result_repr)
			printf("%s\n", o->result_repr);
	} else if (o->error_traceback && *o->error_traceback) {
		fputs(o->error_traceback, stderr);
		if (o->status != RUN_ERROR)
			fprintf(stderr, "[%s]\n", run_status_name(o->status));
	} else {
		fprintf(stderr, "%s: %s\n[%s]\n", o->error_type ? o->error_type : "Error",
		        o->error_message ? o->error_message : "", run_status_name(o->status));
	}
	if (o->truncated)
		fprintf(stderr, "[output truncated]\n");
	/* The images a call returns reach an MCP client; here they are only named. */
	for (size_t i = 0; i < o->n_images; i++)
		fprintf(stderr, "[figure %zu: %ux%u PNG image, %zu bytes; an MCP client gets it]\n",
		        i + 1, (unsigned)o->images[i].width, (unsigned)o->images[i].height,
		        o->images[i].len);
	fflush(stdout);
}

static void done(struct engine_call *c, struct run_outcome *o)
{
	print_outcome(o);
	R.status = run_exit_status(o->status);
	R.finished = 1;
}

static void sig_event(struct watch *w, uint32_t events)
{
	struct signalfd_siginfo si;

	while (read(w->fd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		if (si.ssi_signo == SIGCHLD)
			engine_sigchld(R.engine);
		else
			R.interrupted = 1;
	}
}

/* Read the whole source (at most PROTO_MAX_LINE bytes). */
static char *read_source(const struct config *cfg, size_t *len)
{
	int fd = strcmp(cfg->run_file, "-") == 0 ? STDIN_FILENO
	                                         : open(cfg->run_file, O_RDONLY | O_CLOEXEC);
	size_t cap = 65536, n = 0;
	char *buf;

	if (fd < 0) {
		fprintf(stderr, "safepy: %s: %s\n", cfg->run_file, strerror(errno));
		return NULL;
	}
	buf = malloc(cap);
	while (buf) {
		ssize_t r;
		if (n + 1 >= cap) {
			char *p = cap >= PROTO_MAX_LINE ? NULL : realloc(buf, cap * 2);
			if (!p) {
				fprintf(stderr, "safepy: %s: larger than %u bytes\n", cfg->run_file,
				        PROTO_MAX_LINE);
				free(buf);
				buf = NULL;
				break;
			}
			buf = p;
			cap *= 2;
		}
		r = read(fd, buf + n, cap - n - 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			fprintf(stderr, "safepy: %s: %s\n", cfg->run_file, strerror(errno));
			free(buf);
			buf = NULL;
			break;
		}
		if (r == 0) {
			buf[n] = '\0';
			*len = n;
			break;
		}
		n += (size_t)r;
	}
	if (fd != STDIN_FILENO)
		close(fd);
	return buf;
}

int runcmd_main(const struct config *cfg, const char *zygote_exe)
{
	struct engine_call call = {0};
	struct watch sig;
	char *owned = NULL;
	size_t len;
	int sfd, rc;

	if (cfg->run_code) {
		call.code = cfg->run_code;
		len = strlen(cfg->run_code);
	} else {
		owned = read_source(cfg, &len);
		if (!owned)
			return 2;
		if (strlen(owned) != len) {
			fprintf(stderr, "safepy: source code cannot contain null bytes\n");
			free(owned);
			return 2;
		}
		call.code = owned;
	}
	call.code_len = len;
	call.done = done;
	memset(&R, 0, sizeof(R));
	sfd = signals_block();
	if (sfd < 0 || loop_init() < 0) {
		fprintf(stderr, "safepy: cannot set up signals\n");
		free(owned);
		return 6;
	}
	rc = engine_new(cfg, zygote_exe, &R.engine);
	if (rc < 0) {
		fprintf(stderr, "safepy: cannot start the Python zygote: %s\n", strerror(-rc));
		free(owned);
		return 6;
	}
	sig = (struct watch){.fd = sfd, .fn = sig_event};
	loop_add(&sig, EPOLLIN);
	engine_submit(R.engine, &call);
	while (!R.finished && !R.interrupted) {
		if (loop_run_once(-1) < 0)
			break;
	}
	engine_free(R.engine);
	free(owned);
	if (!R.finished) {
		fprintf(stderr, "safepy: interrupted\n");
		return 8;
	}
	return R.status;
}
