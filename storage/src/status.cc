// status.cc: Status::ToString, the human-readable form of a storage error.
#include "logsink/storage/status.h"

namespace logsink::storage {

std::string Status::ToString() const {
  const char *name = "OK";
  switch (code_) {
    case Code::kOk:
      return "OK";
    case Code::kNotFound:
      name = "NotFound";
      break;
    case Code::kCorruption:
      name = "Corruption";
      break;
    case Code::kIOError:
      name = "IOError";
      break;
    case Code::kInvalidArgument:
      name = "InvalidArgument";
      break;
    case Code::kNotOurs:
      name = "NotOurs";
      break;
    case Code::kMismatch:
      name = "Mismatch";
      break;
    case Code::kBusy:
      name = "Busy";
      break;
    case Code::kOldVersion:
      name = "OldVersion";
      break;
    case Code::kYield:
      name = "Yield";
      break;
  }
  if (msg_.empty()) return name;
  return std::string(name) + ": " + msg_;
}

}  // namespace logsink::storage
