// timefmt.cc: cached timestamp formatting (see timefmt.h).
#include "logsink/render/timefmt.h"

#include <cstdio>
#include <cstring>

namespace logsink::render {
namespace {

void Put2(char *p, int v) {
  p[0] = static_cast<char>('0' + v / 10 % 10);
  p[1] = static_cast<char>('0' + v % 10);
}

void AppendFrac(uint64_t v, int digits, std::string *out) {
  char b[9];
  for (int i = digits - 1; i >= 0; i--) {
    b[i] = static_cast<char>('0' + v % 10);
    v /= 10;
  }
  out->append(b, digits);
}

}  // namespace

void TimeFormatter::Fill(Cache *c, int64_t sec, bool utc) {
  time_t t = static_cast<time_t>(sec);
  struct tm tm;
  if (utc) {
    gmtime_r(&t, &tm);
  } else {
    localtime_r(&t, &tm);
  }
  int year = tm.tm_year + 1900;
  if (year < 0 || year > 9999) year = 9999;
  char *p = c->text;
  p[0] = static_cast<char>('0' + year / 1000);
  p[1] = static_cast<char>('0' + year / 100 % 10);
  Put2(p + 2, year % 100);
  p[4] = '-';
  Put2(p + 5, tm.tm_mon + 1);
  p[7] = '-';
  Put2(p + 8, tm.tm_mday);
  p[10] = 'T';
  Put2(p + 11, tm.tm_hour);
  p[13] = ':';
  Put2(p + 14, tm.tm_min);
  p[16] = ':';
  Put2(p + 17, tm.tm_sec);
  p[19] = '\0';
  long off = utc ? 0 : tm.tm_gmtoff;
  char sign = off < 0 ? '-' : '+';
  if (off < 0) off = -off;
  c->zone[0] = sign;
  Put2(c->zone + 1, static_cast<int>(off / 3600));
  Put2(c->zone + 3, static_cast<int>(off / 60 % 60));
  c->zone[5] = '\0';
  c->sec = sec;
}

const TimeFormatter::Cache &TimeFormatter::At(uint64_t ts_ns, bool utc) {
  const int64_t sec = static_cast<int64_t>(ts_ns / 1000000000u);
  Cache *c = utc ? &gmt_ : &local_;
  if (c->sec != sec) Fill(c, sec, utc);
  return *c;
}

void TimeFormatter::AppendLocal(uint64_t ts_ns, int digits, std::string *out) {
  const Cache &c = At(ts_ns, utc_);
  out->append(c.text, 19);
  if (digits > 0) {
    uint64_t unit = 1;  // ns per last digit shown: the rest is cut, not rounded
    for (int i = digits; i < 9; i++) unit *= 10;
    out->push_back('.');
    AppendFrac(ts_ns % 1000000000u / unit, digits, out);
  }
  out->append(c.zone, 5);
}

void TimeFormatter::AppendRfc3339(uint64_t ts_ns, std::string *out) {
  const Cache &c = At(ts_ns, true);
  out->append(c.text, 19);
  out->push_back('.');
  AppendFrac(ts_ns % 1000000000u, 9, out);
  out->push_back('Z');
}

void TimeFormatter::AppendHuman(uint64_t ts_ns, std::string *out) {
  const Cache &c = At(ts_ns, utc_);
  out->append(c.text, 10);
  out->push_back(' ');
  out->append(c.text + 11, 8);
  out->push_back('.');
  AppendFrac(ts_ns % 1000000000u / 1000000u, 3, out);
  out->push_back(' ');
  out->append(c.zone, 5);
}

}  // namespace logsink::render
