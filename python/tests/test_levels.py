"""test_levels: levels at the source in the Python package against the real
logsinkd: the same rules text as liblogsink's $LOGSINK_LEVEL (parsed and
matched as proto/level_rules.h says), a Client's level and levels, the
Handler following the rules for each LogRecord's file and line, and a
$LOGSINK_LEVEL that does not parse (ignored, said in a warning record)."""

import logging
import os
import sys
import unittest
from unittest import mock

import logsink
from logsink import _levels
from harness import DaemonTest


class RulesTest(unittest.TestCase):
    def test_as_the_c_parser(self):
        r = _levels.Rules("warning, net.c = debug, src/db/*.c=err, *.c:120=off, net.c=info, 7")
        self.assertEqual((r.default, len(r.rules)), (7, 4))
        for file, line, want in [("src/net.c", 1, 6), ("/abs/src/net.c", 120, 6),
                                 ("../../src/db/query.c", 1, 3), ("src/db/query.c", 120, -1),
                                 ("src/db/sub/query.c", 1, 7), ("xsrc/db/query.c", 1, 7),
                                 ("main.cc", 120, 7), ("main.c", 120, -1), ("", 1, 7)]:
            self.assertEqual(r.level_for(file, line), want, (file, line))
        self.assertEqual(_levels.Rules("INFO").default, 6)
        self.assertEqual(_levels.Rules("Critical").default, 2)
        self.assertEqual(_levels.Rules("net.c=debug", 3).default, 3)

    def test_globs_as_the_c_matcher(self):
        # The cases of tests/proto/level_rules_test.cc.
        for pattern, file, match in [
                ("net.c", "src/net.c", True), ("n?t.c", "net.c", True), ("n?t.c", "nt.c", False),
                ("[!n]*.c", "net.c", False), ("[^n]*.c", "net.c", False),
                ("[^n]*.c", "db.c", True), ("[a-c]*.c", "db.c", False),
                ("[a-d]*.c", "db.c", True), ("[]x]y.c", "]y.c", True), ("[x.c", "[x.c", True),
                ("\\*.c", "\\a.c", True), ("\\*.c", "a.c", False),
                ("[[:alpha:]]et.c", "net.c", False), ("*.c", "a.c.h", False),
                ("*", "anything", True), ("a*b*c", "aXbYbZc", True), ("a*b*c", "aXbYbZ", False),
                ("src/*.c", "x/src/net.c", True), ("src/*.c", "src/sub/net.c", False),
                ("*/net.c", "a/b/net.c", True), ("s?c/net.c", "s/c/net.c", False),
                ("\u00e9*.c", "\u00e9t\u00e9.c", True), ("?t.c", "\u00e9t.c", False)]:
            r = _levels.Rules(pattern + "=err")
            self.assertEqual(r.level_for(file, 1) == 3, match, (pattern, file))
        for empty in ("", " ", " \t "):
            self.assertEqual(_levels.Rules(empty, 5).level_for("x.c", 1), 5)
        for blank in ("info\r", "\u00a0info", "info\n"):  # only spaces and tabs are blanks
            with self.assertRaises(ValueError):
                _levels.Rules(blank)

    def test_faults(self):
        for text, why in [("info,", "an empty rule"),
                          ("inof", '"inof" is not a level'), ("8", '"8" is not a level'),
                          ("net.c=loud", '"loud" is not a level'), ("=debug", "no file before"),
                          (":12=debug", "no file before"),
                          ("net.c:0=debug", "the line must be 1..2147483647"),
                          ("a" * 256 + "=debug", "a file of more than 255 bytes"),
                          (",".join("f%d.c=debug" % i for i in range(33)),
                           "more than 32 file rules")]:
            with self.assertRaises(ValueError) as e:
                _levels.Rules(text)
            self.assertIn(why, str(e.exception), text)


class LevelsTest(DaemonTest):
    def setUp(self):
        super().setUp()
        os.environ.pop("LOGSINK_LEVEL", None)

    def tearDown(self):
        os.environ.pop("LOGSINK_LEVEL", None)
        super().tearDown()

    def levels_of(self, recs):
        return sorted(r["level"] for r in self.mine(recs) if r["fmt"] != "end")

    def test_client_level_and_env(self):
        c = logsink.Client(socket=self.daemon.socket, app="pyapp", level=logsink.INFO)
        for lv in (logsink.ERR, logsink.INFO, logsink.DEBUG):
            self.assertTrue(c.log(lv, "n %d", lv))
        c.log(logsink.EMERG, "end")
        c.flush()
        recs = self.daemon.wait_records(lambda r: any(x["fmt"] == "end" for x in self.mine(r)))
        self.assertEqual(self.levels_of(recs), ["err", "info"])
        self.assertEqual(c.stats()["sent"], 3)
        c.close()
        # The environment replaces level and levels; a rule names this file's line.
        line = sys._getframe().f_lineno + 4
        os.environ["LOGSINK_LEVEL"] = "err,test_levels.py:%d=debug" % line
        c = logsink.Client(socket=self.daemon.socket, app="pyapp2", level=logsink.EMERG)
        c.log(logsink.INFO, "skipped")
        c.log(logsink.DEBUG, "named line")
        c.log(logsink.EMERG, "end")
        c.flush()
        recs = self.daemon.wait_records(
            lambda r: any(x["fmt"] == "end" and x["app"] == "pyapp2" for x in r))
        mine = [r["fmt"] for r in recs if r.get("app") == "pyapp2"]
        self.assertEqual(mine, ["named line", "end"])
        c.close()

    def test_bad_env_is_ignored_and_said(self):
        os.environ["LOGSINK_LEVEL"] = "inof"
        c = logsink.Client(socket=self.daemon.socket, app="pyapp", level=logsink.INFO)
        c.log(logsink.DEBUG, "debug")
        c.log(logsink.EMERG, "end")
        c.flush()
        recs = self.daemon.wait_records(lambda r: any(x["fmt"] == "end" for x in self.mine(r)))
        msgs = [(r["level"], r["msg"]) for r in self.mine(recs)]
        self.assertEqual(msgs, [("warning", 'logsink: LOGSINK_LEVEL="inof" ignored: "inof" is '
                                            'not a level (emerg .. debug, 0..7 or off)'),
                                ("emerg", "end")])
        c.close()
        with self.assertRaises(ValueError):
            logsink.Client(socket=self.daemon.socket, levels="net.c=")
        # A disabled record on a closed client raises as any other does.
        os.environ.pop("LOGSINK_LEVEL")
        c = logsink.Client(socket=self.daemon.socket, level=logsink.INFO)
        c.close()
        with self.assertRaises(ValueError):
            c.log(logsink.DEBUG, "after close")
        with self.assertRaises(ValueError):
            logsink.Handler(client=c, levels="info")

    def test_handler_follows_the_rules(self):
        h = logsink.Handler(app="pyapp", socket=self.daemon.socket,
                            levels="warning,test_levels.py=info")
        logger = logging.getLogger("levels")
        logger.propagate = False
        logger.setLevel(1)
        logger.addHandler(h)
        try:
            logger.debug("debug %d", 1)
            logger.info("info %d", 1)
            with mock.patch.object(logging.LogRecord, "__init__", autospec=True,
                                   side_effect=_elsewhere):
                logger.info("info elsewhere %d", 2)  # a site in another file: warning applies
                logger.warning("warning elsewhere %d", 2)
            logger.critical("end")
            h.flush()
            recs = self.daemon.wait_records(
                lambda r: any(x["msg"] == "end" for x in self.mine(r)))
            self.assertEqual([r["msg"] for r in self.mine(recs)],
                             ["info 1", "warning elsewhere 2", "end"])
        finally:
            logger.removeHandler(h)
            h.close()


_real_init = logging.LogRecord.__init__


def _elsewhere(self, name, level, pathname, lineno, *rest, **kw):
    _real_init(self, name, level, "/srv/app/other.py", 7, *rest, **kw)


if __name__ == "__main__":
    unittest.main()
