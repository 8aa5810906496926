// logctl_text_fields_test.cc: the daemon's own ways in attach named fields
// (FORMAT.md, "Free-text records"; PROTOCOL.md, "Text streams"), against
// the real logsinkd and logctl: an RFC 5424 datagram's SD-PARAMs, the
// kernel's dictionary (a FIFO stands in for /dev/kmsg), `logctl send --set`,
// and the refusals of '_' names in logctl and in the daemon (a hand-made
// text stream). Records are matched with FIELD=VALUE, listed with -F and
// read back with --json. Times are hang limits only.
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "cli_util.h"
#include "common/daemon_process.h"
#include "common/unix_socket.h"
#include "daemon/harness.h"
#include "logsink/proto/codec.h"
#include "logsink/proto/frame_encode.h"

namespace logsink::test {
namespace {

// `logctl ARGS --json --file ring`, one object per line.
std::vector<json> Json(const std::string &ring, std::vector<std::string> args) {
  args.insert(args.end(), {"--json", "--file", ring});
  Result r = RunLogctl(args);
  EXPECT_EQ(r.status, 0) << r.err;
  std::vector<json> out;
  for (const std::string &l : Lines(r.out)) out.push_back(ParseJson(l));
  return out;
}

// Waits until `logctl cat` of the ring shows a record whose msg is msg.
bool WaitMsg(const std::string &ring, const std::string &msg) {
  return WaitUntil(
      [&] {
        for (const std::string &l : Lines(RunLogctl({"cat", "--json", "--file", ring}).out))
          if (ParseJson(l).value("msg", "") == msg) return true;
        return false;
      },
      kHang, Ms(20));
}

TEST(TextFields, SyslogStructuredDataBecomesFields) {
  TempDir dir;
  const std::string sock = dir / "syslog.sock";
  Daemon d(dir, {"--syslog-socket", sock});
  ASSERT_TRUE(d.Start()) << d.Stderr();
  // RFC 5424's own example, plus escapes, a second element, a repeated
  // parameter (the first stays), a name that is no field name ('+') and a
  // nil SD in a second datagram.
  const std::string sd =
      "[exampleSDID@32473 iut=\"3\" eventSource=\"Application\" eventID=\"1011\"]"
      "[examplePriority@32473 class=\"high\" q=\"a\\\"b\\\\c\\]d\\e\" class=\"low\" x+y=\"1\"]";
  ASSERT_TRUE(SendDatagram(sock,
                           "<165>1 2003-10-11T22:14:15.003Z mymachine.example.com evntslog"
                           " - ID47 " +
                               sd + " An application event log entry"));
  ASSERT_TRUE(SendDatagram(sock, "<165>1 - host app - - - no structured data"));
  ASSERT_TRUE(WaitMsg(d.ring, "no structured data"));
  Client c(d.socket);
  auto st = c.Stats();
  EXPECT_EQ(st["text_field_names_refused"], 1u);  // x+y
  EXPECT_EQ(st["text_field_sites"], 1u);
  EXPECT_EQ(st["text_fields_fallback"], 0u);

  auto recs = Json(d.ring, {"cat"});
  ASSERT_EQ(recs.size(), 2u);
  const json &r = recs[0];
  EXPECT_EQ(r["msg"], "An application event log entry");  // the message as before
  EXPECT_EQ(r["fmt"], "%s%.0s%.0s%.0s%.0s");
  EXPECT_EQ(r["file"], "syslog:rfc5424");
  EXPECT_EQ(r["syslog"]["sd"], sd);  // the raw SD as it came
  EXPECT_EQ(r["syslog"]["msgid"], "ID47");
  const json want = {{"exampleSDID@32473.iut", "3"},
                     {"exampleSDID@32473.eventSource", "Application"},
                     {"exampleSDID@32473.eventID", "1011"},
                     {"examplePriority@32473.class", "high"},
                     {"examplePriority@32473.q", "a\"b\\c]d\\e"}};
  EXPECT_EQ(r["fields"], want) << r.dump();
  EXPECT_FALSE(recs[1].contains("fields")) << recs[1].dump();

  auto m = Json(d.ring, {"cat", "exampleSDID@32473.iut=3"});
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(m[0]["msg"], "An application event log entry");
  EXPECT_TRUE(Json(d.ring, {"cat", "exampleSDID@32473.iut=4"}).empty());
  Result f = RunLogctl({"cat", "-F", "examplePriority@32473.q", "--file", d.ring});
  EXPECT_EQ(f.status, 0) << f.err;
  EXPECT_EQ(f.out, "a\"b\\c]d\\e\n");
  EXPECT_EQ(d.Stop(), 0) << d.Stderr();
}

TEST(TextFields, KernelDictionaryBecomesFields) {
  TempDir dir;
  const std::string fifo = dir / "kmsg";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0) << strerror(errno);
  // Held open for writing all along, so the daemon's reader never sees EOF.
  int w = open(fifo.c_str(), O_RDWR | O_CLOEXEC);
  ASSERT_GE(w, 0) << strerror(errno);
  Daemon d(dir, {}, "[kernel]\nread = \"yes\"\ndevice = \"" + fifo + "\"\n");
  ASSERT_TRUE(d.Start()) << d.Stderr();
  // One record per write, each read before the next is written (a FIFO
  // hands out what is there, as one read).
  const std::string rec =
      "6,100,5000,-;usb 1-1: new device\n SUBSYSTEM=usb\n DEVICE=c189:1\n"
      " NAME=a\\x20b\n _HOSTILE=x\n";
  ASSERT_EQ(write(w, rec.data(), rec.size()), ssize_t(rec.size()));
  ASSERT_TRUE(WaitMsg(d.ring, "usb 1-1: new device"));
  const std::string plain = "6,101,6000,-;no dictionary\n";
  ASSERT_EQ(write(w, plain.data(), plain.size()), ssize_t(plain.size()));
  ASSERT_TRUE(WaitMsg(d.ring, "no dictionary"));
  close(w);

  auto m = Json(d.ring, {"cat", "SUBSYSTEM=usb"});
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(m[0]["msg"], "usb 1-1: new device");
  EXPECT_EQ(m[0]["kernel"]["seq"], "100");  // the kernel's object as before
  EXPECT_EQ(m[0]["kernel"]["dict"], "SUBSYSTEM=usb\nDEVICE=c189:1\nNAME=a\\x20b\n_HOSTILE=x");
  const json want = {{"SUBSYSTEM", "usb"}, {"DEVICE", "c189:1"}, {"NAME", "a b"}};
  EXPECT_EQ(m[0]["fields"], want) << m[0].dump();
  EXPECT_EQ(Json(d.ring, {"cat", "-k", "DEVICE=c189:1"}).size(), 1u);
  // A trusted name from the dictionary is no field: _HOSTILE matches nothing.
  Result bad = RunLogctl({"cat", "_HOSTILE=x", "--file", d.ring});
  EXPECT_EQ(bad.status, 2) << bad.err;
  Client c(d.socket);
  EXPECT_EQ(c.Stats()["text_field_names_refused"], 1u);
  EXPECT_EQ(d.Stop(), 0) << d.Stderr();
}

class SendSetTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(d_.Start()) << d_.Stderr(); }
  TempDir dir_;
  Daemon d_{dir_};
};

TEST_F(SendSetTest, LinesCarryTheFields) {
  Result r =
      RunLogctl({"send", "--socket", d_.socket, "--set", "user=alice", "--set", "req=7", "hello"});
  ASSERT_EQ(r.status, 0) << r.err;
  SpawnOptions in;
  in.stdin_data = "one\ntwo\n";
  r = RunLogctl({"send", "--socket", d_.socket, "--set", "user=bob", "--set", "empty="}, in);
  ASSERT_EQ(r.status, 0) << r.err;
  ASSERT_EQ(RunLogctl({"send", "--socket", d_.socket, "no fields"}).status, 0);

  auto m = Json(d_.ring, {"cat", "user=alice"});
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(m[0]["msg"], "hello");
  EXPECT_EQ(m[0]["file"], "text");
  EXPECT_EQ(m[0]["fmt"], "%s");
  EXPECT_EQ(m[0]["fields"], (json{{"user", "alice"}, {"req", "7"}})) << m[0].dump();
  auto bob = Json(d_.ring, {"cat", "user=bob"});
  ASSERT_EQ(bob.size(), 2u);
  EXPECT_EQ(bob[1]["fields"], (json{{"user", "bob"}, {"empty", ""}}));
  Result f = RunLogctl({"cat", "-F", "user", "--file", d_.ring});
  EXPECT_EQ(f.status, 0) << f.err;
  EXPECT_EQ(f.out, "alice\nbob\n");
  auto all = Json(d_.ring, {"cat"});
  ASSERT_EQ(all.size(), 4u);
  EXPECT_FALSE(all[3].contains("fields"));
  Client c(d_.socket);
  auto st = c.Stats();
  EXPECT_EQ(st["text_field_sites"], 2u);  // two name sets
  EXPECT_EQ(st["text_fields_refused"], 0u);
}

TEST_F(SendSetTest, TrustedAndBadNamesAreUsageErrors) {
  for (const char *bad : {"_PID=1", "-x=1", "a b=1", "=v"}) {
    Result r = RunLogctl({"send", "--socket", d_.socket, "--set", bad, "x"});
    EXPECT_EQ(r.status, 2) << bad << ": " << r.err;
    std::string name(bad, std::strchr(bad, '=') - bad);
    EXPECT_NE(r.err.find("'" + name + "'"), std::string::npos) << r.err;
  }
  Result r = RunLogctl({"send", "--socket", d_.socket, "--set", "novalue", "x"});
  EXPECT_EQ(r.status, 2) << r.err;
  r = RunLogctl({"send", "--socket", d_.socket, "--set", "a=1", "--set", "a=2", "x"});
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_TRUE(Json(d_.ring, {"cat"}).empty());  // nothing was sent
}

// The hello of a text stream with a field list, built by hand.
std::string FieldsHello(const std::vector<std::pair<std::string, std::string>> &fields) {
  std::string list;
  auto put = [&list](uint64_t v) {
    uint8_t b[LS_VARINT_MAX];
    list.append(reinterpret_cast<const char *>(b), ls_put_varint(b, v));
  };
  put(fields.size());
  for (const auto &[k, v] : fields) {
    put(k.size());
    list += k;
    put(v.size());
    list += v;
  }
  ls_hello h = {};
  h.version = 1;
  h.flags = ls_hello_text_flags(6, 1, LS_HELLO_STREAM_TEXT, 0) | LS_HELLO_CONFIRM | LS_HELLO_FIELDS;
  h.app = "hand";
  h.app_len = 4;
  h.fields = reinterpret_cast<const uint8_t *>(list.data());
  h.fields_len = list.size();
  std::string buf(64 + list.size(), '\0');
  ptrdiff_t n = ls_hello_encode(reinterpret_cast<uint8_t *>(buf.data()), buf.size(), &h);
  EXPECT_GT(n, 0);
  buf.resize(size_t(std::max<ptrdiff_t>(n, 0)));
  return buf;
}

TEST_F(SendSetTest, TheDaemonRefusesATrustedNameFromAClient) {
  for (const auto &fields : std::vector<std::vector<std::pair<std::string, std::string>>>{
           {{"ok", "1"}, {"_PID", "1"}}, {{"a", "1"}, {"a", "2"}}, {{"x y", "1"}}}) {
    Client c(d_.socket);
    ASSERT_TRUE(c.Send(FieldsHello(fields)));
    auto f = c.ReadFrame();
    ASSERT_TRUE(f);
    EXPECT_EQ(f->first, LS_F_REFUSE) << fields[fields.size() - 1].first;
    EXPECT_NE(f->second.find("text stream refused"), std::string::npos) << f->second;
    EXPECT_FALSE(c.ReadFrame());  // then closed
  }
  Client s(d_.socket);
  auto st = s.Stats();
  EXPECT_EQ(st["text_fields_refused"], 3u);
  EXPECT_EQ(st["err_bad_hello"], 3u);
  // A good list is taken: the confirmation, then lines.
  Client ok(d_.socket);
  ASSERT_TRUE(ok.Send(FieldsHello({{"k", "v"}}) + "line\n"));
  auto f = ok.ReadFrame();
  ASSERT_TRUE(f);
  EXPECT_EQ(f->first, LS_F_STATS);
  shutdown(ok.fd(), SHUT_WR);
  auto ack = ok.ReadStats();
  EXPECT_EQ(ack["lines"], 1u);
  EXPECT_EQ(ack["lines_without_fields"], 0u);
  EXPECT_EQ(Json(d_.ring, {"cat", "k=v"}).size(), 1u);
}

// A daemon that closes the connection at a HELLO with the flag (as one
// from before fields on text streams does): send --set says why and fails.
TEST(SendSetOldDaemon, ClosedAtHelloIsAClearError) {
  TempDir dir;
  const std::string sock = dir / "old.sock";
  int l = ListenUnix(sock);
  ASSERT_GE(l, 0);
  Subprocess p(LogctlPath(), {"send", "--socket", sock, "--set", "user=alice", "x"});
  int c = accept4(l, nullptr, nullptr, SOCK_CLOEXEC);
  ASSERT_GE(c, 0);
  char buf[512];
  ASSERT_GT(read(c, buf, sizeof buf), 0);  // the HELLO
  close(c);                                // unanswered, as err_bad_hello
  ProcResult r = p.Finish(kHang);
  close(l);
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_NE(r.err.find("older than fields on text streams"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace logsink::test
