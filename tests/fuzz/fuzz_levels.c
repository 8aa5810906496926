/* fuzz_levels.c: fuzz target of the rules of $LOGSINK_LEVEL
 * (proto/level_rules.h), which a program reads from its environment.
 * Input: the rules text, a NUL, a file name, a NUL, then a line number's
 * bytes. Checks what a parsed text holds (rules, files and levels within
 * their bounds; a refused text leaves the default and says why), that the
 * level for a site is the default or a rule's, between least and most, and
 * that the glob matcher agrees with a plain recursive definition of it on
 * every pattern and name (as a whole, by components and by tails). */
#include <stdint.h>
#include <string.h>

#include "fuzz_check.h"
#include "logsink/proto/level_rules.h"

/* The glob by its definition: exponential, so only for short inputs. */
static int RefGlob(const char *p, const char *pe, const char *n, const char *ne) {
  if (p == pe) return n == ne;
  if (*p == '*') {
    for (const char *k = n;; k++) {
      if (RefGlob(p + 1, pe, k, ne)) return 1;
      if (k == ne) return 0;
    }
  }
  if (n == ne) return 0;
  if (*p == '?') return RefGlob(p + 1, pe, n + 1, ne);
  if (*p == '[') {
    const char *after = NULL;
    const int in = ls_glob_set(p, pe, (unsigned char)*n, &after);
    if (in == 1) return RefGlob(after, pe, n + 1, ne);
    if (in == 0) return 0;
  }
  return *p == *n && RefGlob(p + 1, pe, n + 1, ne);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char text[600], file[300];
  const uint8_t *end = data + size, *z = memchr(data, 0, size);
  const size_t tlen = z ? (size_t)(z - data) : size;
  if (tlen >= sizeof text) return 0;
  memcpy(text, data, tlen);
  text[tlen] = 0;
  const uint8_t *f = z ? z + 1 : end, *z2 = f < end ? memchr(f, 0, (size_t)(end - f)) : NULL;
  const size_t flen = z2 ? (size_t)(z2 - f) : (size_t)(end - f);
  if (flen >= sizeof file) return 0;
  memcpy(file, f, flen);
  file[flen] = 0;
  uint32_t line = 0;
  for (const uint8_t *d = z2 ? z2 + 1 : end; d < end && d < (z2 ? z2 + 5 : end); d++)
    line = line << 8 | *d;

  ls_level_rules r;
  char err[192];
  err[0] = 0;
  if (ls_level_rules_parse(text, 5, &r, err, sizeof err) != 0) {
    FUZZ_CHECK(err[0] != 0);
    FUZZ_CHECK(r.level == LS_LEVEL_MAX && r.n == 0);
  } else {
    FUZZ_CHECK(r.level >= LS_LEVEL_OFF && r.level <= LS_LEVEL_MAX);
    FUZZ_CHECK(r.n >= 0 && r.n <= LS_LEVEL_RULES_MAX);
    for (int i = 0; i < r.n; i++) {
      const size_t len = strlen(r.rule[i].file);
      FUZZ_CHECK(len > 0 && len <= LS_LEVEL_FILE_MAX);
      FUZZ_CHECK(r.rule[i].level >= LS_LEVEL_OFF && r.rule[i].level <= LS_LEVEL_MAX);
      FUZZ_CHECK(r.rule[i].line <= 0x7fffffffu);
    }
  }
  const int l = ls_level_rules_for(&r, file, line);
  int known = l == r.level;
  for (int i = 0; i < r.n; i++) known |= l == r.rule[i].level;
  FUZZ_CHECK(known);
  FUZZ_CHECK(ls_level_rules_least(&r) <= l && l <= ls_level_rules_most(&r));
  if (!file[0]) FUZZ_CHECK(l == r.level);

  /* The matcher against its definition: the text as a pattern (the
   * definition's time grows as name length to the power of stars). */
  int stars = 0;
  for (size_t i = 0; i < tlen; i++) stars += text[i] == '*';
  if (tlen <= 24 && flen <= 24 && stars <= 3) {
    FUZZ_CHECK(ls_glob(text, text + tlen, file, file + flen) ==
               RefGlob(text, text + tlen, file, file + flen));
  }
  return 0;
}
