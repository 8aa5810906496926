// syslog_socket.h: the syslog datagram socket's reader (daemon/SYSLOG.md):
// recvmsg with SCM_CREDENTIALS (the sender's pid, uid and gid from the
// kernel, never from the message), MSG_TRUNC to learn a cut datagram's real
// size, the parser (syslog_parse.h), a bounded cache of ring sources per
// sender, and one free-text record per datagram (text_record.h). Runs on the
// loop thread; the Server polls the socket and calls ReadSome.
#pragma once

#include <cstdint>
#include <list>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "logsink/storage/ring.h"
#include "session.h"

namespace logsink::daemon {

// The longest datagram kept: longer ones are cut to it (the record says how
// many bytes were cut; syslog_truncated counts them). A record larger than a
// ring block is cut further by the writer (truncated_records).
constexpr size_t kMaxSyslogDatagram = 64u << 10;
// Datagrams read per loop wakeup at most (besides the read_budget bytes),
// so that a flood of small datagrams cannot starve the connections.
constexpr size_t kSyslogDatagramsPerWakeup = 1024;
// Senders whose ring source is remembered, (pid, uid, gid, tag) each; the
// least recently used is forgotten beyond (syslog_sources_evicted), and gets
// a new source id should it send again.
constexpr size_t kMaxSyslogSources = 4096;

// Sets SO_PASSCRED on a datagram socket. Returns 0 or an errno value.
int EnableCredentials(int fd);

class SyslogReceiver {
 public:
  // max_app: tags longer than that are cut (counted in app_truncated).
  SyslogReceiver(Context *ctx, int fd, uint32_t max_app);
  SyslogReceiver(const SyslogReceiver &) = delete;
  SyslogReceiver &operator=(const SyslogReceiver &) = delete;

  // Reads datagrams until the socket is empty, byte_budget bytes or
  // kSyslogDatagramsPerWakeup datagrams were read. Returns true when it
  // stopped on the budget (more may be waiting: the level-triggered poll
  // calls again after the loop served the others).
  bool ReadSome(size_t byte_budget);

  // Stores one datagram: `len` bytes at p kept, `real_len` its size as sent.
  void Store(const uint8_t *p, size_t len, size_t real_len, uint32_t pid, uint32_t uid,
             uint32_t gid, bool have_creds);

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

  Context *ctx_;
  int fd_;
  uint32_t max_app_;
  std::vector<uint8_t> buf_;
  std::list<Entry> lru_;  // most recently used first; nodes never move in memory
  std::unordered_map<Key, std::list<Entry>::iterator, KeyHash> by_key_;
};

}  // namespace logsink::daemon
