/* test_ipc.c - unit tests of ipc/, the wire between the supervisor and its Python processes:
 * frame headers and blocking frame I/O, the fork gate's answer words, the zygote's control
 * messages and configuration, passing fds with the sender's pid, worker exit codes, and the
 * outcome codec (hostile input). */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ipc.h"

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

/* ---- integers and frames --------------------------------------------------------------- */

Test(ipc, integers_are_little_endian)
{
	unsigned char b[4];
	static const uint32_t vals[] = {0, 1, 255, 256, 0x01020304, IPC_FRAME_MAX, UINT32_MAX};

	ipc_put_u32(b, 0x01020304);
	cr_assert(b[0] == 4 && b[1] == 3 && b[2] == 2 && b[3] == 1);
	for (size_t i = 0; i < N_OF(vals); i++) {
		ipc_put_u32(b, vals[i]);
		cr_assert_eq(ipc_get_u32(b), vals[i]);
	}
}

Test(ipc, frame_header_round_trips_and_refuses_oversize)
{
	unsigned char h[IPC_FRAME_HEADER];
	uint32_t len = 0;
	char type = 0;

	ipc_frame_header_put(h, IPC_FRAME_RESULT, 1234);
	cr_assert_eq(ipc_frame_header_get(h, &type, &len), 0);
	cr_assert_eq(type, IPC_FRAME_RESULT);
	cr_assert_eq(len, 1234);
	ipc_frame_header_put(h, IPC_FRAME_CODE, IPC_FRAME_MAX);
	cr_assert_eq(ipc_frame_header_get(h, &type, &len), 0);
	cr_assert_eq(len, IPC_FRAME_MAX);
	type = 'x';
	len = 7;
	ipc_frame_header_put(h, IPC_FRAME_CODE, IPC_FRAME_MAX + 1);
	cr_assert_eq(ipc_frame_header_get(h, &type, &len), -EMSGSIZE);
	cr_assert_eq(type, 'x', "out-params are written only on success");
	cr_assert_eq(len, 7);
}

Test(ipc, frames_cross_a_socket_whole_with_prefix_and_body)
{
	int sv[2];
	char type = 0, *payload = NULL;
	size_t len = 0;
	unsigned char seq[IPC_SEQ_BYTES];

	cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	ipc_put_u32(seq, 77);
	cr_assert_eq(ipc_frame_write(sv[0], IPC_FRAME_CODE, seq, sizeof(seq), "1 + 1", 5), 0);
	cr_assert_eq(ipc_frame_write(sv[0], IPC_FRAME_READY, NULL, 0, NULL, 0), 0);
	cr_assert_eq(ipc_frame_read(sv[1], &type, &payload, &len, 100), 0);
	cr_assert_eq(type, IPC_FRAME_CODE);
	cr_assert_eq(len, 9);
	cr_assert_eq(ipc_get_u32((unsigned char *)payload), 77);
	cr_assert_str_eq(payload + 4, "1 + 1", "the payload is NUL-terminated");
	free(payload);
	cr_assert_eq(ipc_frame_read(sv[1], &type, &payload, &len, 100), 0);
	cr_assert_eq(type, IPC_FRAME_READY);
	cr_assert_eq(len, 0);
	free(payload);
	/* Larger than the reader allows: refused, nothing allocated for it. */
	cr_assert_eq(ipc_frame_write(sv[0], IPC_FRAME_CODE, NULL, 0, "0123456789", 10), 0);
	cr_assert_eq(ipc_frame_read(sv[1], &type, &payload, &len, 9), -EMSGSIZE);
	{
		char skip[10];
		cr_assert_eq(read(sv[1], skip, sizeof(skip)), 10,
		             "the refused payload stays unread");
	}
	close(sv[0]);
	cr_assert_eq(ipc_frame_read(sv[1], &type, &payload, &len, 100), -EPIPE,
	             "EOF mid-stream is -EPIPE");
	close(sv[1]);
}

Test(ipc, frame_write_refuses_a_payload_over_the_maximum)
{
	cr_assert_eq(ipc_frame_write(-1, IPC_FRAME_RESULT, NULL, 4, NULL, IPC_FRAME_MAX),
	             -EMSGSIZE);
	cr_assert_eq(ipc_frame_write(-1, IPC_FRAME_RESULT, NULL, IPC_FRAME_MAX + 1, NULL, 0),
	             -EMSGSIZE);
}

/* ---- the fork gate's answer words ------------------------------------------------------ */

Test(ipc, park_words_round_trip_and_are_never_pids)
{
	static const enum ipc_park_cmd cmds[] = {IPC_PARK_RUN, IPC_PARK_WARM, IPC_PARK_REAP};
	static const uint32_t args[] = {0, 1, 0xabcdef, IPC_PARK_ARG_MASK};

	for (size_t i = 0; i < N_OF(cmds); i++)
		for (size_t j = 0; j < N_OF(args); j++) {
			uint32_t w = ipc_park_word(cmds[i], args[j]), arg = 0;
			enum ipc_park_cmd cmd = 0;
			cr_assert_gt(w, 1u << 22, "above every possible pid");
			cr_assert_leq(w, (uint32_t)INT32_MAX, "a positive int (a fork's return)");
			cr_assert_eq(ipc_park_decode((long)w, &cmd, &arg), 1);
			cr_assert_eq(cmd, cmds[i]);
			cr_assert_eq(arg, args[j]);
		}
}

Test(ipc, park_decode_refuses_pids_errors_and_out_of_range)
{
	static const long vals[] = {0,
	                            1,
	                            4194304,
	                            (long)IPC_PARK_WORD - 1,
	                            -1,
	                            -38,
	                            (long)INT32_MAX + 1,
	                            -(long)IPC_PARK_WORD};
	enum ipc_park_cmd cmd = 0;
	uint32_t arg = 99;

	for (size_t i = 0; i < N_OF(vals); i++)
		cr_assert_eq(ipc_park_decode(vals[i], &cmd, &arg), 0, "value %ld", vals[i]);
	cr_assert_eq(arg, 99, "out-params are written only on success");
}

/* ---- the zygote's control messages and configuration -------------------------------------- */

Test(ipc, zygote_messages_have_one_size)
{
	unsigned char m[IPC_ZYGOTE_MSG];
	uint32_t a = 0, b = 0;
	char t = 0;

	ipc_zygote_msg_put(m, IPC_ZYGOTE_PID, 7, 0xfffffffe);
	cr_assert_eq(ipc_zygote_msg_get(m, sizeof(m), &t, &a, &b), 0);
	cr_assert_eq(t, IPC_ZYGOTE_PID);
	cr_assert_eq(a, 7);
	cr_assert_eq(b, 0xfffffffe);
	cr_assert_eq(ipc_zygote_msg_get(m, sizeof(m) - 1, &t, &a, &b), -EINVAL);
	cr_assert_eq(ipc_zygote_msg_get(m, sizeof(m) + 1, &t, &a, &b), -EINVAL);
}

/* The zygote's import-failed message: the index and why, bounded, on character boundaries;
 * the supervisor's reading keeps no control character (the text goes to a terminal). */
Test(ipc, import_failed_message_is_bounded_and_printable)
{
	unsigned char m[IPC_ZYGOTE_FAIL_MAX], big[2 * IPC_ZYGOTE_FAIL_MAX];
	char why[IPC_ZYGOTE_FAIL_TEXT + 1], text[IPC_ZYGOTE_FAIL_TEXT + 8];
	uint32_t index = 99;
	size_t n;

	n = ipc_zygote_fail_put(m, 7, "no module named 'x'", 19);
	cr_assert_eq(n, 5 + 19);
	cr_assert_eq(ipc_zygote_fail_get(m, n, &index, why, sizeof(why)), 0);
	cr_assert_eq(index, 7);
	cr_assert_str_eq(why, "no module named 'x'");
	/* Control characters (C0, DEL, C1) and bytes that are not UTF-8 become '?'. */
	n = ipc_zygote_fail_put(m, 1, "a\x1b[31mb\x7f\xc2\x9b\xc3\xa9\xff\n", 14);
	cr_assert_eq(ipc_zygote_fail_get(m, n, &index, why, sizeof(why)), 0);
	cr_assert_str_eq(why, "a?[31mb???\xc3\xa9??");
	/* Too long: cut before a character that would not fit whole. */
	memset(text, 'x', sizeof(text));
	memcpy(text + IPC_ZYGOTE_FAIL_TEXT - 1, "\xc3\xa9", 2);
	n = ipc_zygote_fail_put(m, 2, text, sizeof(text));
	cr_assert_eq(n, 5 + IPC_ZYGOTE_FAIL_TEXT - 1);
	cr_assert_eq(ipc_zygote_fail_get(m, n, &index, why, sizeof(why)), 0);
	cr_assert_eq(strlen(why), IPC_ZYGOTE_FAIL_TEXT - 1);
	/* A small buffer gets what fits, still NUL-terminated and on a character boundary. */
	n = ipc_zygote_fail_put(m, 3, "\xc3\xa9\xc3\xa9", 4);
	cr_assert_eq(ipc_zygote_fail_get(m, n, &index, why, 4), 0);
	cr_assert_str_eq(why, "\xc3\xa9");
	/* Not one: another type, too short, too long, no room at all. */
	m[0] = 'X';
	cr_assert_eq(ipc_zygote_fail_get(m, n, &index, why, sizeof(why)), -EINVAL);
	m[0] = IPC_ZYGOTE_FAIL;
	cr_assert_eq(ipc_zygote_fail_get(m, 4, &index, why, sizeof(why)), -EINVAL);
	memset(big, 'y', sizeof(big));
	big[0] = IPC_ZYGOTE_FAIL;
	cr_assert_eq(ipc_zygote_fail_get(big, sizeof(big), &index, why, sizeof(why)), -EINVAL);
	cr_assert_eq(ipc_zygote_fail_get(m, n, &index, why, 0), -EINVAL);
}

Test(ipc, config_round_trips)
{
	char *imports[] = {(char *)"json", (char *)"math", (char *)"numpy.random"};
	struct ipc_config in = {.memory_bytes = 512ull << 20,
	                        .cpu_s = 30,
	                        .uid = 65534,
	                        .gid = 65533,
	                        .try_namespaces = 1,
	                        .try_landlock = 0,
	                        .max_output = 65536,
	                        .max_result = 1000,
	                        .unsafe_no_python_layer = 1,
	                        .tasks_cgroup = 1,
	                        .imports = imports,
	                        .n_imports = N_OF(imports),
	                        .workspace = (char *)"/srv/data set",
	                        .workspace_write = 1,
	                        .cache = (char *)"/home/u/.cache/safepy/matplotlib"},
	                  out;
	size_t len = 0;
	char *msg = ipc_config_encode(&in, &len);

	cr_assert_not_null(msg);
	cr_assert_eq(msg[0], IPC_ZYGOTE_CONFIG);
	cr_assert_eq(ipc_config_decode(msg, len, &out), 0, "%.*s", (int)len, msg);
	cr_assert_eq(out.memory_bytes, in.memory_bytes);
	cr_assert_eq(out.cpu_s, 30);
	cr_assert_eq(out.uid, 65534);
	cr_assert_eq(out.gid, 65533);
	cr_assert_eq(out.try_namespaces, 1);
	cr_assert_eq(out.try_landlock, 0);
	cr_assert_eq(out.max_output, 65536);
	cr_assert_eq(out.max_result, 1000);
	cr_assert_eq(out.unsafe_no_python_layer, 1);
	cr_assert_eq(out.tasks_cgroup, 1);
	cr_assert_eq(out.n_imports, 3);
	for (size_t i = 0; i < 3; i++)
		cr_assert_str_eq(out.imports[i], imports[i]);
	cr_assert_str_eq(out.workspace, "/srv/data set");
	cr_assert_eq(out.workspace_write, 1);
	cr_assert_str_eq(out.cache, "/home/u/.cache/safepy/matplotlib");
	ipc_config_clear(&out);
	free(msg);
}

/* The cache and workspace members of a configuration without either. */
#define WS_MEMBERS ",\"cache\":\"\",\"workspace\":\"\",\"workspace_write\":false"
/* A configuration whose every member but the workspace is valid, with its workspace members. */
#define CONFIG_WITH(ws)                                                                            \
	"K{\"memory_bytes\":1,\"cpu_s\":1,\"uid\":0,\"gid\":0,\"namespaces\":true,"                \
	"\"landlock\":true,\"max_output\":1,\"max_result\":1,"                                     \
	"\"unsafe_no_python_layer\":false,\"tasks_cgroup\":false,\"imports\":[],"                  \
	"\"cache\":\"\"," ws "}"

Test(ipc, config_decodes_a_workspace)
{
	static const struct {
		const char *msg;
		const char *path; /* NULL: none */
		int writable;
	} good[] = {
	    {CONFIG_WITH("\"workspace\":\"\",\"workspace_write\":false"), NULL, 0},
	    {CONFIG_WITH("\"workspace\":\"/\",\"workspace_write\":false"), "/", 0},
	    {CONFIG_WITH("\"workspace\":\"/home/u/data\",\"workspace_write\":true"), "/home/u/data",
	     1},
	    {CONFIG_WITH("\"workspace\":\"/a/.b/..c\",\"workspace_write\":false"), "/a/.b/..c", 0},
	};
	struct ipc_config c;

	for (size_t i = 0; i < N_OF(good); i++) {
		cr_assert_eq(ipc_config_decode(good[i].msg, strlen(good[i].msg), &c), 0, "%s",
		             good[i].msg);
		if (good[i].path)
			cr_assert_str_eq(c.workspace, good[i].path);
		else
			cr_assert_null(c.workspace);
		cr_assert_eq(c.workspace_write, good[i].writable);
		ipc_config_clear(&c);
	}
}

Test(ipc, config_decode_refuses_every_malformed_message)
{
	static const char *const bad[] = {
	    "",
	    "K",
	    "X{}",
	    "K{}",
	    "Knull",
	    "K[]",
	    /* a member missing */
	    "K{\"memory_bytes\":1,\"cpu_s\":1,\"uid\":0,\"gid\":0,\"namespaces\":true,"
	    "\"landlock\":true,\"max_output\":1,\"max_result\":1,\"imports\":[]}",
	    /* an unknown member in place of one */
	    "K{\"memory_bytes\":1,\"cpu_s\":1,\"uid\":0,\"gid\":0,\"namespaces\":true,"
	    "\"landlock\":true,\"max_output\":1,\"max_result\":1,\"imports\":[],\"x\":1}",
	    /* wrong types and ranges */
	    "K{\"memory_bytes\":\"1\",\"cpu_s\":1,\"uid\":0,\"gid\":0,\"namespaces\":true,"
	    "\"landlock\":true,\"max_output\":1,\"max_result\":1,"
	    "\"unsafe_no_python_layer\":false,\"tasks_cgroup\":false,\"imports\":[]" WS_MEMBERS "}",
	    "K{\"memory_bytes\":0,\"cpu_s\":1,\"uid\":0,\"gid\":0,\"namespaces\":true,"
	    "\"landlock\":true,\"max_output\":1,\"max_result\":1,"
	    "\"unsafe_no_python_layer\":false,\"tasks_cgroup\":false,\"imports\":[]" WS_MEMBERS "}",
	    "K{\"memory_bytes\":1,\"cpu_s\":-1,\"uid\":0,\"gid\":0,\"namespaces\":true,"
	    "\"landlock\":true,\"max_output\":1,\"max_result\":1,"
	    "\"unsafe_no_python_layer\":false,\"tasks_cgroup\":false,\"imports\":[]" WS_MEMBERS "}",
	    "K{\"memory_bytes\":1,\"cpu_s\":1,\"uid\":4294967296,\"gid\":0,\"namespaces\":true,"
	    "\"landlock\":true,\"max_output\":1,\"max_result\":1,"
	    "\"unsafe_no_python_layer\":false,\"tasks_cgroup\":false,\"imports\":[]" WS_MEMBERS "}",
	    "K{\"memory_bytes\":1,\"cpu_s\":1,\"uid\":0,\"gid\":0,\"namespaces\":1,"
	    "\"landlock\":true,\"max_output\":1,\"max_result\":1,"
	    "\"unsafe_no_python_layer\":false,\"tasks_cgroup\":false,\"imports\":[]" WS_MEMBERS "}",
	    "K{\"memory_bytes\":1,\"cpu_s\":1,\"uid\":0,\"gid\":0,\"namespaces\":true,"
	    "\"landlock\":true,\"max_output\":1,\"max_result\":1,"
	    "\"unsafe_no_python_layer\":false,\"tasks_cgroup\":false,\"imports\":[1]" WS_MEMBERS
	    "}",
	    "K{\"memory_bytes\":1,\"cpu_s\":1,\"uid\":0,\"gid\":0,\"namespaces\":true,"
	    "\"landlock\":true,\"max_output\":1,\"max_result\":1,"
	    "\"unsafe_no_python_layer\":false,\"tasks_cgroup\":false,\"imports\":[\"\"]" WS_MEMBERS
	    "}",
	    "K{\"memory_bytes\":1,\"cpu_s\":1,\"uid\":0,\"gid\":0,\"namespaces\":true,"
	    "\"landlock\":true,\"max_output\":1,\"max_result\":1,"
	    "\"unsafe_no_python_layer\":false,\"tasks_cgroup\":false,\"imports\":["
	    "\"a\\u0000b\"]" WS_MEMBERS "}",
	    "K{\"memory_bytes\":1,\"cpu_s\":1,\"uid\":0,\"gid\":0,\"namespaces\":true,"
	    "\"landlock\":true,\"max_output\":1,\"max_result\":1,"
	    "\"unsafe_no_python_layer\":false,\"tasks_cgroup\":false,\"imports\":[]" WS_MEMBERS
	    "} trailing",
	    /* workspaces: relative, with "." or "..", NUL, of another type, writable without one */
	    CONFIG_WITH("\"workspace\":\"data\",\"workspace_write\":false"),
	    CONFIG_WITH("\"workspace\":\"/a/../b\",\"workspace_write\":false"),
	    CONFIG_WITH("\"workspace\":\"/a/..\",\"workspace_write\":false"),
	    CONFIG_WITH("\"workspace\":\"/a/./b\",\"workspace_write\":false"),
	    CONFIG_WITH("\"workspace\":\"/a\\u0000b\",\"workspace_write\":false"),
	    CONFIG_WITH("\"workspace\":null,\"workspace_write\":false"),
	    CONFIG_WITH("\"workspace\":\"/a\",\"workspace_write\":1"),
	    CONFIG_WITH("\"workspace\":\"\",\"workspace_write\":true"),
	    CONFIG_WITH("\"workspace\":\"/a\""),
	    /* The zygote's cache directory: absolute, no NUL, no "." or ".." component. */
	    "K{\"memory_bytes\":1,\"cpu_s\":1,\"uid\":0,\"gid\":0,\"namespaces\":true,"
	    "\"landlock\":true,\"max_output\":1,\"max_result\":1,\"unsafe_no_python_layer\":false,"
	    "\"tasks_cgroup\":false,\"imports\":[],\"cache\":\"cache\",\"workspace\":\"\","
	    "\"workspace_write\":false}",
	    "K{\"memory_bytes\":1,\"cpu_s\":1,\"uid\":0,\"gid\":0,\"namespaces\":true,"
	    "\"landlock\":true,\"max_output\":1,\"max_result\":1,\"unsafe_no_python_layer\":false,"
	    "\"tasks_cgroup\":false,\"imports\":[],\"cache\":\"/a/../"
	    "b\",\"workspace\":\"\",\"workspace_write\":false}",
	    "K{\"memory_bytes\":1,\"cpu_s\":1,\"uid\":0,\"gid\":0,\"namespaces\":true,"
	    "\"landlock\":true,\"max_output\":1,\"max_result\":1,\"unsafe_no_python_layer\":false,"
	    "\"tasks_cgroup\":false,\"imports\":[],\"workspace\":\"\",\"workspace_write\":false}",
	};
	struct ipc_config c;

	for (size_t i = 0; i < N_OF(bad); i++) {
		memset(&c, 0x5a, sizeof(c));
		cr_assert_eq(ipc_config_decode(bad[i], strlen(bad[i]), &c), -EINVAL,
		             "message %zu: %s", i, bad[i]);
		cr_assert_eq(c.cpu_s, 0x5a5a5a5a, "out-params are written only on success");
	}
}

Test(ipc, module_names_are_dotted_identifiers)
{
	static const char *const good[] = {"a", "json", "json.decoder", "numpy.core._methods",
	                                   "_x.y2.Z_"};
	static const char *const bad[] = {"",    ".",   "a.",  ".a",     "a..b",  "1a",      "a.1b",
	                                  "a/b", "a b", "a-b", "../etc", "a.b\n", "\xc3\xa9"};
	char longname[300];

	for (size_t i = 0; i < N_OF(good); i++)
		cr_assert(ipc_module_name_valid(good[i], strlen(good[i])), "%s", good[i]);
	for (size_t i = 0; i < N_OF(bad); i++)
		cr_assert_not(ipc_module_name_valid(bad[i], strlen(bad[i])), "%s", bad[i]);
	cr_assert_not(ipc_module_name_valid("a\0b", 3), "NUL inside");
	memset(longname, 'a', sizeof(longname));
	cr_assert(ipc_module_name_valid(longname, 255));
	cr_assert_not(ipc_module_name_valid(longname, 256));
}

Test(ipc, roots_round_trip_and_refuse_escapes)
{
	char *names[] = {(char *)"numpy", (char *)"pandas"};
	char *dirs[] = {(char *)"/usr/lib/python3/dist-packages/numpy",
	                (char *)"/usr/lib/python3/dist-packages/pandas"};
	struct ipc_roots in = {.stdlib = (char *)"/usr/lib/python3.11",
	                       .names = names,
	                       .dirs = dirs,
	                       .n = 2},
	                 out;
	static const char *const bad[] = {
	    "D{\"stdlib\":\"lib\",\"packages\":{}}",
	    "D{\"stdlib\":\"/usr/../etc\",\"packages\":{}}",
	    "D{\"stdlib\":\"/usr/lib/..\",\"packages\":{}}",
	    "D{\"stdlib\":\"/usr/./lib\",\"packages\":{}}",
	    "D{\"stdlib\":\"/usr\",\"packages\":{\"a.b\":\"/x\"}}",
	    "D{\"stdlib\":\"/usr\",\"packages\":{\"a\":\"x\"}}",
	    "D{\"stdlib\":\"/usr\",\"packages\":{\"a\":1}}",
	    "D{\"stdlib\":\"/usr\",\"packages\":[]}",
	    "D{\"stdlib\":\"/usr\"}",
	    "D{\"stdlib\":\"/usr\",\"packages\":{},\"x\":1}",
	    "K{\"stdlib\":\"/usr\",\"packages\":{}}",
	};
	size_t len = 0;
	char *msg = ipc_roots_encode(&in, &len);

	cr_assert_not_null(msg);
	cr_assert_eq(ipc_roots_decode(msg, len, &out), 0, "%.*s", (int)len, msg);
	cr_assert_str_eq(out.stdlib, "/usr/lib/python3.11");
	cr_assert_eq(out.n, 2);
	for (size_t i = 0; i < 2; i++) {
		int j = strcmp(out.names[0], "numpy") == 0 ? (int)i : 1 - (int)i;
		cr_assert_str_eq(out.names[j], names[i]);
		cr_assert_str_eq(out.dirs[j], dirs[i]);
	}
	ipc_roots_clear(&out);
	free(msg);
	for (size_t i = 0; i < N_OF(bad); i++) {
		memset(&out, 0x5a, sizeof(out));
		cr_assert_eq(ipc_roots_decode(bad[i], strlen(bad[i]), &out), -EINVAL, "%s", bad[i]);
		cr_assert_eq(out.n, (size_t)0x5a5a5a5a5a5a5a5aull, "written only on success");
	}
}

/* ---- fds and senders ------------------------------------------------------------------------ */

Test(ipc, recv_names_the_sender_and_takes_the_fd)
{
	int sv[2], one = 1, pipefd[2];
	unsigned char buf[16];
	struct ipc_recv_info info;
	pid_t child;
	ssize_t n;

	cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	cr_assert_eq(setsockopt(sv[1], SOL_SOCKET, SO_PASSCRED, &one, sizeof(one)), 0);
	cr_assert_eq(pipe(pipefd), 0);
	cr_assert_eq(ipc_send_fd(sv[0], "fd", 2, pipefd[1]), 0);
	n = ipc_recv(sv[1], buf, sizeof(buf), 0, &info);
	cr_assert_eq(n, 2);
	cr_assert_eq(info.sender, getpid());
	cr_assert_eq(info.n_fds, 1);
	cr_assert_eq(fcntl(info.fds[0], F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
	cr_assert_eq(write(info.fds[0], "x", 1), 1, "the passed fd is the pipe's write end");
	cr_assert_eq(read(pipefd[0], buf, 1), 1);
	cr_assert_eq(buf[0], 'x');
	close(info.fds[0]);

	/* Bytes of two writers never come back from one call: each is named. */
	child = fork();
	if (child == 0)
		_exit(write(sv[0], "bb", 2) == 2 ? 0 : 1);
	cr_assert_eq(waitpid(child, NULL, 0), child);
	cr_assert_eq(write(sv[0], "aa", 2), 2);
	n = ipc_recv(sv[1], buf, sizeof(buf), 0, &info);
	cr_assert_eq(n, 2);
	cr_assert_eq(info.sender, child);
	n = ipc_recv(sv[1], buf, sizeof(buf), 0, &info);
	cr_assert_eq(n, 2);
	cr_assert_eq(info.sender, getpid());
	close(sv[0]);
	close(sv[1]);
	close(pipefd[0]);
	close(pipefd[1]);
}

/* ---- exit codes ----------------------------------------------------------------------------- */

Test(ipc, every_exit_code_has_a_name)
{
	for (int code = WORKER_EXIT_FDS; code <= WORKER_EXIT_DEFER; code++)
		cr_assert_not_null(ipc_worker_exit_reason(code), "worker code %d", code);
	cr_assert_str_eq(ipc_worker_exit_reason(WORKER_EXIT_SECCOMP),
	                 "the seccomp filter could not be loaded");
	cr_assert_null(ipc_worker_exit_reason(1));
	cr_assert_null(ipc_worker_exit_reason(WORKER_EXIT_FDS - 1));
	cr_assert_null(ipc_worker_exit_reason(WORKER_EXIT_DEFER + 1));
	for (int code = ZYGOTE_EXIT_SETUP; code <= ZYGOTE_EXIT_CONFIG; code++)
		cr_assert_not_null(ipc_zygote_exit_reason(code), "zygote code %d", code);
	cr_assert_null(ipc_zygote_exit_reason(0));
	cr_assert_null(ipc_zygote_exit_reason(127));
}

/* ---- outcomes -------------------------------------------------------------------------- */

Test(outcome, encode_decode_round_trip)
{
	struct run_outcome o, back;
	char *json;
	size_t len;

	run_outcome_init(&o);
	o.status = RUN_ERROR;
	text_set_str(&o.stdout_text, "caf\xc3\xa9 \"quoted\" / \\ \x01\n");
	text_set_str(&o.stderr_text, "warn\n");
	text_set_str(&o.logs, "caf\xc3\xa9 \"quoted\" / \\ \x01\nwarn\n");
	o.result = json_tokener_parse("{\"a\":[1,2.5,\"x\",null,true],\"b\":{}}");
	text_set_str(&o.result_repr, "{'a': [1, 2.5, 'x', None, True], 'b': {}}");
	text_set_str(&o.error_type, "KeyError");
	text_set_str(&o.error_message, "'k'");
	text_set_str(&o.error_traceback, "Traceback (most recent call last):\nKeyError: 'k'\n");
	o.truncated = 1;
	o.threads = 3;
	json = ipc_outcome_encode(&o, &len);
	cr_assert_not_null(json);
	cr_assert_eq(strlen(json), len);
	run_outcome_init(&back);
	cr_assert_eq(ipc_outcome_decode(json, len, &back), 0);
	cr_assert_eq(back.status, RUN_ERROR);
	cr_assert_eq(back.threads, 3);
	cr_assert_str_eq(back.stdout_text.s, o.stdout_text.s);
	cr_assert_str_eq(back.stderr_text.s, o.stderr_text.s);
	cr_assert_str_eq(back.logs.s, o.logs.s);
	cr_assert(json_object_equal(back.result, o.result));
	cr_assert_str_eq(back.result_repr.s, o.result_repr.s);
	cr_assert_str_eq(back.error_type.s, "KeyError");
	cr_assert_str_eq(back.error_message.s, "'k'");
	cr_assert_str_eq(back.error_traceback.s, o.error_traceback.s);
	cr_assert_eq(back.truncated, 1);
	free(json);
	run_outcome_clear(&back);
	run_outcome_clear(&o);
}

Test(outcome, round_trip_of_every_status_with_nulls)
{
	enum run_status st;

	for (st = RUN_OK; st <= RUN_SANDBOX_VIOLATION; st++) {
		struct run_outcome o, back;
		char *json;
		size_t len;

		run_outcome_init(&o);
		o.status = st;
		json = ipc_outcome_encode(&o, &len);
		cr_assert_not_null(json);
		run_outcome_init(&back);
		cr_assert_eq(ipc_outcome_decode(json, len, &back), 0, "%s", json);
		cr_assert_eq(back.status, st);
		cr_assert_str_eq(back.stdout_text.s, "");
		cr_assert_eq(back.stdout_text.len, 0);
		cr_assert_str_eq(back.logs.s, "");
		cr_assert_null(back.result);
		cr_assert_null(back.result_repr.s);
		cr_assert_null(back.error_type.s);
		cr_assert_null(back.error_traceback.s);
		cr_assert_eq(back.truncated, 0);
		free(json);
		run_outcome_clear(&back);
		run_outcome_clear(&o);
	}
}

Test(outcome, encode_replaces_invalid_utf8)
{
	struct run_outcome o, back;
	char *json;
	size_t len;

	run_outcome_init(&o);
	text_set_str(&o.stdout_text, "a\xff"
	                             "b\xed\xa0\x80"
	                             "c\xc3");
	json = ipc_outcome_encode(&o, &len);
	cr_assert_not_null(json);
	run_outcome_init(&back);
	cr_assert_eq(ipc_outcome_decode(json, len, &back), 0, "%s", json);
	cr_assert_str_eq(back.stdout_text.s, "a\xef\xbf\xbd"
	                                     "b\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"
	                                     "c\xef\xbf\xbd");
	free(json);
	run_outcome_clear(&back);
	run_outcome_clear(&o);
}

/* NUL and every other character of user data cross the wire, escaped, with their lengths. */
Test(outcome, every_character_survives_nul_included)
{
	static const char all[] =
	    "a\0b\x01\x1f\x7f\"\\/\n\r\t\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\0";
	const size_t n = sizeof(all) - 1;
	struct text *fields[7];
	struct run_outcome o, back;
	char *json;
	size_t len;

	run_outcome_init(&o);
	o.status = RUN_ERROR;
	fields[0] = &o.stdout_text;
	fields[1] = &o.stderr_text;
	fields[2] = &o.logs;
	fields[3] = &o.result_repr;
	fields[4] = &o.error_type;
	fields[5] = &o.error_message;
	fields[6] = &o.error_traceback;
	for (size_t i = 0; i < N_OF(fields); i++)
		cr_assert_eq(text_set(fields[i], all, n), 0);
	o.result = json_object_new_string_len(all, (int)n);
	json = ipc_outcome_encode(&o, &len);
	cr_assert_not_null(json);
	cr_assert_eq(strlen(json), len, "the encoding holds no raw NUL");
	cr_assert(strstr(json, "a\\u0000b"), "%s", json);
	run_outcome_init(&back);
	cr_assert_eq(ipc_outcome_decode(json, len, &back), 0, "%s", json);
	fields[0] = &back.stdout_text;
	fields[1] = &back.stderr_text;
	fields[2] = &back.logs;
	fields[3] = &back.result_repr;
	fields[4] = &back.error_type;
	fields[5] = &back.error_message;
	fields[6] = &back.error_traceback;
	for (size_t i = 0; i < N_OF(fields); i++) {
		cr_assert_eq(fields[i]->len, n, "field %zu: %zu bytes", i, fields[i]->len);
		cr_assert_eq(memcmp(fields[i]->s, all, n), 0, "field %zu", i);
		cr_assert_eq(fields[i]->s[n], '\0', "field %zu ends with a NUL after its bytes", i);
	}
	cr_assert(json_object_equal(back.result, o.result));
	cr_assert_eq(json_object_get_string_len(back.result), (int)n);
	free(json);
	run_outcome_clear(&back);
	run_outcome_clear(&o);
}

#define GOOD_TAIL                                                                                  \
	"\"stdout\":\"\",\"stderr\":\"\",\"logs\":\"\",\"result_repr\":null,\"error\":null,"       \
	"\"truncated\":false"

Test(outcome, decode_accepts_minimal_frames_and_ignores_unknown_keys)
{
	static const char *const frames[] = {
	    "{\"status\":\"ok\"," GOOD_TAIL "}",
	    " {\"status\":\"timeout\"," GOOD_TAIL ",\"future\":{\"x\":[1]}}\n",
	    "{\"status\":\"ok\"," GOOD_TAIL ",\"result\":\"a\\u0000b\"}",
	    "{\"status\":\"ok\"," GOOD_TAIL ",\"threads\":0}",
	    "{\"status\":\"ok\"," GOOD_TAIL ",\"threads\":4096}",
	    "{\"status\":\"ok\",\"stdout\":\"a\\u0000b\",\"stderr\":\"\\u0000\",\"logs\":\"\","
	    "\"result_repr\":\"\\u0000\",\"error\":null,\"truncated\":false}",
	    "{\"status\":\"error\",\"stdout\":\"\",\"stderr\":\"\",\"logs\":\"\","
	    "\"result_repr\":\"1\",\"error\":{\"type\":\"E\",\"message\":\"m\",\"traceback\":"
	    "\"\",\"extra\":1},\"truncated\":true}",
	};

	for (size_t i = 0; i < N_OF(frames); i++) {
		struct run_outcome o;

		run_outcome_init(&o);
		cr_assert_eq(ipc_outcome_decode(frames[i], strlen(frames[i]), &o), 0, "%s",
		             frames[i]);
		run_outcome_clear(&o);
	}
}

Test(outcome, decode_rejects_hostile_frames)
{
	static const char *const frames[] = {
	    "",
	    "[]",
	    "null",
	    "\"ok\"",
	    "{\"stdout\":\"\",\"stderr\":\"\",\"logs\":\"\",\"result_repr\":null,\"error\":null,"
	    "\"truncated\":false}",
	    "{\"status\":\"fine\"," GOOD_TAIL "}",
	    "{\"status\":\"OK\"," GOOD_TAIL "}",
	    "{\"status\":\"ok\\u0000\"," GOOD_TAIL "}",
	    "{\"status\":0," GOOD_TAIL "}",
	    "{\"status\":null," GOOD_TAIL "}",
	    "{\"status\":\"ok\"," GOOD_TAIL "} x",
	    "{\"status\":\"ok\"," GOOD_TAIL "}{}",
	    "{\"status\":\"ok\"," GOOD_TAIL ",}",
	    "{\"status\":\"ok\",\"stdout\":1,\"stderr\":\"\",\"logs\":\"\",\"result_repr\":null,"
	    "\"error\":null,\"truncated\":false}",
	    "{\"status\":\"ok\",\"stdout\":\"\",\"stderr\":null,\"logs\":\"\",\"result_repr\":"
	    "null,\"error\":null,\"truncated\":false}",
	    "{\"status\":\"ok\",\"stdout\":\"\",\"stderr\":\"\",\"result_repr\":null,\"error\":"
	    "null,\"truncated\":false}",
	    "{\"status\":\"ok\",\"stdout\":\"\xff\",\"stderr\":\"\",\"logs\":\"\","
	    "\"result_repr\":null,\"error\":null,\"truncated\":false}",
	    "{\"status\":\"ok\",\"stdout\":\"\xed\xa0\x80\",\"stderr\":\"\",\"logs\":\"\","
	    "\"result_repr\":null,\"error\":null,\"truncated\":false}",
	    "{\"status\":\"ok\",\"stdout\":\"\",\"stderr\":\"\",\"logs\":\"\",\"result_repr\":5,"
	    "\"error\":null,\"truncated\":false}",
	    "{\"status\":\"ok\",\"stdout\":\"\",\"stderr\":\"\",\"logs\":\"\",\"result_repr\":"
	    "null,\"error\":\"boom\",\"truncated\":false}",
	    "{\"status\":\"ok\",\"stdout\":\"\",\"stderr\":\"\",\"logs\":\"\",\"result_repr\":"
	    "null,\"error\":{\"type\":\"E\",\"message\":\"m\"},\"truncated\":false}",
	    "{\"status\":\"ok\",\"stdout\":\"\",\"stderr\":\"\",\"logs\":\"\",\"result_repr\":"
	    "null,\"error\":{\"type\":1,\"message\":\"m\",\"traceback\":\"\"},\"truncated\":"
	    "false}",
	    "{\"status\":\"ok\",\"stdout\":\"\",\"stderr\":\"\",\"logs\":\"\",\"result_repr\":"
	    "null,\"error\":null,\"truncated\":\"yes\"}",
	    "{\"status\":\"ok\",\"stdout\":\"\",\"stderr\":\"\",\"logs\":\"\",\"result_repr\":"
	    "null,\"error\":null,\"truncated\":1}",
	    "{\"status\":\"ok\",\"stdout\":\"\",\"stderr\":\"\",\"logs\":\"\",\"result_repr\":"
	    "null,\"error\":null}",
	    "{\"status\":\"ok\"," GOOD_TAIL ",\"result\":NaN}",
	    "{\"status\":'ok'," GOOD_TAIL "}",
	    "{\"status\":\"ok\"," GOOD_TAIL ",\"threads\":-1}",
	    "{\"status\":\"ok\"," GOOD_TAIL ",\"threads\":4097}",
	    "{\"status\":\"ok\"," GOOD_TAIL ",\"threads\":9223372036854775807}",
	    "{\"status\":\"ok\"," GOOD_TAIL ",\"threads\":1.0}",
	    "{\"status\":\"ok\"," GOOD_TAIL ",\"threads\":\"1\"}",
	    "{\"status\":\"ok\"," GOOD_TAIL ",\"threads\":null}",
	};

	for (size_t i = 0; i < N_OF(frames); i++) {
		struct run_outcome o;

		run_outcome_init(&o);
		o.duration_ms = 4242; /* a sentinel: out is written only on success */
		cr_assert_eq(ipc_outcome_decode(frames[i], strlen(frames[i]), &o), -EINVAL,
		             "frame %zu: %s", i, frames[i]);
		cr_assert_eq(o.duration_ms, 4242);
		cr_assert_null(o.stdout_text.s);
		run_outcome_clear(&o);
	}
}

Test(outcome, decode_rejects_depth_bombs_and_oversize)
{
	struct run_outcome o;
	size_t depth = 100000, n;
	char *frame = malloc(2 * depth + 256), *p;

	p = frame + sprintf(frame, "{\"status\":\"ok\"," GOOD_TAIL ",\"result\":");
	memset(p, '[', depth);
	memset(p + depth, ']', depth);
	p[2 * depth] = '}';
	n = (size_t)(p - frame) + 2 * depth + 1;
	run_outcome_init(&o);
	cr_assert_eq(ipc_outcome_decode(frame, n, &o), -EINVAL);
	free(frame);

	/* Over IPC_FRAME_MAX: refused before parsing, even though it is valid JSON. */
	n = IPC_FRAME_MAX + 2;
	frame = malloc(n);
	memset(frame, ' ', n);
	memcpy(frame, "{\"status\":\"ok\"," GOOD_TAIL "}",
	       strlen("{\"status\":\"ok\"," GOOD_TAIL "}"));
	cr_assert_eq(ipc_outcome_decode(frame, n, &o), -EINVAL);
	cr_assert_eq(ipc_outcome_decode(frame, 200, &o), 0);
	run_outcome_clear(&o);
	free(frame);
}

/* A result of more values than a worker's own (at most 64 KiB of JSON) is refused before a
 * tree of them is built; commas and brackets inside strings are not values. */
Test(outcome, decode_refuses_a_result_of_too_many_values)
{
	struct run_outcome o;
	size_t n = IPC_OUTCOME_VALUES_MAX, len;
	char *frame = malloc(4 * n + 256), *p;

	for (int over = 0; over < 2; over++) {
		size_t values = over ? n + 1 : n - 64;
		p = frame + sprintf(frame, "{\"status\":\"ok\"," GOOD_TAIL ",\"result\":[0");
		for (size_t i = 1; i < values; i++)
			p += sprintf(p, ",0");
		len = (size_t)(p - frame) + (size_t)sprintf(p, "]}");
		run_outcome_init(&o);
		cr_assert_eq(ipc_outcome_decode(frame, len, &o), over ? -EINVAL : 0, "%zu values",
		             values);
		run_outcome_clear(&o);
	}
	/* The same number of commas in a string is one value. */
	p = frame + sprintf(frame, "{\"status\":\"ok\"," GOOD_TAIL ",\"result\":\"");
	memset(p, ',', 2 * n);
	p += 2 * n;
	len = (size_t)(p - frame) + (size_t)sprintf(p, "\\\"[{\"}");
	run_outcome_init(&o);
	cr_assert_eq(ipc_outcome_decode(frame, len, &o), 0);
	cr_assert_eq(json_object_get_string_len(o.result), (int)(2 * n + 3));
	run_outcome_clear(&o);
	free(frame);
}

/* ---- images in outcomes ------------------------------------------------------------------- */

/* Base64 of a PNG header (signature and IHDR) of w x h, then pad zero bytes. */
static char *png_b64(uint32_t w, uint32_t h, size_t pad)
{
	static const unsigned char head[16] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n',
	                                       0,    0,   0,   13,  'I',  'H',  'D',  'R'};
	unsigned char *p = calloc(1, 24 + pad);
	char *t;

	cr_assert_not_null(p);
	memcpy(p, head, 16);
	for (int i = 0; i < 4; i++) {
		p[16 + i] = (unsigned char)(w >> (24 - 8 * i));
		p[20 + i] = (unsigned char)(h >> (24 - 8 * i));
	}
	t = proto_base64_encode(p, 24 + pad);
	free(p);
	cr_assert_not_null(t);
	return t;
}

/* An outcome's JSON whose "images" member is images (JSON text). */
static char *with_images(const char *images)
{
	char *s;

	cr_assert(asprintf(&s,
	                   "{\"status\":\"ok\",\"stdout\":\"\",\"stderr\":\"\",\"logs\":\"\","
	                   "\"result\":null,\"result_repr\":null,\"error\":null,"
	                   "\"truncated\":false,\"images\":%s}",
	                   images) > 0);
	return s;
}

Test(outcome, images_round_trip_with_their_sizes)
{
	struct run_outcome o, back;
	char *json;
	size_t len;

	run_outcome_init(&o);
	o.images = calloc(1, sizeof(*o.images));
	o.n_images = 1;
	o.images[0].png = malloc(40);
	o.images[0].len = 40;
	{
		char *b = png_b64(300, 200, 16);
		unsigned char *raw;
		size_t n;
		cr_assert_eq(proto_base64_decode(b, strlen(b), &raw, &n), 0);
		memcpy(o.images[0].png, raw, 40);
		free(raw);
		free(b);
	}
	o.images[0].width = 300;
	o.images[0].height = 200;
	json = ipc_outcome_encode(&o, &len);
	cr_assert_not_null(json);
	run_outcome_init(&back);
	cr_assert_eq(ipc_outcome_decode(json, len, &back), 0, "%s", json);
	cr_assert_eq(back.n_images, 1);
	cr_assert_eq(back.images[0].width, 300);
	cr_assert_eq(back.images[0].height, 200);
	cr_assert_eq(back.images[0].len, 40);
	cr_assert_eq(memcmp(back.images[0].png, o.images[0].png, 40), 0);
	free(json);
	run_outcome_clear(&back);
	run_outcome_clear(&o);
}

Test(outcome, images_a_worker_claims_are_checked)
{
	char *ok = png_b64(10, 20, 0), *huge_side = png_b64(RUN_IMAGE_SIDE_MAX + 1, 10, 0);
	char *too_big = png_b64(10, 10, RUN_IMAGE_BYTES_MAX), *zero = png_b64(0, 10, 0);
	char *part = png_b64(10, 10, RUN_IMAGES_BYTES_MAX / 3);
	char *bad[12];
	size_t n = 0;
	struct run_outcome o;
	char *s, *nine = NULL, *three = NULL;

	/* claims that differ from the header, sides, sizes, counts, and what is not a PNG */
	cr_assert(asprintf(&bad[n++], "[{\"width\":11,\"height\":20,\"png\":\"%s\"}]", ok) > 0);
	cr_assert(asprintf(&bad[n++], "[{\"width\":10,\"height\":20,\"png\":\"%s\",\"x\":1}]", ok) >
	          0);
	cr_assert(asprintf(&bad[n++], "[{\"width\":%d,\"height\":10,\"png\":\"%s\"}]",
	                   RUN_IMAGE_SIDE_MAX + 1, huge_side) > 0);
	cr_assert(asprintf(&bad[n++], "[{\"width\":10,\"height\":10,\"png\":\"%s\"}]", too_big) >
	          0);
	cr_assert(asprintf(&bad[n++], "[{\"width\":0,\"height\":10,\"png\":\"%s\"}]", zero) > 0);
	bad[n++] = strdup("[{\"width\":1,\"height\":1,\"png\":\"AAAA\"}]");
	bad[n++] = strdup("[{\"width\":1,\"height\":1,\"png\":\"not base64!\"}]");
	bad[n++] = strdup("{}");
	bad[n++] = strdup("[1]");
	cr_assert(asprintf(&three, "[%s,%s,%s]", "{\"width\":10,\"height\":10,\"png\":\"X\"}",
	                   "{\"width\":10,\"height\":10,\"png\":\"X\"}",
	                   "{\"width\":10,\"height\":10,\"png\":\"X\"}") > 0);
	/* three parts of a third of the budget each: over it together */
	free(three);
	cr_assert(asprintf(&three, "[%s,%s,%s,%s]", "{\"width\":10,\"height\":10,\"png\":\"P\"}",
	                   "{\"width\":10,\"height\":10,\"png\":\"P\"}",
	                   "{\"width\":10,\"height\":10,\"png\":\"P\"}",
	                   "{\"width\":10,\"height\":10,\"png\":\"P\"}") > 0);
	{
		/* replace each P with the part's base64 */
		size_t plen = strlen(part), k = 0;
		char *out = malloc(strlen(three) + 4 * plen + 1);
		for (const char *p = three; *p; p++) {
			if (*p == 'P' && p[1] == '"') {
				memcpy(out + k, part, plen);
				k += plen;
			} else {
				out[k++] = *p;
			}
		}
		out[k] = '\0';
		bad[n++] = out;
	}
	{
		size_t olen = strlen(ok) + 48, k = 0;
		nine = malloc(9 * olen + 3);
		nine[k++] = '[';
		for (int i = 0; i < 9; i++)
			k += (size_t)sprintf(nine + k,
			                     "%s{\"width\":10,\"height\":20,\"png\":\"%s\"}",
			                     i ? "," : "", ok);
		nine[k++] = ']';
		nine[k] = '\0';
		bad[n++] = nine;
	}
	for (size_t i = 0; i < n; i++) {
		s = with_images(bad[i]);
		run_outcome_init(&o);
		cr_assert_eq(ipc_outcome_decode(s, strlen(s), &o), -EINVAL, "accepted %.200s",
		             bad[i]);
		free(s);
		free(bad[i]);
	}
	/* what a real one looks like, and no images at all */
	cr_assert(asprintf(&s, "[{\"width\":10,\"height\":20,\"png\":\"%s\"}]", ok) > 0);
	{
		char *j = with_images(s);
		cr_assert_eq(ipc_outcome_decode(j, strlen(j), &o), 0, "%s", j);
		cr_assert_eq(o.n_images, 1);
		run_outcome_clear(&o);
		free(j);
		j = with_images("[]");
		cr_assert_eq(ipc_outcome_decode(j, strlen(j), &o), 0, "%s", j);
		cr_assert_eq(o.n_images, 0);
		run_outcome_clear(&o);
		free(j);
	}
	free(s);
	free(three);
	free(ok);
	free(huge_side);
	free(too_big);
	free(zero);
	free(part);
}

Test(ipc, roots_carry_the_bytecode_facts)
{
	char *names[] = {(char *)"numpy"},
	     *dirs[] = {(char *)"/usr/lib/python3/dist-packages/numpy"};
	struct ipc_roots in = {.stdlib = (char *)"/usr/lib/python3.11",
	                       .names = names,
	                       .dirs = dirs,
	                       .n = 1,
	                       .cache_tag = (char *)"cpython-311",
	                       .magic = {0xa7, 0x0d, 0x0d, 0x0a}},
	                 out;
	static const char *const bad[] = {
	    "D{\"stdlib\":\"/usr\",\"packages\":{},\"pyc\":{\"tag\":\"cpython-311\"}}",
	    "D{\"stdlib\":\"/usr\",\"packages\":{},\"pyc\":{\"tag\":\"../"
	    "x\",\"magic\":\"a70d0d0a\"}}",
	    "D{\"stdlib\":\"/usr\",\"packages\":{},\"pyc\":{\"tag\":\"\",\"magic\":\"a70d0d0a\"}}",
	    "D{\"stdlib\":\"/usr\",\"packages\":{},\"pyc\":{\"tag\":\"c\",\"magic\":\"a70d0d0\"}}",
	    "D{\"stdlib\":\"/usr\",\"packages\":{},\"pyc\":{\"tag\":\"c\",\"magic\":\"A70D0D0A\"}}",
	    "D{\"stdlib\":\"/usr\",\"packages\":{},\"pyc\":{\"tag\":\"c\",\"magic\":\"a70d0d0a\","
	    "\"x\":1}}",
	    "D{\"stdlib\":\"/usr\",\"packages\":{},\"pyc\":[]}",
	};
	size_t len = 0;
	char *msg = ipc_roots_encode(&in, &len);

	cr_assert_not_null(msg);
	cr_assert_eq(ipc_roots_decode(msg, len, &out), 0, "%.*s", (int)len, msg);
	cr_assert_str_eq(out.cache_tag, "cpython-311");
	cr_assert_eq(memcmp(out.magic, in.magic, 4), 0);
	ipc_roots_clear(&out);
	free(msg);
	for (size_t i = 0; i < N_OF(bad); i++) {
		memset(&out, 0x5a, sizeof(out));
		cr_assert_eq(ipc_roots_decode(bad[i], strlen(bad[i]), &out), -EINVAL, "%s", bad[i]);
		cr_assert_eq(out.n, (size_t)0x5a5a5a5a5a5a5a5aull, "written only on success");
	}
}
