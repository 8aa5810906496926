// config.h: logsinkd's settings (their defaults, limits and help are in the
// table of settings.h) and the TOML loader/printer. Errors are values: Load()
// returns false and a message naming the file, the line and the key.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace logsink::config {

enum class FsyncPolicy { kNever, kInterval, kBlock };

// Every setting. Its TOML key, default, limits, help and whether SIGHUP
// changes it live are in the table of settings (settings.h, settings.cc),
// from which the constructor takes the defaults.
struct Config {
  Config();

  // [daemon]
  std::string log_level;  // log_level

  // [socket]
  std::string socket_path;   // path; "" = $LOGSINK_SOCKET, else proto/paths.h default
  uint32_t socket_mode{};    // mode
  std::string socket_group;  // group; "" = keep the daemon's group

  // [syslog]
  std::string syslog_socket;  // socket; "" = no syslog socket

  // [ring]
  std::string ring_file;           // file; "" = proto/paths.h default
  uint64_t ring_size{};            // size
  uint32_t block_size{};           // block_size
  std::string compression;         // compression: "zstd" | "lz4" | "none"
  uint32_t compression_level{};    // compression_level
  bool recreate = false;           // command line only (--recreate), never in TOML
  bool allow_other_owner = false;  // command line only (--allow-other-owner), never in TOML

  uint64_t write_queue{};  // write_queue (bytes; 0: no writer thread)

  // [retention] (proto/FORMAT.md, "Tiers"); shares apply when the ring is created
  double kept_share{};      // kept_share
  double error_share{};     // error_share
  std::string kept_level;   // kept_level: a syslog level name
  std::string error_level;  // error_level
  bool fairness{};          // fairness

  // [kernel]
  std::string kernel_read;    // read: "auto" | "yes" | "no"
  std::string kernel_device;  // device

  // [writer]
  uint64_t flush_interval_ms{};      // flush_interval
  uint64_t flush_min_interval_ms{};  // flush_min_interval (<= flush_interval)
  FsyncPolicy fsync{};               // fsync: "never" | "block" | a duration
  uint64_t fsync_interval_ms{};      // the duration when fsync is one

  // [limits]
  uint32_t max_frame{};                 // max_frame
  uint32_t max_connections{};           // max_connections
  uint32_t max_connections_per_uid{};   // max_connections_per_uid (root, own uid: exempt)
  uint32_t max_sites_per_connection{};  // max_sites_per_connection
  uint64_t stall_timeout_ms{};          // stall_timeout
  uint32_t read_budget{};               // read_budget (bytes per wakeup per connection)
  uint64_t read_slice_ms{};             // read_slice (work per wakeup per connection)
  uint32_t max_app{};                   // max_app (longer HELLO labels are cut)
  uint64_t shutdown_timeout_ms{};       // shutdown_timeout
  uint64_t max_memory{};                // max_memory (all connection state together)
  uint64_t max_memory_per_uid{};        // max_memory_per_uid (root: max_memory)
  uint32_t shm_slots{};                 // shm_slots (shared buffers per connection; 0: none)
  uint64_t shm_slot_bytes{};            // shm_slot_bytes (one thread's shared buffer)
  uint64_t shm_sites_bytes{};           // shm_sites_bytes (a region's site log)
  uint64_t shm_max_memory{};            // shm_max_memory (all regions together)
  uint64_t shm_max_memory_per_uid{};    // shm_max_memory_per_uid (root: shm_max_memory)
  uint32_t max_readers{};               // max_readers (reads through the daemon at once)
  uint32_t max_readers_per_uid{};       // max_readers_per_uid (root, own uid: exempt)
  uint32_t read_blocks_per_turn{};      // read_blocks_per_turn (per read, per loop turn)
  uint32_t read_chunk{};                // read_chunk (bytes queued per read)

  // [levels]
  std::string level_rules;  // rules: checked by logsinkd (daemon/src/levels.h)

  bool operator==(const Config &) const = default;
};

// A syslog level name (emerg alert crit err warning notice info debug,
// exactly: proto/facility.h's ls_level_parse) as its number; false when it
// is none.
bool ParseLevelName(std::string_view name, uint8_t *level);

// Fills socket_path and ring_file when empty from $LOGSINK_SOCKET and
// proto/paths.h. A default in the per-user directory is used only if that
// directory passes ls_user_dir_check() (created 0700 when missing). Returns
// false (and a message) if a path does not fit or the directory is refused.
bool ResolvePaths(Config *cfg, std::string *error);

// Overlays the settings of the TOML file at path onto *cfg. On error returns
// false with "FILE:LINE: section.key: what is wrong" in *error and leaves
// *cfg in an unspecified state.
bool LoadFile(const std::string &path, Config *cfg, std::string *error);
// Same for TOML text; `name` is used as the file name in messages.
bool LoadString(std::string_view text, const std::string &name, Config *cfg, std::string *error);

// Checks ranges that are not per key (none today beyond the per-key ones,
// kept as the one place for cross-key rules). Returns false with a message.
bool Validate(const Config &cfg, std::string *error);

// The effective configuration as TOML that LoadString() reads back to an
// equal Config (recreate excluded).
std::string ToToml(const Config &cfg);

// Units. Sizes: plain integers (bytes) or a number directly followed by K, M,
// G, T or KiB, MiB, GiB, TiB, all powers of 1024 (K = KiB = 1024 bytes);
// anything else ("1GB", "1gb", "1 G", "512B") is refused (kSizeForms says
// so in messages). Durations: duration.h's grammar
// ("100ms", "1.5s", "1h 30min") with a unit on every term, in whole
// milliseconds. Return false on malformed input or overflow.
bool ParseSize(std::string_view s, uint64_t *bytes);
inline constexpr char kSizeForms[] =
    "bytes, or a number with K, M, G, T or KiB, MiB, GiB, TiB (powers of 1024), such as 64MiB";
bool ParseDuration(std::string_view s, uint64_t *ms);
std::string FormatSize(uint64_t bytes);   // "64MiB" when exact, else plain bytes
std::string FormatDuration(uint64_t ms);  // "5s" when exact, else "100ms"
// fsync policy: "never", "block" or a duration.
bool ParseFsync(std::string_view s, FsyncPolicy *policy, uint64_t *interval_ms);
std::string FormatFsync(FsyncPolicy policy, uint64_t interval_ms);
bool ValidLogLevel(std::string_view s);
// A ring block size the format allows: a power of two within
// LS_BLOCK_SIZE_MIN..LS_BLOCK_SIZE_MAX (proto/format.h).
bool ValidBlockSize(uint64_t n);

}  // namespace logsink::config
