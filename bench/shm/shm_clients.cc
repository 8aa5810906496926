// shm_clients.cc: K client processes of the capability SHM (tests/common's
// ShmClient), each filling every slot of its region with records and then
// exiting, for bench/shm/run.sh. With --mode drain a client sends nothing:
// the daemon reads its region after it is gone (PROTOCOL.md, "Shared
// buffers"); with --mode socket (the baseline) it sends the same records
// in RECORDS_AT frames of about 64 KiB first, so nothing is left to read.
// Waits until the daemon stored them all (STATS next_record_seq), then
// prints "records=N stored_s=S turn_max_us=T drains=D".
#include <poll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "common/shm_client.h"
#include "common/unix_socket.h"
#include "logsink/proto/frame.h"
#include "logsink/proto/frame_encode.h"

namespace {

using logsink::test::ShmClient;

std::map<std::string, uint64_t> Stats(const std::string &socket) {
  std::map<std::string, uint64_t> m;
  const int fd = logsink::test::ConnectUnix(socket);
  if (fd < 0) return m;
  const uint8_t req[LS_FRAME_HDR] = {1, 0, 0, 0, LS_F_STATS_REQ};
  std::string in;
  if (send(fd, req, sizeof req, MSG_NOSIGNAL) == ssize_t(sizeof req)) {
    char buf[8192];
    ls_frame f;
    ptrdiff_t r = 0;
    while ((r = ls_frame_parse(reinterpret_cast<const uint8_t *>(in.data()), in.size(),
                               LS_FRAME_MAX, &f)) == 0) {
      const ssize_t n = recv(fd, buf, sizeof buf, 0);
      if (n <= 0) break;
      in.append(buf, size_t(n));
    }
    ls_statsframe_iter it;
    const char *name;
    size_t len;
    uint64_t v;
    if (r > 0 && f.type == LS_F_STATS && ls_statsframe_begin(f.payload, f.len, &it) == 0)
      while (ls_statsframe_next(&it, &name, &len, &v) == 1) m[std::string(name, len)] = v;
  }
  close(fd);
  return m;
}

// One client process: fills every slot, sends (socket) or not (drain).
int Client(const std::string &socket, bool drain, int k) {
  ShmClient c(socket);
  if (!c.Open("shm-bench-" + std::to_string(k))) return 2;
  uint8_t buf[LS_INTERN_MAX_FMT + 64];
  const char *fmt = "request %d took %d us";
  const ls_intern in = {1, 6, 42, fmt, std::strlen(fmt), "bench.c", 7, 0};
  const ptrdiff_t n = ls_intern_encode(buf, sizeof buf, &in);
  const std::string intern(reinterpret_cast<const char *>(buf), size_t(n));
  if (n < 0 || !c.Send(intern)) return 3;
  c.LogSite(intern);
  uint64_t ts = 1700000000000000000ull;
  for (uint32_t s = 0; s < c.geom().slots; s++) {
    c.SetTid(s, 1000 + s);
    std::string payload;
    uint8_t rec[64];
    uint64_t prev = 0;
    payload.append(reinterpret_cast<const char *>(rec), ls_put_varint(rec, 1000 + s));
    uint64_t end = 0;
    for (int i = 0;; i++) {
      uint8_t args[16];
      size_t a = ls_put_varint(args, ls_zigzag(i));
      a += ls_put_varint(args + a, ls_zigzag(i % 977));
      if (c.pos(s) + ls_shm_rec_size(uint32_t(a), 0) + 64 > c.geom().slot_bytes) break;
      end = c.Stage(s, 1, ++ts, std::string(reinterpret_cast<const char *>(args), a));
      if (drain) continue;
      const ls_record r = {1, 0, ts, args, a};
      payload.append(reinterpret_cast<const char *>(rec),
                     size_t(ls_record_encode(rec, sizeof rec, &r, &prev)));
      if (payload.size() >= (64u << 10)) {
        if (!c.SendAt(s, end, payload)) return 4;
        payload.resize(0);
        prev = 0;
        payload.append(reinterpret_cast<const char *>(rec), ls_put_varint(rec, 1000 + s));
      }
    }
    if (!drain && !c.SendAt(s, end, payload)) return 4;
  }
  return 0;
}

// Records a client stages: as Client() counts them.
uint64_t PerClient(const ls_shm_geom &g) {
  uint64_t total = 0;
  for (uint32_t s = 0; s < g.slots; s++) {
    uint64_t pos = 0;
    for (int i = 0;; i++) {
      uint8_t args[16];
      size_t a = ls_put_varint(args, ls_zigzag(i));
      a += ls_put_varint(args + a, ls_zigzag(i % 977));
      const uint64_t size = ls_shm_rec_size(uint32_t(a), 0);
      if (pos + size + 64 > g.slot_bytes) break;
      pos += size;
      total++;
    }
  }
  return total;
}

}  // namespace

int main(int argc, char **argv) {
  std::string socket, mode = "drain";
  int clients = 8;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--socket")
      socket = argv[i + 1];
    else if (a == "--mode")
      mode = argv[i + 1];
    else if (a == "--clients")
      clients = std::atoi(argv[i + 1]);
  }
  if (socket.empty() || (mode != "drain" && mode != "socket") || clients < 1) {
    std::fprintf(stderr, "usage: shm_clients --socket PATH [--mode drain|socket] [--clients K]\n");
    return 2;
  }
  ShmClient probe(socket);
  if (!probe.Open("shm-bench-probe")) {
    std::fprintf(stderr, "shm_clients: no region from %s\n", socket.c_str());
    return 1;
  }
  const uint64_t total = PerClient(probe.geom()) * uint64_t(clients);
  probe.End();
  const uint64_t before = Stats(socket)["next_record_seq"];
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<pid_t> pids;
  for (int k = 0; k < clients; k++) {
    const pid_t pid = fork();
    if (pid == 0) _exit(Client(socket, mode == "drain", k));
    pids.push_back(pid);
  }
  for (pid_t p : pids) {
    int st = 0;
    if (waitpid(p, &st, 0) != p || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
      std::fprintf(stderr, "shm_clients: client %d failed (%d)\n", int(p), st);
      return 1;
    }
  }
  std::map<std::string, uint64_t> st;
  for (;;) {  // polled: the daemon says nothing when it is done
    st = Stats(socket);
    if (st["next_record_seq"] - before >= total) break;
    if (std::chrono::steady_clock::now() - t0 > std::chrono::seconds(60)) {
      std::fprintf(stderr, "shm_clients: %llu of %llu stored after 60 s\n",
                   (unsigned long long)(st["next_record_seq"] - before), (unsigned long long)total);
      return 1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("records=%llu stored_s=%.4f turn_max_us=%llu drains=%llu\n",
              (unsigned long long)total, s, (unsigned long long)st["loop_turn_max_us"],
              (unsigned long long)st["shm_drains"]);
  return 0;
}
