"""test_stall: a daemon that stops reading (SIGSTOP) never holds a caller
longer than block_timeout (plus scheduling); what cannot be sent is dropped
and counted, and once the daemon reads again every call is accounted for:
the ring holds exactly the records the client counts as sent, plus DROPPED
entries summing to what it counts as dropped."""

import os
import signal
import time
import unittest

import logsink
from harness import DaemonTest


class StallTest(DaemonTest):
    def test_stalled_daemon(self):
        c = logsink.Client(socket=self.daemon.socket, app="pystall", block_timeout=0.2,
                           send_timeout=0.5, buffer_bytes=64 << 10, reconnect_min=0.01,
                           reconnect_max=0.05)
        self.addCleanup(c.close)
        self.assertTrue(c.log(logsink.INFO, "before %d", 0))
        self.assertTrue(c.flush())
        pid = self.daemon.proc.pid
        os.kill(pid, signal.SIGSTOP)
        try:
            calls, worst, dropped_calls = 0, 0.0, 0
            payload = "y" * 1000
            deadline = time.monotonic() + 20
            while dropped_calls < 50 and time.monotonic() < deadline:
                t0 = time.monotonic()
                if not c.log(logsink.INFO, "stalled %d %s", calls, payload):
                    dropped_calls += 1
                worst = max(worst, time.monotonic() - t0)
                calls += 1
        finally:
            os.kill(pid, signal.SIGCONT)
        self.assertEqual(dropped_calls, 50, "the client never started dropping")
        self.assertLess(worst, 0.2 + 1.8, "a call waited %.3f s" % worst)  # bound + a loaded machine
        deadline = time.monotonic() + 30
        tries = 1  # the client may still be stalled or reconnecting: retry until taken
        while not c.log(logsink.INFO, "after %d", 1):
            tries += 1
            self.assertLess(time.monotonic(), deadline, c.stats())
            time.sleep(0.01)  # pacing of the retries; the deadline decides
        while not (c.flush() and c.stats()["dropped_reported"] == c.stats()["dropped"]):
            self.assertLess(time.monotonic(), deadline, c.stats())
        s = c.stats()
        self.assertGreater(s["dropped"], 0)
        self.assertEqual(s["sent"] + s["dropped"], 1 + calls + tries, s)

        def settled(recs):
            mine = self.mine(recs)
            return (sum(r.get("dropped", 0) for r in mine) == s["dropped"]
                    and len([r for r in mine if "dropped" not in r]) == s["sent"])
        recs = self.mine(self.daemon.wait_records(settled, "every sent record and drop report"))
        self.assertEqual(recs[0]["msg"], "before 0")
        self.assertEqual([r for r in recs if "dropped" not in r][-1]["msg"], "after 1")


if __name__ == "__main__":
    unittest.main()
