// servers.cc: see servers.h.
#include "common/servers.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/temp_dir.h"

namespace logsink::test {
namespace {

pid_t Spawn(const std::vector<std::string> &args, const std::string &log_path) {
  pid_t pid = fork();
  if (pid == 0) {
    int fd = open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    if (fd >= 0) {
      dup2(fd, 1);
      dup2(fd, 2);
    }
    int devnull = open("/dev/null", O_RDONLY);
    if (devnull >= 0) dup2(devnull, 0);
    ClearInheritedEnvironment();
    std::vector<char *> argv;
    for (const auto &a : args) argv.push_back(const_cast<char *>(a.c_str()));
    argv.push_back(nullptr);
    execvp(argv[0], argv.data());
    _exit(127);
  }
  return pid;
}

bool Exited(pid_t pid) {
  int st;
  return waitpid(pid, &st, WNOHANG) == pid;
}

bool AcceptsTcp(int port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(uint16_t(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bool ok = connect(fd, reinterpret_cast<sockaddr *>(&a), sizeof a) == 0;
  close(fd);
  return ok;
}

void KillPid(pid_t *pid, int sig) {
  if (*pid <= 0) return;
  kill(*pid, sig);
  if (WaitExit(*pid, kHang) < 0) {
    // WaitExit already SIGKILLed and reaped it.
  }
  *pid = -1;
}

}  // namespace

int FreePort() {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  int port = -1;
  if (bind(fd, reinterpret_cast<sockaddr *>(&a), sizeof a) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr *>(&a), &len) == 0)
    port = ntohs(a.sin_port);
  close(fd);
  return port;
}

NatsServer::~NatsServer() { Kill(SIGKILL); }

bool NatsServer::Start(const NatsServerOptions &opt, std::string *err, Ms limit) {
  opt_ = opt;
  if (opt_.port == 0) opt_.port = FreePort();
  if (opt_.name.empty()) opt_.name = std::string("n").append(std::to_string(opt_.port));
  return Restart(err, limit);
}

bool NatsServer::Restart(std::string *err, Ms limit) {
  log_path_ = opt_.dir + "/nats-" + opt_.name + ".log";
  std::vector<std::string> args = {"nats-server", "-js",
                                   "-a",          "127.0.0.1",
                                   "-p",          std::to_string(opt_.port),
                                   "-sd",         opt_.dir + "/js-" + opt_.name,
                                   "-n",          opt_.name};
  if (opt_.max_payload > 0) {  // no flag for it: a configuration file
    std::string conf = opt_.dir + "/nats-" + opt_.name + ".conf";
    WriteFile(conf, "max_payload: " + std::to_string(opt_.max_payload) + "\n");
    args.insert(args.end(), {"-c", conf});
  }
  if (!opt_.cluster_name.empty()) {
    args.insert(args.end(),
                {"--cluster_name", opt_.cluster_name, "--cluster",
                 std::string("nats://127.0.0.1:").append(std::to_string(opt_.cluster_port))});
    std::string routes;
    for (int r : opt_.routes)
      routes += (routes.empty() ? "" : ",") + std::string("nats://127.0.0.1:") + std::to_string(r);
    if (!routes.empty()) args.insert(args.end(), {"--routes", routes});
  }
  size_t log_start = ReadFile(log_path_).size();
  pid_ = Spawn(args, log_path_);
  if (pid_ < 0) {
    *err = "cannot fork nats-server";
    return false;
  }
  bool ready = WaitUntil(
      [&] {
        return ReadFile(log_path_).find("Server is ready", log_start) != std::string::npos ||
               Exited(pid_);
      },
      limit);
  if (!ready || ReadFile(log_path_).find("Server is ready", log_start) == std::string::npos) {
    *err = std::string("nats-server did not get ready: ")
               .append(ReadFile(log_path_).substr(log_start));
    Kill(SIGKILL);
    return false;
  }
  return true;
}

void NatsServer::Kill(int sig) { KillPid(&pid_, sig); }

std::string NatsServer::log() const { return ReadFile(log_path_); }

RsyslogServer::~RsyslogServer() { Kill(SIGKILL); }

bool RsyslogServer::Start(const std::string &dir, std::string *err, int port, Ms limit) {
  dir_ = dir;
  port_ = port ? port : FreePort();
  std::string conf = "global(workDirectory=\"" + dir_ +
                     "\")\n"
                     // An acknowledgment must mean "written": imrelp acknowledges once the
                     // message is queued, so the main queue is direct (the action runs in
                     // the receiving thread) and omfile flushes each one-message batch.
                     "main_queue(queue.type=\"Direct\")\n"
                     "module(load=\"imrelp\")\n"
                     "input(type=\"imrelp\" port=\"" +
                     std::to_string(port_) +
                     "\" address=\"127.0.0.1\")\n"
                     "template(name=\"raw\" type=\"string\" string=\"%rawmsg%\\n\")\n"
                     "action(type=\"omfile\" file=\"" +
                     output() + "\" template=\"raw\" flushOnTXEnd=\"on\")\n";
  WriteFile(dir_ + "/rsyslog.conf", conf);
  return Restart(err, limit);
}

int RsyslogServer::ChoosePort() { return port_ = FreePort(); }

bool RsyslogServer::StartWithConfig(const std::string &dir, const std::string &conf,
                                    std::string *err, Ms limit) {
  dir_ = dir;
  if (!port_) ChoosePort();
  WriteFile(dir_ + "/rsyslog.conf", "global(workDirectory=\"" + dir_ + "\")\n" + conf);
  return Restart(err, limit);
}

bool RsyslogServer::Restart(std::string *err, Ms limit) {
  std::string log = dir_ + "/rsyslogd.log";
  pid_ = Spawn({"rsyslogd", "-n", "-f", dir_ + "/rsyslog.conf", "-i", dir_ + "/rsyslogd.pid"}, log);
  bool ok = WaitUntil([&] { return AcceptsTcp(port_) || Exited(pid_); }, limit);
  if (!ok || !AcceptsTcp(port_)) {
    *err = std::string("rsyslogd did not listen on port ")
               .append(std::to_string(port_))
               .append(": ")
               .append(ReadFile(log));
    Kill(SIGKILL);
    return false;
  }
  return true;
}

void RsyslogServer::Kill(int sig) { KillPid(&pid_, sig); }

}  // namespace logsink::test
