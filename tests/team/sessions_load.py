#!/usr/bin/env python3
"""sessions_load.py - drive `safepy serve` (argv[1:], with threading allowed) to its configured
peak: eight sessions, then six calls at once in six of them (four run, two wait for a worker).
Then one session's call takes every task it can (threads that wait) while the other sessions
call: each session is bounded at its own 64 tasks, the connection (TasksMax=) at more than all
of its sessions' together, so no session starves the others. Prints the number of processes
and threads under the server at the peak and exits 0 when every other call was ok.
A test helper for tests/team/hardening.sh (TasksMax=, LimitNOFILE= of safepy@.service)."""
import json
import os
import subprocess
import sys
import time


def tasks_under(pid):
    procs = threads = 0
    stack = [pid]
    while stack:
        p = stack.pop()
        try:
            tids = os.listdir(f"/proc/{p}/task")
        except FileNotFoundError:
            continue
        procs += 1
        threads += len(tids)
        for t in tids:
            try:
                with open(f"/proc/{p}/task/{t}/children") as f:
                    stack += [int(c) for c in f.read().split()]
            except FileNotFoundError:
                pass
    return procs, threads


def main():
    srv = subprocess.Popen(sys.argv[1:], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                           text=True, bufsize=1)

    def send(msg):
        srv.stdin.write(json.dumps(msg) + "\n")
        srv.stdin.flush()

    def call(i, code, session):
        send({"jsonrpc": "2.0", "id": i, "method": "tools/call",
              "params": {"name": "run_python", "arguments": {"code": code, "session": session}}})

    def answer():
        line = srv.stdout.readline()
        if not line:
            sys.exit("the server closed its stdout")
        return json.loads(line)

    early = {}

    def answer_to(i):
        while i not in early:
            msg = answer()
            early[msg.get("id")] = msg
        return early.pop(i)["result"]["structuredContent"]

    send({"jsonrpc": "2.0", "id": 0, "method": "initialize",
          "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                     "clientInfo": {"name": "sessions_load", "version": "1"}}})
    answer()
    send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    handles = []
    for i in range(8):
        call(100 + i, f"x = {i}\nx", "new")
        sc = answer()["result"]["structuredContent"]
        if sc["status"] != "ok":
            sys.exit(f"session {i}: {sc}")
        handles.append(sc["session"])
    for i in range(6):
        call(200 + i, "import time\ntime.sleep(1)\nx", handles[i])
    time.sleep(0.5)
    procs, threads = tasks_under(srv.pid)
    statuses = [answer()["result"]["structuredContent"]["status"] for _ in range(6)]
    # One session takes all the tasks it can for 6 s; the others' calls (which fork processes)
    # go on meanwhile.
    call(300, "import threading, time\nthreading.stack_size(65536)\n"
              "ev = threading.Event()\nn = 0\nt0 = time.time()\n"
              "while time.time() - t0 < 6:\n"
              "    try:\n"
              "        threading.Thread(target=ev.wait, daemon=True).start()\n"
              "        n += 1\n"
              "    except RuntimeError:\n"
              "        time.sleep(0.001)\n"
              "ev.set()\nn", handles[7])
    time.sleep(2)
    others = []
    for k in range(3):  # (the second and third of a session's calls need a new fork)
        for i in range(6):
            call(400 + 10 * k + i, "x + 1", handles[i])
            others.append(answer_to(400 + 10 * k + i)["status"])
        call(500 + k, "6 * 7", "new")
        others.append(answer_to(500 + k)["status"])
    taker = answer_to(300)
    srv.stdin.close()
    srv.wait(timeout=10)
    # Under ProtectProc=invisible the non-dumpable server is hidden from us: 0 then.
    print(f"peak: {procs} processes, {threads} threads; calls: {' '.join(statuses)}; "
          f"while one session took {taker.get('result')} threads: {' '.join(others)}")
    sys.exit(0 if statuses == ["ok"] * 6 and others == ["ok"] * 21 else 1)


if __name__ == "__main__":
    main()
