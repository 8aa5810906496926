// kmsg.cc: see kmsg.h and daemon/KERNEL.md.
#include "kmsg.h"

#include <errno.h>
#include <spdlog/spdlog.h>
#include <time.h>
#include <unistd.h>

#include <charconv>
#include <cstring>

#include "kmsg_parse.h"
#include "logsink/proto/args.h"
#include "logsink/proto/text_kinds.h"
#include "text_record.h"

namespace logsink::daemon {
namespace {

uint64_t Now(clockid_t clock) {
  timespec ts;
  clock_gettime(clock, &ts);
  return uint64_t(ts.tv_sec) * 1000000000u + uint64_t(ts.tv_nsec);
}

std::string_view Decimal(uint64_t v, char (&buf)[24]) {
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string_view(buf, size_t(r.ptr - buf));
}

}  // namespace

KmsgReader::KmsgReader(Context *ctx, int fd, std::optional<uint64_t> after_seq)
    : ctx_(ctx), fd_(fd), after_seq_(after_seq), buf_(kKmsgBuffer) {
  // The ring holds the kernel's records up to after_seq: a first record
  // above after_seq + 1 means the kernel overwrote some while logsinkd was
  // down, and they are counted like any other gap.
  if (after_seq_) {
    have_next_ = true;
    next_seq_ = *after_seq_ + 1;
  }
  src_.id = ctx_->next_source_id++;
  src_.pid = 0;
  src_.uid = 0;
  src_.gid = 0;
  src_.app = kKernelName;
  src_.comm = kKernelName;
}

bool KmsgReader::ReadSome(size_t max_records) {
  for (size_t n = 0; n < max_records; n++) {
    ssize_t got = read(fd_, buf_.data(), buf_.size());
    if (got > 0) {
      Store(std::string_view(buf_.data(), size_t(got)), Now(CLOCK_REALTIME), Now(CLOCK_MONOTONIC));
      continue;
    }
    if (got < 0 && errno == EINTR) continue;
    // EPIPE: the kernel overwrote records this reader had not read; the
    // next read returns the oldest one left, and the gap in sequence
    // numbers says how many went (counted in Store).
    if (got < 0 && errno == EPIPE) continue;
    if (got < 0 && errno != EAGAIN) {
      ctx_->counters->kmsg_read_errors++;
      ctx_->log_limit.Log(kLogKindWrite, spdlog::level::err, "kernel messages: read: {}",
                          std::strerror(errno));
    }
    return false;  // EAGAIN (nothing left), EOF of a stand-in file, or an error
  }
  return true;
}

void KmsgReader::Store(std::string_view rec, uint64_t now_real, uint64_t now_mono) {
  Counters &c = *ctx_->counters;
  KmsgRecord k;
  if (!ParseKmsg(rec, &k)) {
    // Not the kmsg format: kept as it came (level info), never dropped.
    c.kmsg_malformed++;
    while (!rec.empty() && rec.back() == '\n') rec.remove_suffix(1);
    TextFields f;
    f.msg = rec;
    if (!ctx_->text->Append(src_, TextKind::kKernel, 0, 6, now_real, f, 0).ok()) c.write_errors++;
    return;
  }
  if (after_seq_ && k.seq <= *after_seq_) {  // already in the ring (read before a restart)
    c.kmsg_skipped++;
    return;
  }
  // Its realtime: now, minus how long ago (on the monotonic clock) the
  // kernel logged it.
  const uint64_t at = k.usec * 1000;
  const uint64_t ts =
      at <= now_mono && now_mono - at <= now_real ? now_real - (now_mono - at) : now_real;
  if (have_next_ && k.seq > next_seq_) {
    const uint64_t lost = k.seq - next_seq_;
    c.kmsg_lost += lost;
    if (!ctx_->writer->AppendDropped(src_, ts, lost, ts).ok()) c.write_errors++;
  }
  have_next_ = true;
  next_seq_ = k.seq + 1;
  char seq[24], usec[24];
  TextFields f;
  f.msg = k.text;
  f.kseq = Decimal(k.seq, seq);
  f.kusec = Decimal(k.usec, usec);
  f.kdict = k.dict;
  if (!ctx_->text->Append(src_, TextKind::kKernel, k.facility, k.level, ts, f, 0).ok()) {
    c.write_errors++;
    return;
  }
  c.kmsg_records++;
}

std::optional<uint64_t> LastKernelSeq(const std::string &ring,
                                      const std::array<uint8_t, 16> &boot) {
  std::unique_ptr<storage::RingReader> r;
  if (!storage::RingReader::Open(storage::Env::Default(), ring, nullptr, &r).ok()) return {};
  storage::RecordFilter f;
  f.apps = {kKernelName};
  f.uids = {0};
  f.boots = {boot};
  r->SetFilter(&f);
  std::optional<uint64_t> last;
  storage::Record rec;
  while (r->Next(&rec).ok()) {
    // Only this daemon's kernel source: pid 0 (no socket peer has it) and
    // uid 0, app and comm "kernel", the kernel site.
    if (rec.kind != storage::Record::Kind::kRecord || rec.boot_id != boot || rec.uid != 0 ||
        rec.pid != 0 || rec.app != kKernelName || rec.comm != kKernelName ||
        ls_text_kind_of(rec.site.file.data(), rec.site.file.size()) != LS_TEXT_KERNEL) {
      continue;
    }
    // The second argument is the kernel's sequence number, in decimal.
    const uint8_t *p = reinterpret_cast<const uint8_t *>(rec.args.data());
    const uint8_t *end = p + rec.args.size();
    ls_arg a{};
    size_t n = ls_arg_get(LS_ARG_STR, p, end, &a);
    if (!n) continue;
    p += n;
    if (!(n = ls_arg_get(LS_ARG_STR, p, end, &a))) continue;
    uint64_t seq = 0;
    const char *s = reinterpret_cast<const char *>(a.s);
    auto res = std::from_chars(s, s + a.len, seq);
    if (res.ec != std::errc() || res.ptr != s + a.len) continue;
    if (!last || seq > *last) last = seq;
  }
  return last;
}

}  // namespace logsink::daemon
