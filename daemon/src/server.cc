// server.cc: the server's wiring: construction, Run (the loop's handles
// and timers, then the loop), the work of each turn of the loop, and
// systemd's status and watchdog (see server.h).
#include "server.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <systemd/sd-daemon.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace logsink::daemon {
namespace {

constexpr size_t kReadChunk = 32u << 10;  // one read() at most (see ReadConn)

// The calling thread's CPU time (user and system), in ns; 0 if unknown.
uint64_t ThreadCpuNs() {
  timespec ts;
  if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0) return 0;
  return uint64_t(ts.tv_sec) * 1000000000u + uint64_t(ts.tv_nsec);
}

}  // namespace

Server::Server(const config::Config &cfg, storage::RingWriter *writer, Listener *listener,
               Reload reload, Listener *syslog, WriteWake *wake)
    : cfg_(cfg),
      writer_(writer),
      listener_(listener),
      reload_(std::move(reload)),
      text_(writer),
      durability_(&ctx_, &cfg_),
      kernel_(&ctx_, &cfg_) {
  ctx_.writer = writer_;
  ctx_.write_wake = wake;
  ctx_.text = &text_;
  ctx_.levels = &levels_;
  ApplyConfigLevels();
  counters_.started_mono_ns = uv_hrtime();  // CLOCK_MONOTONIC, as uptime_ms reads it
  // RING replies name the file absolutely, whatever the client's directory.
  if (char *abs = realpath(cfg_.ring_file.c_str(), nullptr)) {
    ctx_.ring_path = abs;
    free(abs);
  } else {
    ctx_.ring_path = cfg_.ring_file;
  }
  struct stat st;
  if (stat(ctx_.ring_path.c_str(), &st) == 0) {
    ctx_.ring_dev = uint64_t(st.st_dev);
    ctx_.ring_ino = uint64_t(st.st_ino);
  }
  ctx_.counters = &counters_;
  text_.set_kern_refused_counter(&counters_.kern_refused);
  text_.set_field_counters({&counters_.text_field_sites, &counters_.text_fields_fallback,
                            &counters_.text_field_names_refused});
  ctx_.next_source_id = std::max<uint64_t>(1, writer_->next_source_id());
  ctx_.memory.limit = cfg_.max_memory;
  ctx_.memory.per_uid_limit = cfg_.max_memory_per_uid;
  ctx_.memory.used = &counters_.memory_used;
  ctx_.shm_memory.limit = cfg_.shm_max_memory;
  ctx_.shm_memory.per_uid_limit = cfg_.shm_max_memory_per_uid;
  ctx_.shm_memory.used = &counters_.shm_memory_used;
  rbuf_.resize(kReadChunk);
  if (syslog && syslog->fd >= 0) syslog_ = std::make_unique<SyslogInput>(&ctx_, syslog, &cfg_);
}

Server::~Server() {
  if (reserve_fd_ >= 0) close(reserve_fd_);
}

Limits Server::CurrentLimits() const {
  Limits l;
  l.max_frame = cfg_.max_frame;
  l.max_sites = cfg_.max_sites_per_connection;
  l.max_app = cfg_.max_app;
  l.shm_slots = cfg_.shm_slots;
  l.shm_slot_bytes = uint32_t(cfg_.shm_slot_bytes);
  l.shm_sites_bytes = uint32_t(cfg_.shm_sites_bytes);
  return l;
}

int Server::Run() {
  int rc = uv_loop_init(&loop_);
  if (rc < 0) {
    spdlog::critical("uv_loop_init: {}", uv_strerror(rc));
    return 1;
  }
  // libuv times its own waits (in epoll_wait), so a turn's work is the time
  // between two turns less that: loop_turn_max_us.
  rc = uv_loop_configure(&loop_, UV_METRICS_IDLE_TIME);
  if (rc < 0) spdlog::warn("uv_loop_configure(UV_METRICS_IDLE_TIME): {}", uv_strerror(rc));
  durability_.OpenSyncFile();
  // Kept for accept's EMFILE case (AcceptAll).
  reserve_fd_ = open("/dev/null", O_RDONLY | O_CLOEXEC);
  uv_poll_init(&loop_, &listen_poll_, listener_->fd);
  listen_poll_.data = this;
  uv_poll_start(&listen_poll_, UV_READABLE, OnListenReadable);
  if (!kernel_.Start(&loop_)) return 1;
  if (syslog_ && !syslog_->Start(&loop_)) return 1;
  for (uv_timer_t *t : {&stall_timer_, &accept_retry_, &watchdog_}) {
    uv_timer_init(&loop_, t);
    t->data = this;
  }
  // After whatever a turn of the loop read and stored (connections, syslog,
  // kernel), before the loop waits again: OnBeforeWait, once per turn.
  uv_prepare_init(&loop_, &before_wait_);
  before_wait_.data = this;
  uv_prepare_start(&before_wait_, OnBeforeWait);
  // Started while a gone client's shared buffers are read (DrainRegion).
  uv_idle_init(&loop_, &region_idle_);
  region_idle_.data = this;

  durability_.Start(&loop_);
  StartStallTimer();
  for (size_t i = 0; i < std::size(kLoopSignals); i++) {
    uv_signal_init(&loop_, &signals_[i]);
    signals_[i].data = this;
    uv_signal_start(&signals_[i], OnSignal, kLoopSignals[i]);
  }
  // main() held them until now; one that arrived meanwhile is delivered.
  ReleaseLoopSignals();

  if (syslog_) syslog_->Announce();
  spdlog::info("serving on {}; ring {} ({} blocks of {} bytes, next record {})",
               listener_->from_systemd ? "the socket from systemd" : listener_->path,
               cfg_.ring_file, writer_->layout().block_count, writer_->layout().block_size,
               writer_->next_record_seq());
  // systemd's watchdog (WatchdogSec=): ping at half the interval from the
  // loop, so a stuck loop gets the daemon restarted.
  uint64_t wd_usec = 0;
  if (sd_watchdog_enabled(0, &wd_usec) > 0 && wd_usec >= 2000) {
    uint64_t period = wd_usec / 2000;
    uv_timer_start(&watchdog_, OnWatchdog, period, period);
  }
  // READY=1 is waited for by the manager, before the loop serves anyone:
  // libsystemd's blocking send (the loop's later messages never wait:
  // Notify). STATUS= (shown by `systemctl status` to every local user)
  // names what is served and no counter: the counters tell about
  // everyone's records, and go only to those who may read the ring (STATS).
  // Without NOTIFY_SOCKET this does nothing.
  sd_notify(0, fmt::format("READY=1\nSTATUS=serving {}; counters: logctl stats",
                           listener_->from_systemd ? "the socket from systemd" : listener_->path)
                   .c_str());
  turn_end_ns_ = uv_hrtime();
  turn_idle_ns_ = uv_metrics_idle_time(&loop_);
  turn_cpu_ns_ = ThreadCpuNs();
  uv_run(&loop_, UV_RUN_DEFAULT);
  rc = uv_loop_close(&loop_);
  if (rc < 0) spdlog::warn("uv_loop_close: {}", uv_strerror(rc));
  return 0;
}

// Once per turn of the loop, before it waits: what follows from the records
// stored in the turn (Durability::AfterWrites), followers that may read on,
// and at a stop the drain's next step.
void Server::OnBeforeWait(uv_prepare_t *p) {
  auto *s = static_cast<Server *>(p->data);
  s->durability_.AfterWrites();
  s->AnswerWaiting();
  s->StepFollowers();
  if (s->stopping_) s->DrainStep();
  s->MeasureTurn();
}

// Wall time tells how long clients waited on a turn; the loop thread's CPU
// time over the same span tells how much of it was the loop's own work
// rather than waiting for a core (a busy machine), for the disk or for
// the writer thread's full queue. One clock_gettime of the thread's CPU
// clock per turn (a system call, about a microsecond here; no cost that
// showed flat out: bench/results/turn-cpu-clock-ab.txt).
void Server::MeasureTurn() {
  const uint64_t now = uv_hrtime(), idle = uv_metrics_idle_time(&loop_), cpu = ThreadCpuNs();
  const uint64_t elapsed = now - turn_end_ns_, waited = idle - turn_idle_ns_;
  const uint64_t busy_us = (elapsed > waited ? elapsed - waited : 0) / 1000;
  const uint64_t cpu_us = (cpu > turn_cpu_ns_ ? cpu - turn_cpu_ns_ : 0) / 1000;
  if (!signal_this_turn_) {
    counters_.loop_turn_max_us = std::max(counters_.loop_turn_max_us, busy_us);
    // A failed read of the clock (0) leaves this turn and the next one
    // unmeasured, rather than counting the thread's CPU since an older
    // reading.
    if (cpu && turn_cpu_ns_)
      counters_.loop_turn_max_cpu_us = std::max(counters_.loop_turn_max_cpu_us, cpu_us);
  }
  signal_this_turn_ = false;
  turn_end_ns_ = now;
  turn_idle_ns_ = idle;
  turn_cpu_ns_ = cpu;
}

void Server::OnWatchdog(uv_timer_t *t) { static_cast<Server *>(t->data)->Notify("WATCHDOG=1"); }

void Server::Notify(std::string_view msg) {
  if (!notifier_.Send(msg)) counters_.notify_dropped++;
}

}  // namespace logsink::daemon
