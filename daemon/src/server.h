// server.h: logsinkd's event loop: one libuv thread owning the listening
// socket, the connections, the ring writer, the flush/fsync/stall timers and
// the signal handlers. Everything runs on the loop thread except fdatasync,
// which runs on libuv's thread pool, and the syslog socket's receive thread,
// which only queues datagrams for the loop (syslog_socket.h).
#pragma once

#include <uv.h>

#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "counters.h"
#include "kmsg.h"
#include "listener.h"
#include "logsink/config/config.h"
#include "logsink/storage/ring.h"
#include "reader_session.h"
#include "session.h"
#include "sync_policy.h"
#include "syslog_socket.h"

namespace logsink::daemon {

class Server {
 public:
  // reload returns the configuration to apply on SIGHUP (false: keep the
  // current one; the reason is already logged).
  using Reload = std::function<bool(config::Config *)>;

  // syslog: the syslog datagram socket, or nullptr (or fd -1) for none.
  Server(const config::Config &cfg, storage::RingWriter *writer, Listener *listener, Reload reload,
         Listener *syslog = nullptr);
  ~Server();
  Server(const Server &) = delete;
  Server &operator=(const Server &) = delete;

  // Serves until SIGTERM/SIGINT, then drains and returns 0 (or 1 if the loop
  // could not be set up; the reason is logged).
  int Run();

  const Counters &counters() const { return counters_; }

 private:
  struct Conn;

  // libuv callbacks
  static void OnListenReadable(uv_poll_t *h, int status, int events);
  static void OnSyslogQueued(uv_async_t *h);
  static void OnSyslogTimer(uv_timer_t *t);
  static void OnKmsgReadable(uv_poll_t *h, int status, int events);
  // At a stop: the syslog socket and the kernel's log are let go once read
  // to the end (or at the deadline).
  void CloseSyslog();
  void CloseKmsg();
  void StopBacklog();
  // Opens the kernel's log per [kernel] read; false when "yes" and it cannot.
  bool StartKernel();
  static void OnConnEvent(uv_poll_t *h, int status, int events);
  static void OnBeforeWait(uv_prepare_t *p);
  static void OnFlushTimer(uv_timer_t *t);
  static void OnFsyncTimer(uv_timer_t *t);
  static void OnStallTimer(uv_timer_t *t);
  static void OnAcceptRetry(uv_timer_t *t);
  static void OnWatchdog(uv_timer_t *t);
  static void OnStatusTimer(uv_timer_t *t);
  void NotifyStatus(const char *prefix);
  static void OnSignal(uv_signal_t *s, int signum);
  static void OnSyncDone(uv_fs_t *req);

  void AcceptAll();
  Conn *AddConn(int fd, Peer peer);
  void Refuse(int fd, const std::string &reason);
  void ReadConn(Conn *c, size_t budget);
  void SendOut(Conn *c);
  // Reads through the daemon (reader_session.h): takes a connection's
  // READ_REQ (or refuses it at max_readers / max_readers_per_uid), steps a
  // read whose socket drained, steps caught-up followers after writes.
  void StartReader(Conn *c);
  void ServeReader(Conn *c);
  void StepFollowers();
  uint64_t WriteGen() const;  // changes whenever the writer writes to the file
  void CloseConn(Conn *c);
  void EndStream(Conn *c, bool eof);
  // Once per turn of the loop, before it waits (before_wait_): writes the
  // partial block when its gap has passed, else arms flush_timer_ for it;
  // asks for an fdatasync when fsync = "block" and a block was sealed. So
  // every record stored in a turn, however many reads stored them, is
  // covered by one check.
  void AfterWrites();
  void FlushNow();  // writes the partial block (one pwrite) and notes when
  void RequestSync();
  void ApplyLive(const config::Config &cfg);
  void Shutdown(int signum);
  static void OnDrainDeadline(uv_timer_t *t);
  void DrainStep();
  Limits CurrentLimits() const;

  config::Config cfg_;
  storage::RingWriter *writer_;
  Listener *listener_;
  Reload reload_;

  uv_loop_t loop_;
  uv_poll_t listen_poll_;
  Listener *syslog_ = nullptr;  // nullptr: no syslog socket
  uv_async_t syslog_async_;     // the receive thread: datagrams queued
  uv_timer_t syslog_timer_;     // stores them (OnSyslogQueued)
  uv_prepare_t before_wait_;    // AfterWrites(), once per turn of the loop
  uv_timer_t flush_timer_, fsync_timer_, stall_timer_, accept_retry_, watchdog_, status_timer_;
  // The last partial-block write: when it ended and what it cost
  // (uv_hrtime, ns); the next one waits FlushGapNs() after it.
  uint64_t last_flush_end_ns_ = 0, last_flush_cost_ns_ = 0;
  uint64_t FlushGapNs() const;
  void FlushWhenDue();
  std::string last_status_;  // the last STATUS= sent to systemd (sent again only when changed)
  uv_signal_t sig_term_, sig_int_, sig_hup_;
  uv_fs_t sync_req_;
  int sync_fd_ = -1;
  bool sync_in_flight_ = false, sync_again_ = false;
  SyncPolicy sync_policy_;  // which writes the last fdatasync request covered

  Counters counters_;
  TextSites text_;
  Context ctx_;
  std::unique_ptr<SyslogReceiver> syslog_rx_;
  int kmsg_fd_ = -1;  // the kernel's log, -1: not read
  uv_poll_t kmsg_poll_;
  std::unique_ptr<KmsgReader> kmsg_rx_;
  std::vector<Conn *> conns_;
  std::unordered_map<uint32_t, uint32_t> conns_by_uid_;  // open connections per peer uid
  std::vector<Conn *> readers_;                          // connections that are reads
  std::unordered_map<uint32_t, uint32_t> readers_by_uid_;
  int reserve_fd_ = -1;  // /dev/null, given up on EMFILE
  std::vector<uint8_t> rbuf_;
  bool stopping_ = false;
  // The stop (Shutdown, DrainStep): until when connections are read and
  // taken from the listen backlog (uv_hrtime), how many of those are open
  // and were taken, whether the backlog is still taken from, and whether
  // the drain is over.
  uint64_t drain_deadline_ns_ = 0, backlog_until_ns_ = 0;
  size_t backlog_open_ = 0, backlog_taken_ = 0;
  bool backlog_listening_ = true, drained_ = false;
  // At a stop: the syslog socket and the kernel's log still being read.
  bool syslog_draining_ = false, kmsg_draining_ = false;
};

}  // namespace logsink::daemon
