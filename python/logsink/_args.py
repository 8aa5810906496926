"""_args: Python arguments to the typed wire arguments of a format
(PROTOCOL.md "Arguments"), only where the daemon's rendering equals what
Python's `fmt % args` prints; otherwise the caller falls back to text.

encode() returns (bytes, truncated_bytes) or None (fall back). Strings are
cut like liblogsink does: each string gets what is left of the record's
budget minus the worst case of the arguments after it, cut at a UTF-8
character boundary; the bytes cut are counted for the record's TRUNC."""

from . import _printf as P
from ._wire import double, utf8_cut, varint, zigzag

_I32 = (-(1 << 31), (1 << 31) - 1)
# The range of a C integer conversion by length modifier: outside it the
# daemon's rendering (converted to the modifier's type) differs from Python's.
_SIGNED = {P.LEN_NONE: _I32, P.LEN_HH: (-128, 127), P.LEN_H: (-(1 << 15), (1 << 15) - 1)}
_UNSIGNED = {P.LEN_NONE: (1 << 32) - 1, P.LEN_HH: 255, P.LEN_H: 0xFFFF}
_I64 = (-(1 << 63), (1 << 63) - 1)
_U64 = (1 << 64) - 1
_VARINT_MAX = 10


class Fallback(Exception):
    """The arguments cannot travel typed under this format."""


def _int(v, lo, hi):
    if not isinstance(v, int):
        raise Fallback
    v = int(v)
    if not lo <= v <= hi:
        raise Fallback
    return v


def _text(v, spec, prec):
    """A %s or %c argument as UTF-8; width or precision count characters in
    Python and bytes in C, so they are only typed for ASCII text."""
    s = v if type(v) is str else str(v)
    if not s.isascii():
        if spec.width != P.NONE or spec.precision != P.NONE:
            raise Fallback
        return s.encode("utf-8", "backslashreplace")
    if prec is not None and prec >= 0:
        s = s[:prec]
    return s.encode("ascii")


def _one(spec, v, prec):
    """(kind, value): kind 'b' fixed bytes, 's' string bytes."""
    t = spec.type
    if t == "i":
        lo, hi = _SIGNED.get(spec.length, _I64)
        return "b", varint(zigzag(_int(v, lo, hi)))
    if t == "u":
        if b"#" in spec.flags and spec.conv in "oxX":
            raise Fallback  # Python writes 0o17 and 0x0 where C writes 017 and 0
        return "b", varint(_int(v, 0, _UNSIGNED.get(spec.length, _U64)))
    if t == "f":
        if spec.conv == "a":
            raise Fallback  # %a is ascii() in Python
        if isinstance(v, float):
            return "b", double(v)
        if isinstance(v, int) and -(1 << 53) <= v <= 1 << 53:
            return "b", double(float(v))
        raise Fallback
    if t == "c":
        if b"0" in spec.flags:
            raise Fallback
        if isinstance(v, str):
            if len(v) != 1:
                raise Fallback
            cp = ord(v)
        else:
            cp = _int(v, 0, 0x10FFFF)
        if cp > 0x7F and spec.width != P.NONE:
            raise Fallback
        return "b", varint(cp)
    if t == "s":
        if spec.conv == "m" or b"0" in spec.flags:
            raise Fallback  # %m is errno of C code; 0-padding of %s differs
        return "s", _text(v, spec, prec)
    if t == "p":
        return "b", varint(_int(v, 0, _U64))
    raise Fallback


def encode(specs, args, budget):
    """Typed argument bytes for args under specs (from _printf.parse), cut to
    budget bytes; (bytes, truncated) or None to fall back to text."""
    parts = []
    i = 0
    n = len(args)
    try:
        for spec in specs:
            if not spec.type:
                continue
            prec = None
            if spec.width == P.STAR:
                if i >= n:
                    return None
                parts.append(("b", varint(zigzag(_int(args[i], *_I32)))))
                i += 1
            if spec.precision == P.STAR:
                if i >= n:
                    return None
                prec = _int(args[i], 0, _I32[1])  # Python and C differ on negative
                parts.append(("b", varint(zigzag(prec))))
                i += 1
            elif spec.precision >= 0:
                prec = spec.precision
            if i >= n:
                return None
            parts.append(_one(spec, args[i], prec))
            i += 1
    except Fallback:
        return None
    if i != n:
        return None  # Python: "not all arguments converted"
    return assemble(parts, budget)


def assemble(parts, budget):
    """Joins parts, cutting strings so the whole stays within budget."""
    out = bytearray()
    trunc = 0
    for k, (kind, val) in enumerate(parts):
        if kind == "b":
            out += val
            continue
        rest = sum(1 if kd == "s" else _VARINT_MAX for kd, _ in parts[k + 1:])
        room = max(budget - len(out) - rest, 0)
        full = len(val)
        hdr = len(varint(full))
        keep = full
        if hdr + keep > room:
            keep = utf8_cut(val, max(room - hdr, 0))
            trunc += full - keep
        out += varint(keep)
        out += val[:keep]
    return bytes(out), trunc


def text(s, budget):
    """A single %s argument carrying rendered text: (bytes, truncated)."""
    return assemble([("s", s.encode("utf-8", "backslashreplace"))], budget)


# ---- the fast path: a plan per format, for the common conversions ----------
_OP_INT, _OP_UINT, _OP_DBL, _OP_STR = range(4)
_DBL = __import__("struct").Struct("<d").pack


def plan(specs):
    """A list of (op, lo, hi) when every conversion of specs is a plain
    integer, double or %s (no `*`, width or precision on %s, no flags that
    differ); None otherwise (encode() then does the work)."""
    ops = []
    for spec in specs:
        if not spec.type:
            continue
        if spec.width == P.STAR or spec.precision == P.STAR:
            return None
        t = spec.type
        if t == "i":
            ops.append((_OP_INT,) + _SIGNED.get(spec.length, _I64))
        elif t == "u" and not (b"#" in spec.flags and spec.conv in "oxX"):
            ops.append((_OP_UINT, 0, _UNSIGNED.get(spec.length, _U64)))
        elif t == "f" and spec.conv != "a":
            ops.append((_OP_DBL, 0, 0))
        elif (t == "s" and spec.conv == "s" and spec.width == P.NONE
              and spec.precision == P.NONE and b"0" not in spec.flags):
            ops.append((_OP_STR, 0, 0))
        else:
            return None
    return ops


def encode_plan(ops, specs, args, budget):
    """encode() for a format with a plan: the same bytes, faster."""
    if len(args) != len(ops):
        return None
    out = bytearray()
    for (op, lo, hi), v in zip(ops, args):
        if op == _OP_STR:
            b = (v if type(v) is str else str(v)).encode("utf-8", "backslashreplace")
            out += varint(len(b))
            out += b
        elif op == _OP_DBL:
            if type(v) is float:
                out += _DBL(v)
            elif isinstance(v, (int, float)) and (isinstance(v, float) or -(1 << 53) <= v <= 1 << 53):
                out += _DBL(float(v))
            else:
                return None
        else:
            if not isinstance(v, int) or not lo <= v <= hi:
                return None
            if op == _OP_INT:
                v = (v << 1) ^ (v >> 63)
            if v < 0x80:
                out.append(v)
            else:
                out += varint(v)
    if len(out) + _VARINT_MAX * len(ops) > budget:
        return encode(specs, args, budget)  # strings may need cutting: the careful way
    return bytes(out), 0
