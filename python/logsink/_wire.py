"""_wire: the frames of proto/PROTOCOL.md (varints, zigzag, str) that a
client sends. Every encoder returns bytes of one whole frame."""

import struct

PROTO_VERSION = 1  # hello(); hello2() says version 2 ("Versions and capabilities")
F_HELLO, F_INTERN, F_RECORDS, F_DROPPED, F_STATS_REQ = 1, 2, 3, 4, 5
F_REFUSE, F_STATS, F_WELCOME, F_LEVELS = 0x81, 0x82, 0x87, 0x88
CAP_LEVELS = 0x1     # LS_CAP_LEVELS: the client applies LEVELS frames
CAP_FIELDS = 0x4     # LS_CAP_FIELDS: INTERN's level byte may carry SITE_FIELDS
SITE_FIELDS = 0x08   # LS_SITE_FIELDS (proto/fields.h): the site's format has fields
LEVEL_MASK = 0x07    # LS_SITE_LEVEL_MASK
LEVELS_TEXT_MAX = 16384
FRAME_HDR = 5
APP_MAX = 64          # longest app label sent (LS_APP_MAX)
SITE_MAX = 1 << 20    # largest site id (LS_SITE_MAX)
FMT_MAX = 4096        # longest format in an INTERN
FILE_MAX = 1024       # longest file name in an INTERN
LINE_MAX = (1 << 32) - 1
DROPPED_MAX = 1 << 40

_HDR = struct.Struct("<IB")
_DOUBLE = struct.Struct("<d")


_SMALL = [bytes((i,)) for i in range(0x80)]


def varint(v: int) -> bytes:
    """Unsigned LEB128 of 0 <= v < 2**64."""
    if v < 0x80:
        return _SMALL[v]
    if v < 0x4000:
        return bytes((v & 0x7F | 0x80, v >> 7))
    out = bytearray()
    while v >= 0x80:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def utf8_cut(b: bytes, n: int) -> int:
    """How many of b's first bytes to keep for at most n, never ending inside
    a UTF-8 character: proto/codec.h's ls_utf8_cut, the same rule (bytes
    that are not UTF-8 are cut where asked)."""
    if len(b) <= n:
        return len(b)
    i, back = n, 0
    while i > 0 and back < 3 and (b[i - 1] & 0xC0) == 0x80:
        i -= 1
        back += 1
    if i == 0:
        return n
    lead = b[i - 1]
    if lead < 0xC2 or lead > 0xF4:
        return n
    need = 4 if lead >= 0xF0 else 3 if lead >= 0xE0 else 2
    return i - 1 if n - (i - 1) < need else n


def zigzag(v: int) -> int:
    """Signed int64 to the unsigned zigzag form."""
    return ((v << 1) ^ (v >> 63)) & 0xFFFFFFFFFFFFFFFF


def put_str(b: bytes) -> bytes:
    return varint(len(b)) + b


def double(v: float) -> bytes:
    return _DOUBLE.pack(v)


def frame(ftype: int, payload: bytes) -> bytes:
    return _HDR.pack(1 + len(payload), ftype) + payload


def hello(app: bytes) -> bytes:
    return frame(F_HELLO, struct.pack("<II", PROTO_VERSION, 0) + put_str(app[:utf8_cut(app, APP_MAX)]))


def hello2(app: bytes, caps: int, levels: bytes) -> bytes:
    """Version 2's HELLO: version 1's fields, then u32 caps | str levels."""
    return frame(F_HELLO, struct.pack("<II", 2, 0) + put_str(app[:utf8_cut(app, APP_MAX)]) +
                 struct.pack("<I", caps) + put_str(levels))


def get_varint(b, pos):
    """(value, next position) of the varint at pos, or None when it does not end."""
    v = shift = 0
    while pos < len(b) and shift < 70:
        x = b[pos]
        v |= (x & 0x7F) << shift
        pos += 1
        if not x & 0x80:
            return v, pos
        shift += 7
    return None


def get_str(b, pos, limit):
    """(bytes, next position) of the str at pos, or None when malformed."""
    got = get_varint(b, pos)
    if got is None or got[0] > limit or got[1] + got[0] > len(b):
        return None
    n, pos = got
    return bytes(b[pos:pos + n]), pos + n


def next_frame(buf, limit):
    """(type, payload, frame size) of the whole frame at the start of buf,
    0 when more bytes are needed, None when its length is 0 or above limit."""
    if len(buf) < 4:
        return 0
    n = struct.unpack_from("<I", buf)[0]
    if n == 0 or n > limit:
        return None
    if len(buf) < 4 + n:
        return 0
    return buf[4], bytes(buf[5:4 + n]), 4 + n


def intern(site: int, level: int, line: int, fmt: bytes, file: bytes) -> bytes:
    return frame(F_INTERN, varint(site) + bytes((level,)) + varint(line) + put_str(fmt) +
                 put_str(file))


def dropped(count: int, since_ns: int, now_ns: int) -> bytes:
    return frame(F_DROPPED, varint(count) + varint(since_ns) + varint(now_ns))


def stats_req() -> bytes:
    return frame(F_STATS_REQ, b"")


def records_header(tid: int) -> bytearray:
    """The start of a RECORDS frame; close it with finish()."""
    return bytearray(_HDR.pack(0, F_RECORDS) + varint(tid))


def finish(buf: bytearray) -> bytearray:
    """Writes the length of a frame started by records_header()."""
    _HDR.pack_into(buf, 0, len(buf) - 4, F_RECORDS)
    return buf


def record(site: int, trunc: int, ts_delta: int, args: bytes) -> bytes:
    if trunc:
        head = varint(site << 1 | 1) + varint(trunc)
    else:
        head = varint(site << 1)
    return b"".join((head, varint(zigzag(ts_delta)), args))
