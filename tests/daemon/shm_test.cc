// shm_test.cc: shared buffers (PROTOCOL.md, "Shared buffers") against the
// real logsinkd: a client written from PROTOCOL.md gets its region, stages
// records in it, sends some of them, and ends (closes, or is SIGKILLed);
// the daemon stores the rest exactly once. Then every way a client can lie
// through its region: the daemon stays up, another client's records stay
// intact, each lie is counted.
#include "logsink/proto/shm.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "common/seed.h"
#include "daemon/harness.h"

namespace logsink::test {
namespace {

constexpr uint64_t kT0 = 1700000000000000000ull;
// Small slots, so a test fills and wraps them quickly.
const char *kToml =
    "[limits]\nshm_slots = 4\nshm_slot_bytes = \"4KiB\"\nshm_sites_bytes = \"4KiB\"\n";

// A client with the capability SHM, written from PROTOCOL.md: its region
// mapped writable, records staged and published as the document says.
class ShmClient {
 public:
  explicit ShmClient(const std::string &socket) : c_(socket) {}
  ~ShmClient() {
    if (base_) munmap(base_, bytes_);
    if (fd_ >= 0) close(fd_);
  }
  Client &conn() { return c_; }
  const ls_shm_geom &geom() const { return g_; }
  int region_fd() const { return fd_; }

  // HELLO v2 with SHM; true when WELCOME says SHM and the region came.
  bool Open(const std::string &app, uint32_t *caps = nullptr) {
    if (!c_.ok() || !c_.Send(Hello2(app, LS_CAP_SHM, ""))) return false;
    auto w = c_.ReadFrame();
    if (!w || w->first != LS_F_WELCOME) return false;
    ls_welcome wel;
    if (ls_welcome_decode(reinterpret_cast<const uint8_t *>(w->second.data()), w->second.size(),
                          &wel) < 0)
      return false;
    if (caps) *caps = wel.caps;
    if (!(wel.caps & LS_CAP_SHM)) return false;
    auto s = c_.ReadFrame();
    if (!s || s->first != LS_F_SHM ||
        ls_shm_decode(reinterpret_cast<const uint8_t *>(s->second.data()), s->second.size(), &g_) <
            0)
      return false;
    fd_ = c_.TakeFd();
    if (fd_ < 0) return false;
    bytes_ = ls_shm_region_bytes(g_.slots, g_.slot_bytes, g_.sites_bytes);
    void *m = mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, 0);
    if (m == MAP_FAILED) return false;
    base_ = static_cast<uint8_t *>(m);
    return true;
  }

  uint64_t *Word(uint64_t off) { return reinterpret_cast<uint64_t *>(base_ + off); }
  uint8_t *SlotData(uint32_t slot) {
    return base_ + ls_shm_slot_off(g_.sites_bytes, g_.slot_bytes, slot) + LS_SHM_SLOT_HDR;
  }
  uint64_t *Head(uint32_t slot) {
    return Word(ls_shm_slot_off(g_.sites_bytes, g_.slot_bytes, slot));
  }
  void SetTid(uint32_t slot, uint64_t tid) {
    *Word(ls_shm_slot_off(g_.sites_bytes, g_.slot_bytes, slot) + 8) = tid;
  }
  void Publish(uint32_t slot, uint64_t head) {
    __atomic_store_n(Head(slot), head, __ATOMIC_RELEASE);
  }

  // Appends a whole frame to the site log and publishes it.
  void LogSite(const std::string &intern_frame) {
    std::memcpy(base_ + LS_SHM_LOG_HDR + log_len_, intern_frame.data(), intern_frame.size());
    log_len_ += intern_frame.size();
    __atomic_store_n(Word(0), log_len_, __ATOMIC_RELEASE);
  }

  // Stages one record in slot (a pad first when it would not fit before
  // the data's end) and publishes it; returns its end position.
  uint64_t Stage(uint32_t slot, uint32_t site, uint64_t ts, const std::string &args) {
    uint64_t &pos = pos_[slot];
    const uint64_t size = ls_shm_rec_size(uint32_t(args.size()), 0);
    const uint64_t off = pos & (g_.slot_bytes - 1);
    if (g_.slot_bytes - off < size) {
      ls_put_u32(SlotData(slot) + off, LS_SHM_PAD);
      pos += g_.slot_bytes - off;
    }
    uint8_t *r = SlotData(slot) + (pos & (g_.slot_bytes - 1));
    std::memset(r, 0, size);
    ls_put_u32(r, uint32_t(args.size()));
    ls_put_u32(r + 4, site);
    ls_put_u64(r + 8, ts);
    std::memcpy(r + LS_SHM_REC_HDR, args.data(), args.size());
    pos += size;
    Publish(slot, pos);
    return pos;
  }
  uint64_t pos(uint32_t slot) { return pos_[slot]; }

  // RECORDS_AT of slot up to end.
  bool SendAt(uint32_t slot, uint64_t end, uint64_t tid, const std::vector<Rec> &recs) {
    std::string p;
    PutVarint(&p, slot);
    PutVarint(&p, end);
    p += RecordsPayload(tid, recs);
    return c_.Send(Frame(LS_F_RECORDS_AT, p));
  }

  // The client ends its stream (as an exiting process's close would).
  void End() {
    close(c_.fd());  // the Client's destructor closes it again: harmless EBADF
  }

 private:
  Client c_;
  ls_shm_geom g_{};
  int fd_ = -1;
  uint8_t *base_ = nullptr;
  uint64_t bytes_ = 0;
  uint64_t log_len_ = 0;
  std::map<uint32_t, uint64_t> pos_;
};

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
TEST(SharedBuffers, WhatWasNotSentLandsOnceWhenTheStreamEnds) {
  TempDir dir;
  Daemon d(dir, {}, kToml);
  ASSERT_TRUE(d.Start()) << d.Stderr();
  ShmClient c(d.socket);
  ASSERT_TRUE(c.Open("ends"));
  ASSERT_TRUE(c.conn().Send(Intern(1, 6, 10, "n=%d", "ends.c")));
  c.LogSite(Intern(1, 6, 10, "n=%d", "ends.c"));
  c.LogSite(Intern(2, 4, 20, "late n=%d", "ends.c"));  // never sent on the socket
  c.SetTid(0, 101);
  c.SetTid(1, 102);
  // Slot 0: 300 records (they wrap its 4 KiB data several times), the
  // first 200 sent. Slot 1: 150 records, none sent, the last 50 of site 2.
  std::vector<Rec> sent;
  uint64_t at = 0;
  for (int i = 0; i < 300; i++) {
    const uint64_t end = c.Stage(0, 1, kT0 + uint64_t(i), IntArg(i));
    if (i < 200) {
      sent.push_back({1, kT0 + uint64_t(i), {Arg::I(i)}});
      at = end;
    }
    if (sent.size() == 50) {  // frames as the slot fills: it wraps
      ASSERT_TRUE(c.SendAt(0, at, 101, sent));
      sent.clear();
    }
  }
  ASSERT_TRUE(sent.empty());
  for (int i = 0; i < 150; i++)
    c.Stage(1, i < 100 ? 1 : 2, kT0 + 1000 + uint64_t(i), IntArg(1000 + i));
  c.End();
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
    if (!c.conn().Send(Intern(1, 6, 1, "n=%d", "killed.c"))) _exit(3);
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

// No region when the uid's memory share cannot hold it, or none is
// configured: WELCOME without SHM, counted, and the connection works as
// without the capability.
TEST(SharedBuffers, NoRegionPastTheMemoryShareOrWhenOff) {
  for (const char *toml :
       {"[limits]\nshm_slot_bytes = \"16MiB\"\nshm_slots = 2\n", "[limits]\nshm_slots = 0\n"}) {
    SCOPED_TRACE(toml);
    TempDir dir;
    Daemon d(dir, {}, toml);
    ASSERT_TRUE(d.Start()) << d.Stderr();
    ShmClient c(d.socket);
    uint32_t caps = ~0u;
    // As uid 0 the share is max_memory (64 MiB): a region of 2 x 16 MiB
    // fits once. Past that, or with slots 0, the answer has no SHM.
    const bool off = std::strstr(toml, "shm_slots = 0") != nullptr;
    ShmClient first(d.socket);
    if (!off) {
      ASSERT_TRUE(first.Open("first"));
    }
    EXPECT_FALSE(c.Open("third", &caps));
    EXPECT_EQ(caps & LS_CAP_SHM, 0u);
    EXPECT_EQ(StatsOf(d)["shm_refused"], off ? 0u : 1u);
    // The connection goes on as without the capability.
    ASSERT_TRUE(
        c.conn().Send(Intern(1, 6, 1, "n=%d", "x.c") + Records(7, {{1, kT0, {Arg::I(5)}}})));
    c.End();
    ASSERT_TRUE(WaitUntil([&] { return IntsOf(ReadRing(d.ring), "third").size() == 1; }));
  }
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
  ASSERT_TRUE(honest.conn().Send(Intern(1, 6, 1, "n=%d", "h.c")));
  honest.LogSite(Intern(1, 6, 1, "n=%d", "h.c"));

  auto liar = [&](const char *app, const std::function<void(ShmClient &)> &lie) {
    ShmClient c(d.socket);
    ASSERT_TRUE(c.Open(app));
    ASSERT_TRUE(c.conn().Send(Intern(1, 6, 1, "n=%d", "l.c")));
    lie(c);
    c.End();
  };
  int honest_n = 0;
  auto honest_more = [&] {
    for (int i = 0; i < 20; i++, honest_n++)
      honest.Stage(0, 1, kT0 + uint64_t(honest_n), IntArg(honest_n));
  };
  honest_more();
  // A head before the slot's last RECORDS_AT position.
  liar("backwards", [&](ShmClient &c) {
    const uint64_t end = c.Stage(0, 1, kT0, IntArg(1));
    ASSERT_TRUE(c.SendAt(0, end, 1, {{1, kT0, {Arg::I(1)}}}));
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
  // Arguments that do not parse by the signature, and an unknown site.
  liar("badargs", [&](ShmClient &c) { c.Stage(0, 1, kT0, std::string("\xff\xff\xff", 3)); });
  liar("unknown", [&](ShmClient &c) { c.Stage(0, 77, kT0, IntArg(1)); });
  // A site log longer than its area, and one holding another frame type.
  liar("loglen", [&](ShmClient &c) { __atomic_store_n(c.Word(0), 1ull << 40, __ATOMIC_RELEASE); });
  liar("logtype", [&](ShmClient &c) { c.LogSite(StatsReq()); });
  // A pad whose unused rest head does not cover.
  liar("pads", [&](ShmClient &c) {
    ls_put_u32(c.SlotData(0), LS_SHM_PAD);
    c.Publish(0, 8);
  });
  honest_more();
  // RECORDS_AT naming a slot the region does not have, or moving back.
  liar("slot9", [&](ShmClient &c) { ASSERT_TRUE(c.SendAt(9, 0, 1, {})); });
  liar("endback", [&](ShmClient &c) {
    ASSERT_TRUE(c.SendAt(1, 64, 1, {}));
    ASSERT_TRUE(c.SendAt(1, 8, 1, {}));
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
  ASSERT_TRUE(WaitShmRecords(d, uint64_t(honest_n) + 2)) << d.Stderr();
  auto st = StatsOf(d);
  EXPECT_EQ(st["shm_head_backwards"], 1u);
  EXPECT_EQ(st["shm_head_lapped"], 1u);
  EXPECT_EQ(st["shm_torn"], 2u);  // torn, pads
  EXPECT_EQ(st["shm_log_bad"], 2u);
  EXPECT_EQ(st["err_bad_record"], 1u);
  EXPECT_EQ(st["err_unknown_site"], 1u);
  EXPECT_EQ(st["err_bad_payload"], 3u);
  // torn's two good records and every honest one, nothing else of the liars'.
  EXPECT_EQ(st["shm_records"], uint64_t(honest_n) + 2);
  const auto recs = ReadRing(d.ring);
  const auto h = IntsOf(recs, "honest");
  ASSERT_EQ(h.size(), size_t(honest_n));
  for (int i = 0; i < honest_n; i++) EXPECT_EQ(h[size_t(i)], i);
  EXPECT_EQ(IntsOf(recs, "torn"), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(IntsOf(recs, "backwards"), (std::vector<int64_t>{1}));  // the one it sent
  for (const char *app : {"lapped", "badargs", "unknown", "pads"})
    EXPECT_TRUE(IntsOf(recs, app).empty()) << app;
}

// A region scribbled on at random while the daemon reads it (a child
// process keeps writing random bytes, heads and log lengths into it after
// its connection ended): the daemon reads copies only, so it stays up and
// an honest client beside it loses nothing. Randomized: the seed is
// printed.
TEST(SharedBuffers, RandomScribblingDuringTheDrainHurtsNobodyElse) {
  const uint64_t seed = TestSeed();
  TempDir dir;
  Daemon d(dir, {}, kToml);
  ASSERT_TRUE(d.Start()) << d.Stderr();
  ShmClient honest(d.socket);
  ASSERT_TRUE(honest.Open("honest"));
  ASSERT_TRUE(honest.conn().Send(Intern(1, 6, 1, "n=%d", "h.c")));
  std::mt19937_64 rng(seed);
  for (int round = 0; round < 8; round++) {
    ShmClient c(d.socket);
    ASSERT_TRUE(c.Open("scribbler"));
    ASSERT_TRUE(c.conn().Send(Intern(1, 6, 1, "n=%d", "s.c")));
    c.LogSite(Intern(2, 6, 1, "m=%d", "s.c"));
    for (uint32_t s = 0; s < c.geom().slots; s++)
      for (int i = 0; i < 100; i++) c.Stage(s, 1 + uint32_t(rng() % 2), kT0, IntArg(i));
    int go[2];
    ASSERT_EQ(pipe(go), 0);
    const uint64_t child_seed = rng();
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {  // scribbles until the parent is done
      close(go[1]);
      close(c.conn().fd());  // the stream ends when the parent closes it
      close(honest.conn().fd());
      fcntl(go[0], F_SETFL, O_NONBLOCK);
      std::mt19937_64 r(child_seed);
      const uint64_t bytes =
          ls_shm_region_bytes(c.geom().slots, c.geom().slot_bytes, c.geom().sites_bytes);
      char b;
      while (read(go[0], &b, 1) < 0) {
        const uint64_t what = r() % 4;
        if (what == 0) {
          c.Publish(uint32_t(r() % c.geom().slots), r() % (1u << 16));
        } else if (what == 1) {
          __atomic_store_n(c.Word(0), r() % 8192, __ATOMIC_RELEASE);
        } else {
          const uint64_t off = (r() % (bytes / 8)) * 8;
          *c.Word(off) = r();
        }
      }
      _exit(0);
    }
    close(go[0]);
    c.End();
    for (int i = 0; i < 50; i++) honest.Stage(0, 1, kT0, IntArg(round * 50 + i));
    ASSERT_TRUE(honest.SendAt(0, honest.pos(0), 9, [&] {
      std::vector<Rec> v;
      for (int i = 0; i < 50; i++) v.push_back({1, kT0, {Arg::I(round * 50 + i)}});
      return v;
    }()));
    ASSERT_TRUE(WaitUntil([&] { return StatsOf(d)["shm_drains"] >= uint64_t(round + 1); }))
        << d.Stderr();
    close(go[1]);  // the child stops
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
  }
  honest.End();
  ASSERT_TRUE(WaitUntil([&] { return StatsOf(d)["shm_drains"] >= 9; }));
  const auto h = IntsOf(ReadRing(d.ring), "honest");
  ASSERT_EQ(h.size(), 400u);
  for (int i = 0; i < 400; i++) EXPECT_EQ(h[size_t(i)], i);
  EXPECT_TRUE(Client(d.socket).Send(StatsReq()));  // still serving
  EXPECT_EQ(d.Stop(), 0) << d.Stderr();
}

}  // namespace
}  // namespace logsink::test
