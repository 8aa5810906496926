// staged_binary.h: a copy of one of the build's binaries that another user
// can run. The build tree may sit in a private (0700) directory, and its
// binaries find liblogsink through an RPATH into that tree; a test that runs
// a binary as, say, nobody copies it and the shared libraries it loads from
// outside the system directories into a fresh 0755 directory under /tmp.
#pragma once

#include <string>

namespace logsink::test {

class StagedBinary {
 public:
  explicit StagedBinary(const std::string &bin);  // e.g. BinPath("logctl")
  ~StagedBinary();                                // removes the copy
  StagedBinary(const StagedBinary &) = delete;
  StagedBinary &operator=(const StagedBinary &) = delete;

  bool ok() const { return error_.empty(); }
  const std::string &error() const { return error_; }
  const std::string &path() const { return path_; }  // the copy
  // In the child before exec: points LD_LIBRARY_PATH at the copied libraries.
  void SetLibraryPath() const;

 private:
  std::string dir_, path_, error_;
};

}  // namespace logsink::test
