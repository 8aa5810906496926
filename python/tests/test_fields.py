"""test_fields: the logging Handler's logger name and extra= values as named,
typed fields (proto/include/logsink/proto/fields.h) when the daemon grants
LS_CAP_FIELDS, and as the %.0s trick (render/RENDERING.md, "Named fields")
when it does not.

- FieldsUnitTest: logsink/_fields.py alone (the name rule, the types).
- FakeDaemonTest: the frames the client sends to a fake daemon that grants
  the capability, one that does not (version 2 without it), one of
  version 1 (REFUSE): typed fields only with the grant.
- RealDaemonTest: the real logsinkd of this build, read back with
  `logctl cat --json`: the "fields" object carries typed values, "fmt"
  shows neither %.0s nor 0x1F."""

import json
import logging
import os
import re
import socket
import struct
import tempfile
import threading
import unittest

import logsink
from logsink import _fields as F
from logsink import _wire as W
import harness
from harness import DaemonTest

# fields.h: a name is 1..64 bytes of [A-Za-z0-9_.@-], the first a letter,
# a digit or '_' ('_' only for the daemon's own).
CLIENT_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.@-]{0,63}\Z")
EXTRA = {"user": "alice", "request_id": 42, "ok": True, "ratio": 0.5}
TYPED_LIST = b"logger=%s user=%s request_id=%lld ok:bool=%d ratio=%f"


def check_fields_format(tc, fmt):
    """The checks of fields.h's ls_fields_check that a client must pass:
    one 0x1F, a message that parses, fields `name[:bool]=%[length]conv`
    with valid, unique, non-trusted names, the whole signature within 64."""
    tc.assertEqual(fmt.count(b"\x1f"), 1, fmt)
    tc.assertIsNotNone(logsink.signature(fmt), fmt)
    names = []
    for f in fmt.split(b"\x1f")[1].split(b" "):
        m = re.fullmatch(rb"([^:=]+)(:bool)?=%(hh|h|ll|l|j|z|t|L|q)?([diuoxXfFeEgGaAcsmp])", f)
        tc.assertIsNotNone(m, f)
        tc.assertRegex(m.group(1).decode(), CLIENT_NAME)
        if m.group(2):
            tc.assertIn(m.group(4), b"diuoxX")
        names.append(m.group(1))
    tc.assertEqual(len(names), len(set(names)), fmt)


class FieldsUnitTest(unittest.TestCase):
    def test_name_rule(self):
        cases = {
            "user": "user", "request_id": "request_id", "a.b@c-d": "a.b@c-d",
            "9lives": "9lives",            # a digit may come first
            "two words": "two_words",      # each disallowed character becomes '_'
            "caf\u00e9": "caf_",           # one '_' per character, not per byte
            "_private": "x_private",       # '_' is the daemon's: 'x' in front
            ".hidden": "x.hidden", "@at": "x@at", "-dash": "x-dash",
            "\u00e9t\u00e9": "x_t_",       # becomes '_t_', then 'x' in front
            "": "x",
            "a" * 100: "a" * 64,           # cut to 64
            "_" + "b" * 70: "x_" + "b" * 62,  # 'x' first, then cut
        }
        for raw, want in cases.items():
            got = F.name(raw)
            self.assertEqual(got, want, raw)
            self.assertRegex(got, CLIENT_NAME)

    def test_types(self):
        def one(v):
            spec, args = F.typed([F.item("v", v)])
            return spec, args
        self.assertEqual(one(True), (b"v:bool=%d", b"\x02"))  # bool before int
        self.assertEqual(one(False), (b"v:bool=%d", b"\x00"))
        self.assertEqual(one(42), (b"v=%lld", W.varint(84)))
        self.assertEqual(one(-1), (b"v=%lld", W.varint(1)))
        self.assertEqual(one(-(1 << 63)), (b"v=%lld", W.varint((1 << 64) - 1)))
        self.assertEqual(one((1 << 63) - 1), (b"v=%lld", W.varint((1 << 64) - 2)))
        self.assertEqual(one(1 << 63), (b"v=%llu", W.varint(1 << 63)))
        self.assertEqual(one((1 << 64) - 1), (b"v=%llu", W.varint((1 << 64) - 1)))
        self.assertEqual(one(1 << 64), (b"v=%s", W.put_str(b"18446744073709551616")))
        self.assertEqual(one(-(1 << 63) - 1), (b"v=%s", W.put_str(str(-(1 << 63) - 1).encode())))
        self.assertEqual(one(0.5), (b"v=%f", struct.pack("<d", 0.5)))
        self.assertEqual(one("x"), (b"v=%s", b"\x01x"))
        self.assertEqual(one([1, 2]), (b"v=%s", W.put_str(b"[1, 2]")))
        self.assertEqual(one(None), (b"v=%s", W.put_str(b"None")))
        # A string value is cut at 256 bytes, never inside a character.
        self.assertEqual(one("\u00e9" * 300), (b"v=%s", W.put_str(("\u00e9" * 128).encode())))

    def test_subclasses_keep_their_type(self):
        import enum

        class Color(enum.IntEnum):
            RED = 3

        class Ratio(float):
            def __str__(self):
                return "ratio!"
        items = [F.item("c", Color.RED), F.item("r", Ratio(0.25))]
        self.assertEqual(F.typed(items),
                         (b"c=%lld r=%f", W.varint(6) + struct.pack("<d", 0.25)))
        # The trick prints them as str() does, as before.
        self.assertEqual(F.trick(items), (2, W.put_str(("c=%s" % Color.RED).encode()) +
                                          W.put_str(b"r=ratio!")))

    def test_unprintable_value_is_its_marker(self):
        spec, args = F.typed([F.item("odd", harness.Unprintable())])
        self.assertEqual((spec, args), (b"odd=%s", W.put_str(harness.U.encode())))

    def test_repeated_name_keeps_the_last_value(self):
        items = [F.item("logger", "app"), F.item("a b", 1), F.item("c", 2), F.item("a_b", "two")]
        spec, args = F.typed(items)
        self.assertEqual(spec, b"logger=%s a_b=%s c=%lld")  # the first place, the last value
        self.assertEqual(args, W.put_str(b"app") + W.put_str(b"two") + W.varint(4))

    def test_whole_format_signature(self):
        spec, _ = F.typed([F.item("logger", "x")] + [F.item(k, v) for k, v in EXTRA.items()])
        self.assertEqual(spec, TYPED_LIST)
        fmt = b"slow query %d ms\x1f" + spec
        check_fields_format(self, fmt)
        self.assertEqual(logsink.signature(fmt), "issiif")


# ---- a fake daemon: the frames a client sends -------------------------------

def _read_frame(conn, buf):
    while True:
        got = W.next_frame(buf, 1 << 20)
        if got is None:
            return None
        if got:
            del buf[:got[2]]
            return got[0], got[1]
        b = conn.recv(65536)
        if not b:
            return None
        buf += b


def _decode_args(sig, b, pos):
    out = []
    for t in sig:
        if t == "f":
            out.append(struct.unpack_from("<d", b, pos)[0])
            pos += 8
            continue
        v, pos = W.get_varint(b, pos)
        if t == "i":
            out.append((v >> 1) ^ -(v & 1))
        elif t == "s":
            out.append(bytes(b[pos:pos + v]).decode("utf-8", "backslashreplace"))
            pos += v
        else:
            out.append(v)
    return out, pos


class FakeDaemon:
    """Listens on a socket: a version 2 daemon granting `grants[i]` of the
    client's capabilities on its i-th connection (version=1: one that
    REFUSEs version 2, then takes the version 1 HELLO). Collects HELLOs,
    INTERNs (per connection) and decoded records until the client closes
    its last connection; close_after: records after which it closes the
    first one (as a daemon that restarts)."""

    def __init__(self, d, grants, version=2, close_after=None):
        self.path = os.path.join(d, "fake.sock")
        self.grants, self.version, self.close_after = list(grants), version, close_after
        self.hellos, self.conn_sites, self.records, self.errors = [], [], [], []
        self.closed = threading.Event()
        self.srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.srv.bind(self.path)
        self.srv.listen(4)
        self.srv.settimeout(harness.HANG)
        self.thread = threading.Thread(target=self._run)
        self.thread.start()

    @property
    def sites(self):
        return self.conn_sites[-1]

    def _hello(self):
        conn, _ = self.srv.accept()
        conn.settimeout(harness.HANG)
        buf = bytearray()
        ftype, payload = _read_frame(conn, buf)
        assert ftype == W.F_HELLO
        version = struct.unpack_from("<I", payload)[0]
        caps = None
        if version == 2:
            app = W.get_str(payload, 8, 64)
            caps = struct.unpack_from("<I", payload, app[1])[0]
        self.hellos.append((version, caps))
        return conn, buf, version, caps

    def _serve(self, conn, buf, limit):
        sites = {}
        self.conn_sites.append(sites)
        n = 0
        while limit is None or n < limit:
            got = _read_frame(conn, buf)
            if got is None:
                break
            ftype, p = got
            if ftype == W.F_INTERN:
                site, pos = W.get_varint(p, 0)
                level = p[pos]
                _, pos = W.get_varint(p, pos + 1)
                fmt, pos = W.get_str(p, pos, 4096)
                sites[site] = (level, fmt)
            elif ftype == W.F_RECORDS:
                _, pos = W.get_varint(p, 0)
                while pos < len(p):
                    head, pos = W.get_varint(p, pos)
                    if head & 1:
                        _, pos = W.get_varint(p, pos)
                    _, pos = W.get_varint(p, pos)  # ts delta
                    level, fmt = sites[head >> 1]
                    args, pos = _decode_args(logsink.signature(fmt), p, pos)
                    self.records.append((level, fmt, args))
                    n += 1
        conn.close()

    def _run(self):
        try:
            for i, grant in enumerate(self.grants):
                conn, buf, version, caps = self._hello()
                if self.version == 1:
                    conn.sendall(W.frame(W.F_REFUSE, struct.pack("<I", 1) +
                                         W.put_str(b"speaks 1")))
                    conn.close()
                    conn, buf, version, caps = self._hello()
                else:
                    conn.sendall(W.frame(W.F_WELCOME, struct.pack("<II", 2, caps & grant) +
                                         W.put_str(b"")))
                last = i == len(self.grants) - 1
                self._serve(conn, buf, None if last else self.close_after)
                if not last:
                    self.closed.set()
        except Exception as e:  # noqa: BLE001 - reported by the test
            self.errors.append(e)

    def finish(self, tc):
        self.thread.join(harness.HANG)
        self.srv.close()
        tc.assertFalse(self.thread.is_alive())
        tc.assertEqual(self.errors, [])


class FakeDaemonTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.logger = logging.getLogger("x")
        self.logger.propagate = False
        self.logger.setLevel(logging.DEBUG)

    def tearDown(self):
        for h in list(self.logger.handlers):
            self.logger.removeHandler(h)
        self.logger.propagate = True
        self.dir.cleanup()

    def run_handler(self, daemon, log):
        h = logsink.Handler(app="fields", socket=daemon.path)
        self.logger.addHandler(h)
        try:
            log()
            h.flush()
        finally:
            self.logger.removeHandler(h)
            h.close()
        daemon.finish(self)
        return h.client

    def test_typed_fields_when_granted(self):
        fake = FakeDaemon(self.dir.name, [W.CAP_LEVELS | W.CAP_FIELDS])
        def log():
            for ms in (1200, 1300):  # one call site: the same site, interned once
                self.logger.warning("slow query %d ms", ms, extra=EXTRA)
                if ms == 1200:
                    self.logger.warning("no extra")
        c = self.run_handler(fake, log)
        self.assertEqual(fake.hellos, [(2, W.CAP_LEVELS | W.CAP_FIELDS)])  # offered
        fmt = b"slow query %d ms\x1f" + TYPED_LIST
        check_fields_format(self, fmt)
        self.assertEqual(fake.records, [
            (4 | W.SITE_FIELDS, fmt, [1200, "x", "alice", 42, 1, 0.5]),
            (4 | W.SITE_FIELDS, b"no extra\x1flogger=%s", ["x"]),
            (4 | W.SITE_FIELDS, fmt, [1300, "x", "alice", 42, 1, 0.5])])
        self.assertEqual(len(fake.sites), 2)
        self.assertEqual(c.stats()["interned"], 2)

    def test_a_site_per_full_format(self):
        # The field names and types are part of the site: one call site,
        # three formats (ints, a str, a bool), each interned once.
        fake = FakeDaemon(self.dir.name, [W.CAP_LEVELS | W.CAP_FIELDS])

        def log():
            for v in (1, "a", 2, True, "b"):
                self.logger.info("v", extra={"v": v})
        self.run_handler(fake, log)
        self.assertEqual(sorted(fake.sites.values()), [
            (6 | W.SITE_FIELDS, b"v\x1flogger=%s v:bool=%d"),
            (6 | W.SITE_FIELDS, b"v\x1flogger=%s v=%lld"),
            (6 | W.SITE_FIELDS, b"v\x1flogger=%s v=%s")])
        self.assertEqual([r[2] for r in fake.records],
                         [["x", 1], ["x", "a"], ["x", 2], ["x", 1], ["x", "b"]])

    def test_restart_to_a_daemon_without_the_grant(self):
        # The daemon that granted fields closes (a restart); the next one
        # does not grant them: the typed site is interned again as an
        # ordinary format of the same signature (0x1F made a space, no
        # SITE_FIELDS), so what was encoded for it still reads right; the
        # records logged for the new daemon take the trick.
        fake = FakeDaemon(self.dir.name, [W.CAP_LEVELS | W.CAP_FIELDS, W.CAP_LEVELS],
                          close_after=1)

        def log():
            for i in range(2):
                self.logger.warning("n %d", i, extra={"ok": True})
                if i == 0:
                    self.logger.handlers[0].flush()
                    self.assertTrue(fake.closed.wait(harness.HANG))
        self.run_handler(fake, log)
        self.assertEqual(len(fake.hellos), 2)
        self.assertEqual(len(fake.records), 2)  # none lost
        typed = b"n %d\x1flogger=%s ok:bool=%d"
        self.assertEqual(fake.conn_sites[0], {1: (4 | W.SITE_FIELDS, typed)})
        self.assertEqual(fake.conn_sites[1][1], (4, b"n %d logger=%s ok:bool=%d"))
        self.assertNotIn(4 | W.SITE_FIELDS, [lv for lv, _ in fake.conn_sites[1].values()])
        self.assertEqual(fake.records[0], (4 | W.SITE_FIELDS, typed, [0, "x", 1]))
        self.assertEqual(fake.records[-1][2][0], 1)
        self.assertIn(fake.records[-1][1], (b"n %d logger=%s ok:bool=%d", b"n %d%.0s%.0s"))

    def test_trick_without_the_grant(self):
        # A daemon of version 2 that does not know fields: today's trick, exactly.
        fake = FakeDaemon(self.dir.name, [W.CAP_LEVELS])
        self.run_handler(fake, lambda: self.logger.warning("slow query %d ms", 1200, extra=EXTRA))
        self.assertEqual(fake.hellos, [(2, W.CAP_LEVELS | W.CAP_FIELDS)])
        self.assertEqual(fake.records, [
            (4, b"slow query %d ms%.0s%.0s%.0s%.0s%.0s",
             [1200, "logger=x", "user=alice", "request_id=42", "ok=True", "ratio=0.5"])])

    def test_trick_with_a_version_1_daemon(self):
        fake = FakeDaemon(self.dir.name, [0], version=1)
        self.run_handler(fake, lambda: self.logger.error("slow query %d ms", 1200,
                                                         extra={"a b": 1, "a_b": 2}))
        self.assertEqual(fake.hellos, [(2, W.CAP_LEVELS | W.CAP_FIELDS), (1, None)])
        # The trick keeps its own rule: names as RENDERING.md's, repeated as given.
        self.assertEqual(fake.records, [
            (3, b"slow query %d ms%.0s%.0s%.0s", [1200, "logger=x", "a_b=1", "a_b=2"])])

    def test_message_with_the_separator_takes_the_trick(self):
        fake = FakeDaemon(self.dir.name, [W.CAP_LEVELS | W.CAP_FIELDS])
        self.run_handler(fake, lambda: self.logger.info("odd \x1f %d", 1, extra={"k": 2}))
        self.assertEqual(fake.records, [(6, b"odd \x1f %d%.0s%.0s", [1, "logger=x", "k=2"])])

    def test_too_many_arguments_go_without_fields(self):
        # 60 of the message's and 17 fields: over 64 the daemon refuses the
        # format, so the record keeps its message only.
        fake = FakeDaemon(self.dir.name, [W.CAP_LEVELS | W.CAP_FIELDS])
        extra = {"k%d" % i: i for i in range(16)}
        self.run_handler(fake, lambda: self.logger.info("%d" * 60, *range(60), extra=extra))
        self.assertEqual(fake.records, [(6, b"%d" * 60, list(range(60)))])

    def test_typed_site_to_a_daemon_without_the_grant(self):
        # Re-interned after a restart to a daemon without the capability (or
        # before its WELCOME is read): an ordinary format of the same signature.
        c = logsink.Client(socket=os.path.join(self.dir.name, "none.sock"), app="t")
        try:
            key = (b"m %d\x1flogger=%s ok:bool=%d", 6 | W.SITE_FIELDS, "/f.py", 9)
            c._caps = W.CAP_FIELDS
            self.assertEqual(c._intern_frame(key, 1), W.intern(1, 6 | W.SITE_FIELDS, 9, key[0],
                                                               b"/f.py"))
            c._caps = 0
            self.assertEqual(c._intern_frame(key, 1), W.intern(1, 6, 9,
                                                               b"m %d logger=%s ok:bool=%d",
                                                               b"/f.py"))
        finally:
            c.close()


# ---- the real daemon ----------------------------------------------------------

class RealDaemonTest(DaemonTest):
    def setUp(self):
        super().setUp()
        self.handler = logsink.Handler(app="pyfields", socket=self.daemon.socket)
        self.logger = logging.getLogger("x")
        self.logger.propagate = False
        self.logger.setLevel(logging.DEBUG)
        self.logger.addHandler(self.handler)

    def tearDown(self):
        self.logger.removeHandler(self.handler)
        self.logger.propagate = True
        self.handler.close()
        super().tearDown()

    def read_back(self, n):
        """This process's entries, as logctl -o json prints them, each also
        as its list of key/value pairs (duplicate keys seen)."""
        self.handler.flush()
        self.assertTrue(self.handler.client._caps & W.CAP_FIELDS,
                        "this logsinkd did not grant LS_CAP_FIELDS")
        self.daemon.wait_records(lambda r: len(self.mine(r)) >= n)
        out = harness.logctl("cat", "--file", self.daemon.ring, "-o", "json")
        recs = []
        for line in out.splitlines():
            if not line.strip():
                continue
            r = json.loads(line)
            if r.get("pid") == os.getpid():
                pairs = json.loads(line, object_pairs_hook=lambda kv: kv)
                recs.append((r, dict(pairs).get("fields")))
        self.assertEqual(len(recs), n)
        return recs

    def assert_clean_fmt(self, r, message):
        self.assertNotIn("%.0s", r["fmt"])
        self.assertNotIn("\x1f", r["fmt"])
        self.assertTrue(r["fmt"].startswith(message), r["fmt"])

    def test_typed_fields_read_back(self):
        self.logger.warning("slow query %d ms", 1200, extra=EXTRA)
        (r, _), = self.read_back(1)
        self.assertEqual(r["msg"], "slow query 1200 ms")
        self.assert_clean_fmt(r, "slow query %d ms")
        self.assertEqual(r["fields"], {"logger": "x", "user": "alice", "request_id": 42,
                                       "ok": True, "ratio": 0.5})
        self.assertIs(r["fields"]["ok"], True)
        self.assertIsInstance(r["fields"]["ratio"], float)

    def test_every_type_read_back(self):
        self.logger.info("types", extra={"neg": -7, "big": 1 << 63, "huge": 1 << 64, "no": False,
                                         "none": None, "lst": [1, "a"], "odd": harness.Unprintable(),
                                         "long": "\u00e9" * 300})
        (r, _), = self.read_back(1)
        self.assertEqual(r["msg"], "types")
        self.assert_clean_fmt(r, "types")
        self.assertEqual(r["fields"], {
            "logger": "x", "neg": -7, "big": 1 << 63, "huge": "18446744073709551616",
            "no": False, "none": "None", "lst": "[1, 'a']", "odd": harness.U,
            "long": "\u00e9" * 128})  # a string value is cut at 256 bytes
        self.assertEqual(self.handler.client.stats()["errors"], 0)

    def test_name_rule_read_back(self):
        self.logger.info("names %s", "n", extra={"two words": 1, "_private": 2, "caf\u00e9": 3,
                                                  "a b": "first", "a_b": "last", "9lives": 4,
                                                  "x" * 80: 5})
        (r, pairs), = self.read_back(1)
        self.assertEqual(r["msg"], "names n")
        self.assert_clean_fmt(r, "names %s")
        # Each name once: a repeated one keeps its last value (at its first place).
        self.assertEqual(pairs, [("logger", "x"), ("two_words", 1), ("x_private", 2),
                                 ("caf_", 3), ("a_b", "last"), ("9lives", 4), ("x" * 64, 5)])

    def test_logger_only_and_text_records(self):
        self.logger.info("constant message")
        self.logger.info("100% literal")          # text under %s
        self.logger.info("user %(name)s", {"name": "bob"})
        recs = self.read_back(3)
        self.assertEqual([r["msg"] for r, _ in recs],
                         ["constant message", "100% literal", "user bob"])
        for (r, _), m in zip(recs, ["constant message", "%s", "%s"]):
            self.assert_clean_fmt(r, m)
            self.assertEqual(r["fields"], {"logger": "x"})


if __name__ == "__main__":
    unittest.main()
