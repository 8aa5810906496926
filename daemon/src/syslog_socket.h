// syslog_socket.h: the syslog datagram socket's reader (daemon/SYSLOG.md):
// recvmsg with SCM_CREDENTIALS (the sender's pid, uid and gid from the
// kernel, never from the message), MSG_TRUNC to learn a cut datagram's real
// size, the parser (syslog_parse.h), a bounded cache of ring sources per
// sender, and one free-text record per datagram (text_record.h).
//
// The socket is emptied by a receive thread that does nothing but move
// datagrams (bytes, size, credentials) into a bounded queue and wake the
// loop: the kernel's queue of a Unix datagram socket holds only
// net.unix.max_dgram_qlen datagrams (10 by default), fewer than a
// non-blocking sender's burst that arrives while the loop is busy with a
// connection's read budget, a block seal or a flush. Everything else (parse,
// sources, records, counters) stays on the loop thread: DrainQueue.
#pragma once

#include <uv.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <list>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

#include "context.h"
#include "logsink/storage/ring.h"

namespace logsink::daemon {

// The longest datagram kept: longer ones are cut to it (the record says how
// many bytes were cut; syslog_truncated counts them). A record larger than a
// ring block is cut further by the writer (truncated_records).
constexpr size_t kMaxSyslogDatagram = 64u << 10;
// Datagrams read per loop wakeup at most (besides the read_budget bytes),
// so that a flood of small datagrams cannot starve the connections.
constexpr size_t kSyslogDatagramsPerWakeup = 1024;
// Bytes of datagrams (plus 24 bytes each) the receive thread may hold for
// the loop; twice this is allocated at most (the half being filled and the
// half being stored). When it is full the thread stops reading until the
// loop has taken the queue (syslog_queue_full); the kernel's queue then
// fills and senders block or lose datagrams, as without the thread.
constexpr size_t kSyslogQueueBytes = 1u << 20;
// How long the loop lets a small queue of datagrams wait before it stores
// them (syslog_input.cc, SyslogInput::OnQueued).
constexpr uint64_t kSyslogStoreDelayMs = 1;
// The receive thread's nice value relative to the daemon's (see
// RaisePriority in syslog_socket.cc).
constexpr int kSyslogReceiveNice = -10;
// Datagrams the receive thread takes per recvmmsg call; each gets 64 KiB
// of the thread's buffer (1 MiB, touched only as far as datagrams reach).
constexpr unsigned kSyslogBatch = 16;
// Senders whose ring source is remembered, (pid, uid, gid, tag) each; the
// least recently used is forgotten beyond (syslog_sources_evicted), and gets
// a new source id should it send again.
constexpr size_t kMaxSyslogSources = 4096;

// Sets SO_PASSCRED on a datagram socket. Returns 0 or an errno value.
int EnableCredentials(int fd);

// The kernel's default net.unix.max_dgram_qlen (datagrams a Unix datagram
// socket queues), and this network namespace's value (-1 when unreadable).
constexpr long kKernelDefaultDgramQueue = 10;
long DatagramQueueLength();

class SyslogReceiver {
 public:
  // max_app: tags longer than that are cut (counted in app_truncated).
  SyslogReceiver(Context *ctx, int fd, uint32_t max_app);
  ~SyslogReceiver();  // stops the receive thread
  SyslogReceiver(const SyslogReceiver &) = delete;
  SyslogReceiver &operator=(const SyslogReceiver &) = delete;

  // Starts the receive thread; `wake` is sent (uv_async_send) whenever the
  // queue goes from empty to not empty. Returns 0 or an errno value.
  int StartThread(uv_async_t *wake);
  // Stops and joins the receive thread. What it queued stays queued for
  // DrainQueue; what is still in the socket stays there for ReadSome.
  void StopThread();

  // Loop thread: stores queued datagrams until the queue is empty,
  // byte_budget bytes, kSyslogDatagramsPerWakeup datagrams or slice_ns of
  // work (limits.read_slice; checked after each datagram). Returns true
  // when it stopped on the budget (the caller wakes itself again after the
  // loop served the others).
  bool DrainQueue(size_t byte_budget, uint64_t slice_ns = UINT64_MAX);
  // Loop thread: adds what the receive thread counted (errors, waits for
  // room) to the Counters; DrainQueue and StopThread do it too.
  void FoldThreadCounters();

  // Forgets what is still queued (at exit, past shutdown_timeout); returns
  // how many datagrams that was.
  size_t DiscardQueued();

  // Loop thread, without the receive thread (at shutdown, after
  // StopThread and DrainQueue): reads datagrams from the socket itself until
  // it is empty or the budget as above. Returns true when it stopped on the
  // budget.
  bool ReadSome(size_t byte_budget, uint64_t slice_ns = UINT64_MAX);

  // Stores one datagram: `len` bytes at p kept, `real_len` its size as sent.
  void Store(const uint8_t *p, size_t len, size_t real_len, uint32_t pid, uint32_t uid,
             uint32_t gid, bool have_creds);

  // Bytes the receive thread has queued and the loop not yet taken.
  size_t queued_bytes() {
    std::lock_guard<std::mutex> lock(mu_);
    return fill_.size();
  }
  // Times the thread found the queue full, not yet folded into the counters
  // (the loop does that when it takes the queue).
  uint64_t queue_full_unfolded() const { return t_queue_full_.load(std::memory_order_relaxed); }
  void set_max_app(uint32_t n) { max_app_ = n; }
  size_t cached_sources() const { return lru_.size(); }

 private:
  struct Key {
    uint32_t pid, uid, gid;
    std::string tag;
    bool operator==(const Key &) const = default;
  };
  struct KeyHash {
    size_t operator()(const Key &k) const;
  };
  struct Entry {
    Key key;
    std::string comm, unit;
    storage::Source source;  // app, comm and unit view key.tag, comm and unit
  };
  const storage::Source &SourceFor(uint32_t pid, uint32_t uid, uint32_t gid, std::string_view tag);
  // One recvmsg into buf_ (MSG_DONTWAIT). Returns the datagram's real size,
  // or -1 with errno; fills the credentials (0s when none came). The loop's
  // path (ReadSome); the thread uses recvmmsg.
  ssize_t Receive(uint32_t *pid, uint32_t *uid, uint32_t *gid, bool *have);
  void ThreadMain();
  // Receive thread: appends one datagram to fill_, waiting while it is full.
  void Push(const uint8_t *p, uint32_t kept, uint32_t real, uint32_t pid, uint32_t uid,
            uint32_t gid, bool have);

  Context *ctx_;
  int fd_;
  uint32_t max_app_;
  std::vector<uint8_t> buf_;    // ReadSome's (the loop's, when no thread runs)
  std::vector<uint8_t> batch_;  // the receive thread's: kSyslogBatch datagrams

  // The queue: the thread appends to fill_; the loop swaps it with the
  // drained store_ and stores from there. Entries: a 24-byte header (kept
  // length, real length, pid, uid, gid, credentials flag) and the bytes.
  std::mutex mu_;
  std::condition_variable room_;  // the loop took fill_ (or stop_)
  std::vector<uint8_t> fill_;     // guarded by mu_
  bool stop_ = false;             // guarded by mu_
  std::vector<uint8_t> store_;    // loop thread only
  size_t store_pos_ = 0;          // loop thread only
  std::thread thread_;
  int stop_fd_ = -1;  // eventfd that wakes the thread's poll to stop
  uv_async_t *wake_ = nullptr;
  // Counted by the thread, added to the Counters by the loop.
  std::atomic<uint64_t> t_read_errors_{0}, t_queue_full_{0};
  std::atomic<int> t_last_errno_{0};
  std::list<Entry> lru_;  // most recently used first; nodes never move in memory
  std::unordered_map<Key, std::list<Entry>::iterator, KeyHash> by_key_;
};

}  // namespace logsink::daemon
