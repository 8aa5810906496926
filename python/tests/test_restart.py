"""test_restart: logsinkd restarted under a logging Python
program. Like liblogsink, the client keeps what it could not write and
what is logged while the daemon restarts, and sends it to the next daemon
within block_timeout (python/README.md, "Restarts"): a SIGTERM restart
loses nothing, and records logged while a killed daemon is down land too."""

import os
import threading
import time
import unittest

import logsink
from harness import HANG, Daemon, DaemonTest


def seqs(recs, phase):
    """The numbers of "PHASE N" records, in ring order."""
    out = []
    for r in recs:
        m = r.get("msg", "")
        if r.get("pid") == os.getpid() and m.startswith(phase + " "):
            out.append(int(m.split()[1]))
    return out


class RestartTest(DaemonTest):
    start_daemon = False

    def setUp(self):
        super().setUp()
        # A ring far larger than what is logged here: a lap would hide records.
        self.daemon = Daemon(self.dir, ("--size", "64MiB")).start()

    def wait_stored(self, n):
        """Until the running daemon has stored n records (synchronization:
        records are flowing into it)."""
        deadline = time.monotonic() + HANG
        while self.daemon.stats()["records"] < n:
            self.assertLess(time.monotonic(), deadline, "records do not reach the daemon")
            time.sleep(0.005)  # polling interval; the deadline decides

    def test_sigterm_restarts_lose_nothing(self):
        c = logsink.Client(self.daemon.socket, "pyrestart", block_timeout=60.0)
        stop = threading.Event()
        logged = [0, 0]

        def run(t):
            phase = "ab"[t]
            i = 0
            while not stop.is_set() and i < 1000000:
                c.log(logsink.INFO, phase + " %d", i)
                i += 1
                logged[t] = i
                if i % 50 == 0:
                    time.sleep(0.001)  # pacing, not synchronization

        threads = [threading.Thread(target=run, args=(t,)) for t in (0, 1)]
        for t in threads:
            t.start()
        try:
            for _ in range(3):
                self.wait_stored(1000)
                self.daemon.stop()
                self.daemon.start()
            self.wait_stored(1000)
        finally:
            stop.set()
            for t in threads:
                t.join()
        self.assertTrue(c.flush())
        s = c.stats()
        c.close()
        na, nb = logged
        self.assertEqual(s["dropped"], 0)
        self.assertEqual(s["sent"], na + nb)
        self.assertEqual(s["reconnects"], 3)
        recs = self.daemon.wait_records(
            lambda r: len(seqs(r, "a")) >= na and len(seqs(r, "b")) >= nb)
        self.assertEqual(seqs(recs, "a"), list(range(na)))
        self.assertEqual(seqs(recs, "b"), list(range(nb)))
        self.assertFalse([r for r in recs if "dropped" in r])
        print("[figures] python sigterm_restarts: 3 restarts, %d + %d records logged, %d landed,"
              " %d dropped" % (na, nb, len(seqs(recs, "a")) + len(seqs(recs, "b")), s["dropped"]),
              flush=True)

    def test_records_logged_while_a_killed_daemon_is_down_land(self):
        c = logsink.Client(self.daemon.socket, "pykill", block_timeout=60.0, close_timeout=HANG)
        self.assertTrue(c.log(logsink.INFO, "up %d", 0))
        self.assertTrue(c.flush())
        self.daemon.kill()
        for i in range(200):
            self.assertTrue(c.log(logsink.INFO, "down %d", i))  # staged, not dropped
        self.assertFalse(c.flush(0.05))  # no daemon yet
        self.daemon.start()
        c.close()  # waits for the next daemon (close_timeout)
        s = c.stats()
        self.assertEqual(s["dropped"], 0)
        recs = self.daemon.wait_records(lambda r: len(seqs(r, "down")) >= 200)
        self.assertEqual(seqs(recs, "down"), list(range(200)))

    def test_the_window_ends_and_drops_are_counted(self):
        c = logsink.Client(self.daemon.socket, "pywindow", block_timeout=0.05,
                           close_timeout=0.05)
        self.assertTrue(c.log(logsink.INFO, "up %d", 0))
        self.assertTrue(c.flush())
        self.daemon.kill()
        for i in range(20):
            c.log(logsink.INFO, "gone %d", i)
        deadline = time.monotonic() + HANG
        while c.log(logsink.INFO, "late %d", 0):  # staged until the window passes
            self.assertLess(time.monotonic(), deadline)
            time.sleep(0.005)  # pacing of the calls; the deadline decides
        s = c.stats()
        self.assertGreaterEqual(s["dropped"], 20)
        self.daemon.start()
        self.assertTrue(c.flush(HANG))
        c.close()
        recs = self.daemon.wait_records(lambda r: any("dropped" in x for x in r))
        self.assertEqual(sum(r["dropped"] for r in recs if "dropped" in r), s["dropped"])
        self.assertFalse(seqs(recs, "gone"))


if __name__ == "__main__":
    unittest.main()
