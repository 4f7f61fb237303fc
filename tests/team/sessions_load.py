#!/usr/bin/env python3
"""sessions_load.py - drive `safepy serve` (argv[1:]) to its configured peak: eight sessions,
then six calls at once in six of them (four run, two wait for a worker). Prints the number of
processes and threads under the server at the peak and exits 0 when every call was ok.
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
    srv.stdin.close()
    srv.wait(timeout=10)
    # Under ProtectProc=invisible the non-dumpable server is hidden from us: 0 then.
    print(f"peak: {procs} processes, {threads} threads; calls: {' '.join(statuses)}")
    sys.exit(0 if statuses == ["ok"] * 6 else 1)


if __name__ == "__main__":
    main()
