// logctl_peruser_test.cc: reading one's own records through
// the daemon (PROTOCOL.md, "Reading through the daemon"). The real logsinkd
// writes a root-only ring (0640 root:root); users 65534 and 65533 write
// through liblogsink (logsink_hello), the syslog socket (logger) and text
// streams (logctl send, logctl run), then run plain logctl: each sees exactly the
// records of their own uid, in every mode (cat, tail, --json, -f, cursors),
// and root reads everything from the file. The daemon's bounds: a reader
// that never reads is lapped, not buffered, while a writer's records land;
// the reader limits refuse with a reason; the per-turn block budget yields.
#include <sys/socket.h>
#include <sys/un.h>

#include <set>

#include "cli_util.h"
#include "common/daemon_process.h"
#include "common/ring_check.h"
#include "common/unix_socket.h"
#include "logsink/proto/frame.h"
#include "logsink/proto/read.h"

namespace logsink::test {
namespace {

constexpr uint32_t kUserA = 65534, kUserB = 65533;

// A daemon in a directory other users may pass through (0711): its socket is
// 0666 as always, its ring 0640 root:root, which they may not read.
struct PerUser {
  explicit PerUser(std::vector<std::string> extra = {}, std::string toml = "")
      : d(dir, With(extra), std::move(toml)) {
    EXPECT_EQ(chmod(dir.path().c_str(), 0711), 0);
  }
  std::vector<std::string> With(std::vector<std::string> extra) {
    extra.insert(extra.begin(), {"--syslog-socket", dir / "log"});
    return extra;
  }
  uint64_t Counter(const std::string &name) {
    Result r = RunLogctl({"stats", "--socket", d.socket, "--json"});
    json v = ParseJson(Lines(r.out).empty() ? "" : Lines(r.out)[0]);
    if (v.is_discarded() || !v["daemon"]["counters"].contains(name)) {
      ADD_FAILURE() << "no counter " << name << ": " << r.out << r.err;
      return 0;
    }
    return v["daemon"]["counters"][name].get<uint64_t>();
  }
  Result As(uint32_t uid, const std::vector<std::string> &args, std::string in = "") {
    SpawnOptions o;
    o.as_uid = uid;
    o.stdin_data = std::move(in);
    o.env = {{"LOGSINK_SOCKET", d.socket}};
    return RunLogctl(args, o);
  }
  // Waits until the ring holds n records (read as root, from the file).
  bool WaitRecords(size_t n) {
    return WaitUntil([&] { return ReadRing(d.ring).size() >= n; }, kHang, Ms(10));
  }
  TempDir dir;
  Daemon d;
};

// Runs a program as uid (and gid) uid, with LOGSINK_SOCKET set.
Result RunAs(uint32_t uid, const std::string &path, const std::vector<std::string> &args,
             const std::string &socket, const StagedBinary *staged = nullptr) {
  SubprocessOptions o;
  o.child_setup = [uid, socket, staged] {
    setenv("LOGSINK_SOCKET", socket.c_str(), 1);
    if (staged) staged->SetLibraryPath();
    if (setgroups(0, nullptr) != 0 || setgid(uid) != 0 || setuid(uid) != 0) _exit(126);
  };
  Subprocess p(path, args, o);
  return p.Finish();
}

std::vector<json> JsonLines(const std::string &out) {
  std::vector<json> v;
  for (const std::string &l : Lines(out)) {
    v.push_back(ParseJson(l));
    EXPECT_FALSE(v.back().is_discarded()) << l;
  }
  return v;
}

// Every way in, for two users; each reads exactly their own records.
TEST(LogctlPerUserTest, EachUserReadsExactlyTheirOwnRecords) {
  ASSERT_EQ(geteuid(), 0u) << "the suite runs as root, to act as two other users";
  PerUser s;
  ASSERT_TRUE(s.d.Start()) << s.d.Stderr();
  struct stat st;
  ASSERT_EQ(stat(s.d.ring.c_str(), &st), 0);
  ASSERT_EQ(st.st_mode & 0007, 0u) << "the ring must not be readable by others";

  // A: liblogsink (5 records), a text stream, a syslog datagram.
  StagedBinary hello(BinPath("logsink_hello"));
  ASSERT_TRUE(hello.ok()) << hello.error();
  Result r = RunAs(kUserA, hello.path(), {}, s.d.socket, &hello);
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  ASSERT_TRUE(s.WaitRecords(5));
  r = s.As(kUserA, {"send", "A-text-line"});
  ASSERT_EQ(r.status, 0) << r.err;
  r = RunAs(kUserA, "/usr/bin/logger", {"-u", s.dir / "log", "A-syslog-line"}, s.d.socket);
  ASSERT_EQ(r.status, 0) << r.err;
  ASSERT_TRUE(s.WaitRecords(7));
  r = s.As(kUserA, {"run", "--", "/bin/echo", "A-run-line"});  // a relayed stream
  ASSERT_EQ(r.status, 0) << r.err;
  ASSERT_TRUE(s.WaitRecords(8));
  // B, and root, after A: the newest records of the ring are not A's.
  r = s.As(kUserB, {"send", "B-text-line"});
  ASSERT_EQ(r.status, 0) << r.err;
  r = RunAs(kUserB, "/usr/bin/logger", {"-u", s.dir / "log", "B-syslog-line"}, s.d.socket);
  ASSERT_EQ(r.status, 0) << r.err;
  ASSERT_EQ(RunLogctl({"send", "--socket", s.d.socket, "root-line"}).status, 0);
  ASSERT_TRUE(s.WaitRecords(11));

  const std::vector<std::string> a_msgs = {"hello 0 from liblogsink", "hello 1 from liblogsink",
                                           "hello 2 from liblogsink", "pi is about 3.142",
                                           "text built at run time",  "A-text-line",
                                           "A-syslog-line",           "A-run-line"};
  // cat --json: A's seven, in order, nothing else.
  r = s.As(kUserA, {"cat", "-o", "json"});
  ASSERT_EQ(r.status, 0) << r.err;
  std::vector<json> got = JsonLines(r.out);
  ASSERT_EQ(got.size(), a_msgs.size()) << r.out;
  for (size_t i = 0; i < got.size(); i++) {
    EXPECT_EQ(got[i]["msg"], a_msgs[i]);
    EXPECT_EQ(got[i]["uid"], kUserA);
  }
  // The default output, and a filter, render as from the file.
  r = s.As(kUserA, {"cat"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("+0000 hello"), std::string::npos) << r.out;  // comm may be gone
  EXPECT_NE(r.out.find("<warning> pi is about 3.142"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("B-"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("root-line"), std::string::npos) << r.out;
  r = s.As(kUserA, {"cat", "-p", "warning", "-o", "json"});
  got = JsonLines(r.out);
  ASSERT_EQ(got.size(), 1u) << r.out;
  EXPECT_EQ(got[0]["msg"], "pi is about 3.142");
  // tail -n 2: A's last two, though the ring's last three are others'.
  r = s.As(kUserA, {"tail", "-n", "2", "-o", "json"});
  got = JsonLines(r.out);
  ASSERT_EQ(got.size(), 2u) << r.out;
  EXPECT_EQ(got[0]["msg"], "A-syslog-line");
  EXPECT_EQ(got[1]["msg"], "A-run-line");
  // -r: newest first.
  r = s.As(kUserA, {"cat", "-r", "-o", "json"});
  got = JsonLines(r.out);
  ASSERT_EQ(got.size(), a_msgs.size()) << r.out;
  EXPECT_EQ(got.front()["msg"], "A-run-line");
  EXPECT_EQ(got.back()["msg"], "hello 0 from liblogsink");
  // B: their two.
  r = s.As(kUserB, {"cat", "-o", "json"});
  ASSERT_EQ(r.status, 0) << r.err;
  got = JsonLines(r.out);
  ASSERT_EQ(got.size(), 2u) << r.out;
  EXPECT_EQ(got[0]["msg"], "B-text-line");
  EXPECT_EQ(got[1]["msg"], "B-syslog-line");
  // sites through the daemon (no site numbers there): A's eight records by
  // site, hello's native ones by file and line.
  r = s.As(kUserA, {"sites", "--json"});
  ASSERT_EQ(r.status, 0) << r.err;
  got = JsonLines(r.out);
  uint64_t in_sites = 0, native = 0;
  for (const json &j : got) {
    in_sites += j["records"].get<uint64_t>();
    if (j.contains("text")) continue;
    native += j["records"].get<uint64_t>();
    if (j["file"] == "") continue;  // ls_log_text: a site without a file
    EXPECT_GT(j["line"].get<uint32_t>(), 0u) << j;
  }
  EXPECT_EQ(in_sites, a_msgs.size()) << r.out;
  EXPECT_EQ(native, 5u) << r.out;
  // root: everything, from the file.
  const uint64_t served = s.Counter("readers_total");
  SpawnOptions root;
  root.env = {{"LOGSINK_SOCKET", s.d.socket}};
  r = RunLogctl({"cat", "-o", "json"}, root);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(JsonLines(r.out).size(), 11u) << r.out;
  EXPECT_EQ(s.Counter("readers_total"), served) << "root reads the file, not through the daemon";
  EXPECT_GE(served, 4u);
  EXPECT_GE(s.Counter("read_records"), 8u + 1 + 2 + 8 + 2);
  // boots need the file: said clearly.
  r = s.As(kUserA, {"cat", "--list-boots"});
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("need the ring file"), std::string::npos) << r.err;
}

// Cursors mean the same through the daemon; -f pushes new own records only.
TEST(LogctlPerUserTest, CursorsAndFollowThroughTheDaemon) {
  ASSERT_EQ(geteuid(), 0u);
  PerUser s;
  ASSERT_TRUE(s.d.Start()) << s.d.Stderr();
  ASSERT_EQ(s.As(kUserA, {"send", "A-one"}).status, 0);
  ASSERT_EQ(s.As(kUserB, {"send", "B-one"}).status, 0);
  Result r = s.As(kUserA, {"cat", "--show-cursor"});
  ASSERT_EQ(r.status, 0) << r.err;
  std::vector<std::string> lines = Lines(r.out);
  ASSERT_EQ(lines.size(), 2u) << r.out;
  EXPECT_NE(lines[0].find("A-one"), std::string::npos);
  ASSERT_EQ(lines[1].rfind("-- cursor: ls1-", 0), 0u) << lines[1];
  const std::string cursor = lines[1].substr(std::strlen("-- cursor: "));
  // The same cursor as a reader of the file would print for that record.
  std::vector<OwnedRecord> all = ReadRing(s.d.ring);
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(cursor.substr(cursor.rfind('-') + 1), "0");

  SpawnOptions fo;
  fo.as_uid = kUserA;
  fo.env = {{"LOGSINK_SOCKET", s.d.socket}};
  Proc follow({"tail", "-f", "-n", "0", "-o", "json"}, fo);
  ASSERT_TRUE(WaitUntil([&] { return s.Counter("readers_current") == 1; }, kHang, Ms(10)));
  ASSERT_EQ(s.As(kUserA, {"send", "A-two"}).status, 0);
  ASSERT_EQ(s.As(kUserB, {"send", "B-two"}).status, 0);
  ASSERT_EQ(s.As(kUserA, {"send", "A-three"}).status, 0);
  std::string line;
  ASSERT_TRUE(follow.ReadLine(&line, 10000));
  EXPECT_EQ(ParseJson(line)["msg"], "A-two") << line;
  ASSERT_TRUE(follow.ReadLine(&line, 10000));  // B-two came between, and is not shown
  EXPECT_EQ(ParseJson(line)["msg"], "A-three") << line;
  follow.Signal(SIGTERM);
  Result fr = follow.Finish();
  EXPECT_EQ(fr.out, "") << fr.out;

  // After the cursor: A's two newer records, not B's.
  r = s.As(kUserA, {"cat", "--after-cursor", cursor, "-o", "json"});
  ASSERT_EQ(r.status, 0) << r.err;
  std::vector<json> got = JsonLines(r.out);
  ASSERT_EQ(got.size(), 2u) << r.out;
  EXPECT_EQ(got[0]["msg"], "A-two");
  EXPECT_EQ(got[1]["msg"], "A-three");
}

// A follower through the daemon outlives the daemon's restart: it reads on
// from the record after the last one it passed, so the record written
// while it was reconnecting is shown and none twice, and it says so on
// stderr; a daemon back with another ring ends it before any of that
// ring's records. (Before: it exited with "the daemon ended the read".)
TEST(LogctlPerUserTest, AFollowerReadsOnAcrossARestart) {
  ASSERT_EQ(geteuid(), 0u);
  PerUser s;
  ASSERT_TRUE(s.d.Start()) << s.d.Stderr();
  ASSERT_EQ(s.As(kUserA, {"send", "A-one"}).status, 0);
  SpawnOptions fo;
  fo.as_uid = kUserA;
  fo.env = {{"LOGSINK_SOCKET", s.d.socket}};
  Proc follow({"tail", "-f", "-n", "0", "-o", "json"}, fo);
  ASSERT_TRUE(WaitUntil([&] { return s.Counter("readers_current") == 1; }, kHang, Ms(10)));
  ASSERT_EQ(s.As(kUserA, {"send", "A-two"}).status, 0);
  std::string line;
  ASSERT_TRUE(follow.ReadLine(&line, 10000));
  EXPECT_EQ(ParseJson(line)["msg"], "A-two") << line;
  ASSERT_EQ(s.d.Stop(), 0) << s.d.Stderr();
  ASSERT_TRUE(s.d.Start()) << s.d.Stderr();
  ASSERT_EQ(s.As(kUserB, {"send", "B-three"}).status, 0);
  ASSERT_EQ(s.As(kUserA, {"send", "A-three"}).status, 0);
  ASSERT_TRUE(follow.ReadLine(&line, 10000)) << "the follower did not read on";
  EXPECT_EQ(ParseJson(line)["msg"], "A-three") << line;
  ASSERT_TRUE(WaitUntil([&] { return s.Counter("readers_current") == 1; }, kHang, Ms(10)));
  ASSERT_EQ(s.As(kUserA, {"send", "A-four"}).status, 0);
  ASSERT_TRUE(follow.ReadLine(&line, 10000));
  EXPECT_EQ(ParseJson(line)["msg"], "A-four") << line;
  // Back with another ring (the file removed while it was down): the
  // follow ends with exit 1, none of the new ring's records shown.
  ASSERT_EQ(s.d.Stop(), 0) << s.d.Stderr();
  ASSERT_EQ(unlink(s.d.ring.c_str()), 0);
  ASSERT_TRUE(s.d.Start()) << s.d.Stderr();
  ASSERT_EQ(s.As(kUserA, {"send", "A-five"}).status, 0);
  Result fr = follow.Finish();
  EXPECT_EQ(fr.status, 1) << fr.err;
  EXPECT_EQ(fr.out, "") << "nothing more, nothing twice, nothing of another ring: " << fr.out;
  EXPECT_NE(fr.err.find("following on when it is back"), std::string::npos) << fr.err;
  EXPECT_NE(fr.err.find("reading on from record"), std::string::npos) << fr.err;
  EXPECT_NE(fr.err.find("another ring"), std::string::npos) << fr.err;
}

// A read that never reads its socket: the daemon queues at most a chunk
// for it (its socket holds the rest) while the writer goes on (every line
// is stored), and when it reads on it is told what it missed (lapped).
TEST(LogctlPerUserTest, SlowReaderIsLappedNotBuffered) {
  ASSERT_EQ(geteuid(), 0u);
  PerUser s({"--size", "4MiB"},
            "[ring]\ncompression = \"none\"\n[retention]\nkept_share = 0.0\nerror_share = 0.0\n"
            "[limits]\nread_chunk = \"4KiB\"\n");
  ASSERT_TRUE(s.d.Start()) << s.d.Stderr();
  ASSERT_EQ(RunLogctl({"send", "--socket", s.d.socket, "first"}).status, 0);

  // The slow reader: root, reading root's own records, following.
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(fd, 0);
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  std::snprintf(a.sun_path, sizeof a.sun_path, "%s", s.d.socket.c_str());
  ASSERT_EQ(connect(fd, reinterpret_cast<sockaddr *>(&a), sizeof a), 0);
  ls_read_req req = {LS_READ_OLDEST, 0, LS_READ_FOLLOW};
  uint8_t frame[64];
  ptrdiff_t n = ls_read_req_encode(frame, sizeof frame, &req);
  ASSERT_GT(n, 0);
  ASSERT_EQ(send(fd, frame, size_t(n), MSG_NOSIGNAL), n);
  ASSERT_TRUE(WaitUntil([&] { return s.Counter("readers_current") == 1; }, kHang, Ms(10)));

  auto lines = [](int from, int count) {
    std::string text;
    for (int i = from; i < from + count; i++)
      text += "line " + std::to_string(i) + std::string(140, 'x') + "\n";
    return text;
  };
  SpawnOptions in;
  // 1.5 MB: more than the reader's socket holds; the daemon stops at it.
  in.stdin_data = lines(0, 10000);
  Result r = RunLogctl({"send", "--socket", s.d.socket}, in);
  ASSERT_EQ(r.status, 0) << r.err;
  ASSERT_TRUE(WaitUntil([&] { return s.Counter("read_socket_waits") >= 1; }, kHang, Ms(10)));
  // 6 MB more: the 4 MiB ring wraps past the reader; the writer is not held.
  in.stdin_data = lines(10000, 40000);
  r = RunLogctl({"send", "--socket", s.d.socket}, in);
  ASSERT_EQ(r.status, 0) << r.err;
  ASSERT_TRUE(WaitUntil([&] { return s.Counter("records") >= 50001u; }));
  std::vector<OwnedRecord> ring = ReadRing(s.d.ring);
  ASSERT_FALSE(ring.empty());
  EXPECT_EQ(ring.back().seq, 50000u);   // the writer's last line landed
  EXPECT_GT(ring.front().seq, 10000u);  // and the reader's position is gone

  // What the daemon sent the reader is bounded by its socket's send buffer
  // (one chunk, doubled by the kernel) and one chunk queued, not by what was
  // written: 4 chunks and a record at most.
  const uint64_t sent = s.Counter("read_bytes");
  EXPECT_LE(sent, 4 * 4096 + 4096);
  EXPECT_EQ(s.Counter("read_lost"), 0u) << "not told before it reads on";

  // Reading on: a READ_LOST for the records overwritten meanwhile.
  std::vector<uint8_t> buf;
  uint64_t lost = 0, records = 0;
  const bool got_lost = WaitUntil(
      [&] {
        uint8_t tmp[65536];
        ssize_t k = recv(fd, tmp, sizeof tmp, MSG_DONTWAIT);
        if (k > 0) buf.insert(buf.end(), tmp, tmp + k);
        ls_frame f;
        ptrdiff_t used;
        size_t off = 0;
        while ((used = ls_frame_parse(buf.data() + off, buf.size() - off, 1u << 24, &f)) > 0) {
          off += size_t(used);
          if (f.type == LS_F_READ_RECORD) records++;
          uint64_t m;
          if (f.type == LS_F_READ_LOST && ls_read_lost_decode(f.payload, f.len, &m) == 0) lost += m;
        }
        buf.erase(buf.begin(), buf.begin() + std::ptrdiff_t(off));
        return lost > 0;
      },
      kHang, Ms(1));
  close(fd);
  EXPECT_TRUE(got_lost);
  EXPECT_GT(lost, 0u);
  EXPECT_GE(s.Counter("read_lost"), lost);
  EXPECT_GT(records, 0u);
}

// max_readers_per_uid refuses with its reason; read_blocks_per_turn yields
// and the read still returns every record; a bad READ_REQ is an error.
TEST(LogctlPerUserTest, ReaderLimits) {
  ASSERT_EQ(geteuid(), 0u);
  PerUser s({},
            "[ring]\ncompression = \"none\"\n"
            "[limits]\nmax_readers_per_uid = 1\nread_blocks_per_turn = 1\n");
  ASSERT_TRUE(s.d.Start()) << s.d.Stderr();
  std::string text;
  for (int i = 0; i < 3000; i++) text += "A line " + std::to_string(i) + "\n";
  ASSERT_EQ(s.As(kUserA, {"send"}, text).status, 0);
  ASSERT_EQ(s.As(kUserB, {"send", "B"}).status, 0);
  const std::vector<OwnedRecord> ring = ReadRing(s.d.ring);
  ASSERT_GT(ring.back().block_seq, ring.front().block_seq + 2) << "needs several blocks";

  Result r = s.As(kUserA, {"cat"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(Lines(r.out).size(), 3000u);
  EXPECT_GE(s.Counter("read_budget_yields"), 2u);

  SpawnOptions fo;
  fo.as_uid = kUserA;
  fo.env = {{"LOGSINK_SOCKET", s.d.socket}};
  Proc follow({"tail", "-f", "-n", "0"}, fo);
  ASSERT_TRUE(WaitUntil([&] { return s.Counter("readers_current") == 1; }, kHang, Ms(10)));
  r = s.As(kUserA, {"cat"});
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("uid 65534 holds max_readers_per_uid (1)"), std::string::npos) << r.err;
  EXPECT_EQ(s.Counter("readers_refused"), 1u);
  r = s.As(kUserB, {"cat"});  // another uid is not held back
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(Lines(r.out).size(), 1u) << r.out;
  follow.Signal(SIGTERM);
  follow.Finish();

  // A READ_REQ with an unknown flag closes the connection, counted.
  int fd = ConnectUnix(s.d.socket);
  ASSERT_GE(fd, 0);
  const uint8_t bad[] = {4, 0, 0, 0, LS_F_READ_REQ, LS_READ_OLDEST, 0, 4};
  ASSERT_EQ(send(fd, bad, sizeof bad, MSG_NOSIGNAL), ssize_t(sizeof bad));
  char c;
  EXPECT_EQ(recv(fd, &c, 1, 0), 0);  // closed, unanswered
  close(fd);
  EXPECT_EQ(s.Counter("err_bad_read"), 1u);
}

// READ_REQ LAST n walks back to the n-th record from the end within the same
// per-turn budget as reading (before: the whole walk in one turn, 852 ms on
// a 1 GiB ring for n = 2^62): with one block per turn, a read of the last
// records of every block yields once per block walked over, passes the
// blocks that hold none of the reader's records over by their summaries
// (before: decoded each, one per turn), and still returns exactly the
// reader's records; n beyond the ring reads the whole ring (and 2^62 ends:
// logctl's rounds of 4n records wrapped to 0 and read on forever).
TEST(LogctlPerUserTest, ALastReadWalksBackWithinTheTurnsBudget) {
  ASSERT_EQ(geteuid(), 0u);
  PerUser s({}, "[ring]\ncompression = \"none\"\n[limits]\nread_blocks_per_turn = 1\n");
  ASSERT_TRUE(s.d.Start()) << s.d.Stderr();
  ASSERT_EQ(s.As(kUserB, {"send", "B first"}).status, 0);
  std::string text;
  for (int i = 0; i < 3000; i++) text += "A line " + std::to_string(i) + "\n";
  ASSERT_EQ(s.As(kUserA, {"send"}, text).status, 0);
  ASSERT_EQ(s.As(kUserB, {"send", "B last"}).status, 0);
  const std::vector<OwnedRecord> ring = ReadRing(s.d.ring);
  const uint64_t blocks = ring.back().block_seq - ring.front().block_seq + 1;
  ASSERT_GE(blocks, 5u) << "needs several blocks";

  for (uint64_t n : {uint64_t(ring.size()), uint64_t(1) << 62}) {
    const uint64_t before = s.Counter("read_budget_yields");
    const uint64_t skipped = s.Counter("read_blocks_skipped");
    Result r = s.As(kUserB, {"tail", "-n", std::to_string(n)});
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(Lines(r.out).size(), 2u) << r.out;
    EXPECT_NE(r.out.find("B first"), std::string::npos) << r.out;
    // Walking back over blocks - 1 blocks yields blocks - 2 times (the
    // last step ends the walk); the blocks between B's first and last
    // record hold A's only.
    EXPECT_GE(s.Counter("read_budget_yields") - before, blocks - 2) << n;
    EXPECT_GE(s.Counter("read_blocks_skipped") - skipped, blocks - 2) << n;
  }
}

}  // namespace
}  // namespace logsink::test
