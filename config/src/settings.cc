// settings.cc: the table of logsinkd's settings (settings.h) and what
// follows from it without TOML: defaults, comparison, copying.
#include "logsink/config/settings.h"

#include <cstring>

#include "logsink/proto/paths.h"
#include "logsink/proto/shm.h"

namespace logsink::config {
namespace {

constexpr uint64_t kKiB = 1024, kMiB = kKiB * 1024, kGiB = kMiB * 1024, kTiB = kGiB * 1024;
constexpr uint64_t kSecond = 1000, kMinute = 60 * kSecond, kHour = 60 * kMinute;

constexpr const char *kCompressions[] = {"zstd", "lz4", "none", nullptr};
constexpr const char *kKernelRead[] = {"auto", "yes", "no", nullptr};

// Sections in print order; within one, keys in print order. logsinkd.toml
// documents each row in the same order, with its default.
constexpr Setting kSettings[] = {
    // [daemon]
    {.section = "daemon",
     .key = "log_level",
     .kind = Kind::kLogLevel,
     .member = &Config::log_level,
     .def = "info",
     .live = true,
     .help = "level of logsinkd's own diagnostics on stderr"},
    // [socket]
    {.section = "socket",
     .key = "path",
     .kind = Kind::kSocketPath,
     .member = &Config::socket_path,
     .def = "",
     .max = 107,
     .documented = LS_SYSTEM_SOCKET,
     .help = "the stream socket clients connect to; \"\" = $LOGSINK_SOCKET or the default"},
    {.section = "socket",
     .key = "mode",
     .kind = Kind::kMode,
     .member = &Config::socket_mode,
     .def = uint64_t{0666},
     .max = 0777,
     .help = "permission bits of the socket file (who may log)"},
    {.section = "socket",
     .key = "group",
     .kind = Kind::kString,
     .member = &Config::socket_group,
     .def = "",
     .help = "group of the socket file; \"\" keeps the daemon's"},
    // [syslog]
    {.section = "syslog",
     .key = "socket",
     .kind = Kind::kSocketPath,
     .member = &Config::syslog_socket,
     .def = "",
     .max = 107,
     .help = "a datagram socket that takes syslog messages; \"\" = none"},
    // [ring]
    {.section = "ring",
     .key = "file",
     .kind = Kind::kString,
     .member = &Config::ring_file,
     .def = "",
     .documented = LS_SYSTEM_RING,
     .help = "the ring file; \"\" = the default"},
    {.section = "ring",
     .key = "size",
     .kind = Kind::kSize,
     .member = &Config::ring_size,
     .def = uint64_t{64 * kMiB},
     .min = 32 * kKiB,
     .max = kTiB,
     .help = "total size of the ring file"},
    {.section = "ring",
     .key = "block_size",
     .kind = Kind::kSize,
     .member = &Config::block_size,
     .def = uint64_t{8 * kKiB},
     .min = 4 * kKiB,
     .max = kMiB,
     .power_of_two = true,
     .help = "block size of the ring file"},
    {.section = "ring",
     .key = "compression",
     .kind = Kind::kChoice,
     .member = &Config::compression,
     .def = "zstd",
     .choices = kCompressions,
     .choice_noun = "a compression",
     .help = "how blocks store their records"},
    {.section = "ring",
     .key = "compression_level",
     .kind = Kind::kCount,
     .member = &Config::compression_level,
     .def = uint64_t{1},
     .min = 1,
     .max = 19,
     .help = "zstd's level"},
    {.section = "ring",
     .key = "write_queue",
     .kind = Kind::kSize,
     .member = &Config::write_queue,
     .def = uint64_t{0},
     .min = 0,
     .max = 64 * kMiB,
     .help = "records waiting for the writer thread (0: the loop writes them itself)"},
    // [retention]
    {.section = "retention",
     .key = "kept_share",
     .kind = Kind::kShare,
     .member = &Config::kept_share,
     .def = 0.125,
     .max_share = 0.5,
     .help = "share of the ring's slots for tier 1"},
    {.section = "retention",
     .key = "error_share",
     .kind = Kind::kShare,
     .member = &Config::error_share,
     .def = 0.125,
     .max_share = 0.5,
     .help = "share of the ring's slots for tier 2"},
    {.section = "retention",
     .key = "kept_level",
     .kind = Kind::kLevel,
     .member = &Config::kept_level,
     .def = "notice",
     .help = "records this severe or more are kept in tier 1"},
    {.section = "retention",
     .key = "error_level",
     .kind = Kind::kLevel,
     .member = &Config::error_level,
     .def = "err",
     .help = "records this severe or more are kept in tier 2"},
    {.section = "retention",
     .key = "fairness",
     .kind = Kind::kBool,
     .member = &Config::fairness,
     .def = true,
     .help = "keep the records of all but the largest source as they leave a tier"},
    // [kernel]
    {.section = "kernel",
     .key = "read",
     .kind = Kind::kChoice,
     .member = &Config::kernel_read,
     .def = "auto",
     .choices = kKernelRead,
     .choice_noun = "a read mode",
     .help = "whether to store the kernel's messages"},
    {.section = "kernel",
     .key = "device",
     .kind = Kind::kString,
     .member = &Config::kernel_device,
     .def = "/dev/kmsg",
     .help = "where to read the kernel's messages from"},
    // [writer]
    {.section = "writer",
     .key = "flush_interval",
     .kind = Kind::kDuration,
     .member = &Config::flush_interval_ms,
     .def = uint64_t{100},
     .min = 1,
     .max = kMinute,
     .live = true,
     .help = "records are visible to readers at most this long after they arrived"},
    {.section = "writer",
     .key = "flush_min_interval",
     .kind = Kind::kDuration,
     .member = &Config::flush_min_interval_ms,
     .def = uint64_t{1},
     .min = 1,
     .max = kMinute,
     .live = true,
     .help = "the shortest gap between two writes of the partial block"},
    {.section = "writer",
     .key = "fsync",
     .kind = Kind::kFsync,
     .member = &Config::fsync,
     .def = "never",
     .max = kHour,
     .live = true,
     .help = "fdatasync policy: never, block or a duration"},
    // [limits]
    {.section = "limits",
     .key = "max_frame",
     .kind = Kind::kSize,
     .member = &Config::max_frame,
     .def = uint64_t{256 * kKiB},
     .min = 4 * kKiB,
     .max = 16 * kMiB,
     .live = true,
     .help = "largest frame a client may send"},
    {.section = "limits",
     .key = "max_connections",
     .kind = Kind::kCount,
     .member = &Config::max_connections,
     .def = uint64_t{1024},
     .min = 1,
     .max = 1 << 20,
     .live = true,
     .help = "connections served at once"},
    {.section = "limits",
     .key = "max_connections_per_uid",
     .kind = Kind::kCount,
     .member = &Config::max_connections_per_uid,
     .def = uint64_t{64},
     .min = 1,
     .max = 1 << 20,
     .live = true,
     .help = "connections one uid may hold at once"},
    {.section = "limits",
     .key = "max_sites_per_connection",
     .kind = Kind::kCount,
     .member = &Config::max_sites_per_connection,
     .def = uint64_t{65536},
     .min = 1,
     .max = 1 << 20,
     .live = true,
     .help = "distinct call sites one connection may intern"},
    {.section = "limits",
     .key = "shm_slots",
     .kind = Kind::kCount,
     .member = &Config::shm_slots,
     .def = uint64_t{4},
     .min = 0,
     .max = LS_SHM_MAX_SLOTS,
     .live = true,
     .help = "shared buffers handed to a client (one per logging thread; 0: none)"},
    {.section = "limits",
     .key = "shm_slot_bytes",
     .kind = Kind::kSize,
     .member = &Config::shm_slot_bytes,
     .def = uint64_t{256 * kKiB},
     .min = LS_SHM_MIN_SLOT,
     .max = LS_SHM_MAX_SLOT,
     .power_of_two = true,
     .live = true,
     .help = "one shared buffer"},
    {.section = "limits",
     .key = "shm_sites_bytes",
     .kind = Kind::kSize,
     .member = &Config::shm_sites_bytes,
     .def = uint64_t{64 * kKiB},
     .min = 4 * kKiB,
     .max = LS_SHM_MAX_SITES,
     .power_of_two = true,
     .live = true,
     .help = "a client's log of call sites in its shared buffers"},
    {.section = "limits",
     .key = "shm_max_memory",
     .kind = Kind::kSize,
     .member = &Config::shm_max_memory,
     .def = uint64_t{kGiB},
     .min = 0,
     .max = kTiB,
     .live = true,
     .help = "shared buffers handed out at once, all clients together"},
    {.section = "limits",
     .key = "shm_max_memory_per_uid",
     .kind = Kind::kSize,
     .member = &Config::shm_max_memory_per_uid,
     .def = uint64_t{64 * kMiB},
     .min = 0,
     .max = kTiB,
     .live = true,
     .help = "the share of shm_max_memory the connections of one uid may hold"},
    {.section = "limits",
     .key = "stall_timeout",
     .kind = Kind::kDuration,
     .member = &Config::stall_timeout_ms,
     .def = uint64_t{10 * kSecond},
     .min = 10,
     .max = kHour,
     .live = true,
     .help = "a frame (and the first one) must arrive within this time"},
    {.section = "limits",
     .key = "read_budget",
     .kind = Kind::kSize,
     .member = &Config::read_budget,
     .def = uint64_t{256 * kKiB},
     .min = 4 * kKiB,
     .max = 64 * kMiB,
     .live = true,
     .help = "bytes read from one connection per loop wakeup"},
    {.section = "limits",
     .key = "read_slice",
     .kind = Kind::kDuration,
     .member = &Config::read_slice_ms,
     .def = uint64_t{1},
     .min = 0,
     .max = kSecond,
     .live = true,
     .help = "time storing what one connection sent may take per loop wakeup"},
    {.section = "limits",
     .key = "max_app",
     .kind = Kind::kCount,
     .member = &Config::max_app,
     .def = uint64_t{64},
     .min = 1,
     .max = 1024,
     .live = true,
     .help = "longest HELLO app label kept"},
    {.section = "limits",
     .key = "max_memory",
     .kind = Kind::kSize,
     .member = &Config::max_memory,
     .def = uint64_t{64 * kMiB},
     .min = kMiB,
     .max = 64 * kGiB,
     .live = true,
     .help = "memory bound for the state of all connections together"},
    {.section = "limits",
     .key = "max_memory_per_uid",
     .kind = Kind::kSize,
     .member = &Config::max_memory_per_uid,
     .def = uint64_t{16 * kMiB},
     .min = 256 * kKiB,
     .max = 64 * kGiB,
     .live = true,
     .help = "the share of max_memory the connections of one uid may use"},
    {.section = "limits",
     .key = "max_readers",
     .kind = Kind::kCount,
     .member = &Config::max_readers,
     .def = uint64_t{16},
     .min = 1,
     .max = 4096,
     .live = true,
     .help = "reads through the daemon (READ_REQ) served at once"},
    {.section = "limits",
     .key = "max_readers_per_uid",
     .kind = Kind::kCount,
     .member = &Config::max_readers_per_uid,
     .def = uint64_t{4},
     .min = 1,
     .max = 4096,
     .live = true,
     .help = "reads through the daemon one uid may hold at once"},
    {.section = "limits",
     .key = "read_blocks_per_turn",
     .kind = Kind::kCount,
     .member = &Config::read_blocks_per_turn,
     .def = uint64_t{1},
     .min = 1,
     .max = 4096,
     .live = true,
     .help = "ring blocks one read through the daemon decodes per loop turn"},
    {.section = "limits",
     .key = "read_chunk",
     .kind = Kind::kSize,
     .member = &Config::read_chunk,
     .def = uint64_t{64 * kKiB},
     .min = 4 * kKiB,
     .max = 16 * kMiB,
     .live = true,
     .help = "bytes of records queued per read before its socket must drain"},
    {.section = "limits",
     .key = "shutdown_timeout",
     .kind = Kind::kDuration,
     .member = &Config::shutdown_timeout_ms,
     .def = uint64_t{5 * kSecond},
     .min = 0,
     .max = 10 * kMinute,
     .live = true,
     .help = "how long a stop keeps reading what clients already sent"},
    // [levels]
    {.section = "levels",
     .key = "rules",
     .kind = Kind::kString,
     .member = &Config::level_rules,
     .def = "",
     .live = true,
     .help = "level rules pushed to running programs, as logctl level sets them"},
};

}  // namespace

Config::Config() {
  for (const Setting &s : kSettings) SetDefault(s, this);
}

std::span<const Setting> Settings() { return kSettings; }

std::vector<std::string_view> Sections() {
  std::vector<std::string_view> out;
  for (const Setting &s : kSettings)
    if (out.empty() || out.back() != s.section) out.push_back(s.section);
  return out;
}

const Setting *FindSetting(std::string_view section, std::string_view key) {
  for (const Setting &s : kSettings)
    if (section == s.section && key == s.key) return &s;
  return nullptr;
}

std::string SettingName(const Setting &s) { return std::string(s.section) + "." + s.key; }

void SetDefault(const Setting &s, Config *cfg) {
  if (s.kind == Kind::kFsync) {
    ParseFsync(std::get<const char *>(s.def), &(cfg->*std::get<FsyncPolicy Config::*>(s.member)),
               &cfg->fsync_interval_ms);
    return;
  }
  std::visit(
      [&](auto m) {
        using T = std::remove_reference_t<decltype(cfg->*m)>;
        if constexpr (std::is_same_v<T, std::string>)
          cfg->*m = std::get<const char *>(s.def);
        else if constexpr (std::is_same_v<T, double>)
          cfg->*m = std::get<double>(s.def);
        else if constexpr (std::is_same_v<T, bool>)
          cfg->*m = std::get<bool>(s.def);
        else if constexpr (std::is_same_v<T, FsyncPolicy>)
          ;  // kFsync, above
        else
          cfg->*m = T(std::get<uint64_t>(s.def));
      },
      s.member);
}

bool SameValue(const Setting &s, const Config &a, const Config &b) {
  if (s.kind == Kind::kFsync && a.fsync_interval_ms != b.fsync_interval_ms) return false;
  return std::visit([&](auto m) { return a.*m == b.*m; }, s.member);
}

void CopyValue(const Setting &s, const Config &from, Config *to) {
  if (s.kind == Kind::kFsync) to->fsync_interval_ms = from.fsync_interval_ms;
  std::visit([&](auto m) { to->*m = from.*m; }, s.member);
}

std::vector<const Setting *> Changed(const Config &a, const Config &b) {
  std::vector<const Setting *> out;
  for (const Setting &s : kSettings)
    if (!SameValue(s, a, b)) out.push_back(&s);
  return out;
}

void CopyLive(const Config &from, Config *to) {
  for (const Setting &s : kSettings)
    if (s.live) CopyValue(s, from, to);
}

}  // namespace logsink::config
