"""test_client: logsink.Client with the real logsinkd: typed arguments, the
fallback to text, strings cut with TRUNC counted, and drops while the
daemon is absent, reported in a DROPPED entry once it is back; arguments
that cannot be printed, formats that are not str, and a process out of file
descriptors or threads never make log() raise."""

import contextlib
import errno
import io
import random
import threading
import time
import unittest
from unittest import mock

import logsink
from harness import U, DaemonTest, NotStr, Unprintable, seed


class ClientTest(DaemonTest):
    def client(self, **kw):
        c = logsink.Client(socket=self.daemon.socket, app="pyclient", **kw)
        self.addCleanup(c.close)
        return c

    def test_typed_arguments(self):
        c = self.client()
        c.log(logsink.NOTICE, "%s|%d|%u|%x|%5.2f|%c|%e|%p|%hhd|%lld", "bob", -3, 7, 255, 3.14159,
              "Z", 1e10, 0x1000, -100, 1 << 60)
        self.assertTrue(c.flush())
        r = self.mine(self.daemon.wait_records(lambda r: self.mine(r)))[0]
        self.assertEqual(r["fmt"], "%s|%d|%u|%x|%5.2f|%c|%e|%p|%hhd|%lld")
        self.assertEqual(r["msg"], "bob|-3|7|ff| 3.14|Z|1.000000e+10|0x1000|-100|%d" % (1 << 60))
        self.assertEqual(r["level"], "notice")
        self.assertEqual(c.stats()["fallback"], 0)

    def test_fallback(self):
        c = self.client()
        cases = [
            (("%r", "x"), "'x'"),                                # Python-only conversion
            (("%(a)s-%(b)d", {"a": "x", "b": 2}), "x-2"),         # mapping style
            (("%d items", 2.5), "2 items"),                      # float for %d: Python truncates
            (("%x", -255), "-ff"),                               # C would print it unsigned
            (("%d", 1 << 40), str(1 << 40)),                     # beyond C int
            (("%#o", 8), "0o10"),
            (("%5s|", "\u00e9"), "    \u00e9|"),
            (("%a", 1.5), "1.5"),
            (("%s %s", "only one"), "%s %s [args: 'only one']"),  # nobody renders it
            (("100%",), "100%"),                                  # refused by the daemon
        ]
        for args, _ in cases:
            if len(args) == 2 and isinstance(args[1], dict):
                c.log(logsink.INFO, args[0], args[1])
            else:
                c.log(logsink.INFO, *args)
        self.assertTrue(c.flush())
        n = len(cases)
        recs = self.mine(self.daemon.wait_records(lambda r: len(self.mine(r)) >= n))
        self.assertEqual([r["msg"] for r in recs], [want for _, want in cases])
        self.assertTrue(all(r["fmt"] == "%s" for r in recs), [r["fmt"] for r in recs])
        s = c.stats()
        self.assertEqual(s["fallback"], n)
        self.assertEqual(s["errors"], 2)  # "%s %s" with one argument, "100%" without any

    def test_big_strings_cut(self):
        rnd = random.Random(seed())
        c = self.client(max_record_bytes=2048)
        big = "".join(rnd.choice("ab\u00e9\u4e2d") for _ in range(rnd.randrange(3000, 20000)))
        c.log(logsink.INFO, "%s|%d|%s", big, 42, "tail")
        c.log(logsink.INFO, "small %s", "x")
        self.assertTrue(c.flush())
        recs = self.mine(self.daemon.wait_records(lambda r: len(self.mine(r)) == 2))
        r = recs[0]
        full = len(big.encode()) + len("tail")
        head, num, tail = r["args"]
        self.assertEqual(num, 42)
        self.assertTrue(big.startswith(head))
        self.assertEqual(r["truncated"], full - len(head.encode()) - len(tail.encode()))
        self.assertLessEqual(len(head.encode()) + len(tail.encode()), 2048)
        self.assertNotIn("truncated", recs[1])
        self.assertEqual(c.stats()["truncated"], 1)
        # Not checked: the daemon's truncated_records, which counts only records
        # the daemon cut itself (PROTOCOL.md says either reason; reported).

    def test_long_format_falls_back(self):
        c = self.client()
        fmt = "x" * 5000 + " %d"
        c.log(logsink.INFO, fmt, 1)
        self.assertTrue(c.flush())
        r = self.mine(self.daemon.wait_records(lambda r: self.mine(r)))[0]
        self.assertEqual(r["fmt"], "%s")
        self.assertEqual(r["msg"], "x" * 5000 + " 1")

    def test_unprintable_arguments_never_raise(self):
        # The record is logged with the argument replaced by a marker (or, when
        # the format cannot take even that, in the last-resort form), counted in
        # fallback and errors; log() neither raises nor loses it.
        c = self.client()
        cases = [
            (("user %s port %d", Unprintable(), 22), "user %s port 22" % U),  # typed path
            (("%s", Unprintable()), U),
            (("%5s|%d", Unprintable(), 3), U + "|3"),                         # generic path
            (("%r", Unprintable()), U),                                       # Python-only
            (("x=%s", NotStr()), "x=<unprintable NotStr: TypeError>"),
            (("%(a)s-%(b)d", {"a": Unprintable(), "b": 2}), U + "-2"),        # mapping
            (("%d items", Unprintable()), "%d items [args: " + U + "]"),      # last resort
            (("%s %s", Unprintable()), "%s %s [args: " + U + "]"),
        ]
        for args, _ in cases:
            if len(args) == 2 and isinstance(args[1], dict):
                self.assertTrue(c.log(logsink.INFO, args[0], args[1]))
            else:
                self.assertTrue(c.log(logsink.INFO, *args))
        self.assertTrue(c.log(logsink.WARNING, "after %s", "them"))  # flush level: drains
        self.assertTrue(c.flush())
        n = len(cases) + 1
        recs = self.mine(self.daemon.wait_records(lambda r: len(self.mine(r)) >= n))
        self.assertEqual([r["msg"] for r in recs], [want for _, want in cases] + ["after them"])
        self.assertTrue(all(r["fmt"] == "%s" for r in recs[:-1]), [r["fmt"] for r in recs])
        s = c.stats()
        self.assertEqual((s["fallback"], s["errors"], s["logged"]), (len(cases), len(cases), n))

    def test_format_not_str(self):
        # A format that is not a str is printed as logging prints a msg that is
        # not one: str(fmt) % args (bytes: b'...'); no AttributeError.
        c = self.client()
        self.assertTrue(c.log(logsink.INFO, b"disk %s at %d%%", "sda", 91))
        self.assertTrue(c.log(logsink.INFO, b"%d", 1))
        self.assertTrue(c.log(logsink.INFO, bytearray(b"raw")))
        self.assertTrue(c.log(logsink.INFO, 42))
        self.assertTrue(c.log(logsink.INFO, Unprintable(), 1))
        self.assertTrue(c.flush())
        recs = self.mine(self.daemon.wait_records(lambda r: len(self.mine(r)) >= 5))
        self.assertEqual([r["msg"] for r in recs],
                         ["b'disk sda at 91%'", "b'1'", "bytearray(b'raw')", "42",
                          U + " [args: 1]"])
        s = c.stats()
        self.assertEqual((s["fallback"], s["errors"]), (5, 1))

    def test_out_of_file_descriptors_drops(self):
        # socket() failing (EMFILE) is "no connection": dropped and counted.
        c = logsink.Client(socket=self.daemon.socket, app="pyclient", reconnect_min=0,
                           reconnect_max=0)
        self.addCleanup(c.close)
        emfile = OSError(errno.EMFILE, "Too many open files")
        with mock.patch.object(logsink._conn.socket, "socket", side_effect=emfile):
            self.assertFalse(c.log(logsink.INFO, "lost %d", 1))
            self.assertFalse(c.flush())
        self.assertTrue(c.log(logsink.INFO, "kept %d", 2))
        self.assertTrue(c.flush())
        recs = self.mine(self.daemon.wait_records(lambda r: len(self.mine(r)) >= 2))
        self.assertEqual(recs[0]["dropped"], 1)
        self.assertEqual(recs[1]["msg"], "kept 2")

    def test_no_sender_thread(self):
        # Thread.start() failing (no threads left; Python >= 3.12 at interpreter
        # shutdown): the record stays buffered, the next call starts the sender.
        c = self.client()
        with mock.patch.object(threading.Thread, "start",
                               side_effect=RuntimeError("can't start new thread")):
            self.assertTrue(c.log(logsink.INFO, "buffered %d", 1))
        self.assertTrue(c.log(logsink.INFO, "buffered %d", 2))
        self.assertTrue(c.flush())
        recs = self.mine(self.daemon.wait_records(lambda r: len(self.mine(r)) >= 2))
        self.assertEqual([r["msg"] for r in recs], ["buffered 1", "buffered 2"])


class AbsentDaemonTest(DaemonTest):
    start_daemon = False

    def test_drops_counted_and_reported(self):
        c = logsink.Client(socket=self.daemon.socket, app="pyabsent", reconnect_max=0.05)
        self.addCleanup(c.close)
        for i in range(5):
            self.assertFalse(c.log(logsink.INFO, "lost %d", i))
        s = c.stats()
        self.assertEqual((s["dropped"], s["logged"], s["connected"]), (5, 0, False))
        self.assertFalse(c.flush())
        self.daemon.start()
        self.assertTrue(c.flush())  # connects, sends the DROPPED report
        self.assertTrue(c.log(logsink.INFO, "kept %d", 1))
        self.assertTrue(c.flush())
        recs = self.mine(self.daemon.wait_records(lambda r: len(self.mine(r)) == 2))
        self.assertEqual(recs[0]["dropped"], 5)
        self.assertEqual(recs[1]["msg"], "kept 1")
        s = c.stats()
        self.assertEqual((s["dropped_reported"], s["sent"], s["connects"]), (5, 1, 1))

    def test_one_warning_per_spell_without_a_daemon(self):
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            c = logsink.Client(socket=self.daemon.socket, app="pywarn", reconnect_max=0.05)
            self.addCleanup(c.close)
            for i in range(50):
                self.assertFalse(c.log(logsink.INFO, "lost %d", i))
        self.assertEqual(err.getvalue(), "logsink: no daemon listens on %s: records are dropped "
                         "(and counted) until one does\n" % self.daemon.socket)
        self.assertEqual(c.stats()["dropped"], 50)

    def test_calls_reconnect_after_backoff(self):
        c = logsink.Client(socket=self.daemon.socket, app="pyretry", reconnect_min=0.01,
                           reconnect_max=0.05)
        self.addCleanup(c.close)
        self.assertFalse(c.log(logsink.INFO, "lost %d", 0))
        self.daemon.start()
        tries = 1
        deadline = time.monotonic() + 30
        while not c.log(logsink.INFO, "kept %d", tries):  # no flush: the calls reconnect
            tries += 1
            self.assertLess(time.monotonic(), deadline)
            time.sleep(0.005)  # pacing of the calls; the deadline decides
        self.assertTrue(c.flush())
        recs = self.mine(self.daemon.wait_records(lambda r: len(self.mine(r)) == 2))
        self.assertEqual(recs[0]["dropped"], tries)
        self.assertEqual(recs[1]["msg"], "kept %d" % tries)
        self.assertEqual(c.stats()["reconnects"], 0)  # the first connection

    def test_daemon_goes_away(self):
        # The daemon stops and none comes back: records wait for the next
        # one for block_timeout (the restart window), then are dropped.
        self.daemon.start()
        c = logsink.Client(socket=self.daemon.socket, app="pygone", reconnect_min=0.001,
                           reconnect_max=0.001, block_timeout=0.05, close_timeout=0.05)
        self.addCleanup(c.close)
        self.assertTrue(c.log(logsink.INFO, "before"))
        self.assertTrue(c.flush())
        self.daemon.stop()
        lost = calls = 0
        deadline = time.monotonic() + 30
        while lost == 0:  # the first calls wait for the next daemon, later ones drop
            self.assertLess(time.monotonic(), deadline)
            if not c.log(logsink.WARNING, "during %d", calls):
                lost += 1
            calls += 1
        c.close()
        s = c.stats()
        self.assertEqual(s["disconnects"], 1)
        self.assertEqual(s["sent"] + s["dropped"], calls + 1)  # every call is one or the other
        self.assertGreaterEqual(s["dropped"], lost)


if __name__ == "__main__":
    unittest.main()
