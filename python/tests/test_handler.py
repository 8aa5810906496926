"""test_handler: logsink.Handler with the real logsinkd: a logging call
lands with its format, level, app and pid."""

import io
import logging
import os
import sys
import unittest
from unittest import mock

import logsink
from harness import U, DaemonTest, Unprintable


class HandlerTest(DaemonTest):
    def setUp(self):
        super().setUp()
        self.handler = logsink.Handler(app="pyapp", socket=self.daemon.socket)
        self.logger = logging.getLogger()
        self.old_level = self.logger.level
        self.logger.setLevel(1)
        self.logger.addHandler(self.handler)

    def tearDown(self):
        self.logger.removeHandler(self.handler)
        self.logger.setLevel(self.old_level)
        self.handler.close()
        super().tearDown()

    def assert_fmt(self, r, message):
        """r's fmt shows its message, not the fields (no %.0s, no 0x1F)."""
        self.assertTrue(r["fmt"].startswith(message), r["fmt"])
        self.assertNotIn("%.0s", r["fmt"])
        self.assertNotIn("\x1f", r["fmt"])

    def test_done_when(self):
        logging.getLogger().warning("disk %s at %d%%", "sda", 91)
        line = sys._getframe().f_lineno - 1
        recs = self.daemon.wait_records(lambda r: self.mine(r))
        r = self.mine(recs)[0]
        # The logger's name rides as a typed field of the site (proto/fields.h;
        # test_fields has the daemons without them): fmt is the message's.
        self.assert_fmt(r, "disk %s at %d%%")
        self.assertEqual(r["args"][:2], ["sda", 91])
        self.assertEqual(r["fields"], {"logger": "root"})
        self.assertEqual(r["msg"], "disk sda at 91%")
        self.assertEqual(r["level"], "warning")
        self.assertEqual(r["app"], "pyapp")
        self.assertEqual(r["pid"], os.getpid())
        self.assertEqual(r["file"], __file__)
        self.assertEqual(r["line"], line)
        self.assertNotIn("truncated", r)
        s = self.handler.client.stats()
        self.assertEqual((s["sent"], s["dropped"], s["fallback"]), (1, 0, 0))

    def test_extra_fields_and_logger_name(self):
        class Odd:
            def __str__(self):
                raise RuntimeError("no")
        logging.getLogger("app.db").warning("slow query %d ms", 1200,
                                            extra={"user": "bob", "rows": 7, "odd": Odd(),
                                                   "two words": "y", "long": "\u00e9" * 300})
        r = self.mine(self.daemon.wait_records(lambda r: self.mine(r)))[0]
        self.assertEqual(r["msg"], "slow query 1200 ms")
        self.assertEqual(r["fields"]["logger"], "app.db")
        self.assertEqual(r["fields"]["user"], "bob")
        self.assertEqual(r["fields"]["rows"], 7)  # typed: an int stays one
        self.assertEqual(r["fields"]["two_words"], "y")  # the name rule of logsink/_fields.py
        # A string value is cut at 256 bytes, never inside a character.
        self.assertEqual(r["fields"]["long"], "\u00e9" * 128)
        self.assertTrue(r["fields"]["odd"].startswith("<unprintable "), r["fields"]["odd"])
        self.assertEqual(self.handler.client.stats()["errors"], 0)

    def test_levels(self):
        for lv in (logging.CRITICAL, 45, logging.ERROR, logging.WARNING, 25, logging.INFO,
                   15, logging.DEBUG, 5):
            self.logger.log(lv, "level %d", lv)
        self.handler.flush()
        recs = self.daemon.wait_records(lambda r: len(self.mine(r)) == 9)
        got = [(r["args"][0], r["level"]) for r in self.mine(recs)]
        self.assertEqual(got, [(50, "crit"), (45, "err"), (40, "err"), (30, "warning"),
                               (25, "info"), (20, "info"), (15, "debug"), (10, "debug"),
                               (5, "debug")])

    def test_text_cases(self):
        self.logger.info("no args, 100% literal")        # logging prints msg as it is
        self.logger.info("constant message")             # interned as a format
        self.logger.info("user %(name)s", {"name": "bob"})  # mapping args
        self.logger.info(ValueError("not a str"))         # msg is an object
        self.logger.info("%r and %s", [1], "x")          # Python-only conversion
        self.handler.flush()
        recs = self.mine(self.daemon.wait_records(lambda r: len(self.mine(r)) == 5))
        self.assertEqual([r["msg"] for r in recs],
                         ["no args, 100% literal", "constant message", "user bob", "not a str",
                          "[1] and x"])
        for r, fmt in zip(recs, ["%s", "constant message", "%s", "%s", "%s"]):
            self.assert_fmt(r, fmt)
            self.assertEqual(r["fields"], {"logger": "root"})
        self.assertEqual(self.handler.client.stats()["fallback"], 3)

    def test_exc_info(self):
        try:
            raise KeyError("boom")
        except KeyError:
            self.logger.exception("failed %d", 7)
        self.handler.flush()
        recs = self.mine(self.daemon.wait_records(lambda r: len(self.mine(r)) == 2))
        self.assertEqual(recs[0]["msg"], "failed 7")
        self.assertEqual(recs[0]["level"], "err")
        self.assertEqual(recs[1]["fmt"], "%s")
        self.assertEqual(recs[1]["level"], "err")
        self.assertTrue(recs[1]["msg"].startswith("Traceback"), recs[1]["msg"])
        self.assertIn("KeyError: 'boom'", recs[1]["msg"])

    def test_bad_args_handle_error(self):
        errors = []
        self.handler.handleError = errors.append
        self.logger.info("disk %d full", "sda")  # neither C nor Python can render it
        self.handler.flush()
        recs = self.mine(self.daemon.wait_records(lambda r: len(self.mine(r)) == 1))
        self.assertEqual(recs[0]["msg"], "disk %d full [args: 'sda']")
        self.assertEqual(len(errors), 1)
        self.assertEqual(self.handler.client.stats()["errors"], 1)

    def test_unprintable_logged_then_handle_error(self):
        # Logged in the degraded form (the marker of python/README.md), then
        # reported through handleError; emit never raises.
        errors = []
        self.handler.handleError = errors.append
        self.logger.info("user %s port %d", Unprintable(), 22)    # an argument
        self.logger.info(Unprintable())                            # msg, no args
        self.logger.info("user %(name)s", {"name": Unprintable()})  # mapping args
        self.logger.info(Unprintable(), "x")                       # msg with args
        self.logger.info(b"raw %s", "x")                           # bytes: logging's b'...'
        self.handler.flush()
        recs = self.mine(self.daemon.wait_records(lambda r: len(self.mine(r)) == 5))
        self.assertEqual([r["msg"] for r in recs],
                         ["user %s port 22" % U, U, "user " + U, U + " [args: 'x']", "b'raw x'"])
        self.assertEqual([r["level"] for r in recs], ["info"] * 5)
        self.assertEqual(len(errors), 4)
        s = self.handler.client.stats()
        self.assertEqual((s["fallback"], s["errors"], s["dropped"]), (5, 4, 0))

    def test_unprintable_default_handle_error(self):
        # logging's own handleError (raiseExceptions true): a report on
        # stderr, nothing raised into the caller.
        old = logging.raiseExceptions
        logging.raiseExceptions = True
        self.addCleanup(setattr, logging, "raiseExceptions", old)
        with mock.patch("sys.stderr", new_callable=io.StringIO) as err:
            self.logger.warning("disk %s", Unprintable())
        self.assertIn("--- Logging error ---", err.getvalue())
        self.handler.flush()
        recs = self.mine(self.daemon.wait_records(lambda r: len(self.mine(r)) == 1))
        self.assertEqual(recs[0]["msg"], "disk " + U)


if __name__ == "__main__":
    unittest.main()
