// shm_test.cc: shared buffers (PROTOCOL.md, "Shared buffers") against the
// real logsinkd: a client written from PROTOCOL.md gets its region, stages
// records in it, sends some of them, and its process ends (exits, or is
// SIGKILLed): the daemon stores the rest exactly once; a client that
// closes and lives on keeps them. Then every way a client can lie
// through its region: the daemon stays up, another client's records stay
// intact, each lie is counted.
#include "logsink/proto/shm.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "common/seed.h"
#include "common/shm_client.h"
#include "daemon/as_user.h"
#include "daemon/harness.h"

namespace logsink::test {
namespace {

constexpr uint64_t kT0 = 1700000000000000000ull;
// Small slots, so a test fills and wraps them quickly.
const char *kToml =
    "[limits]\nshm_slots = 4\nshm_slot_bytes = \"4KiB\"\nshm_sites_bytes = \"4KiB\"\n";

// RECORDS_AT of slot up to end: records of thread tid.
bool SendAt(ShmClient &c, uint32_t slot, uint64_t end, uint64_t tid, const std::vector<Rec> &recs) {
  return c.SendAt(slot, end, RecordsPayload(tid, recs));
}

std::string IntArg(int64_t v) { return EncodeArgs({Arg::I(v)}); }

// Records of app `app` in the ring, by their first int argument.
std::vector<int64_t> IntsOf(const std::vector<OwnedRecord> &recs, const std::string &app) {
  std::vector<int64_t> out;
  for (const auto &r : recs) {
    if (r.app != app || r.dropped()) continue;
    uint64_t v = 0;
    const auto *p = reinterpret_cast<const uint8_t *>(r.args.data());
    if (ls_get_varint(p, p + r.args.size(), &v) <= 0) continue;
    out.push_back(ls_unzigzag(v));
  }
  return out;
}

std::map<std::string, uint64_t> StatsOf(Daemon &d) {
  Client s(d.socket);
  return s.Stats();
}

// Waits until the daemon has stored `n` records from regions in all.
bool WaitShmRecords(Daemon &d, uint64_t n) {
  return WaitUntil([&] { return StatsOf(d)["shm_records"] >= n; });
}

// Runs `body` in a child process that then exits (its stream ends, and
// its process is gone: the daemon reads its region). The child's exit
// status: 0 when body returned, 1 when one of its checks failed.
int InChild(const std::function<bool()> &body) {
  const pid_t pid = fork();
  if (pid == 0) _exit(body() ? 0 : 1);
  int status = -1;
  if (pid < 0 || waitpid(pid, &status, 0) != pid) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// What HELLO v2 with SHM gets: WELCOME with SHM, then SHM with the geometry
// configured and a sealed memfd of exactly the region's size that nobody
// can grow or shrink.
TEST(SharedBuffers, TheRegionIsSealedAndSizedAsTheFrameSays) {
  TempDir dir;
  Daemon d(dir, {}, kToml);
  ASSERT_TRUE(d.Start()) << d.Stderr();
  ShmClient c(d.socket);
  ASSERT_TRUE(c.Open("sealed")) << d.Stderr();
  EXPECT_EQ(c.geom().slots, 4u);
  EXPECT_EQ(c.geom().slot_bytes, 4096u);
  EXPECT_EQ(c.geom().sites_bytes, 4096u);
  const int seals = fcntl(c.region_fd(), F_GET_SEALS);
  EXPECT_EQ(seals & (F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL),
            F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL);
  EXPECT_LT(ftruncate(c.region_fd(), 4096), 0);
  EXPECT_LT(ftruncate(c.region_fd(), 1 << 24), 0);
  struct stat st;
  ASSERT_EQ(fstat(c.region_fd(), &st), 0);
  EXPECT_EQ(uint64_t(st.st_size), ls_shm_region_bytes(4, 4096, 4096));
  EXPECT_EQ(fcntl(c.region_fd(), F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
  EXPECT_EQ(StatsOf(d)["shm_regions"], 1u);
}

// Records sent in RECORDS_AT are stored once; what was staged after the
// last RECORDS_AT of each slot is stored by the daemon when the stream
// ends, in order, with the slot's tid; a site that only the site log
// names (never interned on the socket) is known; nothing is stored twice.
TEST(SharedBuffers, WhatWasNotSentLandsOnceWhenTheProcessEnds) {
  TempDir dir;
  Daemon d(dir, {}, kToml);
  ASSERT_TRUE(d.Start()) << d.Stderr();
  ASSERT_EQ(InChild([&] {
              ShmClient c(d.socket);
              if (!c.Open("ends") || !c.Send(Intern(1, 6, 10, "n=%d", "ends.c"))) return false;
              c.LogSite(Intern(1, 6, 10, "n=%d", "ends.c"));
              c.LogSite(Intern(2, 4, 20, "late n=%d", "ends.c"));  // never sent on the socket
              c.SetTid(0, 101);
              c.SetTid(1, 102);
              // Slot 0: 300 records (they wrap its 4 KiB data), the first
              // 200 sent as the slot fills. Slot 1: 150 records, none sent,
              // the last 50 of site 2.
              std::vector<Rec> sent;
              for (int i = 0; i < 200; i++) {
                const uint64_t end = c.Stage(0, 1, kT0 + uint64_t(i), IntArg(i));
                sent.push_back({1, kT0 + uint64_t(i), {Arg::I(i)}});
                if (sent.size() == 50) {
                  if (!SendAt(c, 0, end, 101, sent)) return false;
                  sent.clear();
                }
              }
              for (int i = 200; i < 300; i++) c.Stage(0, 1, kT0 + uint64_t(i), IntArg(i));
              for (int i = 0; i < 150; i++)
                c.Stage(1, i < 100 ? 1 : 2, kT0 + 1000 + uint64_t(i), IntArg(1000 + i));
              return true;
            }),
            0);
  ASSERT_TRUE(WaitShmRecords(d, 250)) << d.Stderr();
  ASSERT_TRUE(WaitUntil([&] { return IntsOf(ReadRing(d.ring), "ends").size() >= 450; }));
  const auto recs = ReadRing(d.ring);
  std::vector<int64_t> slot0, slot1;
  for (const auto &r : recs) {
    if (r.app != "ends") continue;
    uint64_t v = 0;
    const auto *p = reinterpret_cast<const uint8_t *>(r.args.data());
    ASSERT_GT(ls_get_varint(p, p + r.args.size(), &v), 0);
    const int64_t n = ls_unzigzag(v);
    if (n < 1000) {
      EXPECT_EQ(r.tid, 101u);
      EXPECT_EQ(r.fmt, "n=%d");
      slot0.push_back(n);
    } else {
      EXPECT_EQ(r.tid, 102u);
      EXPECT_EQ(r.fmt, n < 1100 ? "n=%d" : "late n=%d") << n;
      EXPECT_EQ(r.ts_ns, kT0 + uint64_t(n));
      slot1.push_back(n);
    }
  }
  ASSERT_EQ(slot0.size(), 300u);
  ASSERT_EQ(slot1.size(), 150u);
  for (int i = 0; i < 300; i++) EXPECT_EQ(slot0[size_t(i)], i);
  for (int i = 0; i < 150; i++) EXPECT_EQ(slot1[size_t(i)], 1000 + i);
  auto st = StatsOf(d);
  EXPECT_EQ(st["shm_drains"], 1u);
  EXPECT_EQ(st["shm_records"], 250u);
  EXPECT_EQ(st["shm_torn"] + st["shm_head_backwards"] + st["shm_head_lapped"] + st["shm_log_bad"],
            0u);
  for (const auto &[name, v] : st)
    if (name.rfind("err_", 0) == 0) {
      EXPECT_EQ(v, 0u) << name;
    }
}

// The case the region exists for: a process stages records, sends none,
// and is SIGKILLed. Every record lands, 1,000 of 1,000.
TEST(SharedBuffers, ARecordStagedBeforeASigkillLands) {
  TempDir dir;
  Daemon d(dir, {}, "[limits]\nshm_slots = 2\nshm_slot_bytes = \"64KiB\"\n");
  ASSERT_TRUE(d.Start()) << d.Stderr();
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ShmClient c(d.socket);
    if (!c.Open("killed")) _exit(2);
    if (!c.Send(Intern(1, 6, 1, "n=%d", "killed.c"))) _exit(3);
    c.LogSite(Intern(1, 6, 1, "n=%d", "killed.c"));
    c.SetTid(0, uint64_t(getpid()));
    for (int i = 0; i < 1000; i++) c.Stage(0, 1, kT0 + uint64_t(i), IntArg(i));
    raise(SIGKILL);
    _exit(4);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << status;
  ASSERT_TRUE(WaitShmRecords(d, 1000)) << d.Stderr();
  std::vector<int64_t> got;
  ASSERT_TRUE(WaitUntil([&] { return (got = IntsOf(ReadRing(d.ring), "killed")).size() >= 1000; }));
  ASSERT_EQ(got.size(), 1000u);
  for (int i = 0; i < 1000; i++) EXPECT_EQ(got[size_t(i)], i);
}

// A client that ends a connection and lives on lets what it staged go
// (`released`) before it closes, and sends it on its next connection: the
// daemon does not read that region (shm_kept), so each record is stored
// once, even when the process exits right after (the reconnect of a short
// program). A stream that ends without letting go (the process was
// killed, or exec'd) is read. One that ends with everything sent is just
// let go.
TEST(SharedBuffers, ARegionLetGoIsNotReadAndEachRecordIsStoredOnce) {
  TempDir dir;
  Daemon d(dir, {}, kToml);
  ASSERT_TRUE(d.Start()) << d.Stderr();
  ASSERT_EQ(InChild([&] {
              ShmClient c1(d.socket);
              if (!c1.Open("reconnect") || !c1.Send(Intern(1, 6, 1, "n=%d", "r.c"))) return false;
              std::vector<Rec> again;
              for (int i = 0; i < 10; i++) {
                c1.Stage(0, 1, kT0 + uint64_t(i), IntArg(i));
                again.push_back({1, kT0 + uint64_t(i), {Arg::I(i)}});
              }
              c1.Release();
              c1.End();
              ShmClient c2(d.socket);  // the next connection gets them
              return c2.Open("reconnect") && c2.Send(Intern(1, 6, 1, "n=%d", "r.c")) &&
                     c2.Send(Records(5, again));
            }),
            0);
  ASSERT_EQ(InChild([&] {
              ShmClient c(d.socket);  // ends without letting go: read
              if (!c.Open("kept-not") || !c.Send(Intern(1, 6, 1, "n=%d", "k.c"))) return false;
              c.Stage(0, 1, kT0, IntArg(7));
              return true;
            }),
            0);
  {
    ShmClient c(d.socket);  // everything sent
    ASSERT_TRUE(c.Open("all-sent"));
    ASSERT_TRUE(c.Send(Intern(1, 6, 1, "n=%d", "a.c")));
    const uint64_t end = c.Stage(0, 1, kT0, IntArg(3));
    ASSERT_TRUE(SendAt(c, 0, end, 5, {{1, kT0, {Arg::I(3)}}}));
    c.End();
  }
  ASSERT_TRUE(WaitUntil([&] {
    const auto recs = ReadRing(d.ring);
    return IntsOf(recs, "all-sent").size() == 1 && IntsOf(recs, "kept-not").size() == 1 &&
           IntsOf(recs, "reconnect").size() >= 10;
  })) << d.Stderr();
  const auto recs = ReadRing(d.ring);
  EXPECT_EQ(IntsOf(recs, "reconnect"), (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}));
  EXPECT_EQ(IntsOf(recs, "kept-not"), (std::vector<int64_t>{7}));
  auto st = StatsOf(d);
  EXPECT_EQ(st["shm_kept"], 1u);
  EXPECT_EQ(st["shm_drains"], 1u);
  EXPECT_EQ(st["shm_records"], 1u);
}

// The daemon reads a region without making its pages: a region nobody
// wrote has no page allocated after the daemon looked at every slot's
// head at the end of its stream (a client keeping the descriptor could
// otherwise keep pages the daemon made, charged to the daemon, past the
// connection's charge).
TEST(SharedBuffers, TheDaemonMakesNoPageOfARegion) {
  TempDir dir;
  Daemon d(dir, {}, "[limits]\nshm_slots = 64\nshm_slot_bytes = \"4KiB\"\n");
  ASSERT_TRUE(d.Start()) << d.Stderr();
  ShmClient c(d.socket);
  ASSERT_TRUE(c.Open("untouched"));
  const int kept = dup(c.region_fd());
  ASSERT_GE(kept, 0);
  c.End();  // the daemon looks at the 64 heads
  ASSERT_TRUE(WaitUntil([&] { return StatsOf(d)["connections_current"] == 1; }));
  struct stat st;
  ASSERT_EQ(fstat(kept, &st), 0);
  EXPECT_EQ(st.st_blocks, 0);
  close(kept);
}

// A staged record whose RECORDS form no frame of max_frame can carry is
// refused alone (err_bad_record): the records before and after it land.
TEST(SharedBuffers, ARecordTooBigForAFrameCostsOnlyItself) {
  TempDir dir;
  Daemon d(dir, {}, "[limits]\nshm_slots = 2\nshm_slot_bytes = \"16KiB\"\nmax_frame = \"4KiB\"\n");
  ASSERT_TRUE(d.Start()) << d.Stderr();
  ASSERT_EQ(InChild([&] {
              ShmClient c(d.socket);
              if (!c.Open("big") || !c.Send(Intern(1, 6, 1, "n=%d", "b.c")) ||
                  !c.Send(Intern(2, 6, 1, "s=%s", "b.c")))
                return false;
              c.Stage(0, 1, kT0, IntArg(0));
              c.Stage(0, 2, kT0, EncodeArgs({Arg::S(std::string(6000, 'x'))}));
              c.Stage(0, 1, kT0, IntArg(1));
              c.Stage(1, 1, kT0, IntArg(2));
              return true;
            }),
            0);
  ASSERT_TRUE(WaitShmRecords(d, 3)) << d.Stderr();
  EXPECT_EQ(IntsOf(ReadRing(d.ring), "big"), (std::vector<int64_t>{0, 1, 2}));
  auto st = StatsOf(d);
  EXPECT_EQ(st["err_bad_record"], 1u);
  EXPECT_EQ(st["shm_torn"], 0u);
  EXPECT_NE(d.Stderr().find("does not fit max_frame (4096); record refused"), std::string::npos)
      << d.Stderr();
}

// Regions have a bound of their own (shm_max_memory, and per uid
// shm_max_memory_per_uid): past it, or with no slots configured, WELCOME
// has no SHM (counted) and the connection works as without the
// capability. Regions never take the bound of everyone's connection
// state: with the regions' bound full, an ordinary client still sends a
// frame of 200 KB, and memory_used does not count the regions.
TEST(SharedBuffers, RegionsHaveTheirOwnMemoryBound) {
  for (const char *toml :
       {"[limits]\nshm_slot_bytes = \"16MiB\"\nshm_slots = 2\nshm_max_memory = \"40MiB\"\n",
        "[limits]\nshm_slots = 0\n"}) {
    SCOPED_TRACE(toml);
    TempDir dir;
    Daemon d(dir, {}, toml);
    ASSERT_TRUE(d.Start()) << d.Stderr();
    ShmClient c(d.socket);
    uint32_t caps = ~0u;
    // A region of 2 x 16 MiB fits 40 MiB once. Past that, or with slots
    // 0, the answer has no SHM.
    const bool off = std::strstr(toml, "shm_slots = 0") != nullptr;
    ShmClient first(d.socket);
    if (!off) {
      ASSERT_TRUE(first.Open("first"));
    }
    EXPECT_FALSE(c.Open("third", &caps));
    EXPECT_EQ(caps & LS_CAP_SHM, 0u);
    auto st = StatsOf(d);
    EXPECT_EQ(st["shm_refused"], off ? 0u : 1u);
    EXPECT_EQ(st["shm_memory_used"], off ? 0u : ls_shm_region_bytes(2, 16u << 20, 64u << 10));
    EXPECT_LT(st["memory_used"], 1u << 20);
    // The connection goes on as without the capability, with a frame of
    // 200 KB (1,000 records of a 200-byte string).
    std::vector<Rec> recs;
    for (int i = 0; i < 1000; i++) recs.push_back({2, kT0, {Arg::S(std::string(200, 'y'))}});
    ASSERT_TRUE(c.Send(Intern(1, 6, 1, "n=%d", "x.c") + Intern(2, 6, 1, "s=%s", "x.c") +
                       Records(7, {{1, kT0, {Arg::I(5)}}}) + Records(7, recs)));
    c.End();
    ASSERT_TRUE(WaitUntil([&] { return IntsOf(ReadRing(d.ring), "third").size() == 1001; }));
    EXPECT_EQ(StatsOf(d)["err_memory"], 0u);
  }
}

// shm_max_memory_per_uid bounds one uid's regions, root's excepted: a
// user whose region fits once is refused a second while the first lasts
// (counted), and root is not.
TEST(SharedBuffers, OneUidsRegionsHaveItsShareAndRootHasNone) {
  TempDir dir;
  ASSERT_EQ(chmod(dir.path().c_str(), 0711), 0);  // the user may reach the socket
  Daemon d(dir, {},
           "[limits]\nshm_slot_bytes = \"16MiB\"\nshm_slots = 2\n"
           "shm_max_memory_per_uid = \"40MiB\"\n");
  ASSERT_TRUE(d.Start()) << d.Stderr();
  auto user = RunAsUser(65534, [&] {
    ShmClient first(d.socket), second(d.socket);
    uint32_t caps = ~0u;
    const bool one = first.Open("user1");
    const bool two = second.Open("user2", &caps);
    return std::string(one ? "first" : "-") + (two || (caps & LS_CAP_SHM) ? " second" : " -");
  });
  ASSERT_TRUE(user.has_value());
  EXPECT_EQ(*user, "first -");
  EXPECT_EQ(StatsOf(d)["shm_refused"], 1u);
  ShmClient a(d.socket), b(d.socket);
  EXPECT_TRUE(a.Open("root1"));
  EXPECT_TRUE(b.Open("root2")) << "root has no share per uid";
  EXPECT_EQ(StatsOf(d)["shm_refused"], 1u);
}

// Every lie a region can tell, each in its own connection, with an honest
// client beside them: the daemon stays up, the honest client's records all
// land, and each lie is counted where PROTOCOL.md says.
TEST(SharedBuffers, ALyingRegionCostsOnlyItsOwnClient) {
  TempDir dir;
  Daemon d(dir, {}, kToml);
  ASSERT_TRUE(d.Start()) << d.Stderr();
  ShmClient honest(d.socket);
  ASSERT_TRUE(honest.Open("honest"));
  ASSERT_TRUE(honest.Send(Intern(1, 6, 1, "n=%d", "h.c")));
  honest.LogSite(Intern(1, 6, 1, "n=%d", "h.c"));

  // Each liar is a process that lies and exits.
  auto liar = [&](const char *app, const std::function<void(ShmClient &)> &lie) {
    EXPECT_EQ(InChild([&] {
                ShmClient c(d.socket);
                if (!c.Open(app) || !c.Send(Intern(1, 6, 1, "n=%d", "l.c"))) return false;
                lie(c);
                return !::testing::Test::HasFailure();
              }),
              0)
        << app;
  };
  // The honest client sends everything it stages.
  int honest_n = 0;
  auto honest_more = [&] {
    std::vector<Rec> recs;
    uint64_t end = 0;
    for (int i = 0; i < 20; i++, honest_n++) {
      end = honest.Stage(0, 1, kT0 + uint64_t(honest_n), IntArg(honest_n));
      recs.push_back({1, kT0 + uint64_t(honest_n), {Arg::I(honest_n)}});
    }
    ASSERT_TRUE(SendAt(honest, 0, end, 9, recs));
  };
  honest_more();
  // A head before the slot's last RECORDS_AT position.
  liar("backwards", [&](ShmClient &c) {
    const uint64_t end = c.Stage(0, 1, kT0, IntArg(1));
    ASSERT_TRUE(SendAt(c, 0, end, 1, {{1, kT0, {Arg::I(1)}}}));
    c.Publish(0, end - 8);
  });
  honest_more();
  // A head more than a slot past it.
  liar("lapped", [&](ShmClient &c) {
    c.Stage(0, 1, kT0, IntArg(1));
    c.Publish(0, 3 * 4096 + 24);
  });
  // A record whose length runs past head, after two good ones.
  liar("torn", [&](ShmClient &c) {
    c.Stage(0, 1, kT0, IntArg(1));
    const uint64_t end = c.Stage(0, 1, kT0 + 1, IntArg(2));
    ls_put_u32(c.SlotData(0) + end, 4000);  // 4000 bytes of args: past head
    c.Publish(0, end + 64);
  });
  honest_more();
  // Arguments that do not parse by the signature, and an unknown site
  // between two good records: refused alone, its neighbours land.
  liar("badargs", [&](ShmClient &c) { c.Stage(0, 1, kT0, std::string("\xff\xff\xff", 3)); });
  liar("unknown", [&](ShmClient &c) {
    c.Stage(0, 1, kT0, IntArg(1));
    c.Stage(0, 77, kT0 + 1, IntArg(2));
    c.Stage(0, 1, kT0 + 2, IntArg(3));
  });
  // A site log longer than its area, and one holding another frame type
  // (each with a record staged, so the region is read; the record's site
  // was interned on the socket: it lands).
  liar("loglen", [&](ShmClient &c) {
    c.Stage(0, 1, kT0, IntArg(1));
    __atomic_store_n(c.Word(0), 1ull << 40, __ATOMIC_RELEASE);
  });
  liar("logtype", [&](ShmClient &c) {
    c.Stage(0, 1, kT0, IntArg(1));
    c.LogSite(StatsReq());
  });
  // A pad whose unused rest head does not cover.
  liar("pads", [&](ShmClient &c) {
    ls_put_u32(c.SlotData(0), LS_SHM_PAD);
    c.Publish(0, 8);
  });
  honest_more();
  // RECORDS_AT naming a slot the region does not have, or moving back.
  liar("slot9", [&](ShmClient &c) { ASSERT_TRUE(SendAt(c, 9, 0, 1, {})); });
  liar("endback", [&](ShmClient &c) {
    ASSERT_TRUE(SendAt(c, 1, 64, 1, {}));
    ASSERT_TRUE(SendAt(c, 1, 8, 1, {}));
  });
  // RECORDS_AT without the capability.
  {
    Client c(d.socket);
    ASSERT_TRUE(c.Send(Hello(1, "nocap")));
    std::string p;
    PutVarint(&p, 0);
    PutVarint(&p, 8);
    p += RecordsPayload(1, {});
    ASSERT_TRUE(c.Send(Frame(LS_F_RECORDS_AT, p)));
    EXPECT_TRUE(c.WaitClosed());
  }
  honest_more();
  ASSERT_TRUE(WaitUntil([&] {
    auto st = StatsOf(d);
    return st["shm_drains"] >= 8 && st["err_bad_payload"] >= 3;
  })) << d.Stderr();
  honest.End();
  ASSERT_TRUE(WaitUntil([&] { return IntsOf(ReadRing(d.ring), "honest").size() >= 100; }));
  auto st = StatsOf(d);
  EXPECT_EQ(st["shm_head_backwards"], 1u);
  EXPECT_EQ(st["shm_head_lapped"], 1u);
  EXPECT_EQ(st["shm_torn"], 2u);  // torn, pads
  EXPECT_EQ(st["shm_log_bad"], 2u);
  EXPECT_EQ(st["err_bad_record"], 1u);
  EXPECT_EQ(st["err_unknown_site"], 1u);
  EXPECT_EQ(st["err_bad_payload"], 3u);
  // torn's two good records, the log liars' one each and unknown's two
  // neighbours, nothing else.
  EXPECT_EQ(st["shm_records"], 6u);
  EXPECT_EQ(st["shm_kept"], 0u);
  const auto recs = ReadRing(d.ring);
  const auto h = IntsOf(recs, "honest");
  ASSERT_EQ(h.size(), size_t(honest_n));
  for (int i = 0; i < honest_n; i++) EXPECT_EQ(h[size_t(i)], i);
  EXPECT_EQ(IntsOf(recs, "torn"), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(IntsOf(recs, "loglen"), (std::vector<int64_t>{1}));
  EXPECT_EQ(IntsOf(recs, "logtype"), (std::vector<int64_t>{1}));
  EXPECT_EQ(IntsOf(recs, "backwards"), (std::vector<int64_t>{1}));  // the one it sent
  EXPECT_EQ(IntsOf(recs, "unknown"), (std::vector<int64_t>{1, 3}));
  EXPECT_NE(d.Stderr().find("that was not interned; record refused"), std::string::npos)
      << d.Stderr();
  for (const char *app : {"lapped", "badargs", "pads"})
    EXPECT_TRUE(IntsOf(recs, app).empty()) << app;
  EXPECT_EQ(d.Stop(), 0) << d.Stderr();  // up all along (and clean under the sanitizers)
}

// A region scribbled on at random while the daemon reads it: the client
// process stages records and exits, and a process it forked (holding the
// mapping, not the connection) keeps writing random words, heads and log
// lengths into the region until the daemon has read it. The daemon reads
// copies only: it stays up, and an honest client beside it loses nothing.
// Randomized: the seed is printed.
TEST(SharedBuffers, RandomScribblingDuringTheDrainHurtsNobodyElse) {
  const uint64_t seed = TestSeed();
  // The scribblers' parents exit first: they become ours to wait for.
  ASSERT_EQ(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
  TempDir dir;
  Daemon d(dir, {}, kToml);
  ASSERT_TRUE(d.Start()) << d.Stderr();
  ShmClient honest(d.socket);
  ASSERT_TRUE(honest.Open("honest"));
  ASSERT_TRUE(honest.Send(Intern(1, 6, 1, "n=%d", "h.c")));
  std::mt19937_64 rng(seed);
  for (int round = 0; round < 8; round++) {
    int go[2], told[2];
    ASSERT_EQ(pipe(go), 0);
    ASSERT_EQ(pipe(told), 0);
    const uint64_t child_seed = rng();
    ASSERT_EQ(InChild([&] {
                ShmClient c(d.socket);
                if (!c.Open("scribbler") || !c.Send(Intern(1, 6, 1, "n=%d", "s.c"))) return false;
                c.LogSite(Intern(2, 6, 1, "m=%d", "s.c"));
                std::mt19937_64 r(child_seed);
                for (uint32_t s = 0; s < c.geom().slots; s++)
                  for (int i = 0; i < 100; i++) c.Stage(s, 1 + uint32_t(r() % 2), kT0, IntArg(i));
                const pid_t pid = fork();
                if (pid < 0) return false;
                if (pid > 0) return write(told[1], &pid, sizeof pid) == sizeof pid;
                // The scribbler: no connection, the mapping; until go's EOF.
                close(c.fd());
                close(honest.fd());
                close(go[1]);
                fcntl(go[0], F_SETFL, O_NONBLOCK);
                const uint64_t bytes =
                    ls_shm_region_bytes(c.geom().slots, c.geom().slot_bytes, c.geom().sites_bytes);
                char b;
                while (read(go[0], &b, 1) < 0) {
                  const uint64_t what = r() % 4;
                  if (what == 0)
                    c.Publish(uint32_t(r() % c.geom().slots), r() % (1u << 16));
                  else if (what == 1)
                    __atomic_store_n(c.Word(0), r() % 8192, __ATOMIC_RELEASE);
                  else
                    *c.Word((r() % (bytes / 8)) * 8) = r();
                }
                _exit(0);
              }),
              0);
    close(go[0]);
    close(told[1]);
    pid_t scribbler = -1;
    ASSERT_EQ(read(told[0], &scribbler, sizeof scribbler), ssize_t(sizeof scribbler));
    close(told[0]);
    std::vector<Rec> recs;
    for (int i = 0; i < 50; i++) {
      honest.Stage(0, 1, kT0, IntArg(round * 50 + i));
      recs.push_back({1, kT0, {Arg::I(round * 50 + i)}});
    }
    ASSERT_TRUE(SendAt(honest, 0, honest.pos(0), 9, recs));
    // Its stream has ended once only the honest client and the asking one
    // are connected (read, or let go if the scribbler set `released`).
    ASSERT_TRUE(WaitUntil([&] { return StatsOf(d)["connections_current"] == 2; })) << d.Stderr();
    close(go[1]);  // the scribbler stops
    int status = 0;
    ASSERT_EQ(waitpid(scribbler, &status, 0), scribbler);
  }
  honest.End();
  std::vector<int64_t> h;
  ASSERT_TRUE(WaitUntil([&] { return (h = IntsOf(ReadRing(d.ring), "honest")).size() >= 400; }));
  ASSERT_EQ(h.size(), 400u);
  for (int i = 0; i < 400; i++) EXPECT_EQ(h[size_t(i)], i);
  EXPECT_FALSE(StatsOf(d).empty());  // still serving
  EXPECT_EQ(d.Stop(), 0) << d.Stderr();
}

// A connection with a region holds two descriptors in the daemon: it
// raises its soft descriptor limit to the hard one (at most 65536) at
// start, so a soft limit of 256 does not halve its connections.
TEST(SharedBuffers, TheDaemonRaisesItsSoftDescriptorLimit) {
  TempDir dir;
  Daemon d(dir);
  d.child_setup = [] {
    rlimit r{256, 4096};
    setrlimit(RLIMIT_NOFILE, &r);
  };
  ASSERT_TRUE(d.Start()) << d.Stderr();
  const std::string limits = ReadFile("/proc/" + std::to_string(d.pid()) + "/limits");
  const size_t at = limits.find("Max open files");
  ASSERT_NE(at, std::string::npos);
  std::istringstream line(limits.substr(at + std::strlen("Max open files")));
  uint64_t soft = 0, hard = 0;
  line >> soft >> hard;
  EXPECT_EQ(soft, 4096u);
  EXPECT_EQ(hard, 4096u);
}

// At a stop the EOF is the daemon's own (it shuts every connection's
// receiving side): a live client's staged records stay its own, to send
// to the next daemon, so the region is not read (nothing stored twice).
TEST(SharedBuffers, AStopDoesNotReadTheRegionsOfLiveClients) {
  TempDir dir;
  Daemon d(dir, {}, kToml);
  ASSERT_TRUE(d.Start()) << d.Stderr();
  ShmClient c(d.socket);
  ASSERT_TRUE(c.Open("live"));
  ASSERT_TRUE(c.Send(Intern(1, 6, 1, "n=%d", "l.c")));
  const uint64_t end = c.Stage(0, 1, kT0, IntArg(1));
  ASSERT_TRUE(SendAt(c, 0, end, 5, {{1, kT0, {Arg::I(1)}}}));
  for (int i = 2; i <= 5; i++) c.Stage(0, 1, kT0, IntArg(i));  // staged, not sent
  ASSERT_TRUE(WaitUntil([&] { return StatsOf(d)["next_record_seq"] >= 1; }));
  EXPECT_EQ(d.Stop(), 0) << d.Stderr();
  EXPECT_EQ(IntsOf(ReadRing(d.ring), "live"), (std::vector<int64_t>{1}));
  EXPECT_EQ(d.Stderr().find("shm_drains="), std::string::npos) << d.Stderr();
  EXPECT_NE(d.Stderr().find("shm_regions=1"), std::string::npos) << d.Stderr();
}

}  // namespace
}  // namespace logsink::test
