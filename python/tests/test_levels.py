"""test_levels: levels at the source in the Python package against the real
logsinkd: the same rules text as liblogsink's $LOGSINK_LEVEL (parsed and
matched as proto/level_rules.h says), a Client's level and levels, the
Handler following the rules for each LogRecord's file and line, and a
$LOGSINK_LEVEL that does not parse (ignored, said in a warning record)."""

import logging
import os
import sys
import threading
import time
import unittest
from unittest import mock

import logsink
from logsink import _levels
import harness
from harness import DaemonTest


VECTORS = os.path.join(os.path.dirname(__file__), "..", "..", "tests", "golden",
                       "level_rules.txt")


def _unescape(s):
    out, i = bytearray(), 0
    b = s.encode()
    while i < len(b):
        if b[i] == 0x5C and i + 1 < len(b):  # '\\'
            if b[i + 1] == 0x74:  # t
                out.append(9)
                i += 2
                continue
            if b[i + 1] == 0x5C:
                out.append(0x5C)
                i += 2
                continue
            if b[i + 1] == 0x78 and i + 3 < len(b):  # xNN
                out.append(int(b[i + 2:i + 4], 16))
                i += 4
                continue
        out.append(b[i])
        i += 1
    return os.fsdecode(bytes(out))


class RulesTest(unittest.TestCase):
    def test_shared_vectors_with_the_c_parser(self):
        n = 0
        with open(VECTORS, encoding="utf-8") as f:
            for line in f:
                line = line.rstrip("\n")
                if not line or line.startswith("#"):
                    continue
                fields = line.split("\t")
                text = _unescape(fields[0])
                if fields[1] == "!":
                    with self.assertRaises(ValueError, msg=line) as e:
                        _levels.Rules(text)
                    self.assertIn(_unescape(fields[2]), str(e.exception), line)
                else:
                    r = _levels.Rules(text)
                    self.assertEqual(r.level_for(_unescape(fields[1]), int(fields[2])),
                                     int(fields[3]), line)
                n += 1
        self.assertGreaterEqual(n, 60)

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


class MergeTest(unittest.TestCase):
    """Rules as text, and pushed rules on top of a client's own, as
    level_rules.h's ls_level_rules_text and ls_level_rules_merge."""

    def test_text_reads_back(self):
        r = _levels.Rules("warning,net.c=debug,src/db/*.c:120=off")
        self.assertEqual(r.text(), "warning,net.c=debug,src/db/*.c:120=off")
        self.assertEqual(_levels.Rules(r.text()).rules, r.rules)

    def test_pushed_rules_go_on_top(self):
        own = _levels.Rules("info,net.c=err,db.c=debug")
        m = own.merged(_levels.Rules("net.c=debug", _levels.UNSET))
        self.assertEqual((m.default, m.level_for("net.c", 1), m.level_for("db.c", 1)), (6, 7, 7))
        self.assertEqual(own.merged(_levels.Rules("off", _levels.UNSET)).default, _levels.OFF)
        self.assertEqual(own.merged(_levels.Rules("", _levels.UNSET)).rules, own.rules)
        many = ",".join("f%d.c=debug" % i for i in range(_levels.RULES_MAX))
        m = own.merged(_levels.Rules(many, _levels.UNSET))
        self.assertEqual(len(m.rules), _levels.RULES_MAX)
        self.assertEqual(m.level_for("net.c", 1), 6)  # both own rules gave way


class PushedLevelsTest(DaemonTest):
    """Levels the daemon pushes while the program runs (`logctl level`,
    PROTOCOL.md "Levels at run time"): they go on top of the client's own,
    for its log() and its Handler alike, and their reset takes them back."""

    def setUp(self):
        super().setUp()
        os.environ.pop("LOGSINK_LEVEL", None)

    def produces(self, c, level):
        before = c.stats()["logged"]
        c.log(level, "probe %d", 1)
        return c.stats()["logged"] != before

    def wait_produces(self, c, want):
        deadline = time.monotonic() + harness.HANG
        while time.monotonic() < deadline:
            if self.produces(c, logsink.DEBUG) == want:
                return
            time.sleep(0.001)  # polling interval; the deadline decides
        self.fail("the client never %s debug records" % ("produced" if want else "stopped"))

    def test_a_rule_reaches_a_running_client_and_its_reset_takes_it_back(self):
        c = logsink.Client(socket=self.daemon.socket, app="pypush", level=logsink.INFO)
        h = logsink.Handler(client=c)
        logger = logging.getLogger("pushed")
        logger.propagate = False
        logger.setLevel(1)
        logger.addHandler(h)
        try:
            self.assertTrue(c.flush())  # connected: its HELLO said version 2
            self.assertFalse(self.produces(c, logsink.DEBUG))
            listed = harness.logctl("level", "--json", "--socket", self.daemon.socket)
            self.assertIn('"app":"pypush"', listed)
            self.assertIn('"own":"info"', listed)
            self.assertIn('"levels_pushable":true', listed)
            harness.logctl("level", "--app", "pypush", "debug", "--socket", self.daemon.socket)
            self.wait_produces(c, True)
            logger.debug("handler debug %d", 1)
            harness.logctl("level", "--reset", "--app", "pypush", "--socket", self.daemon.socket)
            self.wait_produces(c, False)
            logger.debug("handler debug %d", 2)  # off again: not sent
            logger.critical("end")
            h.flush()
            recs = self.daemon.wait_records(
                lambda r: any(x["msg"] == "end" for x in self.mine(r)))
            msgs = [r["msg"] for r in self.mine(recs) if r["msg"].startswith("handler")]
            self.assertEqual(msgs, ["handler debug 1"])
        finally:
            logger.removeHandler(h)
            h.close()


class OldDaemonTest(unittest.TestCase):
    """A daemon of version 1 refuses version 2's HELLO (REFUSE, highest 1)
    and closes: the client says HELLO again in version 1 on a new
    connection and sends its records there."""

    def test_the_client_falls_back_to_version_one(self):
        import socket
        import struct
        import tempfile
        from logsink import _wire as W

        def read_frame(conn):
            buf = b""
            while True:
                got = W.next_frame(buf, 1 << 20)
                if got:
                    return got[0], got[1]
                b = conn.recv(1)  # a byte at a time: nothing past the frame is taken
                if not b:
                    return None, None
                buf += b

        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "old.sock")
            srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            srv.bind(path)
            srv.listen(4)
            srv.settimeout(harness.HANG)
            seen = []  # the versions of the HELLOs, then whether records came

            def old_daemon():
                try:
                    conn, _ = srv.accept()
                    conn.settimeout(harness.HANG)
                    ftype, payload = read_frame(conn)
                    seen.append((ftype, struct.unpack_from("<I", payload)[0]))
                    reason = b"protocol version 2 is not supported; this logsinkd speaks 1"
                    conn.sendall(W.frame(W.F_REFUSE, struct.pack("<I", 1) + W.put_str(reason)))
                    conn.close()
                    conn, _ = srv.accept()
                    conn.settimeout(harness.HANG)
                    ftype, payload = read_frame(conn)
                    seen.append((ftype, struct.unpack_from("<I", payload)[0]))
                    while ftype not in (None, W.F_RECORDS):
                        ftype, _ = read_frame(conn)
                    seen.append(ftype == W.F_RECORDS)
                    conn.close()
                except OSError as e:
                    seen.append(e)

            t = threading.Thread(target=old_daemon)
            t.start()
            c = logsink.Client(socket=path, app="oldtimer", level=logsink.INFO)
            try:
                c.log(logsink.ERR, "to an old daemon %d", 1)  # connects, both times
                c.flush()
                t.join(harness.HANG)
            finally:
                c.close()
                srv.close()
            self.assertEqual(seen, [(W.F_HELLO, 2), (W.F_HELLO, 1), True])


_real_init = logging.LogRecord.__init__


def _elsewhere(self, name, level, pathname, lineno, *rest, **kw):
    _real_init(self, name, level, "/srv/app/other.py", 7, *rest, **kw)


if __name__ == "__main__":
    unittest.main()
