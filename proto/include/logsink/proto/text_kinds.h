/* text_kinds.h: the kinds of free-text records (proto/FORMAT.md, "Free-text
 * records"): text that was not logged through a format string is stored as
 * an ordinary record of a fixed site, named by its file. The one table the
 * writer (logsinkd) and the readers (logctl, logsink-forward) share, so no
 * component matches these names as literals of its own. Header-only C11,
 * usable from C++. */
#ifndef LOGSINK_PROTO_TEXT_KINDS_H
#define LOGSINK_PROTO_TEXT_KINDS_H

#include <stddef.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

enum ls_text_kind {
  LS_TEXT_LINE,       /* a text stream's line (`logctl send`, any text stream) */
  LS_TEXT_STDOUT,     /* ... of a program's standard output (`logctl run`) */
  LS_TEXT_STDERR,     /* ... of its standard error */
  LS_TEXT_RFC3164,    /* a syslog datagram in the BSD form */
  LS_TEXT_RFC5424,    /* a syslog datagram in the RFC 5424 form */
  LS_TEXT_SYSLOG_RAW, /* a datagram that parsed as neither */
  LS_TEXT_KERNEL,     /* a record of the kernel's log (/dev/kmsg) */
  LS_TEXT_KIND_COUNT
};

typedef struct {
  const char *file;  /* the site's file name: names the kind */
  const char *fmt;   /* the text first; the other arguments render as nothing */
  const char *sig;   /* its signature (proto/printf.h): one 's' per argument */
  const char *group; /* JSON object holding the fields after the text, or NULL */
  /* Names of the string arguments after the text (nfields of them). */
  unsigned nfields;
  const char *fields[4];
} ls_text_kind_info;

/* One kind per line: a table to read across. */
/* clang-format off */
static const ls_text_kind_info ls_text_kinds[LS_TEXT_KIND_COUNT] = {
    {"text", "%s", "s", NULL, 0, {NULL}},
    {"stdout", "%s", "s", NULL, 0, {NULL}},
    {"stderr", "%s", "s", NULL, 0, {NULL}},
    {"syslog:rfc3164", "%s%.0s%.0s", "sss", "syslog", 2, {"timestamp", "hostname"}},
    {"syslog:rfc5424", "%s%.0s%.0s%.0s%.0s", "sssss", "syslog", 4,
     {"timestamp", "hostname", "msgid", "sd"}},
    {"syslog:raw", "%s", "s", NULL, 0, {NULL}},
    {"kernel", "%s%.0s%.0s%.0s", "ssss", "kernel", 3, {"seq", "usec", "dict"}},
};
/* clang-format on */

/* The kind whose site file is [file, file + len), or -1 for any other site. */
static inline int ls_text_kind_of(const char *file, size_t len) {
  for (int k = 0; k < LS_TEXT_KIND_COUNT; k++) {
    if (strlen(ls_text_kinds[k].file) == len && memcmp(ls_text_kinds[k].file, file, len) == 0)
      return k;
  }
  return -1;
}

#ifdef __cplusplus
}
#endif
#endif
