"""_fields: the named fields of a record (the logging Handler's logger name
and extra= values), in the two forms a daemon may take:

- typed (the daemon granted LS_CAP_FIELDS, proto/include/logsink/proto/
  fields.h): the site's format is the message, one byte 0x1F and the field
  list `logger=%s user=%s request_id=%lld ok:bool=%d ratio=%f`; each value
  is one more argument of the record, of its own type;
- the trick (any other daemon, render/RENDERING.md "Named fields"): one
  `%.0s` per field after the message, each a string argument `NAME=VALUE`.

A field is first made an item (item()): (name, value, text), the value a
bool, an int in [-2**63, 2**64), a float or a str, and text what the trick
prints (None: str(value)). Items hold no object of the application, so
they can be encoded again under the client's lock without running its code.

Typed names (name()): every character outside [A-Za-z0-9_.@-] becomes '_';
a name that then starts with '_', '.', '@' or '-', or is empty, gets 'x' in
front ('_' is the daemon's own, no client may declare it); the result is
cut to 64 characters. A name repeated after that keeps the last value, at
the place of its first one. Typed values: bool -> `:bool=%d` (0/1), int in
int64 -> `%lld`, int in [2**63, 2**64) -> `%llu`, float -> `%f` (8-byte
double), anything else -> `%s` of the trick's text (an int beyond 64 bits
as its digits); a string value is cut at VALUE_MAX bytes on a character
boundary."""

from . import _render
from ._wire import double, utf8_cut, varint

NAME_MAX = 64     # LS_FIELD_NAME_MAX
VALUE_MAX = 256   # bytes of a typed string value; of "NAME=VALUE" in the trick
SEP = b"\x1f"     # LS_FIELDS_SEP
_I64_MIN, _I64_MAX, _U64_MAX = -(1 << 63), (1 << 63) - 1, (1 << 64) - 1
_NAME_OK = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.@-")
_CACHE_MAX = 4096

_names = {}   # raw name -> typed name
# Items with a str value (the logger's name alone, the common case) -> their
# encoding; keys of other values would collide (True == 1 == 1.0).
_single = {}
_single_trick = {}


def name(raw):
    """The field name (fields.h's rule) of raw (a str), by the rule above."""
    got = _names.get(raw)
    if got is not None:
        return got
    out = "".join(c if c in _NAME_OK else "_" for c in raw[:NAME_MAX + 1])
    if not out or out[0] in "_.@-":
        out = "x" + out
    out = out[:NAME_MAX]
    if len(_names) < _CACHE_MAX:
        _names[raw] = out
    return out


def item(raw_name, v):
    """(raw name, value, text) of one field, as the module docstring says;
    runs the value's own code (str(), int()) at most once, never raises."""
    t = type(v)
    if t is str or t is bool or t is float:
        return raw_name, v, None
    if t is int and _I64_MIN <= v <= _U64_MAX:
        return raw_name, v, None
    try:
        s = v if isinstance(v, str) else str(v)
        s = str.__str__(s)
    except Exception as e:  # noqa: BLE001 - a user's __str__ may raise
        s = _render.unprintable(v, e)
    try:
        if isinstance(v, bool):
            return raw_name, bool.__bool__(v), s
        if isinstance(v, int) and _I64_MIN <= int.__int__(v) <= _U64_MAX:
            return raw_name, int.__int__(v), s
        if isinstance(v, float):
            return raw_name, float.__float__(v), s
    except Exception:  # noqa: BLE001 - a broken subclass: its text only
        pass
    return raw_name, s, None


def _str_arg(s):
    b = s.encode("utf-8", "backslashreplace")
    if len(b) > VALUE_MAX:
        b = b[:utf8_cut(b, VALUE_MAX)]
    return varint(len(b)) + b


def _typed_one(v):
    """(the field's text after its name, its argument bytes)."""
    t = type(v)
    if t is str:
        return b"=%s", _str_arg(v)
    if t is bool:
        return b":bool=%d", b"\x02" if v else b"\x00"  # zigzag of 1 and 0
    if t is float:
        return b"=%f", double(v)
    if v <= _I64_MAX:
        return b"=%lld", varint(((v << 1) ^ (v >> 63)) & _U64_MAX)
    return b"=%llu", varint(v)


def typed(items):
    """(field list bytes, argument bytes) of items in the typed form: the
    list goes after the message and SEP in the site's format."""
    one = len(items) == 1 and type(items[0][1]) is str  # the logger's name alone
    if one:
        got = _single.get(items[0])
        if got is not None:
            return got
    fields = {}
    for raw, v, _ in items:
        fields[name(raw)] = _typed_one(v)  # a repeated name: its last value, first place
    spec = b" ".join(n.encode("ascii") + s for n, (s, _) in fields.items())
    out = spec, b"".join(a for _, a in fields.values())
    if one and len(_single) < _CACHE_MAX:
        _single[items[0]] = out
    return out


# ---- the trick: "%.0s" and NAME=VALUE (render/RENDERING.md, "Named fields") ----

def trick_name(raw):
    """raw as RENDERING.md's NAME: a letter or '_' first, then letters, digits,
    '_', '.', '-' (others become '_'), at most 64 characters."""
    out = "".join(c if (c.isascii() and (c.isalnum() or c in "_.-")) else "_" for c in raw[:64])
    if not out or not (out[0].isascii() and (out[0].isalpha() or out[0] == "_")):
        out = ("_" + out)[:64]
    return out


def encode_field(raw, value):
    """A named field's argument in the trick: "NAME=VALUE" as a string
    argument, cut at VALUE_MAX bytes on a character boundary."""
    b = ("%s=%s" % (trick_name(raw), value)).encode("utf-8", "backslashreplace")
    if len(b) > VALUE_MAX:
        b = b[:VALUE_MAX].decode("utf-8", "ignore").encode("utf-8")
    return varint(len(b)) + b


def trick(items):
    """(count, argument bytes) of items in the trick's form: every item, a
    repeated name repeated, in order."""
    one = len(items) == 1 and type(items[0][1]) is str
    if one:
        got = _single_trick.get(items[0])
        if got is not None:
            return got
    out = len(items), b"".join(encode_field(raw, v if text is None else text)
                               for raw, v, text in items)
    if one and len(_single_trick) < _CACHE_MAX:
        _single_trick[items[0]] = out
    return out
