// shm_client.h: a client of the capability SHM (proto/PROTOCOL.md, "Shared
// buffers") for tests and benchmarks, written from the document: it says
// HELLO version 2 with SHM, takes its region (the SHM frame and the memfd
// that comes with WELCOME), maps it writable, and stages and publishes
// records and sites in it as the document says. It can also break every
// rule (Publish, Word): the tests' attacks.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "logsink/proto/shm.h"

namespace logsink::test {

class ShmClient {
 public:
  explicit ShmClient(const std::string &socket);
  ~ShmClient();
  ShmClient(const ShmClient &) = delete;
  ShmClient &operator=(const ShmClient &) = delete;

  // HELLO v2 with SHM as `app`; true when WELCOME says SHM and the region
  // came and is mapped. *caps: WELCOME's capabilities (0 when none came).
  bool Open(const std::string &app, uint32_t *caps = nullptr);
  int fd() const { return fd_; }
  int region_fd() const { return region_fd_; }
  const ls_shm_geom &geom() const { return g_; }
  uint64_t region_bytes() const { return bytes_; }

  // Sends bytes whole (frames of the caller's making).
  bool Send(const std::string &bytes);
  // The stream ends (as an exiting process's close would).
  void End();

  // The region's words and bytes, writable: what a liar scribbles on.
  uint64_t *Word(uint64_t off) { return reinterpret_cast<uint64_t *>(base_ + off); }
  uint8_t *SlotData(uint32_t slot);
  void SetTid(uint32_t slot, uint64_t tid);
  // Stores slot's head (release), whatever it is.
  void Publish(uint32_t slot, uint64_t head);
  // Lets the staged records go (`released`): a client that lives on and
  // sends them elsewhere does this before it closes.
  void Release();
  // Appends a whole frame (an INTERN, as the document says) to the site
  // log and publishes the log's new length.
  void LogSite(const std::string &frame);
  // Stages one record (args: its arguments as RECORDS carry them) in slot,
  // a pad first when it would not fit before the data's end, and publishes
  // it. Returns the slot's position after it.
  uint64_t Stage(uint32_t slot, uint32_t site, uint64_t ts_ns, const std::string &args);
  uint64_t pos(uint32_t slot) { return pos_[slot]; }
  // RECORDS_AT of slot up to `end`: `records` is a RECORDS payload
  // (varint tid | record*).
  bool SendAt(uint32_t slot, uint64_t end, const std::string &records);

 private:
  // One whole frame from the socket (type, payload), keeping a descriptor
  // that comes with the bytes; false at EOF, an error or the hang limit.
  bool ReadFrame(uint8_t *type, std::string *payload);

  int fd_ = -1, region_fd_ = -1;
  std::string in_;
  ls_shm_geom g_{};
  uint8_t *base_ = nullptr;
  uint64_t bytes_ = 0, log_len_ = 0;
  std::map<uint32_t, uint64_t> pos_;
};

}  // namespace logsink::test
