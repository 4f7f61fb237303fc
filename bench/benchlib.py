"""What bench/run and bench/profile share: a minimal MCP client for one safepy server over
stdio, percentiles, and the process tree and memory of a server read from /proc.
Standard library only."""

import json
import os
import select
import subprocess
import tempfile
import time


class Safepy:
    """A minimal MCP client for one safepy server over stdio. stderr goes to a temporary file
    (or to `log`, an open file) so that the debug log can be read afterwards."""

    def __init__(self, binary, extra_args, log=None):
        self.log = log if log is not None else tempfile.TemporaryFile()
        self.t_exec = time.perf_counter()
        self.proc = subprocess.Popen(
            [binary] + extra_args,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.log,
        )
        self.buf = b""
        self.next_id = 1
        self.bad_lines = 0

    @property
    def pid(self):
        return self.proc.pid

    def send(self, msg):
        self.proc.stdin.write(json.dumps(msg).encode() + b"\n")
        self.proc.stdin.flush()

    def read_msg(self, timeout):
        deadline = time.monotonic() + timeout
        fd = self.proc.stdout.fileno()
        while True:
            nl = self.buf.find(b"\n")
            if nl >= 0:
                line, self.buf = self.buf[:nl], self.buf[nl + 1:]
                try:
                    msg = json.loads(line)
                    if not isinstance(msg, (dict, list)):
                        raise ValueError("not a message")
                    return msg
                except ValueError:
                    self.bad_lines += 1
                    continue
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            ready, _, _ = select.select([fd], [], [], left)
            if ready:
                chunk = os.read(fd, 1 << 20)
                if not chunk:
                    return None
                self.buf += chunk

    def send_request(self, method, params=None):
        rid = self.next_id
        self.next_id += 1
        msg = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params is not None:
            msg["params"] = params
        self.send(msg)
        return rid

    def wait_for(self, rid, timeout):
        while True:
            resp = self.read_msg(timeout)
            if resp is None or (isinstance(resp, dict) and resp.get("id") == rid):
                return resp

    def request(self, method, params=None, timeout=60.0):
        return self.wait_for(self.send_request(method, params), timeout)

    def initialize(self):
        """Returns the seconds from exec to the answer of initialize."""
        r = self.request(
            "initialize",
            {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "safepy-bench", "version": "0"},
            },
        )
        dt = time.perf_counter() - self.t_exec
        if r is None or "result" not in r:
            raise RuntimeError("initialize failed: %r\n%s" % (r, self.stderr()))
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return dt

    @staticmethod
    def call_params(code, session=None):
        args = {"code": code}
        if session is not None:
            args["session"] = session
        return {"name": "run_python", "arguments": args}

    def call(self, code, session=None, timeout=600.0):
        """Returns (structuredContent or None, seconds from send to response)."""
        t0 = time.perf_counter()
        r = self.request("tools/call", self.call_params(code, session), timeout)
        dt = time.perf_counter() - t0
        return structured(r), dt

    def pipelined(self, code, session, n, inflight, check, timeout=600.0):
        """n calls with up to `inflight` sent and unanswered; returns (wall seconds, number
        answered as `check(structuredContent)` wants)."""
        sent = got = good = 0
        pending = set()
        t0 = time.perf_counter()
        while got < n:
            while sent < n and sent - got < inflight:
                pending.add(self.send_request("tools/call", self.call_params(code, session)))
                sent += 1
            resp = self.read_msg(timeout)
            if resp is None:
                break
            if isinstance(resp, dict) and resp.get("id") in pending:
                pending.discard(resp["id"])
                got += 1
                good += 1 if check(structured(resp)) else 0
        return time.perf_counter() - t0, good

    def stderr(self, tail=3000):
        self.log.seek(0)
        text = self.log.read()
        if isinstance(text, bytes):
            text = text.decode(errors="replace")
        return text[-tail:] if tail else text

    def close(self):
        try:
            self.proc.stdin.close()
            self.proc.wait(timeout=10)
        except (subprocess.TimeoutExpired, BrokenPipeError):
            self.proc.kill()
            self.proc.wait()


def structured(resp):
    if not isinstance(resp, dict):
        return None
    return resp.get("result", {}).get("structuredContent")


def percentile(values, q):
    s = sorted(values)
    k = max(0, min(len(s) - 1, int(round(q / 100.0 * (len(s) - 1)))))
    return s[k]


def children(pid):
    out = []
    try:
        tasks = os.listdir("/proc/%d/task" % pid)
    except OSError:
        return out
    for tid in tasks:
        try:
            with open("/proc/%d/task/%s/children" % (pid, tid)) as f:
                out.extend(int(x) for x in f.read().split())
        except OSError:
            continue
    return out


def descendants(pid):
    out = []
    for k in children(pid):
        out.append(k)
        out.extend(descendants(k))
    return out


def rollup(pid):
    """{Rss, Pss, Uss} in KiB of one process from /proc/PID/smaps_rollup, or None when it
    cannot be read (gone, or not permitted)."""
    fields = {}
    try:
        with open("/proc/%d/smaps_rollup" % pid) as f:
            for line in f:
                parts = line.split()
                if len(parts) >= 2 and parts[0].endswith(":") and parts[1].isdigit():
                    fields[parts[0][:-1]] = int(parts[1])
    except OSError:
        return None
    if "Rss" not in fields:
        return None
    return {
        "Rss": fields["Rss"],
        "Pss": fields.get("Pss", 0),
        "Uss": fields.get("Private_Clean", 0) + fields.get("Private_Dirty", 0),
    }


def memory_of(pids):
    """Sums of Rss, Pss and Uss (KiB) over pids; None when one could not be read."""
    total = {"Rss": 0, "Pss": 0, "Uss": 0}
    for p in pids:
        r = rollup(p)
        if r is None:
            return None
        for k in total:
            total[k] += r[k]
    return total


def cpu_seconds(pid):
    """utime + stime of a process (all its threads) from /proc/PID/stat."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def comm(pid):
    try:
        with open("/proc/%d/comm" % pid) as f:
            return f.read().strip()
    except OSError:
        return "?"


def unique_kib(pids):
    """KiB of the resident pages that only `pids` map: what ending all of them frees. A page a
    holder and its forked runner share is private to neither (Uss misses it) but unique to the
    pair. Reads /proc/PID/pagemap and /proc/kpagecount, which need CAP_SYS_ADMIN; None when
    they cannot be read."""
    import array

    page = os.sysconf("SC_PAGE_SIZE")
    seen = {}
    try:
        for pid in pids:
            with open("/proc/%d/maps" % pid) as f:
                ranges = []
                for line in f:
                    lo, hi = (int(x, 16) for x in line.split()[0].split("-"))
                    if not line.rstrip().endswith("[vsyscall]"):
                        ranges.append((lo, hi))
            with open("/proc/%d/pagemap" % pid, "rb") as pm:
                for lo, hi in ranges:
                    pm.seek(lo // page * 8)
                    entries = array.array("Q")
                    entries.frombytes(pm.read((hi - lo) // page * 8))
                    for e in entries:
                        if e >> 63:
                            pfn = e & ((1 << 55) - 1)
                            if pfn == 0:
                                return None  # PFNs hidden: not permitted
                            seen[pfn] = seen.get(pfn, 0) + 1
        n = 0
        with open("/proc/kpagecount", "rb") as kc:
            for pfn, mine in seen.items():
                kc.seek(pfn * 8)
                count = int.from_bytes(kc.read(8), "little")
                if count <= mine:
                    n += 1
        return n * page // 1024
    except (OSError, ValueError):
        return None
