// read_setup.cc: -b's choice of a boot and the end of the output for the
// reading commands (see read_setup.h).
#include "read_setup.h"

#include <cerrno>
#include <cstring>

#include "common.h"
#include "logsink/render/filter.h"
#include "logsink/storage/env.h"

namespace logsink::logctl {

using storage::Record;
using storage::Status;

int OpenReading(const Options &o, bool follow, Reading *out) {
  RingOrigin origin;
  if (!RingPath(o.file, o.socket, &out->path, &origin)) return kExitError;
  out->rep = std::make_unique<ReadReporter>(out->path);
  return OpenSource(out->path, origin, follow, out->rep.get(), &out->source);
}

int SelectBoot(Options &o, RecordSource *r, const std::string &path) {
  if (!o.boot || o.boot->kind == BootSpec::Kind::kAll) return kExitOk;
  const BootSpec &b = *o.boot;
  if (b.kind == BootSpec::Kind::kOffset && b.offset == 0 && !r->own_records_only()) {
    // The last boot (-b, -k) is the newest record's: no need to read every
    // block header as ListBoots does. (The caller seeks afterwards.)
    Status s = r->SeekLast(1);
    Record rec;
    if (s.ok() || s.IsNotFound()) s = r->Next(&rec);
    if (s.ok()) {
      o.filter.boots.push_back(rec.boot_id);
      return kExitOk;
    }
    if (!s.IsNotFound()) {
      Error(path, s.ToString());
      return kExitError;
    }
  }
  std::vector<storage::BootInfo> boots;
  Status s = r->ListBoots(&boots);
  if (!s.ok()) {
    Error(path, s.ToString());
    return kExitError;
  }
  const int64_t n = int64_t(boots.size());
  const storage::BootInfo *found = nullptr;
  std::string name;
  if (b.kind == BootSpec::Kind::kId) {
    name = render::BootIdHex(b.id);
    for (const storage::BootInfo &i : boots)
      if (i.boot_id == b.id) found = &i;
  } else {
    name = std::to_string(b.offset);
    // journalctl's numbering: 1 is the first boot, 0 the last, -1 the one
    // before it.
    const int64_t i = b.offset > 0 ? b.offset - 1 : n - 1 + b.offset;
    if (i >= 0 && i < n) found = &boots[size_t(i)];
  }
  if (!found && n == 0 && o.follow && b.kind == BootSpec::Kind::kOffset && b.offset == 0) {
    // An empty ring has no last boot yet. Followed, its last boot will be
    // the one the next records carry: this machine's (journalctl -f -b waits).
    o.filter.boots.push_back(storage::Env::Default()->BootId());
    return kExitOk;
  }
  if (!found) {
    Error(path, "no boot " + name + " in the ring (it holds " + std::to_string(n) +
                    (n == 1 ? " boot)" : " boots)"));
    return kExitError;
  }
  o.filter.boots.push_back(found->boot_id);
  return kExitOk;
}

bool UseColor(const Options &o, bool tty) {
  if (o.no_color || !tty) return false;
  if (!render::IsShortMode(o.mode)) return false;
  const char *nc = std::getenv("NO_COLOR");
  return !(nc && nc[0]);
}

int FinishOutput(Out *out, const std::string &what) {
  out->Flush();
  if (out->failed() && out->error() != EPIPE) {
    Error(what, std::strerror(out->error()));
    return kExitError;
  }
  return kExitOk;
}

}  // namespace logsink::logctl
