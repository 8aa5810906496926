// temp_dir.h: a private temporary directory under /tmp, removed with its
// contents (std::filesystem::remove_all) when the object goes away.
#pragma once

#include <string>
#include <vector>

namespace logsink::test {

class TempDir {
 public:
  // prefix names the directory: /tmp/<prefix>-XXXXXX (mode 0700).
  explicit TempDir(const std::string &prefix = "logsink-test");
  ~TempDir();
  TempDir(const TempDir &) = delete;
  TempDir &operator=(const TempDir &) = delete;

  const std::string &path() const { return path_; }
  std::string File(const std::string &name) const { return path_ + "/" + name; }
  std::string operator/(const std::string &name) const { return File(name); }

 private:
  std::string path_;
};

// The whole file ("" when it cannot be read) / replaces the file with data.
std::string ReadFile(const std::string &path);
void WriteFile(const std::string &path, const std::string &data);
// The names of the entries of dir (without . and ..), sorted; empty when it
// cannot be read.
std::vector<std::string> Names(const std::string &dir);

}  // namespace logsink::test
