"""test_concurrency: many threads at once, and fork: every record lands once,
with its own thread id; a child logs with its own pid over its own
connection and never sends what the parent had buffered, even when it forks
while other threads are logging."""

import os
import random
import threading
import time
import unittest

import logsink
from harness import HANG, DaemonTest, seed


def wait_child(pid):
    """The child's exit status, within HANG (a deadlocked child fails)."""
    deadline = time.monotonic() + HANG
    while time.monotonic() < deadline:
        got, status = os.waitpid(pid, os.WNOHANG)
        if got == pid:
            return os.waitstatus_to_exitcode(status)
        time.sleep(0.01)  # polling interval; the deadline decides
    os.kill(pid, 9)
    os.waitpid(pid, 0)
    raise AssertionError("child %d hung" % pid)


class ConcurrencyTest(DaemonTest):
    def client(self):
        c = logsink.Client(socket=self.daemon.socket, app="pythreads")
        self.addCleanup(c.close)
        return c

    def test_threads(self):
        rnd = random.Random(seed())
        nthreads, per = rnd.randrange(2, 9), rnd.randrange(200, 1000)
        c = self.client()
        tids = {}
        start = threading.Barrier(nthreads)

        def work(k):
            tids[k] = threading.get_native_id()
            start.wait()
            for i in range(per):
                c.log(logsink.INFO, "t%d r%d %s", k, i, "x" * rnd.randrange(0, 30))

        threads = [threading.Thread(target=work, args=(k,)) for k in range(nthreads)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertTrue(c.flush())
        total = nthreads * per
        s = c.stats()
        self.assertEqual((s["logged"], s["sent"], s["dropped"]), (total, total, 0))
        recs = self.mine(self.daemon.wait_records(lambda r: len(self.mine(r)) >= total))
        self.assertEqual(len(recs), total)
        seen = {}
        for r in recs:
            k, i = r["args"][0], r["args"][1]
            self.assertEqual(r["tid"], tids[k])
            self.assertEqual(seen.get(k, -1), i - 1, "thread %d out of order" % k)
            seen[k] = i
        self.assertEqual(seen, {k: per - 1 for k in range(nthreads)})

    def test_fork_child_logs_with_own_pid(self):
        c = self.client()
        c.log(logsink.INFO, "parent before %d", 1)  # buffered, maybe not sent yet
        pid = os.fork()
        if pid == 0:
            ok = True
            try:
                for i in range(3):
                    ok &= c.log(logsink.INFO, "child %d of %d", i, os.getpid())
                ok &= c.flush()
                s = c.stats()
                ok &= s["sent"] == 3 and s["connects"] == 1
            finally:
                os._exit(0 if ok else 1)
        self.assertEqual(wait_child(pid), 0)
        c.log(logsink.INFO, "parent after %d", 2)
        self.assertTrue(c.flush())
        recs = self.daemon.wait_records(lambda r: len([x for x in r if "pid" in x]) >= 5)
        by_pid = {}
        for r in recs:
            by_pid.setdefault(r["pid"], []).append(r["msg"])
        self.assertEqual(by_pid[os.getpid()], ["parent before 1", "parent after 2"])
        self.assertEqual(by_pid[pid], ["child %d of %d" % (i, pid) for i in range(3)])

    def test_fork_while_threads_log(self):
        c = self.client()
        stop = threading.Event()

        def spin():
            for _ in range(2000):  # bounded: the 1 MiB ring must keep the kids' records
                if stop.is_set():
                    break
                c.log(logsink.DEBUG, "spin %d", 1)

        threads = [threading.Thread(target=spin) for _ in range(3)]
        for t in threads:
            t.start()
        children = []
        try:
            for n in range(5):
                pid = os.fork()
                if pid == 0:
                    ok = True
                    for i in range(10):
                        ok &= c.log(logsink.INFO, "kid %d", i)
                    ok &= c.flush()
                    os._exit(0 if ok else 1)
                children.append(pid)
            for pid in children:
                self.assertEqual(wait_child(pid), 0)
        finally:
            stop.set()
            for t in threads:
                t.join()
        recs = self.daemon.wait_records(
            lambda r: all(len([x for x in r if x.get("pid") == p]) == 10 for p in children))
        for p in children:
            self.assertEqual([x["msg"] for x in recs if x.get("pid") == p],
                             ["kid %d" % i for i in range(10)])


if __name__ == "__main__":
    unittest.main()
