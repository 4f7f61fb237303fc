/* runcmd.c - `safepy run`: one call in the same sandbox as the server. Prints the code's
 * stdout to stdout, its stderr and any error to stderr (and the workspace files it wrote),
 * then the result's repr, and nothing else. The exit status says how it ended (RUN_EXIT_*,
 * listed in --help and safepy(1)). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
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
	uint64_t memory; /* --memory: the limit a memory failure's note names */
	int finished;
	int status;
	int interrupted;
};

static struct run_state R;

/* The exit status of each outcome; the usage, interrupted and safepy statuses come from
 * main.c and here. */
static int run_exit_status(enum run_status s)
{
	static const int codes[] = {
	    [RUN_OK] = RUN_EXIT_OK,
	    [RUN_ERROR] = RUN_EXIT_ERROR,
	    [RUN_TIMEOUT] = RUN_EXIT_TIMEOUT,
	    [RUN_MEMORY_LIMIT] = RUN_EXIT_MEMORY,
	    [RUN_OUTPUT_LIMIT] = RUN_EXIT_OUTPUT,
	    [RUN_CRASHED] = RUN_EXIT_CRASHED,
	    [RUN_SANDBOX_VIOLATION] = RUN_EXIT_SANDBOX,
	    [RUN_CANCELLED] = RUN_EXIT_INTERRUPTED,
	};
	return (size_t)s < sizeof(codes) / sizeof(codes[0]) ? codes[s] : RUN_EXIT_SAFEPY;
}

/* Every byte of t (NUL included) to f. */
static void put_text(FILE *f, const struct text *t)
{
	if (t->s)
		fwrite(t->s, 1, t->len, f);
}

/* The code's stdout on stdout and its stderr on stderr, then the result's repr on stdout, or
 * the error on stderr: its traceback, or its type and message, and for a call a limit, the
 * sandbox or a crash stopped, the line an MCP client gets (which limit, and what to do).
 * The exit status says how the call ended. */
static void print_outcome(const struct run_outcome *o)
{
	put_text(stdout, &o->stdout_text);
	fflush(stdout);
	put_text(stderr, &o->stderr_text);
	if (o->status == RUN_OK) {
		if (o->result_repr.s) {
			/* On a line of its own, whatever the code printed before it. */
			if (o->stdout_text.len > 0 &&
			    o->stdout_text.s[o->stdout_text.len - 1] != '\n')
				fputc('\n', stdout);
			put_text(stdout, &o->result_repr);
			fputc('\n', stdout);
		}
	} else if (o->error_traceback.len > 0) {
		put_text(stderr, &o->error_traceback);
	} else {
		put_text(stderr,
		         o->error_type.len > 0 ? &o->error_type : &(struct text){"Error", 5});
		if (o->error_message.len > 0) {
			fputs(": ", stderr);
			put_text(stderr, &o->error_message);
		}
		fputc('\n', stderr);
	}
	if (o->status != RUN_OK) {
		struct mcp_server_config mcfg = {.memory_bytes = R.memory};
		struct text note = {0};

		if (mcp_status_note(o, &mcfg, &note) == 0 && note.len > 0) {
			put_text(stderr, &note);
			fputc('\n', stderr);
		}
		text_clear(&note);
	}
	for (size_t i = 0; i < o->n_files; i++) {
		/* The server's own line: a name the code chose is escaped in it. */
		static char name[4 * PATH_MAX + 1];

		log_escape(o->files[i].path, name, sizeof(name));
		fprintf(stderr, "[wrote %s, %llu bytes]\n", name,
		        (unsigned long long)o->files[i].bytes);
	}
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

	/* One signal a turn (the watch is level-triggered): SIGCHLD comes again and again while
	 * traced threads fault, and reading on would keep the loop here. */
	if (read(w->fd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
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
	char *owned = NULL, why[640];
	size_t len;
	int sfd, rc;

	if (cfg->run_code) {
		call.code = cfg->run_code;
		len = strlen(cfg->run_code);
	} else {
		owned = read_source(cfg, &len);
		if (!owned)
			return RUN_EXIT_USAGE;
		if (strlen(owned) != len) {
			fprintf(stderr, "safepy: source code cannot contain null bytes\n");
			free(owned);
			return RUN_EXIT_USAGE;
		}
		call.code = owned;
	}
	call.code_len = len;
	call.done = done;
	memset(&R, 0, sizeof(R));
	R.memory = cfg->memory;
	sfd = signals_block();
	if (sfd < 0 || loop_init() < 0) {
		fprintf(stderr, "safepy: cannot set up signals\n");
		free(owned);
		return RUN_EXIT_SAFEPY;
	}
	rc = engine_new(cfg, zygote_exe, &R.engine);
	if (rc < 0) {
		fprintf(stderr, "safepy: the server did not start: %s\n", strerror(-rc));
		free(owned);
		return RUN_EXIT_SAFEPY;
	}
	sig = (struct watch){.fd = sfd, .fn = sig_event};
	loop_add(&sig, EPOLLIN);
	rc = engine_start_wait(R.engine, &R.interrupted, why, sizeof(why));
	if (rc <= 0) {
		if (rc < 0)
			fprintf(stderr, "safepy: %s\n", why);
		engine_free(R.engine);
		free(owned);
		return rc == -EINVAL ? RUN_EXIT_USAGE
		       : rc < 0      ? RUN_EXIT_SAFEPY
		                     : RUN_EXIT_INTERRUPTED;
	}
	engine_submit(R.engine, &call);
	while (!R.finished && !R.interrupted) {
		if (loop_run_once(-1) < 0)
			break;
	}
	engine_free(R.engine);
	free(owned);
	if (!R.finished) {
		fprintf(stderr, "safepy: interrupted\n");
		return RUN_EXIT_INTERRUPTED;
	}
	return R.status;
}
