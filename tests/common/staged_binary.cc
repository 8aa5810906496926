// staged_binary.cc: binaries copied where another user can run them (see
// staged_binary.h).
#include "common/staged_binary.h"

#include <stdlib.h>
#include <sys/stat.h>

#include <filesystem>
#include <sstream>
#include <system_error>

#include "common/process.h"

namespace logsink::test {

namespace fs = std::filesystem;

namespace {

// Libraries from the system's directories are readable by everyone.
bool IsSystemPath(const std::string &p) {
  for (const char *d : {"/lib/", "/lib64/", "/usr/", "/lib32/", "/libx32/"})
    if (p.rfind(d, 0) == 0) return true;
  return false;
}

}  // namespace

StagedBinary::StagedBinary(const std::string &bin) {
  std::string tmpl = "/tmp/logsink-staged-XXXXXX";
  if (!mkdtemp(tmpl.data())) {
    error_ = "mkdtemp failed";
    return;
  }
  dir_ = tmpl;
  chmod(dir_.c_str(), 0755);
  path_ = dir_ + "/" + fs::path(bin).filename().string();
  const auto mode = fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                    fs::perms::others_read | fs::perms::others_exec;
  std::vector<std::string> files{bin};
  // `ldd` names each library the loader resolves: "libx.so.1 => /path (0x...)".
  ProcResult r = RunProcess("/usr/bin/ldd", {bin});
  if (r.status != 0) {
    error_ = "ldd " + bin + ": " + r.err;
    return;
  }
  for (const auto &line : Lines(r.out)) {
    size_t arrow = line.find("=> /");
    if (arrow == std::string::npos) continue;
    std::string lib = line.substr(arrow + 3);
    // The path ends at the load address, " (0x...)": a build directory's
    // path may hold spaces.
    const size_t addr = lib.rfind(" (0x");
    lib = lib.substr(0, addr);
    if (!IsSystemPath(lib)) files.push_back(lib);
  }
  for (const auto &f : files) {
    std::error_code ec;
    fs::path to = fs::path(dir_) / fs::path(f).filename();
    fs::copy_file(f, to, fs::copy_options::overwrite_existing, ec);
    if (!ec) fs::permissions(to, mode, ec);
    if (ec) {
      error_ = "copy " + f + ": " + ec.message();
      return;
    }
  }
}

StagedBinary::~StagedBinary() {
  std::error_code ec;
  if (!dir_.empty()) fs::remove_all(dir_, ec);
}

void StagedBinary::SetLibraryPath() const { setenv("LD_LIBRARY_PATH", dir_.c_str(), 1); }

}  // namespace logsink::test
