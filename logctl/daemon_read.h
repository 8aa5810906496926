// daemon_read.h: reading one's own records through the daemon (PROTOCOL.md,
// "Reading through the daemon"): each seek opens a connection and sends
// READ_REQ; Next() decodes the READ_RECORD frames the daemon streams back
// into storage::Records, reports READ_LOST to the reporter, and returns
// NotFound at READ_END (and, when following, whenever nothing new has
// arrived: wait_fd() becomes readable when something does). A following
// read whose connection ends (the daemon stopped or restarted) connects
// again and reads on from the record after the last one it passed; until
// the daemon is back, Next() says NotFound and wait_fd() is -1.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "source.h"

namespace logsink::logctl {

class DaemonSource : public RecordSource {
 public:
  // socket: the daemon's; ring_id: the ring it said it writes (RING);
  // follow: every read goes on after READ_END (tail -f).
  DaemonSource(std::string socket, const std::array<uint8_t, 16> &ring_id, bool follow,
               storage::Reporter *reporter);
  ~DaemonSource() override;

  const storage::Layout &layout() const override { return layout_; }
  storage::Status SeekOldest() override { return Start(0, 0); }
  storage::Status SeekLast(uint64_t n) override { return Start(1, n); }
  storage::Status SeekTime(uint64_t ts_ns) override { return Start(2, ts_ns); }
  storage::Status SeekEnd() override { return Start(4, 0); }
  storage::Status SeekSeq(uint64_t seq) override { return Start(3, seq); }
  storage::Status Next(storage::Record *rec) override;
  void SetFilter(const storage::RecordFilter *, bool) override {}
  uint64_t blocks_skipped() const override { return 0; }
  storage::Status ListBoots(std::vector<storage::BootInfo> *out) override;
  bool own_records_only() const override { return true; }
  uint64_t examined() const override { return examined_; }
  int wait_fd() const override { return fd_; }

 private:
  storage::Status Start(uint8_t from, uint64_t arg);
  storage::Status Connect();
  // Decodes the frame at the front of buf_: 1 a record (filled), 0 another
  // frame (handled), or an error status.
  storage::Status Frame(const uint8_t *p, size_t len, uint8_t type, storage::Record *rec,
                        bool *got);
  void Close();

  std::string socket_;
  storage::Layout layout_;
  bool follow_;
  storage::Reporter *reporter_;
  int fd_ = -1;
  uint8_t from_ = 0;
  uint64_t arg_ = 0;
  bool started_ = false;  // the current request was sent
  bool ended_ = false;    // READ_END arrived
  bool refused_ = false;  // the last Connect() failed on the daemon's refusal
  // Ask for sites' fields (READ_REQ flag FIELDS); cleared when a daemon
  // from before fields closes such a request unanswered.
  bool fields_ = true;
  bool answered_ = false;  // a frame came on this connection
  uint64_t examined_ = 0;
  std::vector<uint8_t> buf_;
  size_t pos_ = 0;  // bytes of buf_ consumed
  // Following: the sequence number the read goes on from (READ_END's
  // next_seq, then past each record), and whether the connection ended
  // and a new one reads on from there.
  uint64_t next_seq_ = 0;
  bool resume_ = false;
  bool resumed_ = false;    // this connection resumed a follow
  bool caught_up_ = false;  // READ_END came on this connection
};

}  // namespace logsink::logctl
