// servers.h: the real servers the forwarder's tests and benchmarks talk to,
// from Debian's packages: nats-server (JetStream, one node or a cluster) and
// rsyslogd with imrelp writing every message to a file. Each runs as a child
// process on loopback ports, with its state in a directory of the caller's
// (usually a TempDir); ready = it says so in its log (nats-server) or accepts
// TCP connections (rsyslogd); stopped by PID.
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <string>
#include <vector>

#include "common/process.h"

namespace logsink::test {

// A TCP port on 127.0.0.1 that was free a moment ago (bind to port 0).
int FreePort();

struct NatsServerOptions {
  std::string dir;   // store and log go here
  std::string name;  // server name, unique in a cluster
  int port = 0;      // client port; 0 = a free one
  // Cluster (all empty/0 for a single node):
  std::string cluster_name;
  int cluster_port = 0;
  std::vector<int> routes;  // cluster ports of the other nodes
  int max_payload = 0;      // the server's max_payload in bytes; 0 = its default (1 MiB)
};

class NatsServer {
 public:
  NatsServer() = default;
  ~NatsServer();  // SIGKILL if still running
  NatsServer(const NatsServer &) = delete;
  NatsServer &operator=(const NatsServer &) = delete;

  // Starts nats-server -js and waits for "Server is ready" in its log.
  bool Start(const NatsServerOptions &opt, std::string *err, Ms limit = kHang);
  // Same options again (same port, same store), e.g. after Kill().
  bool Restart(std::string *err, Ms limit = kHang);
  // Sends sig and reaps the process.
  void Kill(int sig = SIGKILL);
  bool running() const { return pid_ > 0; }
  pid_t pid() const { return pid_; }
  int port() const { return opt_.port; }
  std::string url() const { return "nats://127.0.0.1:" + std::to_string(opt_.port); }
  std::string log() const;  // its log so far

 private:
  NatsServerOptions opt_;
  pid_t pid_ = -1;
  std::string log_path_;
};

class RsyslogServer {
 public:
  RsyslogServer() = default;
  ~RsyslogServer();
  RsyslogServer(const RsyslogServer &) = delete;
  RsyslogServer &operator=(const RsyslogServer &) = delete;

  // Starts rsyslogd -n with imrelp on a free port (or port) writing each
  // message's raw text as one line to output(); waits until it accepts TCP.
  bool Start(const std::string &dir, std::string *err, int port = 0, Ms limit = kHang);
  // Starts rsyslogd -n with the configuration text conf as given, after a
  // global(workDirectory=dir) line; its port must be port() (a free one,
  // chosen here: the caller puts it in conf after calling ChoosePort).
  int ChoosePort();
  bool StartWithConfig(const std::string &dir, const std::string &conf, std::string *err,
                       Ms limit = kHang);
  bool Restart(std::string *err, Ms limit = kHang);
  void Kill(int sig = SIGKILL);
  bool running() const { return pid_ > 0; }
  int port() const { return port_; }
  std::string output() const { return dir_ + "/relp-out.log"; }

 private:
  std::string dir_;
  int port_ = 0;
  pid_t pid_ = -1;
};

}  // namespace logsink::test
