/* syslog_names.h: the names of the syslog facilities 0..23 as RFC 5424 and
 * glibc's <syslog.h> give them (FORMAT.md, "Free-text records": the line of a
 * free-text record's site is its facility). Header-only C11, usable from C++. */
#ifndef LOGSINK_PROTO_SYSLOG_NAMES_H
#define LOGSINK_PROTO_SYSLOG_NAMES_H

#define LS_SYSLOG_FACILITIES 24

/* "kern", "user", ... "local7"; NULL beyond 23. */
static inline const char *ls_syslog_facility_name(unsigned facility) {
  static const char *const names[LS_SYSLOG_FACILITIES] = {
      "kern",   "user",   "mail",     "daemon", "auth",   "syslog",   "lpr",     "news",
      "uucp",   "cron",   "authpriv", "ftp",    "ntp",    "security", "console", "solaris-cron",
      "local0", "local1", "local2",   "local3", "local4", "local5",   "local6",  "local7"};
  return facility < LS_SYSLOG_FACILITIES ? names[facility] : 0;
}

#endif
