// syslog_parse_test.cc: the syslog parser (daemon/src/syslog_parse.h) on a
// table of real-world datagrams: logger(1)'s output in both forms, the local
// form glibc's syslog(3) sends, odd spacing, missing parts, bad PRIs, cut
// structured data; and a randomized check that every view stays inside the
// input.
#include "syslog_parse.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <random>
#include <string>

#include "common/seed.h"
#include "logsink/proto/facility.h"

namespace logsink::test {
namespace {

using daemon::ParseSyslog;
using daemon::SyslogBad;
using daemon::SyslogForm;
using daemon::SyslogMessage;

struct Case {
  const char *name;
  std::string in;
  SyslogForm form;
  SyslogBad bad;
  int facility, severity;
  const char *tag, *procid, *timestamp, *hostname, *msgid, *sd, *msg;
  bool bom = false;
};

const SyslogForm k3164 = SyslogForm::kRfc3164, k5424 = SyslogForm::kRfc5424,
                 kBad = SyslogForm::kMalformed;
const SyslogBad kOk = SyslogBad::kNone;

std::vector<Case> Table() {
  return {
      // logger --rfc3164 -u SOCK -t mytag -p local3.warning 'hello  world'
      {"logger_rfc3164", "<156>Nov 25 12:40:16 vm mytag: hello  world", k3164, kOk, 19, 4, "mytag",
       "", "Nov 25 12:40:16", "vm", "", "", "hello  world"},
      // logger -i --rfc3164
      {"logger_rfc3164_pid", "<156>Nov 25 12:40:24 vm mytag[29802]: hello  world", k3164, kOk, 19,
       4, "mytag", "29802", "Nov 25 12:40:24", "vm", "", "", "hello  world"},
      // logger -u SOCK (the local form, no hostname), as glibc's syslog(3)
      {"logger_local", "<156>Nov 25 12:40:16 mytag: hello  world", k3164, kOk, 19, 4, "mytag", "",
       "Nov 25 12:40:16", "", "", "", "hello  world"},
      // glibc syslog(3) with LOG_PID, day space-padded
      {"glibc_pid", "<30>Nov  5 01:02:03 sshd[812]: Accepted publickey for root", k3164, kOk, 3, 6,
       "sshd", "812", "Nov  5 01:02:03", "", "", "", "Accepted publickey for root"},
      {"glibc_kern_emerg", "<0>Jan  1 00:00:00 kernel: panic", k3164, kOk, 0, 0, "kernel", "",
       "Jan  1 00:00:00", "", "", "", "panic"},
      {"day_unpadded", "<13>Dec 5 23:59:59 t: x", k3164, kOk, 1, 5, "t", "", "Dec 5 23:59:59", "",
       "", "", "x"},
      {"trailing_newline", "<13>Dec 15 23:59:59 t: line\n", k3164, kOk, 1, 5, "t", "",
       "Dec 15 23:59:59", "", "", "", "line"},
      {"trailing_nul", std::string("<13>Dec 15 23:59:59 t: line\0", 28), k3164, kOk, 1, 5, "t", "",
       "Dec 15 23:59:59", "", "", "", "line"},
      {"extra_spaces_kept_in_msg", "<13>Dec 15 23:59:59   t:   three", k3164, kOk, 1, 5, "t", "",
       "Dec 15 23:59:59", "", "", "", "  three"},
      {"empty_msg", "<13>Dec 15 23:59:59 t:", k3164, kOk, 1, 5, "t", "", "Dec 15 23:59:59", "", "",
       "", ""},
      {"timestamp_only", "<13>Dec 15 23:59:59", k3164, kOk, 1, 5, "", "", "Dec 15 23:59:59", "", "",
       "", ""},
      {"host_no_tag", "<13>Dec 15 23:59:59 host just words", k3164, kOk, 1, 5, "", "",
       "Dec 15 23:59:59", "host", "", "", "just words"},
      {"tag_pid_unclosed", "<13>Dec 15 23:59:59 host t[12 x: y", k3164, kOk, 1, 5, "", "",
       "Dec 15 23:59:59", "host", "", "", "t[12 x: y"},
      {"pid_claim_is_data", "<13>Dec 15 23:59:59 t[1]: I am init", k3164, kOk, 1, 5, "t", "1",
       "Dec 15 23:59:59", "", "", "", "I am init"},
      {"invalid_utf8_kept", "<13>Dec 15 23:59:59 t: \xff\xfe\xc3", k3164, kOk, 1, 5, "t", "",
       "Dec 15 23:59:59", "", "", "", "\xff\xfe\xc3"},
      // logger --rfc5424
      {"logger_rfc5424",
       "<156>1 2026-11-25T12:40:16.524136+00:00 vm mytag - - [timeQuality tzKnown=\"1\" "
       "isSynced=\"0\"] hello  world",
       k5424, kOk, 19, 4, "mytag", "", "2026-11-25T12:40:16.524136+00:00", "vm", "",
       "[timeQuality tzKnown=\"1\" isSynced=\"0\"]", "hello  world"},
      // logger --rfc5424 --msgid ID47 --sd-id ex@32473 --sd-param 'k="v\]\"x"' -i
      {"logger_rfc5424_sd_escapes",
       "<156>1 2026-11-25T12:40:24.782590+00:00 vm mytag 29803 ID47 [timeQuality tzKnown=\"1\" "
       "isSynced=\"0\"][ex@32473 k=\"v\\]\\\"x\"] hello  world",
       k5424, kOk, 19, 4, "mytag", "29803", "2026-11-25T12:40:24.782590+00:00", "vm", "ID47",
       "[timeQuality tzKnown=\"1\" isSynced=\"0\"][ex@32473 k=\"v\\]\\\"x\"]", "hello  world"},
      // RFC 5424's examples
      {"rfc5424_ex1",
       "<34>1 2003-10-11T22:14:15.003Z mymachine.example.com su - ID47 - \xef\xbb\xbf'su root' "
       "failed for lonvick on /dev/pts/8",
       k5424, kOk, 4, 2, "su", "", "2003-10-11T22:14:15.003Z", "mymachine.example.com", "ID47", "",
       "'su root' failed for lonvick on /dev/pts/8", true},
      {"rfc5424_ex3_backslash",
       "<165>1 2003-10-11T22:14:15.003Z mymachine.example.com evntslog - ID47 [exampleSDID@32473 "
       "iut=\"3\" eventSource=\"App\\\\\" eventID=\"1011\"] An application event",
       k5424, kOk, 20, 5, "evntslog", "", "2003-10-11T22:14:15.003Z", "mymachine.example.com",
       "ID47", "[exampleSDID@32473 iut=\"3\" eventSource=\"App\\\\\" eventID=\"1011\"]",
       "An application event"},
      {"rfc5424_all_nil_no_msg", "<165>1 - - - - - -", k5424, kOk, 20, 5, "", "", "", "", "", "",
       ""},
      // Lenient as rsyslog: spaces after '=' (kept as they came).
      {"rfc5424_sd_space_after_equals",
       "<165>1 2003-10-11T22:14:15.003Z mymachine.example.com evntslog - ID47 [exampleSDID@32473 "
       "iut= \"3\" eventSource=  \"Application\"] An application event",
       k5424, kOk, 20, 5, "evntslog", "", "2003-10-11T22:14:15.003Z", "mymachine.example.com",
       "ID47", "[exampleSDID@32473 iut= \"3\" eventSource=  \"Application\"]",
       "An application event"},
      {"rfc5424_unescaped_bracket_in_value", "<14>1 - h a - - [x k=\"a]b\"] m", k5424, kOk, 1, 6,
       "a", "", "", "h", "", "[x k=\"a]b\"]", "m"},
      // malformed
      {"no_pri", "hello", kBad, SyslogBad::kPri, 1, 5, "", "", "", "", "", "", "hello"},
      {"empty", "", kBad, SyslogBad::kPri, 1, 5, "", "", "", "", "", "", ""},
      {"huge_pri", "<192>Nov 25 12:40:16 t: x", kBad, SyslogBad::kPri, 1, 5, "", "", "", "", "", "",
       "<192>Nov 25 12:40:16 t: x"},
      {"pri_overflow", "<99999999999>x", kBad, SyslogBad::kPri, 1, 5, "", "", "", "", "", "",
       "<99999999999>x"},
      {"pri_leading_zero", "<013>Nov 25 12:40:16 t: x", kBad, SyslogBad::kPri, 1, 5, "", "", "", "",
       "", "", "<013>Nov 25 12:40:16 t: x"},
      {"pri_unclosed", "<13", kBad, SyslogBad::kPri, 1, 5, "", "", "", "", "", "", "<13"},
      {"no_timestamp", "<13>hello world\n", kBad, SyslogBad::kRfc3164, 1, 5, "", "", "", "", "", "",
       "<13>hello world\n"},
      {"bad_month", "<13>Foo 25 12:40:16 t: x", kBad, SyslogBad::kRfc3164, 1, 5, "", "", "", "", "",
       "", "<13>Foo 25 12:40:16 t: x"},
      {"bad_time", "<13>Nov 25 12:4:16 t: x", kBad, SyslogBad::kRfc3164, 1, 5, "", "", "", "", "",
       "", "<13>Nov 25 12:4:16 t: x"},
      {"version_2", "<13>2 - - - - - - x", kBad, SyslogBad::kRfc5424, 1, 5, "", "", "", "", "", "",
       "<13>2 - - - - - - x"},
      {"rfc5424_missing_fields", "<13>1 - host app", kBad, SyslogBad::kRfc5424, 1, 5, "", "", "",
       "", "", "", "<13>1 - host app"},
      {"rfc5424_cut_sd", "<13>1 - h a - - [x k=\"v", kBad, SyslogBad::kRfc5424, 1, 5, "", "", "",
       "", "", "", "<13>1 - h a - - [x k=\"v"},
      {"rfc5424_sd_space_then_no_value", "<13>1 - h a - - [x k= ] m", kBad, SyslogBad::kRfc5424, 1,
       5, "", "", "", "", "", "", "<13>1 - h a - - [x k= ] m"},
      {"rfc5424_sd_unclosed", "<13>1 - h a - - [x k=\"v\"", kBad, SyslogBad::kRfc5424, 1, 5, "", "",
       "", "", "", "", "<13>1 - h a - - [x k=\"v\""},
      {"rfc5424_sd_no_space_before_msg", "<13>1 - h a - - [x]msg", kBad, SyslogBad::kRfc5424, 1, 5,
       "", "", "", "", "", "", "<13>1 - h a - - [x]msg"},
      {"rfc5424_bad_timestamp", "<13>1 yesterday h a - - - m", kBad, SyslogBad::kRfc5424, 1, 5, "",
       "", "", "", "", "", "<13>1 yesterday h a - - - m"},
      {"rfc5424_app_too_long", fmt::format("<13>1 - h {} - - - m", std::string(49, 'a')), kBad,
       SyslogBad::kRfc5424, 1, 5, "", "", "", "", "", "", ""},
      {"rfc5424_double_space", "<13>1 -  h a - - - m", kBad, SyslogBad::kRfc5424, 1, 5, "", "", "",
       "", "", "", "<13>1 -  h a - - - m"},
      {"rfc5424_sd_name_too_long", fmt::format("<13>1 - h a - - [{}] m", std::string(33, 'x')),
       kBad, SyslogBad::kRfc5424, 1, 5, "", "", "", "", "", "", ""},
  };
}

TEST(SyslogParse, Table) {
  for (const Case &c : Table()) {
    SCOPED_TRACE(c.name);
    SyslogMessage m = ParseSyslog(c.in);
    EXPECT_EQ(m.form, c.form);
    EXPECT_EQ(m.bad, c.bad);
    // A malformed datagram keeps the PRI's facility and severity when the
    // PRI was valid; the table's 1/5 defaults hold for the others.
    if (c.form != kBad || c.bad == SyslogBad::kPri) {
      EXPECT_EQ(m.facility, c.facility);
      EXPECT_EQ(m.severity, c.severity);
    }
    if (c.form == kBad) {
      EXPECT_EQ(m.msg, c.in);  // as it came, every byte
      continue;
    }
    EXPECT_EQ(m.tag, c.tag);
    EXPECT_EQ(m.procid, c.procid);
    EXPECT_EQ(m.timestamp, c.timestamp);
    EXPECT_EQ(m.hostname, c.hostname);
    EXPECT_EQ(m.msgid, c.msgid);
    EXPECT_EQ(m.sd, c.sd);
    EXPECT_EQ(m.msg, c.msg);
    EXPECT_EQ(m.bom, c.bom);
  }
}

TEST(SyslogParse, MalformedWithValidPriKeepsItsFacilityAndSeverity) {
  SyslogMessage m = ParseSyslog("<86>not a header");  // authpriv.info
  EXPECT_EQ(m.form, kBad);
  EXPECT_EQ(m.bad, SyslogBad::kRfc3164);
  EXPECT_EQ(m.facility, 10);
  EXPECT_EQ(m.severity, 6);
}

TEST(SyslogParse, EveryPriValue) {
  for (unsigned pri = 0; pri <= 191; pri++) {
    std::string in = fmt::format("<{}>Nov 25 12:40:16 t: x", pri);
    SyslogMessage m = ParseSyslog(in);
    ASSERT_EQ(m.form, k3164) << in;
    EXPECT_EQ(m.facility, pri >> 3);
    EXPECT_EQ(m.severity, pri & 7);
  }
}

TEST(SyslogParse, FacilityNames) {
  EXPECT_STREQ(ls_facility_name(0), "kern");
  EXPECT_STREQ(ls_facility_name(10), "authpriv");
  EXPECT_STREQ(ls_facility_name(15), "clock");
  EXPECT_STREQ(ls_facility_name(13), "audit");
  EXPECT_EQ(ls_facility_parse("security", 8), 4) << "logger's old name for auth";
  EXPECT_EQ(ls_facility_parse("local3", 6), 19);
  EXPECT_EQ(ls_facility_parse("nosuch", 6), -1);
  EXPECT_STREQ(ls_facility_name(16), "local0");
  EXPECT_STREQ(ls_facility_name(23), "local7");
  EXPECT_EQ(ls_facility_name(24), nullptr);
}

bool Inside(std::string_view part, std::string_view whole) {
  return part.empty() ||
         (part.data() >= whole.data() && part.data() + part.size() <= whole.data() + whole.size());
}

// Mutations of the table's datagrams (bytes replaced, cut, duplicated):
// every view lies inside the input, a malformed one keeps all of it, and the
// facility and severity stay in range.
TEST(SyslogParse, RandomMutationsKeepViewsInsideTheInput) {
  std::mt19937_64 rng(TestSeed());
  std::vector<Case> table = Table();
  for (int iter = 0; iter < 200000; iter++) {
    std::string s = table[rng() % table.size()].in;
    int edits = 1 + int(rng() % 4);
    for (int e = 0; e < edits && !s.empty(); e++) {
      size_t at = rng() % s.size();
      switch (rng() % 4) {
        case 0:
          s[at] = char(rng() % 256);
          break;
        case 1:
          s.resize(at);
          break;
        case 2:
          s.insert(at, 1, " <>[]\"\\-:1"[rng() % 10]);
          break;
        default:
          s.erase(at, 1);
      }
    }
    std::string copy = s;
    SyslogMessage m = ParseSyslog(copy);
    std::string_view w = copy;
    for (std::string_view v : {m.tag, m.procid, m.timestamp, m.hostname, m.msgid, m.sd, m.msg})
      ASSERT_TRUE(Inside(v, w)) << s;
    ASSERT_LE(m.facility, 23);
    ASSERT_LE(m.severity, 7);
    if (m.form == kBad)
      ASSERT_EQ(m.msg, w);
    else
      ASSERT_EQ(m.bad, kOk);
  }
}

}  // namespace
}  // namespace logsink::test
