// status.h: errors as values for the storage library (no exceptions across layers).
#pragma once

#include <string>
#include <utility>

namespace logsink::storage {

class Status {
 public:
  enum class Code {
    kOk,
    kNotFound,
    kCorruption,
    kIOError,
    kInvalidArgument,
    kNotOurs,
    kMismatch,
    kBusy,
    kOldVersion,
    kYield
  };

  Status() = default;
  static Status OK() { return Status(); }
  static Status NotFound(std::string m) { return Status(Code::kNotFound, std::move(m)); }
  static Status Corruption(std::string m) { return Status(Code::kCorruption, std::move(m)); }
  static Status IOError(std::string m) { return Status(Code::kIOError, std::move(m)); }
  static Status InvalidArgument(std::string m) {
    return Status(Code::kInvalidArgument, std::move(m));
  }
  // The file exists but is not a logsink ring file.
  static Status NotOurs(std::string m) { return Status(Code::kNotOurs, std::move(m)); }
  // The ring exists with a different geometry than requested.
  static Status Mismatch(std::string m) { return Status(Code::kMismatch, std::move(m)); }
  // Someone else holds the resource (e.g. another writer has the ring file open).
  static Status Busy(std::string m) { return Status(Code::kBusy, std::move(m)); }
  // A ring file of another format version (proto/FORMAT.md, "Versions").
  static Status OldVersion(std::string m) { return Status(Code::kOldVersion, std::move(m)); }
  // A step stopped at its budget (ReaderOptions::pass_over_per_next): call
  // again to go on; nothing was lost.
  static Status Yield(std::string m) { return Status(Code::kYield, std::move(m)); }

  bool ok() const { return code_ == Code::kOk; }
  Code code() const { return code_; }
  // One predicate per code a caller branches on (instead of comparing code()).
  bool IsNotFound() const { return code_ == Code::kNotFound; }
  bool IsCorruption() const { return code_ == Code::kCorruption; }
  bool IsIOError() const { return code_ == Code::kIOError; }
  bool IsInvalidArgument() const { return code_ == Code::kInvalidArgument; }
  bool IsNotOurs() const { return code_ == Code::kNotOurs; }
  bool IsMismatch() const { return code_ == Code::kMismatch; }
  bool IsBusy() const { return code_ == Code::kBusy; }
  bool IsOldVersion() const { return code_ == Code::kOldVersion; }
  bool IsYield() const { return code_ == Code::kYield; }
  const std::string &message() const { return msg_; }
  std::string ToString() const;

 private:
  Status(Code c, std::string m) : code_(c), msg_(std::move(m)) {}
  Code code_ = Code::kOk;
  std::string msg_;
};

}  // namespace logsink::storage
