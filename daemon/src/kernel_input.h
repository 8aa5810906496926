// kernel_input.h: the kernel's log on the loop (daemon/KERNEL.md): whether
// it is read ([kernel] read), opening /dev/kmsg and finding where this
// boot's records in the ring end, a budget of records per wakeup, and at a
// stop reading it to its end. Parsing and storing are kmsg.h's.
#pragma once

#include <uv.h>

#include <memory>

#include "context.h"
#include "kmsg.h"
#include "logsink/config/config.h"

namespace logsink::daemon {

class KernelInput {
 public:
  // cfg: the server's configuration ([kernel] read and device, the ring).
  KernelInput(Context *ctx, const config::Config *cfg) : ctx_(ctx), cfg_(cfg) {}
  ~KernelInput();
  KernelInput(const KernelInput &) = delete;
  KernelInput &operator=(const KernelInput &) = delete;

  // Opens the kernel's log per [kernel] read and polls it on loop; false
  // (logged) when read = "yes" and it cannot be opened.
  bool Start(uv_loop_t *loop);
  // At a stop: what the kernel logged before it is read the same way until
  // nothing is left (the server then calls Close), or the deadline.
  void Stop() { draining_ = fd_ >= 0; }
  // Lets the device go. Only after Stop, once.
  void Close();
  // Between Stop and Close.
  bool draining() const { return draining_; }
  int fd() const { return fd_; }  // -1: not read

 private:
  static void OnReadable(uv_poll_t *h, int status, int events);

  Context *ctx_;
  const config::Config *cfg_;
  int fd_ = -1;
  uv_poll_t poll_;
  std::unique_ptr<KmsgReader> rx_;
  bool draining_ = false;
};

}  // namespace logsink::daemon
