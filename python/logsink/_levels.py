"""_levels: levels at the source, the rules of $LOGSINK_LEVEL exactly as
proto/include/logsink/proto/level_rules.h defines and matches them for
liblogsink: RULE[,RULE]..., a RULE being LEVEL (the default), FILE=LEVEL or
FILE:LINE=LEVEL; the last FILE rule that names a call site wins, else the
last bare LEVEL, else debug. Spaces and tabs around a rule and its '=' are
ignored; an empty text is no rule. FILE is a glob of bytes ('*', '?',
[set], [!set] or [^set], ranges; no escapes, classes or locale): without a
'/' matched against the last component of the site's file, with one
component by component against the whole name or any tail of it after a
'/'. Levels are named as logctl -p takes them (any case), digits 0..7 or
"off" (-1: nothing)."""

import os

OFF = -1
UNSET = -3  # a default that says "none given" (rules a daemon pushed)
RULES_MAX = 32
FILE_MAX = 255
_BLANKS = " \t"
_LEVEL_NAMES = ("emerg", "alert", "crit", "err", "warning", "notice", "info", "debug")
_NAMES = {"emerg": 0, "alert": 1, "crit": 2, "err": 3, "warning": 4, "notice": 5, "info": 6,
          "debug": 7, "error": 3, "warn": 4, "emergency": 0, "critical": 2, "off": OFF}


def _level(text):
    t = text.strip(_BLANKS)
    if len(t) == 1 and "0" <= t <= "7":
        return int(t)
    if len(t) <= 16 and t.isascii() and t.lower() in _NAMES:
        return _NAMES[t.lower()]
    return None


def _set(p, i, c):
    """The [set] at p[i] against byte c: (True/False, index past ']'), or
    None when it has no ']' (the '[' is then a literal byte)."""
    q = i + 1
    neg = q < len(p) and p[q] in b"!^"
    if neg:
        q += 1
    first, found = q, False
    while q < len(p) and (p[q] != 0x5D or q == first):  # ']'
        lo = hi = p[q]
        if q + 2 < len(p) and p[q + 1] == 0x2D and p[q + 2] != 0x5D:  # '-', ']'
            hi = p[q + 2]
            q += 3
        else:
            q += 1
        if lo <= c <= hi:
            found = True
    if q >= len(p):
        return None
    return found != neg, q + 1


def _glob(p, n):
    """Whether the bytes n match the glob p as a whole (the same one-star
    backtracking as the C matcher)."""
    i = j = 0
    star_i = star_j = -1
    while j < len(n):
        if i < len(p) and p[i] == 0x2A:  # '*'
            i += 1
            star_i, star_j = i, j
            continue
        nxt = None
        if i < len(p):
            c = n[j]
            if p[i] == 0x3F:  # '?'
                nxt = i + 1
            elif p[i] == 0x5B:  # '['
                s = _set(p, i, c)
                if s is not None and s[0]:
                    nxt = s[1]
                elif s is None and c == 0x5B:
                    nxt = i + 1
            elif p[i] == c:
                nxt = i + 1
        if nxt is not None:
            i = nxt
            j += 1
        elif star_i >= 0:
            i = star_i
            star_j += 1
            j = star_j
        else:
            return False
    while i < len(p) and p[i] == 0x2A:
        i += 1
    return i == len(p)


def _glob_path(p, n):
    want, have = p.split(b"/"), n.split(b"/")
    return len(want) == len(have) and all(_glob(w, h) for w, h in zip(want, have))


class Rules:
    """Parsed rules. default: the level of every site no FILE rule names."""

    def __init__(self, text=None, level=7):
        self.default = level
        self.rules = []  # (file bytes, line or 0, level), in order
        if text is not None and text.strip(_BLANKS):
            self._parse(text)
        self._cache = {}  # (file, line) -> level

    def _parse(self, text):
        for raw in text.split(","):
            rule = raw.strip(_BLANKS)
            if not rule:
                raise ValueError("an empty rule")
            if "=" not in rule:
                lv = _level(rule)
                if lv is None:
                    raise ValueError('"%s" is not a level (emerg .. debug, 0..7 or off)' % rule)
                self.default = lv
                continue
            file, _, lvtext = rule.partition("=")
            lv = _level(lvtext)
            if lv is None:
                raise ValueError('"%s": "%s" is not a level (emerg .. debug, 0..7 or off)'
                                 % (rule, lvtext.strip(_BLANKS)))
            file = file.rstrip(_BLANKS)
            line = 0
            head, colon, digits = file.rpartition(":")
            if colon and digits and digits.isascii() and digits.isdigit():
                if not head.rstrip(_BLANKS):
                    raise ValueError('"%s": no file before \'=\'' % rule)
                line = int(digits)
                if not 1 <= line <= 0x7FFFFFFF:
                    raise ValueError('"%s": the line must be 1..2147483647' % rule)
                file = head.rstrip(_BLANKS)
            if not file:
                raise ValueError('"%s": no file before \'=\'' % rule)
            b = os.fsencode(file)
            if len(b) > FILE_MAX:
                raise ValueError('"%s...": a file of more than %d bytes' % (rule[:32], FILE_MAX))
            if len(self.rules) == RULES_MAX:
                raise ValueError("more than %d file rules" % RULES_MAX)
            self.rules.append((b, line, lv))

    @staticmethod
    def _matches(pattern, line, file, at):
        if line and line != at:
            return False
        if b"/" not in pattern:
            return _glob(pattern, file.rpartition(b"/")[2])
        parts = file.split(b"/")
        return any(_glob_path(pattern, b"/".join(parts[i:])) for i in range(len(parts)))

    def level_for(self, file, line):
        """The level that applies to a site of `file` ("" or None: none) at
        `line`: its records are produced when their level is <= it."""
        if not file or not self.rules:
            return self.default
        key = (file, line)
        got = self._cache.get(key)
        if got is None:
            got = self.default
            name = os.fsencode(file)
            for pattern, ln, lv in reversed(self.rules):
                if self._matches(pattern, ln, name, line):
                    got = lv
                    break
            if len(self._cache) < 65536:
                self._cache[key] = got
        return got

    def least(self):
        """The level every site gets at least."""
        return min([self.default] + [lv for _, _, lv in self.rules])

    def text(self):
        """The rules as text that parses back into them ("LEVEL,FILE=LEVEL,...")."""
        def name(lv):
            return _LEVEL_NAMES[lv] if 0 <= lv <= 7 else "off"
        parts = [name(self.default)]
        for file, line, lv in self.rules:
            f = os.fsdecode(file)
            parts.append("%s:%d=%s" % (f, line, name(lv)) if line else "%s=%s" % (f, name(lv)))
        return ",".join(parts)

    def merged(self, pushed):
        """These rules with those a daemon pushed (parsed with UNSET as the
        default) on top, as level_rules.h's ls_level_rules_merge: a bare
        LEVEL among them replaces the default, their FILE rules come after
        these (so they win), the oldest of these give way past RULES_MAX."""
        out = Rules(None, self.default if pushed.default == UNSET else pushed.default)
        keep = max(0, RULES_MAX - len(pushed.rules))
        out.rules = (self.rules[-keep:] if keep else []) + list(pushed.rules)
        return out
