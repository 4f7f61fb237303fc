#!/usr/bin/env python3
"""mcp_client.py - a minimal MCP client for the team box tests: starts COMMAND (for example
`safepy connect`), initialises, runs each CODE in turn with run_python in the default
session, and prints one line per call: its status, then the result's repr or the error type.
   mcp_client.py CODE... -- COMMAND [ARG]...
Exits 0 when every message was answered (whatever the statuses), 1 otherwise."""
import json
import subprocess
import sys


def main():
    if "--" not in sys.argv:
        sys.exit(__doc__)
    cut = sys.argv.index("--")
    codes, command = sys.argv[1:cut], sys.argv[cut + 1:]
    srv = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                           bufsize=1)

    def send(msg):
        srv.stdin.write(json.dumps(msg) + "\n")
        srv.stdin.flush()

    def answer(want_id):
        while True:
            line = srv.stdout.readline()
            if not line:
                sys.exit("no answer: the connection closed")
            msg = json.loads(line)
            if msg.get("id") == want_id:
                return msg

    send({"jsonrpc": "2.0", "id": 0, "method": "initialize",
          "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                     "clientInfo": {"name": "mcp_client", "version": "1"}}})
    print("server", answer(0)["result"]["serverInfo"]["name"])
    send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    for i, code in enumerate(codes, 1):
        send({"jsonrpc": "2.0", "id": i, "method": "tools/call",
              "params": {"name": "run_python", "arguments": {"code": code}}})
        sc = answer(i)["result"]["structuredContent"]
        detail = sc.get("result_repr") if sc["status"] == "ok" else (sc.get("error") or {}).get("type")
        print(sc["status"], detail)
    srv.stdin.close()
    sys.exit(0 if srv.wait(timeout=10) == 0 else 1)


if __name__ == "__main__":
    main()
