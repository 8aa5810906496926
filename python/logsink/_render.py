"""_render: the text of a record that cannot travel typed, rendered in
Python. `fmt % args` when Python can render it; otherwise (a format and
arguments neither the daemon nor Python accepts, e.g. "%d" with "x") the
format followed by the arguments' repr(), so the record is never lost:
    "disk %d full [args: 'sda']" """


def _safe_repr(v):
    try:
        return repr(v)
    except Exception:  # noqa: BLE001 - any object may fail
        return object.__repr__(v)


def render(fmt, args):
    """(text, True): what Python prints for fmt % args; (text, False): the
    last-resort form, when Python cannot render it either."""
    try:
        return fmt % args, True
    except Exception:  # noqa: BLE001 - a user's __str__ or __format__ may raise anything
        pass
    try:
        head = fmt if isinstance(fmt, str) else str(fmt)
    except Exception:  # noqa: BLE001
        head = object.__repr__(fmt)
    if isinstance(args, dict):
        items = ["%s=%s" % (_safe_repr(k), _safe_repr(v)) for k, v in args.items()]
    else:
        items = [_safe_repr(a) for a in args]
    return (head + " [args: " + ", ".join(items) + "]" if items else head), False
