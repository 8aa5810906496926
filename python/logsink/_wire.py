"""_wire: the frames of proto/PROTOCOL.md (varints, zigzag, str) that a
client sends. Every encoder returns bytes of one whole frame."""

import struct

PROTO_VERSION = 1
F_HELLO, F_INTERN, F_RECORDS, F_DROPPED, F_STATS_REQ = 1, 2, 3, 4, 5
F_REFUSE, F_STATS = 0x81, 0x82
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
