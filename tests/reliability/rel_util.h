// rel_util.h: helpers shared by the reliability tests: the ASan scale factor,
// `[figures]` output, a process's peak RSS, argument decoding of read-back
// records and running the real logctl (tests/common's subprocess).
#pragma once

#include <gtest/gtest.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdarg>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "common/asan.h"
#include "common/process.h"
#include "common/seed.h"
#include "logsink/proto/codec.h"
#include "logsink/proto/printf.h"

namespace logsink::test {

// True in an AddressSanitizer build or when LOGSINK_RELIABILITY_SMALL is
// set: loop counts are then scaled down (each test states both counts).
inline bool Small() { return kAsanBuild || std::getenv("LOGSINK_RELIABILITY_SMALL") != nullptr; }
inline int64_t Scaled(int64_t full, int64_t small) { return Small() ? small : full; }

// ASan keeps freed blocks in a quarantine of up to 256 MiB before reusing
// them, so with its default a daemon's peak RSS grows with how many buffers
// it has freed (more connections, more read pieces, a slower machine), not
// with what it holds. A small fixed quarantine keeps a memory bound about
// the daemon. Set it as the daemon's child_setup (it runs in the child).
inline void SmallQuarantine() {
  if (!kAsanBuild) return;
  const char *o = std::getenv("ASAN_OPTIONS");
  std::string v = o && *o ? std::string(o) + ":" : "";
  setenv("ASAN_OPTIONS", (v + "quarantine_size_mb=16").c_str(), 1);
}

// Prints one `[figures] ...` line to stdout (for the README).
inline void Figures(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
inline void Figures(const char *fmt, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  printf("[figures] %s\n", buf);
  fflush(stdout);
}

// A field of /proc/<pid>/status in KiB (VmHWM = peak RSS, VmRSS), 0 if absent.
inline uint64_t StatusKiB(pid_t pid, const std::string &field) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(field + ":", 0) == 0)
      return std::strtoull(line.c_str() + field.size() + 1, nullptr, 10);
  }
  return 0;
}

// One decoded argument value (strings are not used by these tests).
struct Val {
  char type;
  uint64_t u;
  int64_t i;
  std::string s;
};

// Decodes args by the signature of fmt. False when they do not parse exactly
// (a record that is not intact).
inline bool DecodeArgs(const std::string &fmt, const std::string &args, std::vector<Val> *out) {
  char sig[LS_FMT_MAX_ARGS + 1];
  int n = ls_fmt_signature(fmt.data(), fmt.size(), sig, sizeof sig);
  if (n < 0) return false;
  const auto *p = reinterpret_cast<const uint8_t *>(args.data());
  const uint8_t *end = p + args.size();
  out->clear();
  for (int k = 0; k < n; k++) {
    Val v{sig[k], 0, 0, {}};
    if (sig[k] == 'f') {
      if (end - p < 8) return false;
      p += 8;
    } else {
      uint64_t x;
      size_t m = ls_get_varint(p, end, &x);
      if (!m) return false;
      p += m;
      if (sig[k] == 'i') v.i = ls_unzigzag(x);
      v.u = x;
      if (sig[k] == 's') {
        if (uint64_t(end - p) < x) return false;
        v.s.assign(reinterpret_cast<const char *>(p), size_t(x));
        p += x;
      }
    }
    out->push_back(std::move(v));
  }
  return p == end;
}

// Runs bin/<name> args with stdout and stderr captured together, a 60 s
// hang limit; setup runs in the child before exec.
inline ProcResult RunBin(const std::string &name, const std::vector<std::string> &args,
                         const std::function<void()> &setup = {}) {
  SubprocessOptions o;
  o.merge_stderr = true;
  o.child_setup = setup;
  return RunProcess(BinPath(name), args, o, Ms(60000));
}

}  // namespace logsink::test
