// forwarder_messages.cc: records to messages: which records are forwarded
// (--max-level, --app), a record as the JSON line `logctl --json` prints
// (NATS) or as RFC 5424 (RELP), its subject, and the forwarder's own
// notices in place of records (lost, oversize) (see forwarder_impl.h).
#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>

#include "forwarder_impl.h"
#include "logsink/render/escape.h"
#include "logsink/render/filter.h"
#include "logsink/storage/cursor.h"
#include "rfc5424.h"

namespace logsink::forward {

using storage::Record;

Message Forwarder::Build(const Record &rec) {
  Message m;
  m.seq = rec.seq;
  m.id = storage::FormatCursor(ring_id_, rec.seq);
  if (!subject_.fixed()) {
    int level = rec.kind == Record::Kind::kDropped ? render::kDroppedLevel : rec.site.level;
    SubjectFields f;
    f.host = host_;
    f.app = rec.app.empty() ? rec.comm : rec.app;
    f.comm = rec.comm;
    f.level = render::LevelName(level);
    f.uid = rec.uid;
    subject_.Render(f, &m.subject);
  }
  if (sink_->body() == Sink::Body::kJson) {
    line_.clear();
    json_.Print(rec, &line_);
    if (!line_.empty() && line_.back() == '\n') line_.pop_back();
    m.body = line_;
  } else {
    text_.Message(rec, &msg_);
    SyslogFields f;
    f.facility = uint8_t(o_.facility);
    f.level = rec.kind == Record::Kind::kDropped ? render::kDroppedLevel : rec.site.level;
    f.ts_ns = rec.ts_ns;
    f.host = host_;
    f.app = rec.app.empty() ? rec.comm : rec.app;
    f.pid = rec.pid;
    f.uid = rec.uid;
    f.gid = rec.gid;
    f.tid = rec.tid;
    f.sd_id = o_.sd_id;
    f.cursor = m.id;
    f.msg = msg_;
    m.body = FormatRfc5424(f);
  }
  return m;
}

// A line of the forwarder's own: {"KEY":COUNT,"first_seq":..,"last_seq":..,
// "ring":..,"app":"logsink-forward","level":"warning","msg":TEXT}.
std::string Forwarder::NoticeLine(const char *key, uint64_t count, uint64_t first, uint64_t last,
                                  const std::string &text) {
  std::string out = fmt::format("{{\"{}\":{},\"first_seq\":{},\"last_seq\":{},\"ring\":", key,
                                count, first, last);
  render::AppendJsonString(&out, ring_id_);
  out += ",\"app\":\"logsink-forward\",\"level\":\"warning\",\"msg\":";
  render::AppendJsonString(&out, text);
  out += '}';
  return out;
}

Message Forwarder::LostNotice(uint64_t first, uint64_t n) {
  Message m;
  m.seq = first;
  m.id = storage::FormatCursor(ring_id_, first);
  if (!subject_.fixed()) {
    // The notice's own fields, not a record's: a template's subject (the
    // wildcard is no subject to publish on).
    SubjectFields f;
    f.host = host_;
    f.app = "logsink-forward";
    f.comm = "logsink-forward";
    f.level = "warning";
    f.uid = unsigned(getuid());
    subject_.Render(f, &m.subject);
  }
  std::string text = fmt::format(
      "{} records lost: overwritten in {} before they were forwarded "
      "(records {}..{})",
      n, o_.file, first, first + n - 1);
  m.body = sink_->body() == Sink::Body::kJson ? NoticeLine("lost", n, first, first + n - 1, text)
                                              : SyslogNotice(m.id, text);
  return m;
}

std::string Forwarder::SyslogNotice(const std::string &cursor, const std::string &text) {
  SyslogFields f;
  f.facility = uint8_t(o_.facility);
  f.level = 4;
  f.ts_ns = WallNs();
  f.host = host_;
  f.app = "logsink-forward";
  f.pid = uint32_t(getpid());
  f.uid = uint32_t(getuid());
  f.gid = uint32_t(getgid());
  f.sd_id = o_.sd_id;
  f.cursor = cursor;
  f.msg = text;
  return FormatRfc5424(f);
}

// In place of a record whose JSON is too big for one message.
std::string Forwarder::OversizeLine(uint64_t seq, size_t bytes, size_t limit) {
  ++c_.oversize;
  spdlog::warn(
      "record {} is {} bytes as JSON, more than one message may hold ({}): sending a "
      "notice in its place",
      seq, bytes, limit);
  return NoticeLine("oversize", 1, seq, seq,
                    fmt::format("record {} of {} left out: {} bytes as JSON, more than one NATS "
                                "message may hold ({} bytes)",
                                seq, o_.file, bytes, limit));
}

// --max-level and --app: whether a record is forwarded.
bool Forwarder::Passes(const Record &rec) const { return filter_.Match(rec); }

}  // namespace logsink::forward
