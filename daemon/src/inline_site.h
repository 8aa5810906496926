// inline_site.h: the search for an inline site that fits a block. When the
// string table is full, a site's records carry its format and file name
// inline; a site too large for a block that way could never be stored. Its
// file name is cut until it fits (FORMAT.md: the file name is only shown);
// a format string that cannot fit even so is refused at INTERN, never
// accepted and lost.
#pragma once

#include <cstddef>
#include <string_view>

#include "logsink/storage/ring.h"

namespace logsink::daemon {

// Whether a site's file name names a free-text kind (proto/text_kinds.h:
// "text", "stdout", "stderr", "syslog:rfc3164", "syslog:rfc5424",
// "syslog:raw", "kernel"), which readers show as the kernel's or the
// daemon's own free text, its line as a syslog facility.
bool IsTextKindFile(std::string_view file);
// What a native client other than root gets before such a file name (so
// "kernel" is stored as "./kernel", the same file, no kind of free text).
constexpr std::string_view kForeignTextKindPrefix = "./";

enum class InlineFit {
  kFits,   // as it is
  kCut,    // with site->file cut to the longest prefix that fits (whole characters),
           // one character shorter when that prefix names a free-text kind
  kNever,  // not even with an empty file name
};

// sig[0, nargs): the site's argument signature (each string argument may be
// cut to nothing, so it costs one byte; any other its largest varint).
InlineFit FitInlineSite(const storage::RingWriter &w, const storage::Source &src, const char *sig,
                        size_t nargs, storage::Site *site);

}  // namespace logsink::daemon
