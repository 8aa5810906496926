// cursor.h: a position in a ring that survives restarts of the writer and of
// the reader: the ring's identity (Layout::ring_id) and a record sequence
// number. As text (what `logctl --show-cursor` prints, what
// logsink-forward's cursor file and Nats-Msg-Id hold):
//   ls1-<32 hex digits: ring id>-<record sequence number, lowercase hex>
// e.g. "ls1-5d1c0e9a4b7f21c3a0d9e8f7b6c5a493-1f4". Opaque to users; a cursor
// of another or a recreated ring is refused, never applied to this one.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "logsink/storage/ring.h"

namespace logsink::storage {

struct Cursor {
  std::string ring_id;  // 32 lowercase hex digits
  uint64_t seq = 0;     // record sequence number
};

std::string FormatCursor(const std::string &ring_id, uint64_t seq);
// False with a one-sentence reason in *why when s is not a cursor.
bool ParseCursor(std::string_view s, Cursor *out, std::string *why);
// OK when c belongs to the ring of `layout`; InvalidArgument saying which
// ring it names otherwise (or that this ring has no identity yet).
Status CheckCursor(const Cursor &c, const Layout &layout, const std::string &path);

}  // namespace logsink::storage
