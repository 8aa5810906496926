/* facility.h: syslog's names for the two parts of a priority. Facilities,
 * for the records that carry one (FORMAT.md, "Free-text records"): 0-11 and
 * 16-23 are glibc's and logger(1)'s names; 12-15, which they leave unnamed,
 * are named after their meaning in RFC 5424, section 6.2.1. Levels (every
 * record's, from its call site): 0 emerg .. 7 debug, the names syslog.conf,
 * logger(1) and journalctl print, which logsinkd's settings and logctl's
 * output use. */
#ifndef LOGSINK_PROTO_FACILITY_H
#define LOGSINK_PROTO_FACILITY_H

#include <stddef.h>
#include <string.h>

#define LS_FACILITY_MAX 23 /* local7 */
#define LS_FACILITY_USER 1

/* The name of facility f (0..23), or NULL. */
static inline const char *ls_facility_name(unsigned f) {
  static const char *const names[LS_FACILITY_MAX + 1] = {
      "kern",   "user",   "mail",     "daemon", "auth",   "syslog", "lpr",    "news",
      "uucp",   "cron",   "authpriv", "ftp",    "ntp",    "audit",  "alert",  "clock",
      "local0", "local1", "local2",   "local3", "local4", "local5", "local6", "local7"};
  return f <= LS_FACILITY_MAX ? names[f] : NULL;
}

/* The facility named by the len bytes at s (one of the names above, or
 * "security", logger's and glibc's old name for auth), or -1. */
static inline int ls_facility_parse(const char *s, size_t len) {
  if (len == 8 && memcmp(s, "security", 8) == 0) return 4;
  for (unsigned f = 0; f <= LS_FACILITY_MAX; f++) {
    const char *n = ls_facility_name(f);
    if (strlen(n) == len && memcmp(n, s, len) == 0) return (int)f;
  }
  return -1;
}

#define LS_LEVEL_MAX 7 /* debug */

/* The PRI "<N>" at the start of the len bytes at s, the one rule for it:
 * logsinkd's syslog datagrams (daemon/SYSLOG.md, "PRI") and text streams'
 * prefixes (PROTOCOL.md, "Text streams", PRIO_PREFIX), and logctl's levels
 * at the source for those prefixes. N is 1 to 3 decimal digits without a
 * leading zero ("<0>" is zero; "<03>" and "<003>" are not PRIs), at most
 * 191. Returns the prefix's length with *pri = N, or 0 (and *pri
 * untouched) when s does not start with one.
 *
 * Why no leading zeros: RFC 5424 (6.2.1) says "leading 0s MUST NOT be
 * used", so "<N>" has one spelling per value; RFC 3164 (4.1.1) only bounds
 * the PRI part to 3 to 5 characters, which this keeps. systemd's stream
 * prefixes (SyslogLevelPrefix=) also take "<03>" and "<003>", but only as a
 * level (0..7) and only because its parser reads fixed positions; what
 * programs write is sd-daemon(3)'s "<3>" (SD_ERR), which both rules read
 * alike. A refused prefix loses nothing: the line or datagram is stored
 * whole, prefix included, with the default priority (and a datagram is
 * counted in syslog_malformed_pri). */
static inline size_t ls_pri_parse(const char *s, size_t len, unsigned *pri) {
  if (len < 3 || s[0] != '<') return 0;
  size_t i = 1;
  unsigned v = 0;
  /* At most 4 digits are read, so a long run cannot overflow v. */
  while (i < len && i <= 4 && s[i] >= '0' && s[i] <= '9') v = v * 10 + (unsigned)(s[i++] - '0');
  const size_t digits = i - 1;
  if (digits == 0 || digits > 3 || i >= len || s[i] != '>') return 0;
  if (digits > 1 && s[1] == '0') return 0; /* "<0>" only; "<03>", "<003>" are not PRIs */
  if (v > 191) return 0;
  *pri = v;
  return i + 1;
}

/* The name of level l (0..7), or NULL. */
static inline const char *ls_level_name(unsigned l) {
  static const char *const names[LS_LEVEL_MAX + 1] = {"emerg",   "alert",  "crit", "err",
                                                      "warning", "notice", "info", "debug"};
  return l <= LS_LEVEL_MAX ? names[l] : NULL;
}

/* The level named by the len bytes at s (one of the names above, exactly),
 * or -1. */
static inline int ls_level_parse(const char *s, size_t len) {
  for (unsigned l = 0; l <= LS_LEVEL_MAX; l++) {
    const char *n = ls_level_name(l);
    if (strlen(n) == len && memcmp(n, s, len) == 0) return (int)l;
  }
  return -1;
}

/* The level named by the len bytes at s as users type it: a digit 0..7, a
 * name above, or one of the other spellings journalctl and logger(1) take
 * (error, warn, emergency, critical), in any case; or -1. */
static inline int ls_level_parse_any(const char *s, size_t len) {
  if (len == 1 && s[0] >= '0' && s[0] <= '7') return s[0] - '0';
  char low[16];
  if (len > sizeof low) return -1;
  for (size_t i = 0; i < len; i++)
    low[i] = s[i] >= 'A' && s[i] <= 'Z' ? (char)(s[i] - 'A' + 'a') : s[i];
  const int l = ls_level_parse(low, len);
  if (l >= 0) return l;
  static const struct {
    const char *name;
    int level;
  } other[] = {{"error", 3}, {"warn", 4}, {"emergency", 0}, {"critical", 2}};
  for (size_t i = 0; i < sizeof other / sizeof other[0]; i++)
    if (strlen(other[i].name) == len && memcmp(other[i].name, low, len) == 0) return other[i].level;
  return -1;
}

#endif
