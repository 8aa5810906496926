"""_levels: levels at the source, the rules of $LOGSINK_LEVEL as
proto/level_rules.h defines them for liblogsink: RULE[,RULE]..., a RULE
being LEVEL (the default), FILE=LEVEL or FILE:LINE=LEVEL; the last FILE
rule that names a call site wins, else the last bare LEVEL, else debug.
FILE is a glob: without a '/' matched against the last component of the
site's file, with one against the whole file name or any tail of it after
a '/', '*' and '?' never matching a '/' there. Levels are named as logctl
-p takes them (any case), digits 0..7 or "off" (-1: nothing)."""

import fnmatch

OFF = -1
RULES_MAX = 32
FILE_MAX = 255
_NAMES = {"emerg": 0, "alert": 1, "crit": 2, "err": 3, "warning": 4, "notice": 5, "info": 6,
          "debug": 7, "error": 3, "warn": 4, "emergency": 0, "critical": 2, "off": OFF}


def _level(text):
    t = text.strip()
    if len(t) == 1 and "0" <= t <= "7":
        return int(t)
    if len(t) <= 16 and t.lower() in _NAMES:
        return _NAMES[t.lower()]
    return None


class Rules:
    """Parsed rules. default: the level of every site no FILE rule names."""

    def __init__(self, text=None, level=7):
        self.default = level
        self.rules = []  # (file, line or 0, level), in order
        if text is not None:
            self._parse(text)
        self._cache = {}  # (file, line) -> level

    def _parse(self, text):
        for raw in text.split(","):
            rule = raw.strip()
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
                                 % (rule, lvtext.strip()))
            file = file.rstrip(" \t")
            line = 0
            head, colon, digits = file.rpartition(":")
            if colon and digits.isdigit() and digits.isascii() and head:
                line = int(digits)
                if not 1 <= line <= 0x7FFFFFFF:
                    raise ValueError('"%s": the line must be 1..2147483647' % rule)
                file = head.rstrip(" \t")
            if not file or (colon and digits.isdigit() and not head):
                raise ValueError('"%s": no file before \'=\'' % rule)
            if len(file.encode()) > FILE_MAX:
                raise ValueError('"%s...": a file of more than %d bytes' % (rule[:32], FILE_MAX))
            if len(self.rules) == RULES_MAX:
                raise ValueError("more than %d file rules" % RULES_MAX)
            self.rules.append((file, line, lv))

    @staticmethod
    def _matches(pattern, line, file, at):
        if line and line != at:
            return False
        if "/" not in pattern:
            return fnmatch.fnmatchcase(file.rpartition("/")[2], pattern)
        want = pattern.split("/")
        parts = file.split("/")
        for i in range(len(parts)):  # each tail after a '/' (and the whole name)
            tail = parts[i:]
            if len(tail) == len(want) and all(
                    fnmatch.fnmatchcase(p, w) for p, w in zip(tail, want)):
                return True
        return False

    def level_for(self, file, line):
        """The level that applies to a site of `file` ("" or None: none) at
        `line`: its records are produced when their level is <= it."""
        if not file or not self.rules:
            return self.default
        key = (file, line)
        got = self._cache.get(key)
        if got is None:
            got = self.default
            for pattern, ln, lv in reversed(self.rules):
                if self._matches(pattern, ln, file, line):
                    got = lv
                    break
            if len(self._cache) < 65536:
                self._cache[key] = got
        return got

    def least(self):
        """The level every site gets at least."""
        return min([self.default] + [lv for _, _, lv in self.rules])
