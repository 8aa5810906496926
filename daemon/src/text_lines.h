// text_lines.h: the lines of a text stream (PROTOCOL.md, "Text streams"):
// the bytes after the HELLO split at '\n', each line one free-text record
// (text_record.h) with the priority of the HELLO's flags or of the line's
// <N> prefix; a line keeps its first kMaxTextLine bytes, whole characters
// only, and the rest is cut and counted (as is a cut to fit a block:
// TextSites::last_cut); the HELLO's field list (if any) on
// every line; the acknowledgment at the end.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "context.h"
#include "logsink/storage/ring.h"

namespace logsink::daemon {

// The bytes of a text-stream line that are kept; the rest is cut and counted.
constexpr size_t kMaxTextLine = 8192;

class TextLines {
 public:
  // flags: the HELLO's (LS_HELLO_TEXT set). Lines are stored as src's.
  TextLines(Context *ctx, const storage::Source *src, uint32_t flags)
      : ctx_(ctx), src_(src), flags_(flags) {}
  // The stream's fields (its HELLO's list, the names checked by the
  // session), carried by every line.
  void SetFields(std::vector<std::pair<std::string, std::string>> fields);

  // Stores every line that ends in p[0, n); the unfinished one is kept.
  void Feed(const uint8_t *p, size_t n);
  // The peer closed its end (EOF): the partial last line is stored. Returns
  // whether it stored one. While the daemon stops (stopping), a relayed
  // stream's partial line is discarded instead: its relay resends it whole
  // to the next daemon (PROTOCOL.md, "Relayed streams").
  bool Finish(bool stopping);
  // Appends the acknowledgment to out: a STATS frame with the lines stored,
  // cut and partial on this stream, and with a field list the lines stored
  // without their fields (TextSites' bounds).
  void AppendAck(std::string *out) const;
  // The heap this holds (the memory budget's share).
  uint64_t Holding() const { return line_.capacity() + fields_bytes_; }

 private:
  void EndLine();

  Context *ctx_;
  const storage::Source *src_;
  uint32_t flags_;
  std::string line_;       // the current line's first kMaxTextLine bytes
  uint64_t line_cut_ = 0;  // bytes of the current line past those
  uint64_t lines_ = 0, lines_cut_ = 0, partial_lines_ = 0, lines_without_fields_ = 0;
  std::vector<std::pair<std::string, std::string>> owned_;  // the HELLO's fields
  std::vector<TextField> fields_;                           // views into owned_, made for each line
  uint64_t fields_bytes_ = 0;
};

}  // namespace logsink::daemon
