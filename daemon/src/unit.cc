// unit.cc: see unit.h.
#include "unit.h"

#include "peer.h"

namespace logsink::daemon {
namespace {

// A unit name: "prefix.suffix" with systemd's characters and a unit type
// as suffix (a slice groups units and is not one a process runs in).
bool IsUnitName(std::string_view s) {
  static constexpr std::string_view kSuffixes[] = {".service", ".scope",    ".socket", ".mount",
                                                   ".swap",    ".device",   ".target", ".timer",
                                                   ".path",    ".automount"};
  if (s.empty() || s.size() > kMaxUnitName) return false;
  for (char c : s) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == ':' || c == '_' || c == '.' || c == '\\' || c == '@' || c == '-';
    if (!ok) return false;
  }
  for (std::string_view suf : kSuffixes) {
    if (s.size() > suf.size() && s.substr(s.size() - suf.size()) == suf) return true;
  }
  return false;
}

std::string UnitOfPath(std::string_view path) {
  while (!path.empty()) {
    while (!path.empty() && path.front() == '/') path.remove_prefix(1);
    const size_t slash = path.find('/');
    const std::string_view comp = path.substr(0, slash);
    if (comp.size() > 6 && comp.substr(comp.size() - 6) == ".slice") {
      if (slash == std::string_view::npos) return "";
      path.remove_prefix(slash);
      continue;
    }
    return IsUnitName(comp) ? std::string(comp) : "";
  }
  return "";
}

}  // namespace

std::string UnitFromCgroup(std::string_view file) {
  std::string_view v1, v2;
  bool have_v1 = false, have_v2 = false;
  while (!file.empty()) {
    const size_t nl = file.find('\n');
    std::string_view line = file.substr(0, nl);
    file.remove_prefix(nl == std::string_view::npos ? file.size() : nl + 1);
    // "ID:CONTROLLERS:PATH"; the path may itself hold ':'.
    const size_t a = line.find(':');
    if (a == std::string_view::npos) continue;
    const size_t b = line.find(':', a + 1);
    if (b == std::string_view::npos) continue;
    const std::string_view id = line.substr(0, a), ctl = line.substr(a + 1, b - a - 1);
    const std::string_view path = line.substr(b + 1);
    if (ctl == "name=systemd") {
      v1 = path;
      have_v1 = true;
    } else if (id == "0" && ctl.empty()) {
      v2 = path;
      have_v2 = true;
    }
  }
  if (have_v1) return UnitOfPath(v1);
  return have_v2 ? UnitOfPath(v2) : "";
}

std::string ReadUnit(uint32_t pid) { return UnitFromCgroup(ReadProcFile(pid, "cgroup", 8192)); }

}  // namespace logsink::daemon
