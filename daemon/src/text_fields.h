// text_fields.h: the named fields of free text (FORMAT.md, "Free-text
// records"): an RFC 5424 datagram's SD-PARAMs (SDID.PARAM, RFC 5424's
// escapes undone), the kernel's dictionary (KEY, its \xNN escapes undone)
// and a text stream's own list (PROTOCOL.md, "Text streams"), gathered into
// one list whose names are fields.h's (no '_': those are the daemon's own),
// each once (the first occurrence wins), and at most kMaxTextFields.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace logsink::daemon {

// Fields of one free-text record at most; a record with more keeps none
// (stored as its kind's plain site: TextSites).
constexpr size_t kMaxTextFields = 32;

struct TextField {
  std::string_view name, value;
};

// How a value's bytes are turned into the field's string.
enum class Unescape : uint8_t {
  kNone,    // as they are (a text stream's value)
  kSd,      // RFC 5424 PARAM-VALUE: \" \\ \] are the character after '\'
  kKernel,  // the kernel's dictionary: \xNN is the byte NN
};

class TextFieldList {
 public:
  void Clear();
  // Adds prefix + name (prefix and '.' first when prefix is not empty) with
  // the value unescaped by u. A name that is not a field name, or starts
  // with '_', is not taken (counted in bad_names); a name already in the
  // list is not taken again (the first stays); past kMaxTextFields the list
  // is over (too_many).
  void Add(std::string_view prefix, std::string_view name, std::string_view value, Unescape u);

  size_t size() const { return offs_.size(); }
  bool too_many() const { return too_many_; }
  uint64_t bad_names() const { return bad_names_; }
  // The fields in the order they were added (views into this list, valid
  // until the next Clear or Add).
  const std::vector<TextField> &fields();

 private:
  struct Off {
    uint32_t name, name_len, value, value_len;
  };
  bool Has(std::string_view name) const;
  std::string buf_;  // names and values, back to back
  std::vector<Off> offs_;
  std::vector<TextField> views_;
  bool too_many_ = false;
  uint64_t bad_names_ = 0;
};

// The fields of an RFC 5424 STRUCTURED-DATA (brackets included; empty for
// the nil "-"): SDID.PARAM = its value, each SD-ELEMENT's in turn.
void SdFields(std::string_view sd, TextFieldList *out);
// The fields of a kernel record's dictionary ("KEY=VALUE" lines joined by
// '\n', as kmsg_parse.h keeps them): KEY = VALUE.
void KmsgDictFields(std::string_view dict, TextFieldList *out);

}  // namespace logsink::daemon
