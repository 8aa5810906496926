// text_kind_claim_test.cc: a native client's site file that names a
// free-text kind (proto/text_kinds.h: "kernel", "syslog:raw", "text", ...)
// made readers take its records for the kernel's or the daemon's own free
// text: `logctl -k` listed an unprivileged client's `kernel` site of line 0
// and JSON showed "facility":"kern". Only root keeps such a file name; anyone
// else's is stored as "./NAME" (PROTOCOL.md, INTERN), and a file name cut so
// an inline site fits a block is never cut to such a name. Through the real
// daemon and logctl.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <nlohmann/json.hpp>

#include "as_user.h"
#include "harness.h"

namespace logsink::test {
namespace {

using json = nlohmann::json;
constexpr uint32_t kUser = 65534;
constexpr uint64_t kT0 = 1700000000000000000ull;

std::string SendAll(const std::string &socket, const std::string &bytes) {
  Client c(socket);
  return c.ok() && c.Send(bytes) && c.WaitRead() ? "ok" : "failed";
}

// logctl ARGS --file RING -o json, as root; one object per line.
std::vector<json> LogctlJson(const std::string &ring, std::vector<std::string> args) {
  args.insert(args.end(), {"--file", ring, "-o", "json", "--no-pager"});
  ProcResult r = RunProcess(BinPath("logctl"), args, {}, kHang);
  EXPECT_EQ(r.status, 0) << r.err;
  std::vector<json> out;
  size_t at = 0;
  while (at < r.out.size()) {
    size_t nl = r.out.find('\n', at);
    if (nl == std::string::npos) nl = r.out.size();
    out.push_back(json::parse(r.out.substr(at, nl - at), nullptr, false));
    EXPECT_FALSE(out.back().is_discarded()) << r.out.substr(at, nl - at);
    at = nl + 1;
  }
  return out;
}

const std::string kKernelFmt = "%s%.0s%.0s%.0s";

TEST(TextKindClaim, OnlyRootsNativeSitesMayNameAFreeTextKind) {
  ASSERT_EQ(geteuid(), 0u) << "the suite runs as root, to act as another user";
  TempDir dir;
  ASSERT_EQ(chmod(dir.path().c_str(), 0711), 0);
  Daemon d(dir);
  ASSERT_TRUE(d.Start()) << d.Stderr();
  auto sent = RunAsUser(kUser, [&] {
    return SendAll(
        d.socket,
        Hello(1, "kernel") + Intern(1, 0, 0, kKernelFmt, "kernel") +
            Intern(2, 3, 0, "%s", "syslog:raw") + Intern(3, 6, 0, "%s", "text") +
            Intern(4, 6, 0, "%s", "kernel.c") +
            Records(1,
                    {Rec(1, kT0, {Arg::S("user panic"), Arg::S("1"), Arg::S("2"), Arg::S("")}),
                     Rec(2, kT0 + 1, {Arg::S("user raw")}), Rec(3, kT0 + 2, {Arg::S("user text")}),
                     Rec(4, kT0 + 3, {Arg::S("user file")})}));
  });
  ASSERT_TRUE(sent.has_value());
  ASSERT_EQ(*sent, "ok");
  ASSERT_EQ(
      SendAll(d.socket,
              Hello(1, "kernel") + Intern(1, 2, 0, kKernelFmt, "kernel") +
                  Records(1, {Rec(1, kT0 + 4,
                                  {Arg::S("root crit"), Arg::S("7"), Arg::S("8"), Arg::S("")})})),
      "ok");
  {
    // The three renamed (kernel, syslog:raw, text), not kernel.c nor root's.
    Client c(d.socket);
    EXPECT_EQ(c.Stats()["sites_renamed"], 3u);
  }
  EXPECT_EQ(d.Stop(), 0) << d.Stderr();

  // -k: the kernel's records only; root's native site may say so.
  std::vector<json> k = LogctlJson(d.ring, {"cat", "-k"});
  ASSERT_EQ(k.size(), 1u);
  EXPECT_EQ(k[0]["msg"], "root crit");
  EXPECT_EQ(k[0]["facility"], "kern");

  std::vector<json> all = LogctlJson(d.ring, {"cat"});
  std::map<std::string, json> by_msg;
  for (const json &j : all) by_msg[j["msg"].get<std::string>()] = j;
  ASSERT_EQ(by_msg.size(), 5u);
  const std::map<std::string, std::string> files = {{"user panic", "./kernel"},
                                                    {"user raw", "./syslog:raw"},
                                                    {"user text", "./text"},
                                                    {"user file", "kernel.c"}};
  for (const auto &[msg, file] : files) {
    SCOPED_TRACE(msg);
    const json &j = by_msg[msg];
    EXPECT_EQ(j["uid"], kUser);
    EXPECT_EQ(j["file"], file);
    EXPECT_EQ(j["line"], 0);
    EXPECT_FALSE(j.contains("facility")) << j.dump();
    EXPECT_FALSE(j.contains("kernel")) << j.dump();
  }
  EXPECT_EQ(by_msg["root crit"]["file"], "kernel");
}

// With the string table full, a site is stored inline and its file name is
// cut so that a record fits an empty block. "kernel.c..." cut to "kernel"
// would read as the kernel's: it is cut one byte shorter.
TEST(TextKindClaim, ACutFileNameNeverBecomesAFreeTextKind) {
  ASSERT_EQ(geteuid(), 0u);
  TempDir dir;
  ASSERT_EQ(chmod(dir.path().c_str(), 0711), 0);
  Daemon d(dir, {"--size", "256KiB", "--block-size", "4KiB"});  // a 4 KiB string table
  ASSERT_TRUE(d.Start()) << d.Stderr();
  ASSERT_EQ(SendAll(d.socket, Hello(1, "filler") +
                                  Intern(1, 6, 1, std::string(4000, 'f') + " %d", "a.c") +
                                  Records(1, {Rec(1, kT0, {Arg::I(0)})})),
            "ok");
  // How much of a 1 KiB file name a 3,003-byte format leaves, for this
  // user's source; then a format longer by the difference leaves 6 bytes.
  auto cut_len = [&](size_t fmt_len, const std::string &tag) -> size_t {
    for (const OwnedRecord &r : ReadRing(d.ring))
      if (r.app == tag && r.fmt.size() == fmt_len) return r.file.size();
    return 0;
  };
  const std::string probe_file(1024, 'p');
  auto sent = RunAsUser(kUser, [&] {
    return SendAll(d.socket, Hello(1, "cutter") +
                                 Intern(1, 6, 2, std::string(3000, 'm') + " %d", probe_file) +
                                 Records(1, {Rec(1, kT0 + 1, {Arg::I(1)})}));
  });
  ASSERT_TRUE(sent.has_value() && *sent == "ok");
  size_t first = 0;
  ASSERT_TRUE(WaitUntil([&] { return (first = cut_len(3003, "cutter")) > 0; }));
  ASSERT_GT(first, 6u);
  ASSERT_LT(first, probe_file.size()) << "the setup must cut the file name";
  // Formats around the estimate, each with a probe and a claim of the same
  // size (a file name's cut depends on its length only); the one whose
  // probe keeps exactly 6 bytes shows what "kernel..." becomes.
  const std::string claim = "kernel" + std::string(1018, 'p');
  std::string frames = Hello(1, "cutter");
  std::vector<Rec> recs;
  std::vector<std::string> fmts;
  for (int delta = -3; delta <= 3; delta++) {
    const size_t len = size_t(int64_t(3003 + first - 6) + delta);
    fmts.push_back(std::string(len - 3, 'm') + " %d");
    const uint64_t site = 2 * fmts.size() - 1;
    frames +=
        Intern(site, 6, 3, fmts.back(), probe_file) + Intern(site + 1, 0, 0, fmts.back(), claim);
    recs.push_back(Rec(site, kT0 + 2, {Arg::I(2)}));
    recs.push_back(Rec(site + 1, kT0 + 3, {Arg::I(3)}));
  }
  frames += Records(1, recs);
  sent = RunAsUser(kUser, [&] { return SendAll(d.socket, frames); });
  ASSERT_TRUE(sent.has_value() && *sent == "ok");
  EXPECT_EQ(d.Stop(), 0) << d.Stderr();
  bool found = false;
  const std::vector<OwnedRecord> ring = ReadRing(d.ring);
  for (const std::string &fmt : fmts) {
    std::string probe, claimed;
    for (const OwnedRecord &r : ring) {
      if (r.app != "cutter" || r.fmt != fmt) continue;
      (r.line == 3 ? probe : claimed) = r.file;
    }
    if (probe != "pppppp") continue;
    found = true;
    EXPECT_EQ(claimed, "kerne") << "a claim cut where a probe keeps 6 bytes";
  }
  ASSERT_TRUE(found) << "no format left exactly 6 bytes of the file name (first cut " << first
                     << ")";
  EXPECT_EQ(LogctlJson(d.ring, {"cat", "-k"}).size(), 0u);
}

}  // namespace
}  // namespace logsink::test
