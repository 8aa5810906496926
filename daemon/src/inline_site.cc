// inline_site.cc: see inline_site.h.
#include "inline_site.h"

#include "logsink/proto/codec.h"
#include "logsink/proto/printf.h"
#include "logsink/proto/text_kinds.h"

namespace logsink::daemon {

bool IsTextKindFile(std::string_view file) {
  return ls_text_kind_of(file.data(), file.size()) >= 0;
}

InlineFit FitInlineSite(const storage::RingWriter &w, const storage::Source &src, const char *sig,
                        size_t nargs, storage::Site *site) {
  size_t floor = 0;  // the arguments with every string cut to nothing
  for (size_t i = 0; i < nargs; i++) floor += sig[i] == LS_ARG_STR ? 1 : LS_VARINT_MAX;
  if (w.InlineSiteFits(src, *site, floor)) return InlineFit::kFits;
  storage::Site cut = *site;
  cut.file = {};
  if (!w.InlineSiteFits(src, cut, floor)) return InlineFit::kNever;
  size_t lo = 0, hi = site->file.size();  // the longest file name that fits
  while (lo < hi) {
    size_t mid = lo + (hi - lo + 1) / 2;
    cut.file = site->file.substr(0, mid);
    if (w.InlineSiteFits(src, cut, floor))
      lo = mid;
    else
      hi = mid - 1;
  }
  lo = ls_utf8_cut(reinterpret_cast<const uint8_t *>(site->file.data()), site->file.size(), lo);
  // "kernel.c" cut to "kernel" would read as the kernel's: one byte less
  // (the kinds' names are ASCII, and none is a prefix of another).
  if (IsTextKindFile(site->file.substr(0, lo))) lo--;
  site->file = site->file.substr(0, lo);
  return InlineFit::kCut;
}

}  // namespace logsink::daemon
