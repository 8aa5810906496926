// main.cc: logsinkd's entry point, in named steps: command line and
// configuration (exit 2 on error, before anything is touched), logging, the
// ring's directory, the sockets, the ring writer, then the event loop until
// SIGTERM/SIGINT, the final flush and the exit line of counters.
#include <pwd.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <string>

#include "cli.h"
#include "listener.h"
#include "logsink/config/config.h"
#include "logsink/proto/format.h"
#include "logsink/proto/paths.h"
#include "logsink/proto/wire.h"
#include "logsink/storage/ring.h"
#include "reply.h"
#include "server.h"
#include "signals.h"
#include "syslog_socket.h"

using namespace logsink;

namespace {

// Defaults, then the file, then the flags; resolved and checked, including
// the ring geometry, so that errors surface before any file is touched.
bool Effective(const daemon::Cli &cli, config::Config *out, std::string *error) {
  config::Config c;
  if (!cli.config_file.empty() && !config::LoadFile(cli.config_file, &c, error)) return false;
  daemon::ApplyCli(cli, &c);
  if (!config::ResolvePaths(&c, error) || !config::Validate(c, error)) return false;
  std::vector<daemon::LevelRule> rules;
  if (!daemon::LevelRules::ParseConfig(c.level_rules, &rules, error)) return false;
  storage::Layout layout;
  storage::Status s = storage::Layout::Compute(c.ring_size, c.block_size, 0, &layout);
  if (!s.ok()) {
    *error = "ring size " + config::FormatSize(c.ring_size) + " with block size " +
             config::FormatSize(c.block_size) + ": " + s.message();
    return false;
  }
  *out = std::move(c);
  return true;
}

// A user's name, or the number when it has none.
std::string UserName(uid_t uid) {
  struct passwd *pw = getpwuid(uid);
  return pw ? std::string(pw->pw_name) : std::to_string(uid);
}

// After "Permission denied": whose file it is and what to run, when another
// user owns it (a ring left by logsinkd run as root, then the service runs
// as logsink).
std::string OwnerHint(const std::string &path) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0 || st.st_uid == geteuid()) return "";
  const std::string owner = UserName(st.st_uid), me = UserName(geteuid());
  return "; it belongs to " + owner + " and logsinkd runs as " + me + ": as root, run 'chown " +
         me + ": " + path + "' to give it to " + me + ", or remove it (its records are lost)";
}

// The ring error as one sentence, without the storage library's code name
// and without saying the path twice.
std::string RingOpenError(const std::string &path, const storage::Status &s) {
  std::string m = s.message();
  if (m.find(std::strerror(EACCES)) != std::string::npos) m += OwnerHint(path);
  if (s.IsNotOurs())
    return path + " is not a logsink ring file, and logsinkd never overwrites such a file: " +
           "remove it or choose another --file";
  // "open PATH: Permission denied" -> "cannot open the ring file PATH: Permission denied"
  size_t at = m.find(" " + path + ": ");
  if (at != std::string::npos && m.find(' ') == at)
    return std::string("cannot ") + m.substr(0, at) + " the ring file " + m.substr(at + 1);
  if (m.rfind(path, 0) == 0) return "ring file " + m;  // "PATH is owned by uid 0, not 1000: ..."
  return std::string("cannot open the ring file ") + path + ": " + m;
}

// Whether dir is logsinkd's own state directory (that of its default ring:
// /var/lib/logsink for root, the per-user directory otherwise), which it
// creates when missing.
bool IsStateDir(const std::string &dir) {
  char buf[4096];
  if (ls_default_ring(buf, sizeof buf) < 0) return false;
  std::string def(buf);
  size_t slash = def.rfind('/');
  return slash != std::string::npos && def.substr(0, slash) == dir;
}

// The ring's directory must exist, unless it is the state directory or
// --create-dirs asks for it to be made. False with a message.
bool RingDirectory(const std::string &ring, bool create, std::string *error) {
  size_t slash = ring.rfind('/');
  if (slash == std::string::npos || slash == 0) return true;
  std::string dir = ring.substr(0, slash);
  struct stat st;
  if (stat(dir.c_str(), &st) == 0) return true;
  if (errno != ENOENT) return true;  // open reports it with the reason
  if (!create && !IsStateDir(dir)) {
    *error = "the directory " + dir + " of the ring file does not exist; create it, or start " +
             "logsinkd with --create-dirs";
    return false;
  }
  if (int rc = daemon::MakeParentDirs(ring); rc < 0) {
    *error = "cannot create the directory " + dir + " of the ring file: " + std::strerror(-rc);
    return false;
  }
  return true;
}

// Step 1: the command line. The exit code when it ends the process (a bad
// argument: 2 with the usage; --help, --version: 0), else nothing.
std::optional<int> ReadCommandLine(int argc, char **argv, daemon::Cli *cli) {
  std::string error;
  if (!daemon::ParseCli(argc, argv, cli, &error)) {
    std::fprintf(stderr, "logsinkd: %s\n%s", error.c_str(), daemon::Usage());
    return 2;
  }
  if (cli->help) {
    std::fputs(daemon::Usage(), stdout);
    return 0;
  }
  if (cli->version) {
    std::printf("logsinkd %s (protocol %u, ring format %u)\n", LOGSINK_VERSION, LS_PROTO_VERSION,
                LS_FORMAT_VERSION);
    return 0;
  }
  return std::nullopt;
}

// Step 2: the configuration. The exit code when it ends the process (an
// error: 2; --print-config: 0), else nothing.
std::optional<int> ReadConfiguration(const daemon::Cli &cli, config::Config *cfg) {
  std::string error;
  if (!Effective(cli, cfg, &error)) {
    std::fprintf(stderr, "logsinkd: configuration error: %s\n", error.c_str());
    return 2;
  }
  if (cli.print_config) {
    std::fputs(config::ToToml(*cfg).c_str(), stdout);
    return 0;
  }
  return std::nullopt;
}

// Step 3: from here on, messages go to stderr as log lines.
void StartLogging(const config::Config &cfg) {
  auto logger = spdlog::stderr_logger_st("logsinkd");
  spdlog::set_default_logger(logger);
  spdlog::set_pattern("%Y-%m-%dT%H:%M:%S.%e logsinkd[%P] %l: %v");
  spdlog::set_level(spdlog::level::from_str(cfg.log_level));
}

// The daemon's sockets: the listening stream socket and the syslog
// datagram socket (fd -1: none).
struct Sockets {
  daemon::Listener stream, syslog;
  void Close() {
    daemon::CloseListener(&syslog);
    daemon::CloseListener(&stream);
  }
};

// Step 4: the ring's directory, then the sockets: systemd's when it passed
// them, else bound at the configured paths; the syslog socket only when
// systemd passed one or a path is configured. False (logged) on failure,
// with nothing left open.
bool OpenSockets(const config::Config &cfg, bool create_dirs, Sockets *out) {
  std::string error;
  if (!RingDirectory(cfg.ring_file, create_dirs, &error)) {
    spdlog::critical("{}", error);
    return false;
  }
  daemon::Activated activated;
  if (!daemon::TakeActivatedSockets(&activated, &error)) {
    spdlog::critical("{}", error);
    return false;
  }
  if (daemon::OpenSocket(cfg.socket_path, SOCK_STREAM, cfg.socket_mode, cfg.socket_group,
                         activated.stream, &out->stream, &error) != daemon::ListenError::kNone) {
    spdlog::critical("{}", error);
    return false;
  }
  if (activated.dgram >= 0 || !cfg.syslog_socket.empty()) {
    int e = 0;
    if (daemon::OpenSocket(cfg.syslog_socket, SOCK_DGRAM, cfg.socket_mode, cfg.socket_group,
                           activated.dgram, &out->syslog, &error) != daemon::ListenError::kNone ||
        (e = daemon::EnableCredentials(out->syslog.fd)) != 0) {
      if (e) error = std::string("syslog socket: SO_PASSCRED: ") + std::strerror(e);
      spdlog::critical("syslog socket: {}", error);
      out->Close();
      return false;
    }
  }
  return true;
}

// The writer's options from the configuration (whose names the loader
// checked).
storage::WriterOptions WriterOptionsOf(const config::Config &cfg) {
  storage::WriterOptions wo;
  wo.file_size = cfg.ring_size;
  wo.block_size = cfg.block_size;
  wo.recreate_on_mismatch = cfg.recreate;
  wo.allow_other_owner = cfg.allow_other_owner;
  storage::ParseCodec(cfg.compression, &wo.codec);
  wo.level = int(cfg.compression_level);
  wo.kept_share = cfg.kept_share;
  wo.error_share = cfg.error_share;
  config::ParseLevelName(cfg.kept_level, &wo.kept_level);
  config::ParseLevelName(cfg.error_level, &wo.error_level);
  wo.fairness = cfg.fairness;
  wo.queue_bytes = cfg.write_queue;
  return wo;
}

// Step 5: the ring writer; nullptr (the reason logged) when the ring cannot
// be opened or created.
std::unique_ptr<storage::RingWriter> OpenRing(const config::Config &cfg, daemon::WriteWake *wake) {
  std::unique_ptr<storage::RingWriter> writer;
  storage::WriterOptions wo = WriterOptionsOf(cfg);
  wo.on_written = [wake] { wake->Ring(); };
  storage::Status s =
      storage::RingWriter::Open(storage::Env::Default(), cfg.ring_file, wo, &writer);
  if (!s.ok()) {
    if (s.IsMismatch())
      spdlog::critical(
          "{}, not the configured {} / {}: start logsinkd with --recreate to replace it (its "
          "records are lost), or configure the file's geometry",
          s.message(), config::FormatSize(cfg.ring_size), config::FormatSize(cfg.block_size));
    else if (s.IsBusy())
      spdlog::critical("{} is in use by another writer (another logsinkd?)", cfg.ring_file);
    else
      spdlog::critical("{}", RingOpenError(cfg.ring_file, s));
    return nullptr;
  }
  if (writer->upgraded_from() != 0) {
    spdlog::info("{}: a ring of format version {}, now version {} in place (its records stay)",
                 cfg.ring_file, writer->upgraded_from(), LS_FORMAT_VERSION);
  }
  if (!writer->moved_aside().empty()) {
    spdlog::warn(
        "{} was a ring of an older format version: kept as {} (read it with the logctl that "
        "wrote it; delete it when done) and a new ring created",
        cfg.ring_file, writer->moved_aside());
  }
  return writer;
}

// What a SIGHUP loads: the configuration as at start (defaults, the file,
// the flags), read again.
daemon::Server::Reload ReloadWith(const daemon::Cli &cli) {
  return [&cli](config::Config *next) {
    std::string err;
    if (!Effective(cli, next, &err)) {
      spdlog::error("SIGHUP: configuration not reloaded: {}", err);
      return false;
    }
    return true;
  };
}

// Step 7: after the loop, what the writer still holds is written (and
// synced unless fsync = "never"). False (logged) when that failed.
bool FinalFlush(storage::RingWriter *writer, const config::Config &cfg) {
  storage::Status s = writer->Flush();
  if (s.ok() && cfg.fsync != config::FsyncPolicy::kNever) s = writer->Sync();
  if (!s.ok()) {
    spdlog::error("final flush failed: {}", s.message());
    return false;
  }
  return true;
}

// Step 8: one line of the counters that are not zero (and records).
void PrintExitLine(const daemon::Counters &counters, const storage::RingWriter &writer) {
  std::string line = "logsinkd: exiting:";
  daemon::ForEachCounter(counters, writer, [&](std::string_view name, uint64_t v) {
    if (v != 0 || name == "records") line += fmt::format(" {}={}", name, v);
  });
  std::fprintf(stderr, "%s\n", line.c_str());
}

// A connection with shared buffers holds two descriptors (its socket and
// its region's memfd), so the usual soft limit of 1024 would stop
// max_connections' default at about half: the soft limit goes up to the
// hard one, at most 65536 (as the packaged unit's LimitNOFILE). Out of
// descriptors all the same, accept closes new connections (accept_emfile;
// logsinkd.8).
void RaiseFileLimit() {
  rlimit r{};
  if (getrlimit(RLIMIT_NOFILE, &r) != 0) return;
  const rlim_t want = r.rlim_max == RLIM_INFINITY ? 65536 : std::min<rlim_t>(r.rlim_max, 65536);
  if (r.rlim_cur >= want) return;
  r.rlim_cur = want;
  if (setrlimit(RLIMIT_NOFILE, &r) != 0)
    spdlog::warn("could not raise the descriptor limit to {}: {}", want, std::strerror(errno));
}

}  // namespace

int main(int argc, char **argv) {
  std::signal(SIGPIPE, SIG_IGN);
  daemon::HoldLoopSignals();  // until the loop handles them (signals.h)
  daemon::Cli cli;
  if (std::optional<int> done = ReadCommandLine(argc, argv, &cli)) return *done;
  config::Config cfg;
  if (std::optional<int> done = ReadConfiguration(cli, &cfg)) return *done;
  StartLogging(cfg);
  RaiseFileLimit();
  Sockets sockets;
  if (!OpenSockets(cfg, cli.create_dirs, &sockets)) return 1;
  daemon::WriteWake wake;  // outlives the writer's thread, which rings it
  std::unique_ptr<storage::RingWriter> writer = OpenRing(cfg, &wake);
  if (!writer) {
    sockets.Close();
    return 1;
  }
  // Step 6: serve until SIGTERM/SIGINT and the drain.
  daemon::Server server(cfg, writer.get(), &sockets.stream, ReloadWith(cli), &sockets.syslog,
                        &wake);
  int rc = server.Run();
  if (!FinalFlush(writer.get(), cfg)) rc = 1;
  sockets.Close();
  if (cfg.log_level != "off") PrintExitLine(server.counters(), *writer);
  return rc;
}
