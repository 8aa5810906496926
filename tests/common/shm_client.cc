// shm_client.cc: see shm_client.h.
#include "common/shm_client.h"

#include <poll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <initializer_list>

#include "common/process.h"
#include "common/unix_socket.h"
#include "logsink/proto/frame.h"
#include "logsink/proto/frame_encode.h"

namespace logsink::test {

ShmClient::ShmClient(const std::string &socket) : fd_(ConnectUnix(socket)) {}

ShmClient::~ShmClient() {
  if (base_) munmap(base_, bytes_);
  if (region_fd_ >= 0) close(region_fd_);
  End();
}

void ShmClient::End() {
  if (fd_ >= 0) close(fd_);
  fd_ = -1;
}

bool ShmClient::Send(const std::string &bytes) {
  size_t off = 0;
  while (off < bytes.size()) {
    const ssize_t n = send(fd_, bytes.data() + off, bytes.size() - off, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    off += size_t(n);
  }
  return true;
}

namespace {
// A frame of `type`: `words` as varints, then `payload` (proto's encoders).
std::string FrameOf(uint8_t type, std::initializer_list<uint64_t> words,
                    const std::string &payload) {
  std::string f(LS_FRAME_HDR + words.size() * LS_VARINT_MAX + payload.size(), '\0');
  auto *b = reinterpret_cast<uint8_t *>(f.data());
  size_t at = size_t(ls_frame_open(b, f.size(), type));
  for (uint64_t w : words) at += size_t(ls_varint_encode(b + at, f.size() - at, w));
  std::memcpy(b + at, payload.data(), payload.size());
  f.resize(size_t(ls_frame_close(b, b + at + payload.size())));
  return f;
}
}  // namespace

bool ShmClient::ReadFrame(uint8_t *type, std::string *payload) {
  const auto deadline = std::chrono::steady_clock::now() + kHang;
  while (std::chrono::steady_clock::now() < deadline) {
    ls_frame f;
    const ptrdiff_t r =
        ls_frame_parse(reinterpret_cast<const uint8_t *>(in_.data()), in_.size(), LS_FRAME_MAX, &f);
    if (r < 0) return false;
    if (r > 0) {
      *type = f.type;
      payload->assign(reinterpret_cast<const char *>(f.payload), f.len);
      in_.erase(0, size_t(r));
      return true;
    }
    pollfd p{fd_, POLLIN, 0};
    if (poll(&p, 1, 50) <= 0) continue;
    char buf[4096];
    struct iovec iov = {buf, sizeof buf};
    alignas(struct cmsghdr) char ctl[CMSG_SPACE(sizeof(int))];
    struct msghdr m = {};
    m.msg_iov = &iov;
    m.msg_iovlen = 1;
    m.msg_control = ctl;
    m.msg_controllen = sizeof ctl;
    const ssize_t n = recvmsg(fd_, &m, MSG_CMSG_CLOEXEC);
    if (n <= 0) return false;
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c))
      if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS && region_fd_ < 0)
        std::memcpy(&region_fd_, CMSG_DATA(c), sizeof region_fd_);
    in_.append(buf, size_t(n));
  }
  return false;
}

bool ShmClient::Open(const std::string &app, uint32_t *caps) {
  if (caps) *caps = 0;
  ls_hello h{};
  h.version = 2;
  h.app = app.data();
  h.app_len = app.size();
  h.caps = LS_CAP_SHM;
  h.levels = "";
  std::string hello(LS_FRAME_HDR + 16 + LS_VARINT_MAX * 2 + app.size(), '\0');
  const ptrdiff_t hn = ls_hello_encode(reinterpret_cast<uint8_t *>(hello.data()), hello.size(), &h);
  if (hn < 0) return false;
  hello.resize(size_t(hn));
  uint8_t type;
  std::string payload;
  if (fd_ < 0 || !Send(hello) || !ReadFrame(&type, &payload) || type != LS_F_WELCOME) return false;
  ls_welcome w;
  if (ls_welcome_decode(reinterpret_cast<const uint8_t *>(payload.data()), payload.size(), &w) < 0)
    return false;
  if (caps) *caps = w.caps;
  if (!(w.caps & LS_CAP_SHM) || !ReadFrame(&type, &payload) || type != LS_F_SHM ||
      ls_shm_decode(reinterpret_cast<const uint8_t *>(payload.data()), payload.size(), &g_) < 0 ||
      region_fd_ < 0)
    return false;
  bytes_ = ls_shm_region_bytes(g_.slots, g_.slot_bytes, g_.sites_bytes);
  void *m = mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_SHARED, region_fd_, 0);
  if (m == MAP_FAILED) return false;
  base_ = static_cast<uint8_t *>(m);
  return true;
}

uint8_t *ShmClient::SlotData(uint32_t slot) {
  return base_ + ls_shm_slot_off(g_.sites_bytes, g_.slot_bytes, slot) + LS_SHM_SLOT_HDR;
}

void ShmClient::SetTid(uint32_t slot, uint64_t tid) {
  *Word(ls_shm_slot_off(g_.sites_bytes, g_.slot_bytes, slot) + 8) = tid;
}

void ShmClient::Publish(uint32_t slot, uint64_t head) {
  __atomic_store_n(Word(ls_shm_slot_off(g_.sites_bytes, g_.slot_bytes, slot)), head,
                   __ATOMIC_RELEASE);
}

void ShmClient::Release() { __atomic_store_n(Word(LS_SHM_RELEASED_OFF), 1, __ATOMIC_RELEASE); }

void ShmClient::LogSite(const std::string &frame) {
  std::memcpy(base_ + LS_SHM_LOG_HDR + log_len_, frame.data(), frame.size());
  log_len_ += frame.size();
  __atomic_store_n(Word(0), log_len_, __ATOMIC_RELEASE);
}

uint64_t ShmClient::Stage(uint32_t slot, uint32_t site, uint64_t ts_ns, const std::string &args) {
  uint64_t &pos = pos_[slot];
  const uint64_t size = ls_shm_rec_size(uint32_t(args.size()), 0);
  const uint64_t off = pos & (g_.slot_bytes - 1);
  if (g_.slot_bytes - off < size) {
    ls_put_u32(SlotData(slot) + off, LS_SHM_PAD);
    pos += g_.slot_bytes - off;
  }
  uint8_t *r = SlotData(slot) + (pos & (g_.slot_bytes - 1));
  std::memset(r, 0, size);
  ls_put_u32(r, uint32_t(args.size()));
  ls_put_u32(r + 4, site);
  ls_put_u64(r + 8, ts_ns);
  std::memcpy(r + LS_SHM_REC_HDR, args.data(), args.size());
  pos += size;
  Publish(slot, pos);
  return pos;
}

bool ShmClient::SendAt(uint32_t slot, uint64_t end, const std::string &records) {
  return Send(FrameOf(LS_F_RECORDS_AT, {slot, end}, records));
}

}  // namespace logsink::test
