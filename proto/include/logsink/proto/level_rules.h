/* level_rules.h: levels at the source: the rules of $LOGSINK_LEVEL (and of
 * liblogsink's ls_options.levels) that say which records a program
 * produces, by level and call site. One parser and one matcher for every
 * client in C and C++ (liblogsink, logctl run/send); the Python package
 * implements the same text, described here.
 *
 * Text: RULE[,RULE]...  (spaces and tabs around a rule and its '=' are
 * ignored; an empty text is no rule: every level)
 *   LEVEL            the default level of every call site
 *   FILE=LEVEL       the level of the call sites in FILE
 *   FILE:LINE=LEVEL  the level of the call sites at that line of FILE
 * LEVEL is a level name (emerg alert crit err warning notice info debug, or
 * error, warn, emergency, critical; in any case), a digit 0..7, or "off"
 * (nothing). A call site produces its
 * records when its level is at or more severe than (<=) the level that
 * applies to it: that of the last FILE rule that matches it, else the last
 * bare LEVEL, else debug (everything). FILE is a glob of bytes: '*' any run
 * of bytes, '?' one byte, [set] one byte of a set ([a-z0-9_], [!...] or
 * [^...]: not), any other byte itself; no escapes, no classes, no locale.
 * Without a '/' it is matched against the last component of the file name
 * the call site was compiled with (__FILE__); with one, component by
 * component against that whole name or any tail of it that starts after a
 * '/' (nothing in a pattern matches a '/'). Sites without a
 * file (run-time formats, text records) follow the default level only.
 * At most LS_LEVEL_RULES_MAX FILE rules, a FILE at most
 * LS_LEVEL_FILE_MAX bytes, LINE 1..2^31-1; anything else is an error and
 * the whole text is refused. */
#ifndef LOGSINK_PROTO_LEVEL_RULES_H
#define LOGSINK_PROTO_LEVEL_RULES_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "logsink/proto/facility.h"

#define LS_LEVEL_RULES_MAX 32
#define LS_LEVEL_FILE_MAX 255
#define LS_LEVEL_OFF (-1) /* a level no record is at or more severe than */

typedef struct ls_level_rule {
  char file[LS_LEVEL_FILE_MAX + 1];
  uint32_t line; /* 0: every line */
  int level;     /* LS_LEVEL_OFF .. LS_LEVEL_MAX */
} ls_level_rule;

typedef struct ls_level_rules {
  int level; /* the default: LS_LEVEL_MAX (debug) unless a bare LEVEL says */
  int n;     /* FILE rules in rule[] */
  ls_level_rule rule[LS_LEVEL_RULES_MAX];
} ls_level_rules;

/* The default: every level of every site. */
static inline void ls_level_rules_init(ls_level_rules *r) {
  r->level = LS_LEVEL_MAX;
  r->n = 0;
}

/* The level named by the len bytes at s (as logctl -p takes them, or
 * "off"), or -2 when it names none. */
static inline int ls_level_rules_level(const char *s, size_t len) {
  if (len == 3 && (s[0] | 0x20) == 'o' && (s[1] | 0x20) == 'f' && (s[2] | 0x20) == 'f')
    return LS_LEVEL_OFF;
  const int l = ls_level_parse_any(s, len);
  return l >= 0 ? l : -2;
}

/* Parses `text` into *out, which it starts over with `level` as the
 * default (a bare LEVEL in the text replaces it). 0, or -1 with *out left
 * as ls_level_rules_init's and a message naming the fault in err (errlen
 * bytes). */
static inline int ls_level_rules_parse(const char *text, int level, ls_level_rules *out, char *err,
                                       size_t errlen) {
  ls_level_rules_init(out);
  out->level = level;
  const char *p = text;
  while (*p == ' ' || *p == '\t') p++;
  if (!*p) return 0; /* no rule */
  for (;;) {
    const char *end = strchr(p, ',');
    if (!end) end = p + strlen(p);
    while (p < end && (*p == ' ' || *p == '\t')) p++;
    const char *q = end;
    while (q > p && (q[-1] == ' ' || q[-1] == '\t')) q--;
    const int rlen = (int)(q - p);
    if (q == p) {
      snprintf(err, errlen, "an empty rule");
      goto bad;
    }
    const char *eq = (const char *)memchr(p, '=', (size_t)(q - p));
    if (!eq) { /* a bare LEVEL */
      const int l = ls_level_rules_level(p, (size_t)(q - p));
      if (l == -2) {
        snprintf(err, errlen, "\"%.*s\" is not a level (emerg .. debug, 0..7 or off)", rlen, p);
        goto bad;
      }
      out->level = l;
    } else {
      const char *lv = eq + 1, *fe = eq;
      while (lv < q && (*lv == ' ' || *lv == '\t')) lv++;
      while (fe > p && (fe[-1] == ' ' || fe[-1] == '\t')) fe--;
      const int l = ls_level_rules_level(lv, (size_t)(q - lv));
      if (l == -2) {
        snprintf(err, errlen, "\"%.*s\": \"%.*s\" is not a level (emerg .. debug, 0..7 or off)",
                 rlen, p, (int)(q - lv), lv);
        goto bad;
      }
      /* FILE[:LINE]: the last ':' followed by digits only is the line. */
      const char *colon = fe;
      while (colon > p && colon[-1] >= '0' && colon[-1] <= '9') colon--;
      uint32_t line = 0;
      if (colon < fe && colon > p && colon[-1] == ':') {
        uint64_t v = 0;
        for (const char *d = colon; d < fe; d++) {
          v = v * 10 + (uint64_t)(*d - '0');
          if (v > 0x7fffffffu) break;
        }
        if (v == 0 || v > 0x7fffffffu) {
          snprintf(err, errlen, "\"%.*s\": the line must be 1..2147483647", rlen, p);
          goto bad;
        }
        line = (uint32_t)v;
        fe = colon - 1;
        while (fe > p && (fe[-1] == ' ' || fe[-1] == '\t')) fe--;
      }
      if (fe == p) {
        snprintf(err, errlen, "\"%.*s\": no file before '='", rlen, p);
        goto bad;
      }
      if (fe - p > LS_LEVEL_FILE_MAX) {
        snprintf(err, errlen, "\"%.*s...\": a file of more than %d bytes", 32, p,
                 LS_LEVEL_FILE_MAX);
        goto bad;
      }
      if (out->n == LS_LEVEL_RULES_MAX) {
        snprintf(err, errlen, "more than %d file rules", LS_LEVEL_RULES_MAX);
        goto bad;
      }
      ls_level_rule *r = &out->rule[out->n++];
      memcpy(r->file, p, (size_t)(fe - p));
      r->file[fe - p] = 0;
      r->line = line;
      r->level = l;
    }
    if (!*end) return 0;
    p = end + 1;
  }
bad:
  ls_level_rules_init(out);
  return -1;
}

/* One [set] of the glob at p (p at '[', pe its end) against byte c: 1 when
 * c is in it ([!set] and [^set]: not in it), 0 when not, with *after past
 * its ']'; -1 when it has no ']' (the '[' is then a literal byte). A ']'
 * first in the set is a member; a-z is a range of bytes. */
static inline int ls_glob_set(const char *p, const char *pe, unsigned char c, const char **after) {
  const char *q = p + 1;
  int neg = 0, in = 0;
  if (q < pe && (*q == '!' || *q == '^')) neg = 1, q++;
  const char *first = q;
  while (q < pe && (*q != ']' || q == first)) {
    const unsigned char lo = (unsigned char)*q;
    unsigned char hi = lo;
    if (q + 2 < pe && q[1] == '-' && q[2] != ']') {
      hi = (unsigned char)q[2];
      q += 3;
    } else {
      q++;
    }
    if (lo <= c && c <= hi) in = 1;
  }
  if (q >= pe) return -1;
  *after = q + 1;
  return in != neg;
}

/* Whether the bytes [n, ne) match the glob [p, pe) as a whole: '*' any run
 * of bytes, '?' one byte, [set] one byte of the set, any other byte itself
 * (no escapes, no classes, no locale: the same in every language and safe
 * in a signal handler). The classic one-star backtracking: linear in the
 * common case, never exponential. */
static inline int ls_glob(const char *p, const char *pe, const char *n, const char *ne) {
  const char *star_p = NULL, *star_n = NULL;
  while (n < ne) {
    if (p < pe && *p == '*') {
      star_p = ++p;
      star_n = n;
      continue;
    }
    const char *next = NULL;
    if (p < pe) {
      const unsigned char c = (unsigned char)*n;
      if (*p == '?') {
        next = p + 1;
      } else if (*p == '[') {
        const char *after = NULL;
        const int in = ls_glob_set(p, pe, c, &after);
        if (in == 1) next = after;
        if (in == -1 && c == '[') next = p + 1;
      } else if ((unsigned char)*p == c) {
        next = p + 1;
      }
    }
    if (next) {
      p = next;
      n++;
    } else if (star_p) {
      p = star_p;
      n = ++star_n;
    } else {
      return 0;
    }
  }
  while (p < pe && *p == '*') p++;
  return p == pe;
}

/* Whether the glob pat matches the path name component by component (the
 * same number of components, each matched by ls_glob: nothing in a
 * pattern matches a '/'). */
static inline int ls_glob_path(const char *pat, const char *name) {
  for (;;) {
    const char *pe = strchr(pat, '/'), *ne = strchr(name, '/');
    if (!pe) pe = pat + strlen(pat);
    if (!ne) ne = name + strlen(name);
    if (!ls_glob(pat, pe, name, ne)) return 0;
    if (!*pe || !*ne) return !*pe && !*ne;
    pat = pe + 1;
    name = ne + 1;
  }
}

/* Whether the FILE rule r names a site of `file` at `line`. */
static inline int ls_level_rule_matches(const ls_level_rule *r, const char *file, uint32_t line) {
  if (r->line && r->line != line) return 0;
  if (!strchr(r->file, '/')) {
    const char *base = strrchr(file, '/');
    base = base ? base + 1 : file;
    return ls_glob(r->file, r->file + strlen(r->file), base, base + strlen(base));
  }
  for (const char *t = file;;) {
    if (ls_glob_path(r->file, t)) return 1;
    t = strchr(t, '/');
    if (!t) return 0;
    t++;
  }
}

/* The level that applies to a call site of `file` (NULL or "": none) at
 * `line`: its records are produced when their level is <= it. */
static inline int ls_level_rules_for(const ls_level_rules *r, const char *file, uint32_t line) {
  if (file && *file)
    for (int i = r->n - 1; i >= 0; i--)
      if (ls_level_rule_matches(&r->rule[i], file, line)) return r->rule[i].level;
  return r->level;
}

/* The most verbose level any site may be given (no record above it is
 * produced), and the level every site is given at least (every record at
 * or below it is produced). */
static inline int ls_level_rules_most(const ls_level_rules *r) {
  int m = r->level;
  for (int i = 0; i < r->n; i++)
    if (r->rule[i].level > m) m = r->rule[i].level;
  return m;
}
static inline int ls_level_rules_least(const ls_level_rules *r) {
  int m = r->level;
  for (int i = 0; i < r->n; i++)
    if (r->rule[i].level < m) m = r->rule[i].level;
  return m;
}

/* A default level that says "none given": parse a daemon's pushed text
 * (PROTOCOL.md, "Levels at run time") with it, and a bare LEVEL in the
 * text replaces it. */
#define LS_LEVEL_UNSET (-3)

/* Puts the rules a daemon pushed (parsed with LS_LEVEL_UNSET) on top of a
 * client's own, in place: a bare LEVEL among them replaces the default,
 * their FILE rules come after the own ones (so they win where both name a
 * site); past LS_LEVEL_RULES_MAX, the oldest own rules give way. */
static inline void ls_level_rules_merge(ls_level_rules *r, const ls_level_rules *pushed) {
  if (pushed->level != LS_LEVEL_UNSET) r->level = pushed->level;
  int keep = LS_LEVEL_RULES_MAX - pushed->n;
  if (keep > r->n) keep = r->n;
  if (keep < r->n) memmove(r->rule, r->rule + (r->n - keep), (size_t)keep * sizeof r->rule[0]);
  memcpy(r->rule + keep, pushed->rule, (size_t)pushed->n * sizeof r->rule[0]);
  r->n = keep + pushed->n;
}

/* The name of level l as rules write it (a level name, or "off"). */
static inline const char *ls_level_rules_name(int l) {
  return l == LS_LEVEL_OFF ? "off" : l >= 0 && l <= LS_LEVEL_MAX ? ls_level_name((unsigned)l) : "?";
}

/* Writes r as rules text ("LEVEL,FILE[:LINE]=LEVEL,...": the default,
 * then every FILE rule, in order) into buf of cap bytes, NUL-terminated.
 * Returns its length, or -1 when it does not fit (buf then holds "").
 * ls_level_rules_parse reads it back into the same rules. */
static inline int ls_level_rules_text(const ls_level_rules *r, char *buf, size_t cap) {
  size_t at = 0;
  int n = snprintf(buf, cap, "%s", ls_level_rules_name(r->level));
  if (n < 0 || (size_t)n >= cap) goto full;
  at = (size_t)n;
  for (int i = 0; i < r->n; i++) {
    const ls_level_rule *x = &r->rule[i];
    if (x->line)
      n = snprintf(buf + at, cap - at, ",%s:%u=%s", x->file, (unsigned)x->line,
                   ls_level_rules_name(x->level));
    else
      n = snprintf(buf + at, cap - at, ",%s=%s", x->file, ls_level_rules_name(x->level));
    if (n < 0 || (size_t)n >= cap - at) goto full;
    at += (size_t)n;
  }
  return (int)at;
full:
  if (cap) buf[0] = 0;
  return -1;
}

#endif
