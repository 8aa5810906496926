"""test_wire: the Python encoders against tests/golden/frames.hex, and the
printf rules against printf.h's accept/refuse cases (no daemon needed)."""

import os
import random
import unittest

from logsink import _args, _printf
from logsink import _wire as W
from harness import seed

GOLDEN = os.path.join(os.path.dirname(__file__), "..", "..", "tests", "golden", "frames.hex")


def golden():
    out = {}
    with open(GOLDEN) as f:
        for line in f:
            if line.strip() and not line.startswith("#"):
                name, *hexes = line.split()
                out[name] = bytes.fromhex("".join(hexes))
    return out


class GoldenTest(unittest.TestCase):
    def setUp(self):
        self.g = golden()

    def test_hello(self):
        self.assertEqual(W.hello(b"myapp"), self.g["hello"])

    def test_intern(self):
        self.assertEqual(W.intern(1, 6, 42, b"user %s port %d", b"main.c"), self.g["intern"])
        self.assertEqual(W.intern(2, 7, 300, b"%d %lu %.*f %c %s %p", b"x.c"),
                         self.g["intern_all_types"])

    def test_records(self):
        specs = _printf.parse(b"%d %lu %.*f %c %s %p")
        a1, t1 = _args.encode(specs, (-2, 300, 3, 1.5, "\u00e9", "bob", 0x7FFD1000), 8192)
        specs2 = _printf.parse(b"user %s port %d")
        a2, _ = _args.encode(specs2, ("eve", 23), 8192)
        a3, _ = _args.encode(specs2, ("abc", -1), 8192)
        self.assertEqual(t1, 0)
        ts = 1700000000000000000
        buf = W.records_header(4242)
        buf += W.record(2, 0, ts, a1)
        buf += W.record(1, 0, 1500, a2)
        buf += W.record(1, 5, -500, a3)
        self.assertEqual(bytes(W.finish(buf)), self.g["records"])

    def test_dropped_and_stats_req(self):
        self.assertEqual(W.dropped(17, 1700000000000000000, 1700000001000000000),
                         self.g["dropped"])
        self.assertEqual(W.stats_req(), self.g["stats_req"])


class PrintfTest(unittest.TestCase):
    def test_signatures(self):
        cases = {
            "user %s port %d": "si", "%%": "", "%5.2f": "f", "%*.*s": "iis", "%hhd%hu": "iu",
            "%lld %llu %zu %jd %td %qd %Lf": "iuuiiif", "%c %lc %m %p": "ccsp",
            "%-+ #0'10.3e": "f", "%.f": "f", "%x%X%o": "uuu", "%a %A %g %G %F %E": "ffffff",
            "100 percent": "",
        }
        for fmt, sig in cases.items():
            self.assertEqual(_printf.signature(fmt), sig, fmt)

    def test_refused(self):
        for fmt in ["%n", "%1$d", "%r", "%(name)s", "abc %", "%-%", "%5%", "%lq", "%y", "%l",
                    "%10000000d", "%.10000000f", "%", "%d" * 65]:
            self.assertIsNone(_printf.signature(fmt), fmt)
        self.assertEqual(_printf.signature("%d" * 64), "i" * 64)
        self.assertEqual(_printf.signature("%1000000d"), "i")  # printf.h: up to 100000, then one more digit

    def test_typed_or_fallback(self):
        def typed(fmt, *args):
            return _args.encode(_printf.parse(fmt.encode()), args, 8192) is not None
        self.assertTrue(typed("%s %d %f %x %c", "a", -5, 2.5, 255, "z"))
        self.assertTrue(typed("%f", 3))            # int as double: same text
        self.assertTrue(typed("%s", object()))     # str() of anything
        self.assertFalse(typed("%d", "x"))         # mismatch
        self.assertFalse(typed("%d", 1.5))         # Python truncates, C would not take it
        self.assertFalse(typed("%d", 1 << 40))     # beyond C int: C would narrow
        self.assertTrue(typed("%ld", 1 << 40))
        self.assertFalse(typed("%x", -1))          # Python prints -1
        self.assertFalse(typed("%#o", 8))          # Python 0o10, C 010
        self.assertFalse(typed("%a", 1.5))         # Python's ascii()
        self.assertFalse(typed("%5s", "\u00e9"))   # width counts characters in Python
        self.assertFalse(typed("%.*f", -1, 1.5))   # negative precision differs
        self.assertFalse(typed("%d %d", 1))        # too few
        self.assertFalse(typed("%d", 1, 2))        # too many

    def test_plan_equals_generic(self):
        rnd = random.Random(seed())
        convs = ["%d", "%ld", "%hd", "%u", "%lu", "%x", "%#x", "%f", "%.2e", "%s", "%-3s", "%g",
                 "%lld", "%zu", "%i"]
        values = [0, 1, -1, 127, 128, 40000, -(1 << 31), (1 << 31), (1 << 63) - 1, -(1 << 63),
                  (1 << 64) - 1, 1 << 64, 2.5, float("inf"), "", "ab", "\u00e9\u4e2d", None,
                  True, [1], "x" * 9000]
        for _ in range(3000):
            k = rnd.randrange(0, 5)
            fmt = " ".join(rnd.choice(convs) for _ in range(k)).encode()
            args = tuple(rnd.choice(values) for _ in range(k + rnd.choice([0, 0, 0, 1, -1])
                                                            if k else 0))
            specs = _printf.parse(fmt)
            ops = _args.plan(specs)
            if ops is None:
                continue
            self.assertEqual(_args.encode_plan(ops, specs, args, 8192),
                             _args.encode(specs, args, 8192), (fmt, args))

    def test_app_label_is_cut_on_a_character_boundary(self):
        # "a" then 40 two-byte characters: byte 64 is inside one (LS_APP_MAX)
        app = ("a" + "\u00e9" * 40).encode("utf-8")
        frame = W.hello(app)
        self.assertEqual(frame[-63:].decode("utf-8"), "a" + "\u00e9" * 31)
        self.assertEqual(frame[-64], 63, "the label's length: 63 bytes")
        # the same rule as proto/codec.h's ls_utf8_cut (tests/proto/utf8_cut_test.cc)
        s = "\u00e9\u00e9\u00e9".encode("utf-8")
        self.assertEqual([W.utf8_cut(s, n) for n in range(7)], [0, 0, 2, 2, 4, 4, 6])
        self.assertEqual(W.utf8_cut(b"\x80\x80\x80\x80", 3), 3)
        self.assertEqual(W.utf8_cut(b"a\xf0\x9f\x98\x80", 4), 1)

    def test_cut(self):
        specs = _printf.parse(b"%s|%s|%d")
        data, trunc = _args.encode(specs, ("\u00e9" * 3000, "b" * 5000, 7), 1024)
        self.assertLessEqual(len(data), 1024)
        self.assertGreater(trunc, 0)
        # the first string is cut on a character boundary: its bytes decode
        n = data[0] | (data[1] & 0x7F) << 7
        self.assertEqual(len(data[2:2 + n].decode("utf-8")), n // 2)


if __name__ == "__main__":
    unittest.main()
