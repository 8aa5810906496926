"""handler_bench: records/s through Python's logging module into
logsink.Handler, logging.FileHandler and logging.handlers.SysLogHandler
(to a running rsyslogd), in one process and one run: repetitions
interleaved, medians and ratios printed, then what landed.

usage: handler_bench.py --ring R --socket S --syslog SYSLOG_SOCK --rsyslog-out F
                        --file-out F [--n N] [--reps K]
Each handler has the root logger to itself; the message shape is
bench/compare's ("user %d logged in from port %d request %d"), level INFO,
logging's default formatting (the message only). A run is timed from the
first call until the handler's flush() returned (for logsink: every record
is in the daemon's socket)."""

import argparse
import json
import logging
import logging.handlers
import os
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "python"))
import logsink  # noqa: E402  (the source tree's package)

FMT = "user %d logged in from port %d request %d"


def one_run(handler, n):
    log = logging.getLogger("bench")
    log.handlers[:] = [handler]
    log.propagate = False
    log.setLevel(logging.INFO)
    t0 = time.perf_counter()
    for i in range(n):
        log.info(FMT, i, 40000 + i % 1000, i * 7)
    handler.flush()
    return n / (time.perf_counter() - t0)


def lines(path):
    try:
        with open(path, "rb") as f:
            return sum(1 for _ in f)
    except FileNotFoundError:
        return 0


def wait_lines(path, want, limit=60.0):
    """rsyslogd writes asynchronously: its file's lines, once they stop growing."""
    deadline = time.monotonic() + limit
    last, still = -1, 0
    while time.monotonic() < deadline:
        got = lines(path)
        if got >= want:
            return got
        still = still + 1 if got == last else 0
        if still >= 20:  # 2 s without growth
            return got
        last = got
        time.sleep(0.1)  # polling interval; the deadline decides
    return lines(path)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ring", required=True)
    ap.add_argument("--socket", required=True)
    ap.add_argument("--syslog", required=True)
    ap.add_argument("--rsyslog-out", required=True)
    ap.add_argument("--file-out", required=True)
    ap.add_argument("--logctl", default="logctl")
    ap.add_argument("--n", type=int, default=100000)
    ap.add_argument("--reps", type=int, default=5)
    a = ap.parse_args()

    handlers = {
        "logsink.Handler": logsink.Handler(app="pybench", socket=a.socket),
        "FileHandler": logging.FileHandler(a.file_out),
        "SysLogHandler(rsyslogd)": logging.handlers.SysLogHandler(address=a.syslog),
    }
    rates = {k: [] for k in handlers}
    for _ in range(a.reps):  # interleaved, so drift hits all alike
        for name, h in handlers.items():
            rates[name].append(one_run(h, a.n))
    ls = handlers["logsink.Handler"].client.stats()
    for h in handlers.values():
        h.close()

    total = a.n * a.reps
    med = {k: statistics.median(v) for k, v in rates.items()}
    print("python handlers: %d records x %d runs, %s (python %s)"
          % (a.n, a.reps, FMT, sys.version.split()[0]))
    for k, v in rates.items():
        print("  %-24s median %9.0f records/s  (runs: %s)"
              % (k, med[k], " ".join("%.0f" % r for r in v)))
    base = med["logsink.Handler"]
    for k in ("FileHandler", "SysLogHandler(rsyslogd)"):
        print("  logsink.Handler / %-24s %.2fx" % (k, base / med[k]))

    st = json.loads(subprocess.run([a.logctl, "stats", "--file", a.ring, "--json"], check=True,
                                   stdout=subprocess.PIPE).stdout)
    ring_records = st["records"]
    disk = st["blocks_used"] * st["block_size"]
    per = (lambda b: b / ring_records) if ring_records else (lambda b: float("nan"))
    print("  logsink ring: %d records; bytes per record on disk %.1f (%d blocks of %d),"
          " in entries %.1f" % (ring_records, per(disk), st["blocks_used"], st["block_size"],
                                per(st["bytes_used"])))
    file_lines = lines(a.file_out)
    sys_lines = wait_lines(a.rsyslog_out, total)
    print("  landed: logsink %d (client: sent %d, dropped %d), FileHandler %d, rsyslogd %d of %d"
          % (ring_records, ls["sent"], ls["dropped"], file_lines, sys_lines, total))
    size = os.path.getsize
    print("  text bytes per record: FileHandler %.1f, rsyslogd's file %.1f"
          % (size(a.file_out) / max(file_lines, 1), size(a.rsyslog_out) / max(sys_lines, 1)))
    lost = ring_records != total or ls["dropped"] != 0
    return 1 if lost else 0


if __name__ == "__main__":
    sys.exit(main())
