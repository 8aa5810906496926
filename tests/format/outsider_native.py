#!/usr/bin/env python3
"""outsider_native.py SOCKET SEED SITES: native records for outsider_test.sh,
sent as proto/PROTOCOL.md describes the frames (no logsink code), so that the
ring holds what text lines cannot give it: every argument type, `*` widths,
narrowing, named fields, a client-cut record (TRUNC), several threads (TID),
a DROPPED report, timestamps from a clock an hour behind (FORMAT.md, "What is
trusted"), an hour ahead and at 1970 (before the boot), and SITES extra call sites (enough of them fill
the string table, and the records of the sites that no longer fit carry
their site inline). Values come from SEED. Returns once the daemon answered
a STATS_REQ sent after the records: it has handled every frame before it."""

import random
import socket
import struct
import sys
import time

from outsider_codec import d, s, varint, zz

HELLO, INTERN, RECORDS, DROPPED, STATS_REQ = 1, 2, 3, 4, 5
STATS = 0x82


def frame(ftype, payload):
    return struct.pack("<IB", 1 + len(payload), ftype) + payload


def main():
    path, seed, extra_sites = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    rnd = random.Random(seed)
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    conn.connect(path)
    out = bytearray(frame(HELLO, struct.pack("<II", 1, 0) + s("native")))

    # (format, level, file, line, argument encoder)
    sites = [
        ("user %s port %d", 6, "auth.c", 12,
         lambda: s(rnd.choice(["alice", "bob", "h\u00e9l\u00e8ne \u2603"])) + varint(zz(rnd.randint(-70000, 70000)))),
        ("%u items, %#x, %llu big, %lld neg", 5, "count.c", 40,
         lambda: varint(rnd.randint(0, 2**32 - 1)) + varint(rnd.randint(0, 2**32 - 1)) +
         varint(rnd.randint(2**60, 2**64 - 1)) + varint(zz(-rnd.randint(2**55, 2**62)))),
        ("pi %.3f, %g, %e", 4, "math.c", 7,
         lambda: d(rnd.uniform(-1e6, 1e6)) + d(rnd.choice([0.1, -0.0, 1e300, 5e-324])) + d(rnd.random())),
        ("char %c wide %lc ptr %p", 3, "chars.c", 99,
         lambda: varint(rnd.randint(0x41, 0x7A)) + varint(rnd.choice([0xE9, 0x2603, 0x1F600])) +
         varint(rnd.randint(0, 2**48))),
        ("[%*d|%-*.*s|%hhd]", 7, "width.c", 3,
         lambda: varint(zz(rnd.randint(-12, 12))) + varint(zz(rnd.randint(-999, 999))) +
         varint(zz(rnd.randint(0, 12))) + varint(zz(rnd.randint(-1, 6))) + s("precision") +
         varint(zz(rnd.randint(-1000, 1000)))),
        ("open failed: %m (%%d stays)", 3, "io.c", 55, lambda: s("No such file or directory")),
        ("request done%.0s%.0s", 6, "named.c", 8,
         lambda: s("user=" + rnd.choice(["alice", "bob"])) + s("ms=%d" % rnd.randint(0, 999))),
    ]
    for i in range(extra_sites):
        sites.append(("filler site %d of the outsider test, value %%d" % i, rnd.randint(0, 7),
                      "filler/%d.c" % i, i, lambda: varint(zz(rnd.randint(-5, 5)))))
    for i, (fmt, level, file, line, _) in enumerate(sites):
        out += frame(INTERN, varint(i + 1) + bytes((level,)) + varint(line) + s(fmt) + s(file))

    now = time.time_ns()
    for tid in (rnd.randint(1000, 4000), rnd.randint(4001, 9000)):
        recs = bytearray(varint(tid))
        prev = 0
        for i in range(len(sites)):
            site = i + 1
            # The first seven sites three times each, the fillers once.
            for _ in range(3 if i < 7 else 1):
                ts = now + rnd.randint(0, 10**6)
                recs += varint(site << 1) + varint(zz(ts - prev)) + sites[i][4]()
                prev = ts
        # A record the client cut (TRUNC), records an hour behind and an
        # hour ahead of the daemon's clock, and one from a clock that says
        # 1970 (before any boot: RENDERING.md, "Time").
        recs += varint(1 << 1 | 1) + varint(rnd.randint(1, 5000)) + varint(zz(now - prev)) + sites[0][4]()
        prev = now
        for ts in (now - 3600 * 10**9, now + 3600 * 10**9, 10**9):
            recs += varint(1 << 1) + varint(zz(ts - prev)) + sites[0][4]()
            prev = ts
        out += frame(RECORDS, bytes(recs))
    out += frame(DROPPED, varint(rnd.randint(1, 10**6)) + varint(now - 5 * 10**9) + varint(now))
    out += frame(STATS_REQ, b"")
    conn.sendall(out)

    buf = b""
    while True:
        while len(buf) >= 5 and len(buf) >= 4 + struct.unpack_from("<I", buf)[0]:
            n, ftype = struct.unpack_from("<IB", buf)
            if ftype == STATS:
                return 0
            buf = buf[4 + n:]
        chunk = conn.recv(65536)
        if not chunk:
            print("outsider_native: the daemon closed the connection before STATS", file=sys.stderr)
            return 1
        buf += chunk


sys.exit(main())
