/* fields.h: named, typed fields of a call site (FORMAT.md, "Fields";
 * PROTOCOL.md, "Fields"). A site with fields has the flag FIELDS and a
 * format made of the message, one byte 0x1F and the field list:
 *
 *   fmt    := message [0x1F field (' ' field)*]
 *   field  := name [':' type] '=' '%' [length] conv
 *
 * The record's arguments are the message's followed by one per field, in
 * order, encoded as any argument (args.h): the signature of the whole
 * format (printf.h) is the record's, so nothing per record names a field.
 * Header-only C11, usable from C++: the client checks a format before it
 * sends it, the daemon before it stores it, readers before they show it.
 *
 * Names: 1 to LS_FIELD_NAME_MAX bytes of letters, digits, '_', '.', '@'
 * and '-', the first a letter, a digit or '_'. A name that starts with '_'
 * is trusted (the daemon's own, such as _PID): no client may declare one.
 * Names are unique within a site. type is "bool" (the conversion must then
 * be an integer one: 0 is false, anything else true); without it the type
 * follows the conversion: d i signed, u o x X unsigned, f F e E g G a A
 * double, c a character, s and m a string, p a pointer. A field's
 * conversion has no flags, width or precision. */
#ifndef LOGSINK_PROTO_FIELDS_H
#define LOGSINK_PROTO_FIELDS_H

#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "logsink/proto/printf.h"

#ifdef __cplusplus
extern "C" {
#endif

#define LS_FIELDS_SEP '\x1f'     /* between the message and the field list */
#define LS_FIELD_NAME_MAX 64u    /* longest field name, bytes */
#define LS_SITE_LEVEL_MASK 0x07u /* the level in a site's level byte */
/* In the level byte of INTERN (with LS_CAP_FIELDS) and of an inline site
 * (format 6): the format carries fields. */
#define LS_SITE_FIELDS 0x08u

/* Field types, as a reader presents them (JSON: a string, a number, a bool). */
#define LS_FIELD_STR 's'
#define LS_FIELD_INT 'i'
#define LS_FIELD_UINT 'u'
#define LS_FIELD_DOUBLE 'f'
#define LS_FIELD_BOOL 'b'
#define LS_FIELD_CHAR 'c'
#define LS_FIELD_PTR 'p'

typedef struct ls_field {
  const char *name; /* into the format, not NUL-terminated */
  size_t name_len;
  char type;     /* LS_FIELD_* */
  char arg_type; /* LS_ARG_* of its argument */
  ls_fmt_spec conv;
} ls_field;

/* Where the message ends: the offset of the first 0x1F, or len. */
static inline size_t ls_fields_message_len(const char *fmt, size_t len) {
  const void *p = memchr(fmt, LS_FIELDS_SEP, len);
  return p ? (size_t)((const char *)p - fmt) : len;
}

static inline int ls__field_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '.' || c == '@' || c == '-';
}

/* Whether [name, name + len) is a valid field name (above); trusted (a
 * leading '_') ones only when allow_trusted. */
static inline int ls_field_name_ok(const char *name, size_t len, int allow_trusted) {
  if (len == 0 || len > LS_FIELD_NAME_MAX) return 0;
  if (name[0] == '.' || name[0] == '@' || name[0] == '-') return 0;
  if (name[0] == '_' && !allow_trusted) return 0;
  for (size_t i = 0; i < len; i++)
    if (!ls__field_name_char(name[i])) return 0;
  return 1;
}

/* The next field of the field list of fmt, from *pos (start it at msg,
 * the message's length: ls_fields_message_len). Returns 1 and fills *f, 0
 * at the end, -EINVAL when the list is malformed. Names are checked for
 * their characters only (ls_fields_check checks the rest). Each call costs
 * the field's bytes: the daemon walks every INTERN's list. */
static inline int ls_field_next(const char *fmt, size_t len, size_t msg, size_t *pos, ls_field *f) {
  size_t i = *pos;
  if (i >= len) return 0;
  /* The separator before the first field, a space before each other. */
  if (fmt[i] != (i == msg ? LS_FIELDS_SEP : ' ')) return -EINVAL;
  i++;
  const size_t start = i;
  while (i < len && ls__field_name_char(fmt[i])) i++;
  f->name = fmt + start;
  f->name_len = i - start;
  if (f->name_len == 0 || f->name_len > LS_FIELD_NAME_MAX) return -EINVAL;
  int is_bool = 0;
  if (i < len && fmt[i] == ':') {
    if (len - i - 1 < 4 || memcmp(fmt + i + 1, "bool", 4) != 0) return -EINVAL;
    is_bool = 1;
    i += 5;
  }
  if (i + 1 >= len || fmt[i] != '=' || fmt[i + 1] != '%') return -EINVAL;
  i++;
  size_t at = i;
  if (ls_fmt_next(fmt, len, &at, &f->conv) != 1 || f->conv.start != i || f->conv.type == 0 ||
      f->conv.flags != 0 || f->conv.width != LS_FMT_NONE || f->conv.precision != LS_FMT_NONE)
    return -EINVAL;
  f->arg_type = f->conv.type;
  if (is_bool) {
    if (f->arg_type != LS_ARG_INT && f->arg_type != LS_ARG_UINT) return -EINVAL;
    f->type = LS_FIELD_BOOL;
  } else {
    switch (f->arg_type) {
      case LS_ARG_INT:
        f->type = LS_FIELD_INT;
        break;
      case LS_ARG_UINT:
        f->type = LS_FIELD_UINT;
        break;
      case LS_ARG_DOUBLE:
        f->type = LS_FIELD_DOUBLE;
        break;
      case LS_ARG_CHAR:
        f->type = LS_FIELD_CHAR;
        break;
      case LS_ARG_PTR:
        f->type = LS_FIELD_PTR;
        break;
      default:
        f->type = LS_FIELD_STR;
        break;
    }
  }
  *pos = at;
  return 1;
}

/* Checks a whole format with fields: a message that parses (printf.h), a
 * separator, at least one field, every field well formed, names valid
 * (trusted ones only when allow_trusted) and unique, the whole signature
 * within LS_FMT_MAX_ARGS. Returns the number of fields, or -EINVAL. */
static inline int ls_fields_check(const char *fmt, size_t len, int allow_trusted) {
  const size_t msg = ls_fields_message_len(fmt, len);
  char sig[LS_FMT_MAX_ARGS + 1];
  if (msg == len) return -EINVAL;
  if (ls_fmt_signature(fmt, len, sig, sizeof sig) < 0) return -EINVAL;
  size_t pos = msg;
  int n = 0, r;
  ls_field f;
  /* The names so far: a site has at most LS_FMT_MAX_ARGS fields (the
   * signature above), so comparing each with the earlier ones is bounded. */
  const char *names[LS_FMT_MAX_ARGS];
  size_t lens[LS_FMT_MAX_ARGS];
  while ((r = ls_field_next(fmt, len, msg, &pos, &f)) > 0) {
    if (n >= LS_FMT_MAX_ARGS || !ls_field_name_ok(f.name, f.name_len, allow_trusted))
      return -EINVAL;
    for (int k = 0; k < n; k++)
      if (lens[k] == f.name_len && memcmp(names[k], f.name, f.name_len) == 0) return -EINVAL;
    names[n] = f.name;
    lens[n++] = f.name_len;
  }
  if (r < 0 || n == 0) return -EINVAL;
  return n;
}

#ifdef __cplusplus
}
#endif
#endif
