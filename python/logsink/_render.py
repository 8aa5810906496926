"""_render: the text of a record that cannot travel typed, rendered in
Python; never raises (an application's __str__ may raise anything).

- `fmt % args` when Python can render it. A format that is not a str is
  taken as logging takes a msg that is not one: str(fmt) (repr() for bytes
  and bytearray, the same text without a BytesWarning), then `% args`.
- Otherwise, when an argument (or the format) cannot be printed (its str()
  or repr() raises, or returns no str), it is replaced by the marker
      <unprintable TYPE: EXCEPTION>     e.g. <unprintable Conn: RuntimeError>
  (the argument's type and the exception's type, both by name) and the
  format is rendered again: "user <unprintable Conn: RuntimeError> port 22".
- Otherwise (a format and arguments neither the daemon nor Python accepts,
  e.g. "%d" with "x") the format followed by the arguments' repr(), or
  their markers, so the record is never lost:
      "disk %d full [args: 'sda']"
The last two are the degraded forms: render() says so with ok=False (the
client counts them in `errors`, the Handler reports them to handleError)."""

from collections.abc import Mapping


def _name(t):
    try:
        n = t.__qualname__
        return n if type(n) is str else "?"
    except Exception:  # noqa: BLE001 - a metaclass may do anything
        return "?"


def unprintable(v, exc):
    """The marker standing for v, whose printing raised exc."""
    return "<unprintable %s: %s>" % (_name(type(v)), _name(type(exc)))


class _Marker:
    """Stands for an unprintable argument: prints as its marker with %s,
    %r and %a; numeric conversions still refuse it (TypeError)."""

    __slots__ = ("text",)

    def __init__(self, text):
        self.text = text

    def __str__(self):
        return self.text

    __repr__ = __str__


def _printable(v):
    """v itself when str() and repr() print it, else its _Marker."""
    try:
        str(v)  # str() and repr() raise TypeError themselves on a non-str result
        repr(v)
    except Exception as e:  # noqa: BLE001 - any object may fail
        return _Marker(unprintable(v, e))
    return v


def _printable_args(args):
    """args with unprintable arguments replaced by markers; None when every
    argument prints (or args cannot even be walked)."""
    try:
        if isinstance(args, tuple):
            safe = tuple(_printable(a) for a in args)
            changed = any(s is not a for s, a in zip(safe, args))
        elif isinstance(args, Mapping):
            safe = {k: _printable(args[k]) for k in args}
            changed = any(isinstance(v, _Marker) for v in safe.values())
        else:
            safe = _printable(args)
            changed = safe is not args
    except Exception:  # noqa: BLE001 - a mapping's own methods may raise
        return None
    return safe if changed else None


def safe_repr(v):
    """repr(v), or its marker when repr() raises."""
    try:
        r = repr(v)
        return str.__str__(r)
    except Exception as e:  # noqa: BLE001 - any object may fail
        return unprintable(v, e)


def as_text(fmt):
    """(the format as a str, False if it had to be replaced by its marker)."""
    if isinstance(fmt, str):
        return str.__str__(fmt), True  # a plain str, whatever the subclass overrides
    try:
        s = repr(fmt) if isinstance(fmt, (bytes, bytearray)) else str(fmt)
        return str.__str__(s), True
    except Exception as e:  # noqa: BLE001 - a user's __str__ may raise anything
        return unprintable(fmt, e), False


def render(fmt, args):
    """(text, True): what Python prints for fmt % args; (text, False): a
    degraded form (markers, or the last resort). Never raises Exception."""
    head, ok = as_text(fmt)
    try:
        return head % args, ok  # head is a plain str: so is the result
    except Exception:  # noqa: BLE001 - a user's __str__ or __format__ may raise anything
        pass
    safe = _printable_args(args)
    if safe is not None:
        try:
            return head % safe, False
        except Exception:  # noqa: BLE001 - e.g. a marker for %d
            pass
    try:
        if isinstance(args, Mapping):
            items = ["%s=%s" % (safe_repr(k), safe_repr(args[k])) for k in args]
        elif isinstance(args, tuple):
            items = [safe_repr(a) for a in args]
        else:
            items = [safe_repr(args)]
    except Exception as e:  # noqa: BLE001 - a mapping's own methods may raise
        items = [unprintable(args, e)]
    return (head + " [args: " + ", ".join(items) + "]" if items else head), False
