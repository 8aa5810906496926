#!/usr/bin/env python3
"""outsider_fields_ring.py PATH: writes a small version-6 ring (the worked
example's geometry: 20480 bytes, 4 KiB blocks, one block of codec none) by
proto/FORMAT.md alone, holding the field sites a daemon never writes but a
reader must still read as the documents say ("Fields", "String table",
"Entries"): lists that do not split (no 0x1F, a repeated name, a width, a
trailing space, `:bool` on a string, a name of 65 bytes, `%%`, a second
0x1F), a flag on a format without a list, a string-table entry with an
unknown flag bit (not valid: its records show an unknown site), trusted
`_` names, integers a length narrows, bools of 256, characters 0 and a
surrogate, a NaN with a payload, arguments that do not decode, inline sites
with FIELDS (bit 3) and with bits 4-7 set, a free-text file with FIELDS,
and a `%.0s` run after a list that does not split. outsider_test.sh compares
outsider_reader with `logctl cat --json` on it."""

import struct
import sys

from outsider_codec import crc32c, d, s, varint, zz


def i(v):
    return varint(zz(v))


US = "\x1f"
FILE, BLOCK = 20480, 4096
STRTAB, BLOCKS = 8192, 12288
CREATED = 1795399074000000000

# (flags byte, level, format, file, line, [argument bytes of each record])
sites = [
    (1, 6, "disk %s full" + US + "user=%s n=%hhd ok:bool=%hhd u=%hu", "f.c", 1,
     [s("sda") + s("bob") + i(300) + i(256) + varint(70000),
      s("sdb") + s("") + i(-1) + i(0) + varint(5)]),
    (1, 6, "no separator %d", "f.c", 2, [i(5)]),
    (1, 5, "msg" + US + "a=%d a=%d", "f.c", 3, [i(1) + i(2)]),
    (1, 5, "msg" + US + "b:bool=%s", "f.c", 4, [s("yes")]),
    (1, 4, "trusted" + US + "_PID=%d x.y@z-1=%u", "f.c", 5, [i(-3) + varint(3)]),
    (1, 4, "width" + US + "x=%5d", "f.c", 6, [i(7)]),
    (1, 4, "space" + US + "x=%d ", "f.c", 7, [i(7)]),
    (0, 3, "no flag" + US + "x=%d", "f.c", 8, [i(9)]),
    (1, 3, "long name" + US + "n" * 65 + "=%d", "f.c", 9, [i(1)]),
    (1, 3, "percent" + US + "x=%%", "f.c", 10, [b""]),
    (1, 3, "two" + US + "x=%d" + US + "y=%d", "f.c", 11, [i(1) + i(2)]),
    (1, 7, "chars %d" + US + "c=%c z=%c s=%lc p=%p q=%p m=%m f=%a g=%G", "f.c", 12,
     [i(1) + varint(0) + varint(0xD800) + varint(0x1F600) + varint(0) + varint(0xABCDEF) +
      s("No such file") + struct.pack("<Q", 0xFFF8000000000123) + d(-1e-7)]),
    (1, 7, "mismatch %d" + US + "x=%d", "f.c", 13, [i(1), i(1) + i(2) + b"\x00", b""]),
    (1, 6, "%s" + US + "k=%s", "text", 14, [s("free text") + s("v")]),
    (1, 6, "run" + US + "%.0s", "f.c", 15, [s("k=v")]),
    (1, 6, "dots" + US + "-x=%d", "f.c", 16, [i(1)]),
    (1, 6, "bool" + US + "t:bool=%u f:bool=%llu", "f.c", 17, [varint(2**64 - 1) + varint(0)]),
    (1, 6, "only" + US + "e=%s", "f.c", 18, [s("")]),
    (2, 6, "bad flags %d", "f.c", 19, [i(1)]),
    (0x81, 6, "bad flags %d", "f.c", 20, [i(1)]),
    (1, 6, "after the bad ones" + US + "ok:bool=%d", "f.c", 21, [i(1)]),
]
# Inline sites: (level byte, format, file, line, argument bytes).
inline = [
    (0x0E, "inline %d" + US + "k=%s n=%lld", "g.c", 1, i(4) + s("v") + i(-2**63)),
    (0x06, "inline plain" + US + "k=%s", "g.c", 2, s("v")),
    (0x1B, "inline high bits" + US + "k=%d", "g.c", 3, i(1)),
    (0x0F, "inline bad list" + US + "k=", "g.c", 4, b""),
]

f = bytearray(FILE)
sb = bytearray(128)
sb[0:8] = b"LSRING\r\n"
struct.pack_into("<I", sb, 8, 6)  # version
struct.pack_into("<QIIQQQQ", sb, 24, FILE, BLOCK, 2, STRTAB, 4096, BLOCKS, CREATED)
sb[80:96] = bytes(range(1, 17))
for gen in (0, 1):
    b = bytearray(sb)
    struct.pack_into("<Q", b, 16, gen)
    struct.pack_into("<I", b, 12, crc32c(b[16:128]))
    f[gen * 4096:gen * 4096 + 128] = b

off = STRTAB
for n, (flags, level, fmt, file, line, _) in enumerate(sites):
    fb, fl = fmt.encode(), file.encode()
    e = bytearray(struct.pack("<IIIBBHHH", 0, n + 1, line, level, flags, len(fb), len(fl), 0) + fb + fl)
    struct.pack_into("<I", e, 0, crc32c(e[4:]))
    f[off:off + len(e)] = e
    off += len(e)
assert off <= STRTAB + 4096

# One source, then the records, 1000 ns apart.
entries = bytearray()
src = varint(1) + varint(4242) + varint(1000) + varint(1000) + s("fields") + s("fields") + s("")
entries += varint(1 + len(src)) + bytes([1]) + src
count = 0
levels = 0


def record(head, body):
    global entries, count
    entries += varint(1 + len(body)) + bytes([head]) + body
    count += 1


for n, (flags, level, fmt, file, line, recs) in enumerate(sites):
    for args in recs:
        if count == 0:
            record(0x0C, varint(1) + varint(4242) + varint(n + 1) + i(0) + args)
        else:
            record(0x00, varint(n + 1) + i(1000) + args)
        levels |= 1 << level
for lb, fmt, file, line, args in inline:
    record(0x20, bytes([lb]) + varint(line) + s(fmt) + s(file) + i(1000) + args)
    levels |= 1 << (lb & 7)
levels |= 1 << 6  # the unknown sites' records count at info in readers, not in the summary

last_ts = CREATED + 1000 * (count - 1)


def fnv(key):
    h = 0xcbf29ce484222325
    for c in key:
        h = ((h ^ c) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return h


bloom = bytearray(64)
for key in (b"u" + struct.pack("<I", 1000), b"p" + struct.pack("<I", 4242), b"afields",
            b"cfields"):
    h = fnv(key)
    lo, hi = h & 0xFFFFFFFF, (h >> 32) | 1
    for k in range(3):
        bit = ((lo + k * hi) & 0xFFFFFFFF) % 512
        bloom[bit // 8] |= 1 << (bit % 8)

used = 176 + len(entries)
assert used <= BLOCK
h = bytearray(176)
struct.pack_into("<IIQQQQIIIII", h, 0, 0x4B42534C, 0, 0, 0, CREATED, last_ts, used, count, 0, 1,
                 len(entries))
h[60], h[61], h[62] = 0, levels, 0
struct.pack_into("<QQ", h, 64, CREATED, last_ts)
h[80:96] = bytes(range(0x10, 0x20))
struct.pack_into("<QQ", h, 96, 5 * 10**9, CREATED)
h[112:176] = bloom
blk = h + entries
struct.pack_into("<I", blk, 4, crc32c(blk[8:used]))
f[BLOCKS:BLOCKS + used] = blk
open(sys.argv[1], "wb").write(f)
print(f"outsider_fields_ring: {len(sites)} sites, {len(inline)} inline, {count} records")
