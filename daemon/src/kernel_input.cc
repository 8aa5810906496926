// kernel_input.cc: the kernel's log on the loop (see kernel_input.h).
#include "kernel_input.h"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>

#include "logsink/proto/paths.h"
#include "logsink/storage/env.h"

namespace logsink::daemon {

// Records read per wakeup at most, then back to the loop (like the syslog
// socket).
constexpr size_t kKmsgRecordsPerWakeup = 1024;

KernelInput::~KernelInput() {
  if (fd_ >= 0) close(fd_);
}

// "auto" reads the kernel's log only in the system instance (the one that
// writes the system ring; under systemd as user logsink with CAP_SYSLOG):
// per-user and test instances never do. What the ring
// already holds of this boot's kernel log (from before a restart) is found
// by its sequence numbers and not stored twice.
bool KernelInput::Start(uv_loop_t *loop) {
  const bool want = cfg_->kernel_read == "yes" ||
                    (cfg_->kernel_read == "auto" && cfg_->ring_file == LS_SYSTEM_RING);
  if (!want) return true;
  fd_ = open(cfg_->kernel_device.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd_ < 0) {
    if (cfg_->kernel_read == "yes") {
      spdlog::critical("kernel messages: cannot open {}: {} ([kernel] read = \"yes\")",
                       cfg_->kernel_device, strerror(errno));
      return false;
    }
    spdlog::warn("kernel messages: cannot open {}: {}; not reading them", cfg_->kernel_device,
                 strerror(errno));
    return true;
  }
  // Everything the writer has buffered is on disk before the ring is read.
  if (!ctx_->writer->Flush().ok()) ctx_->counters->write_errors++;
  const auto boot = storage::Env::Default()->BootId();
  const std::optional<uint64_t> after = LastKernelSeq(cfg_->ring_file, boot);
  rx_ = std::make_unique<KmsgReader>(ctx_, fd_, after);
  if (after)
    spdlog::info("kernel messages from {}, after sequence number {} (already in the ring)",
                 cfg_->kernel_device, *after);
  else
    spdlog::info("kernel messages from {}", cfg_->kernel_device);
  uv_poll_init(loop, &poll_, fd_);
  poll_.data = this;
  uv_poll_start(&poll_, UV_READABLE, OnReadable);
  return true;
}

void KernelInput::OnReadable(uv_poll_t *h, int status, int) {
  auto *in = static_cast<KernelInput *>(h->data);
  if (status < 0) {
    in->ctx_->log_limit.Log(kLogKindWrite, spdlog::level::err, "kernel messages: {}",
                            uv_strerror(status));
    return;
  }
  // At a stop, what the kernel logged before it is read the same way, and
  // the device is let go once nothing is left (or at the drain's deadline).
  if (!in->rx_->ReadSome(kKmsgRecordsPerWakeup) && in->draining_) in->Close();
}

void KernelInput::Close() {
  if (!draining_) return;
  draining_ = false;
  uv_close(reinterpret_cast<uv_handle_t *>(&poll_), nullptr);
}

}  // namespace logsink::daemon
