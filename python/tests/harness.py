"""harness: the real logsinkd for the Python tests, like tests/common's
Daemon: each test gets its own temp dir with logsink.sock and logsink.ring.
Start and stop follow tests/common's rule (tests/common/daemon_process.h),
the one rule of every launcher of logsinkd (C++ tests, these, and the shell
benchmarks' bench/lib/daemon.sh): the daemon gets a private NOTIFY_SOCKET
and is ready when a message there contains READY=1 (sent once the ring is
open and the socket listens); exiting first, or not being ready within
HANG, fails the start (a daemon that is not ready is SIGKILLed). stop()
sends SIGTERM to its PID and waits up to HANG, then SIGKILLs. Binaries come
from $LOGSINKD and $LOGCTL (set by ctest)."""

import json
import os
import random
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import unittest

LOGSINKD = os.environ.get("LOGSINKD", "logsinkd")
LOGCTL = os.environ.get("LOGCTL", "logctl")
# The deadline of anything that should take milliseconds, and of the start
# and stop above: tests/common/process.h's kHang (10 s), never a performance bound.
HANG = 10.0


def seed():
    """The seed of a randomized test: $LOGSINK_TEST_SEED or a fresh one, printed."""
    s = int(os.environ.get("LOGSINK_TEST_SEED") or random.SystemRandom().randrange(1 << 32))
    print("LOGSINK_TEST_SEED=%d" % s, flush=True)
    return s


class Daemon:
    def __init__(self, d, extra=()):
        self.dir = d
        self.socket = os.path.join(d, "logsink.sock")
        self.ring = os.path.join(d, "logsink.ring")
        self.args = [LOGSINKD, "--socket", self.socket, "--file", self.ring, "--size", "1MiB",
                     "--log-level", "info", *extra]
        self.proc = None

    def start(self):
        notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        addr = "\0logsink-pytest-%d-%d" % (os.getpid(), random.getrandbits(48))
        notify.bind(addr)
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "NOTIFY_SOCKET": "@" + addr[1:]}
        with open(os.path.join(self.dir, "logsinkd.err"), "ab") as err:
            self.proc = subprocess.Popen(self.args, env=env, stdin=subprocess.DEVNULL,
                                         stdout=err, stderr=err)
        deadline = time.monotonic() + HANG
        try:
            while time.monotonic() < deadline:
                if self.proc.poll() is not None:
                    raise RuntimeError("logsinkd exited with %s: %s" % (self.proc.returncode,
                                                                       self.stderr()))
                notify.settimeout(0.05)
                try:
                    msg = notify.recv(4096)
                except socket.timeout:
                    continue
                if b"READY=1" in msg:
                    return self
            self.proc.kill()
            self.proc.wait()
            raise RuntimeError("logsinkd did not report READY=1 within %ss" % HANG)
        finally:
            notify.close()

    def stop(self):
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(HANG)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()

    def kill(self):
        """SIGKILL, as a crash: the socket file stays behind."""
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.kill()
        self.proc.wait()

    def stderr(self):
        with open(os.path.join(self.dir, "logsinkd.err"), "rb") as f:
            return f.read().decode(errors="replace")

    def stats(self):
        """The daemon's STATS counters (logctl stats --json), as a dict."""
        out = logctl("stats", "--file", self.ring, "--socket", self.socket, "--json")
        return json.loads(out)["daemon"]["counters"]

    def records(self):
        """Every entry of the ring, as logctl cat --json prints them."""
        out = logctl("cat", "--file", self.ring, "--json")
        return [json.loads(line) for line in out.splitlines() if line.strip()]

    def wait_records(self, done, what="records"):
        """Reads the ring until done(records) holds, within HANG: the daemon
        makes records visible by its flush_interval (100 ms)."""
        deadline = time.monotonic() + HANG
        while True:
            recs = self.records()
            if done(recs):
                return recs
            if time.monotonic() > deadline:
                raise AssertionError("%s never showed up; ring has %d entries, last: %r"
                                     % (what, len(recs), recs[-3:]))
            time.sleep(0.02)  # polling interval; the deadline decides


def logctl(*args):
    r = subprocess.run([LOGCTL, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       timeout=HANG, check=False)
    if r.returncode != 0:
        raise AssertionError("logctl %s failed (%d): %s" % (" ".join(args), r.returncode,
                                                            r.stderr.decode(errors="replace")))
    return r.stdout.decode()


class Unprintable:
    """An application's object whose __str__ and __repr__ raise."""

    def __str__(self):
        raise RuntimeError("broken __str__")

    __repr__ = __str__


class NotStr:
    """An object whose __str__ returns no str (str() raises TypeError)."""

    def __str__(self):
        return 42


U = "<unprintable Unprintable: RuntimeError>"  # its marker (python/README.md)


class DaemonTest(unittest.TestCase):
    """A test case with its own temp dir and a running logsinkd."""

    start_daemon = True

    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="logsink-py-")
        self.daemon = Daemon(self.dir)
        if self.start_daemon:
            self.daemon.start()

    def tearDown(self):
        self.daemon.stop()
        shutil.rmtree(self.dir, ignore_errors=True)

    def mine(self, recs):
        """The records of this process."""
        return [r for r in recs if r.get("pid") == os.getpid()]
