// cli_util.h: helpers for the logctl integration tests: run the real logctl
// binary (tests/common's Subprocess, TZ=UTC, optionally as nobody from a
// staged copy), parse its JSON output (nlohmann-json), and write ring files
// directly with storage's RingWriter.
#pragma once

#include <fcntl.h>
#include <grp.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "common/clock_env.h"
#include "common/process.h"
#include "common/records.h"
#include "common/staged_binary.h"
#include "common/temp_dir.h"
#include "logsink/proto/codec.h"
#include "logsink/proto/printf.h"
#include "logsink/storage/ring.h"

namespace logsink::test {

using namespace ::logsink::storage;  // the logctl tests write rings directly

inline std::string LogctlPath() { return BinPath("logctl"); }
constexpr uint64_t kT0 = 1763892000000000000ull;  // 2025-11-23T10:00:00Z

using json = nlohmann::json;
// The JSON value of one line of output (is_discarded() when it is not JSON).
inline json ParseJson(const std::string &line) { return json::parse(line, nullptr, false); }

using Result = ProcResult;

struct SpawnOptions {
  bool as_nobody = false;  // as root: run a staged copy of logctl as uid/gid 65534
  uint32_t as_uid = 0;     // as root: ... as this uid and gid instead (0: as_nobody decides)
  std::string stdin_data;
  // Set in logctl's environment. LOGSINK_FILE, LOGSINK_SOCKET,
  // LOGSINK_PAGER and LOGSINK_LEVEL are unset unless given here, so the test's own
  // environment cannot pick the ring, the daemon or the pager.
  std::vector<std::pair<std::string, std::string>> env;
};

// Starts logctl with args; stdout and stderr are pipes. TZ=UTC, no colour.
class Proc {
 public:
  explicit Proc(const std::vector<std::string> &args, const SpawnOptions &opt = {}) {
    const uint32_t uid = opt.as_uid ? opt.as_uid : 65534;
    const bool nobody = (opt.as_nobody || opt.as_uid) && geteuid() == 0;
    if (nobody) {
      staged_ = std::make_unique<StagedBinary>(LogctlPath());
      EXPECT_TRUE(staged_->ok()) << staged_->error();
    }
    SubprocessOptions o;
    o.stdin_data = opt.stdin_data;
    const StagedBinary *staged = staged_.get();
    auto env = opt.env;
    o.child_setup = [staged, env, uid] {
      setenv("TZ", "UTC", 1);
      unsetenv("NO_COLOR");
      unsetenv("LOGSINK_FILE");
      unsetenv("LOGSINK_SOCKET");
      unsetenv("LOGSINK_PAGER");
      unsetenv("LOGSINK_LEVEL");
      for (const auto &[k, v] : env) setenv(k.c_str(), v.c_str(), 1);
      if (staged) {
        staged->SetLibraryPath();
        if (setgroups(0, nullptr) != 0 || setgid(uid) != 0 || setuid(uid) != 0) _exit(126);
      }
    };
    proc_ = std::make_unique<Subprocess>(staged ? staged->path() : LogctlPath(), args, o);
  }

  // Reads one stdout line (without '\n'). False after timeout_ms or EOF.
  bool ReadLine(std::string *line, int timeout_ms) { return proc_->ReadLine(line, Ms(timeout_ms)); }
  void Signal(int sig) { proc_->Signal(sig); }
  pid_t pid() const { return proc_->pid(); }

  // Collects the rest of stdout/stderr and the exit status (hang limit).
  Result Finish(int hang_ms = 30000) {
    Result r = proc_->Finish(Ms(hang_ms));
    if (proc_->hung()) ADD_FAILURE() << "logctl did not finish within " << hang_ms << " ms";
    return r;
  }

 private:
  std::unique_ptr<StagedBinary> staged_;  // outlives the child
  std::unique_ptr<Subprocess> proc_;
};

inline Result RunLogctl(const std::vector<std::string> &args, const SpawnOptions &opt = {}) {
  Proc p(args, opt);
  return p.Finish();
}

// Runs logctl args until done(result) holds or kHang passes (a daemon makes
// records visible by its flush interval); returns the last result.
inline Result RunLogctlUntil(const std::vector<std::string> &args, const SpawnOptions &opt,
                             const std::function<bool(const Result &)> &done) {
  Result r;
  WaitUntil(
      [&] {
        r = RunLogctl(args, opt);
        return done(r);
      },
      kHang, Ms(20));
  return r;
}

// Encodes arguments like liblogsink does.
class Args {
 public:
  Args &i(int64_t v) { return Var(ls_zigzag(v)); }
  Args &u(uint64_t v) { return Var(v); }
  Args &s(const std::string &v) {
    Var(v.size());
    b_ += v;
    return *this;
  }
  Args &raw(const std::string &v) {
    b_ += v;
    return *this;
  }
  const std::string &bytes() const { return b_; }

 private:
  Args &Var(uint64_t v) {
    uint8_t t[LS_VARINT_MAX];
    b_.append(reinterpret_cast<char *>(t), ls_put_varint(t, v));
    return *this;
  }
  std::string b_;
};

// A ring file written directly with RingWriter.
class TestRing {
 public:
  // file_size defaults to 8 KiB superblocks + 4 KiB strings + 8 blocks of 4 KiB.
  // codec: how blocks are stored (WriterOptions' default unless a test needs
  // the uncompressed layout: records per block, a small ring lapping).
  explicit TestRing(const std::string &path, uint64_t file_size = 12288 + 8 * 4096,
                    uint32_t block_size = 4096, uint8_t codec = WriterOptions().codec)
      : TestRing(path, Options(file_size, block_size, codec)) {}
  // With options of the test's own (tiers, for one): start from Options().
  TestRing(const std::string &path, const WriterOptions &opts) : path_(path), opts_(opts) {
    env_.now_ns = 1;  // created "long ago": each record's time is then its block's open time
    Status s = RingWriter::Open(&env_, path, opts_, &w_);
    EXPECT_TRUE(s.ok()) << s.ToString();
    src_ = Source{1, 4242, 1000, 100, "testapp", "testcomm"};
  }

  // The options the first constructor writes with (a 4 KiB string table).
  static WriterOptions Options(uint64_t file_size = 12288 + 8 * 4096, uint32_t block_size = 4096,
                               uint8_t codec = WriterOptions().codec) {
    WriterOptions o;
    o.file_size = file_size;
    o.block_size = block_size;
    o.codec = codec;
    o.strtab_size = 4096;
    return o;
  }

  RingWriter *writer() { return w_.get(); }
  Source &source() { return src_; }
  const std::string &path() const { return path_; }

  uint32_t Intern(uint8_t level, const std::string &fmt, uint32_t line = 10,
                  const std::string &file = "test.c") {
    strings_.push_back(std::make_unique<std::string>(fmt));
    Site s;
    s.level = level;
    s.line = line;
    s.fmt = *strings_.back();
    strings_.push_back(std::make_unique<std::string>(file));
    s.file = *strings_.back();
    uint32_t id = w_->Intern(s);
    EXPECT_GT(id, 0u);
    return id;
  }

  // Appends a record of site id with the given signature and argument bytes.
  void Add(uint32_t site, const std::string &sig, const std::string &args, uint64_t ts,
           const Source *src = nullptr, uint64_t tid = 1) {
    env_.now_ns = ts;  // the writer's clock agrees with the record's
    // After Reboot(): the monotonic clock of that boot agrees too.
    if (env_.fake_boot) env_.mono_ns = ts - boot_real_ns_;
    Status s = AppendRecord(w_.get(), src ? *src : src_, site, sig, args, ts, tid);
    ASSERT_TRUE(s.ok()) << s.ToString();
  }

  void Flush() {
    Status s = w_->Flush();
    ASSERT_TRUE(s.ok()) << s.ToString();
  }
  void Close() {
    Flush();
    w_.reset();
  }
  // Flushes and reopens the ring as a writer of boot `id` that booted at
  // realtime boot_real_ns would (FORMAT.md, "Boots"): the blocks of records
  // added from now on carry id, and each record's monotonic time is then
  // its timestamp minus boot_real_ns (keep timestamps after boot_real_ns).
  void Reboot(const std::array<uint8_t, 16> &id, uint64_t boot_real_ns) {
    Close();
    env_.fake_boot = true;
    env_.boot_id = id;
    boot_real_ns_ = boot_real_ns;
    Status s = RingWriter::Open(&env_, path_, opts_, &w_);
    ASSERT_TRUE(s.ok()) << s.ToString();
  }

 private:
  std::string path_;
  WriterOptions opts_;
  uint64_t boot_real_ns_ = 0;  // Reboot()'s
  ClockEnv env_;               // outlives w_
  std::unique_ptr<RingWriter> w_;
  Source src_;
  std::vector<std::unique_ptr<std::string>> strings_;
};

}  // namespace logsink::test
