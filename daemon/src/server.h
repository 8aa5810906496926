// server.h: logsinkd's event loop: one libuv thread owning the listening
// socket, the connections, the ring writer, the timers and the signal
// handlers. Everything runs on the loop thread except fdatasync, which runs
// on libuv's thread pool, and the syslog socket's receive thread, which only
// queues datagrams for the loop (syslog_socket.h).
//
// The server owns a component for each job with state of its own:
// Durability (the flush and fsync timers, fdatasync), SyslogInput and
// KernelInput (the syslog socket and the kernel's log on the loop). What is
// left shares the table of connections and the state of a stop, so it is
// this one class, its methods in files of one job each (docs/DESIGN.md,
// "The daemon's files"):
//   server.cc         construction, Run (the loop's start), once per turn,
//                     systemd's status and watchdog
//   server_accept.cc  accepting connections: limits, EMFILE, REFUSE
//   server_conn.cc    serving a connection: reads, replies, end, stalls
//   server_readers.cc reads through the daemon (READ_REQ) and followers
//   server_levels.cc  run-time levels: LEVEL_REQ answered, LEVELS pushed;
//                     the census of connected programs' sites (CENSUS_REQ)
//   server_drain.cc   the stop: draining connections, backlog and inputs
//   server_reload.cc  signals: stop, and SIGHUP's live settings
#pragma once

#include <uv.h>

#include <functional>
#include <iterator>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "counters.h"
#include "durability.h"
#include "kernel_input.h"
#include "levels.h"
#include "listener.h"
#include "logsink/config/config.h"
#include "logsink/storage/ring.h"
#include "notify.h"
#include "reader_session.h"
#include "session.h"
#include "signals.h"
#include "syslog_input.h"

namespace logsink::daemon {

class Server {
 public:
  // reload returns the configuration to apply on SIGHUP (false: keep the
  // current one; the reason is already logged).
  using Reload = std::function<bool(config::Config *)>;

  // syslog: the syslog datagram socket, or nullptr (or fd -1) for none.
  // wake: what the writer's thread rings after it wrote (the writer's
  // WriterOptions::on_written), or nullptr without the thread.
  Server(const config::Config &cfg, storage::RingWriter *writer, Listener *listener, Reload reload,
         Listener *syslog = nullptr, WriteWake *wake = nullptr);
  ~Server();
  Server(const Server &) = delete;
  Server &operator=(const Server &) = delete;

  // Serves until SIGTERM/SIGINT, then drains and returns 0 (or 1 if the loop
  // could not be set up; the reason is logged).
  int Run();

  const Counters &counters() const { return counters_; }

 private:
  struct Conn;  // server_conn.h

  // server.cc: once per turn, systemd
  static void OnBeforeWait(uv_prepare_t *p);
  // At the end of each turn: the turn's work (time since the last turn
  // ended, less the time the loop waited) into loop_turn_max_us, and the
  // loop thread's CPU time over the same span into loop_turn_max_cpu_us.
  void MeasureTurn();
  static void OnWatchdog(uv_timer_t *t);
  // A message to the service manager that never waits (notify.h); counted
  // in notify_dropped when it does not fit.
  void Notify(std::string_view msg);
  Limits CurrentLimits() const;

  // server_accept.cc
  static void OnListenReadable(uv_poll_t *h, int status, int events);
  static void OnAcceptRetry(uv_timer_t *t);
  void AcceptAll();
  bool DropOneWaiting(int err);  // EMFILE/ENFILE: the reserve descriptor
  Conn *AddConn(int fd, Peer peer);
  void Refuse(int fd, const std::string &reason);

  // server_conn.cc
  static void OnConnEvent(uv_poll_t *h, int status, int events);
  static void OnStallTimer(uv_timer_t *t);
  void StartStallTimer();
  // Bytes read (an EOF or a read error counts as one), 0 when none came.
  size_t ReadConn(Conn *c, size_t budget);
  void SendOut(Conn *c);
  void CloseConn(Conn *c);
  void EndStream(Conn *c, bool eof);
  // The end of a stream once its records are written: a text stream's
  // acknowledgment (unless writing failed), and the close.
  void EndedStream(Conn *c, bool eof, bool failed);
  // With the writer thread: c has something waiting for it (waiting_);
  // AnswerWaiting, once per turn, does what the thread's progress allows.
  void WaitForWriter(Conn *c);
  void AnswerWaiting();
  // A client that is gone left records in its shared buffers past what it
  // sent (Session::ShmDrain): they are stored in steps of kRegionStep
  // bytes, one per turn of the loop (region_idle_ keeps it turning), then
  // its stream ends as usual.
  void DrainRegion(Conn *c);
  static void OnRegionIdle(uv_idle_t *h);

  // server_readers.cc: reads through the daemon (reader_session.h): takes
  // a connection's READ_REQ (or refuses it at max_readers /
  // max_readers_per_uid), steps a read whose socket drained, steps
  // caught-up followers after writes.
  void StartReader(Conn *c);
  void ServeReader(Conn *c);
  void StepFollowers();
  uint64_t WriteGen() const;  // changes whenever the writer writes to the file

  // server_levels.cc: a connection's LEVEL_REQ: the change made (or
  // refused), recorded in the ring, pushed to the clients it changes, and
  // the answer (the rules and the clients) sent; the connection then ends.
  void ServeLevelRequest(Conn *c);
  // A connection's CENSUS_REQ: the call sites of the connected programs
  // (those of the caller's uid, for a user other than root); then it ends.
  void ServeCensusRequest(Conn *c);
  void PushLevels();
  // caller: the requester's uid (what it is shown: PROTOCOL.md).
  void AppendLevelAnswer(uint32_t status, std::string_view msg, std::string *out,
                         uint32_t caller) const;
  // [levels] rules (checked when the configuration was read) in force, and
  // pushed to the clients whose text they change.
  void ApplyConfigLevels();

  // server_drain.cc
  void Shutdown(int signum);
  void StopBacklog();
  static void OnDrainDeadline(uv_timer_t *t);
  void DrainStep();

  // server_reload.cc
  static void OnSignal(uv_signal_t *s, int signum);
  void ApplyLive(const config::Config &cfg);

  config::Config cfg_;
  storage::RingWriter *writer_;
  Listener *listener_;
  Reload reload_;

  uv_loop_t loop_;
  uv_poll_t listen_poll_;
  uv_prepare_t before_wait_;  // AfterWrites() and the rest, once per turn of the loop
  // When the last turn ended (uv_hrtime) and the loop's waiting until then
  // (uv_metrics_idle_time).
  uint64_t turn_end_ns_ = 0, turn_idle_ns_ = 0;
  uint64_t turn_cpu_ns_ = 0;  // the loop thread's CPU time then (ThreadCpuNs)
  // A signal arrived in this turn. libuv (1.44) restarts a wait that a
  // signal interrupts and loses the time already waited from its idle time,
  // so such a turn would count waiting as work: it is not measured.
  bool signal_this_turn_ = false;
  uv_timer_t stall_timer_, accept_retry_, watchdog_;
  Notifier notifier_;  // WATCHDOG=1, STOPPING=1: never waits
  uv_signal_t signals_[std::size(kLoopSignals)];

  Counters counters_;
  TextSites text_;
  LevelRules levels_;
  Context ctx_;
  Durability durability_;
  std::unique_ptr<SyslogInput> syslog_;  // nullptr: no syslog socket
  KernelInput kernel_;
  std::vector<Conn *> conns_;
  std::unordered_map<uint32_t, uint32_t> conns_by_uid_;  // open connections per peer uid
  std::unordered_map<uint32_t, uint32_t> conns_by_pid_;  // ... per peer pid (ReadConn)
  std::vector<Conn *> readers_;                          // connections that are reads
  std::vector<Conn *> waiting_;   // connections waiting for the writer thread (Conn::waiting)
  std::vector<Conn *> draining_;  // gone clients whose regions are read (Conn::draining)
  uv_idle_t region_idle_;
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
};

}  // namespace logsink::daemon
