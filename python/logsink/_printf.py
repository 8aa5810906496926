"""_printf: the daemon's printf rules (include/logsink/proto/printf.h) in
Python, and the check that a Python argument list can travel typed.

parse(fmt) returns the list of conversions of a format (bytes) exactly as
ls_fmt_next() finds them, or None where printf.h returns -EINVAL or -E2BIG:
the daemon would refuse that format at INTERN."""

from typing import NamedTuple, Optional

FMT_MAX_ARGS = 64  # LS_FMT_MAX_ARGS

STAR = -2  # LS_FMT_STAR: width/precision taken from an int argument
NONE = -1  # LS_FMT_NONE: absent

# Length modifiers (enum ls_fmt_len).
LEN_NONE, LEN_HH, LEN_H, LEN_L, LEN_LL, LEN_J, LEN_Z, LEN_T, LEN_BIGL = range(9)

_FLAGS = b"-+ #0'"
_TYPES = {}
for _c in b"di":
    _TYPES[_c] = "i"
for _c in b"uoxX":
    _TYPES[_c] = "u"
for _c in b"fFeEgGaA":
    _TYPES[_c] = "f"
_TYPES[ord("c")] = "c"
_TYPES[ord("s")] = "s"
_TYPES[ord("m")] = "s"
_TYPES[ord("p")] = "p"


class Spec(NamedTuple):
    flags: bytes    # the flag characters as written
    width: int      # >= 0, NONE or STAR
    precision: int  # >= 0, NONE or STAR
    length: int     # LEN_*
    conv: str       # conversion character
    type: str       # signature character, "" for %%


def _num(f: bytes, i: int):
    """Digits at i: (value, next index); value None if there are none, -1 if absurd."""
    n = len(f)
    if i >= n or not 48 <= f[i] <= 57:
        return None, i
    v = 0
    while i < n and 48 <= f[i] <= 57:
        if v > 100000:
            return -1, i
        v = v * 10 + f[i] - 48
        i += 1
    return v, i


def parse(f: bytes) -> Optional[list]:
    """The conversions of f, or None when the daemon refuses f."""
    specs = []
    nargs = 0
    i, n = 0, len(f)
    while True:
        i = f.find(b"%", i)
        if i < 0:
            return specs
        start = i
        i += 1
        while i < n and f[i] in _FLAGS:
            i += 1
        if i >= n:
            return None
        flags = f[start + 1:i]
        width = precision = NONE
        if f[i] == 42:  # '*'
            width = STAR
            i += 1
        else:
            v, i = _num(f, i)
            if v == -1:
                return None
            if v is not None:
                width = v
        if i < n and f[i] == 36:  # '$': positional arguments
            return None
        if i < n and f[i] == 46:  # '.'
            i += 1
            if i < n and f[i] == 42:
                precision = STAR
                i += 1
            else:
                v, i = _num(f, i)
                if v == -1:
                    return None
                precision = 0 if v is None else v
        if i >= n:
            return None
        length = LEN_NONE
        c = f[i]
        if c == 104:  # h
            if i + 1 < n and f[i + 1] == 104:
                length, i = LEN_HH, i + 2
            else:
                length, i = LEN_H, i + 1
        elif c == 108:  # l
            if i + 1 < n and f[i + 1] == 108:
                length, i = LEN_LL, i + 2
            else:
                length, i = LEN_L, i + 1
        elif c in b"qjztL":
            length = {113: LEN_LL, 106: LEN_J, 122: LEN_Z, 116: LEN_T, 76: LEN_BIGL}[c]
            i += 1
        if i >= n:
            return None
        c = f[i]
        if c == 37:  # '%': only a bare "%%"
            if i != start + 1:
                return None
            t = ""
        else:
            t = _TYPES.get(c)
            if t is None:  # unknown, %n included
                return None
            nargs += (width == STAR) + (precision == STAR) + 1
            if nargs > FMT_MAX_ARGS:
                return None
        specs.append(Spec(flags, width, precision, length, chr(c), t))
        i += 1


def signature(f) -> Optional[str]:
    """The signature of f (str or bytes; one character per argument, e.g.
    "si" for "user %s port %d"), None if the daemon refuses f."""
    specs = parse(f.encode("utf-8") if isinstance(f, str) else f)
    if specs is None:
        return None
    sig = []
    for s in specs:
        if not s.type:
            continue
        if s.width == STAR:
            sig.append("i")
        if s.precision == STAR:
            sig.append("i")
        sig.append(s.type)
    return "".join(sig)
