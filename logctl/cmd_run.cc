// cmd_run.cc: `logctl run -- CMD ARGS...`: runs CMD with its standard output
// and standard error on two pipes that logctl relays to logsinkd as two
// relayed text streams (PROTOCOL.md, "Text streams" and "Relayed streams"),
// and exits with CMD's status once CMD's output has ended.
//
// logctl stays CMD's parent and names CMD's pid in each HELLO; the daemon
// takes it only when /proc says CMD is the sender's child of the same uid,
// so the records carry CMD's pid as before. CMD never holds a connection
// to the daemon: when logsinkd restarts, logctl reconnects within
// milliseconds and resends the line the old daemon had not finished (a
// stopping daemon stores every whole line it was sent and leaves the
// unfinished one to the relay), so CMD neither dies nor loses a line. While
// no daemon listens, up to kMaxPending bytes per stream wait in logctl;
// then CMD's writes block until a daemon is back (docs/DESIGN.md).
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "commands.h"
#include "common.h"
#include "level_gate.h"
#include "logsink/proto/frame.h"
#include "text_stream.h"

namespace logsink::logctl {
namespace {

constexpr int kConnectTimeoutMs = 10000;   // the first connection, before CMD starts
constexpr int kReconnectTimeoutMs = 1000;  // a daemon that accepts but does not answer
constexpr int kRetryMs = 10;               // reconnect attempts while no daemon listens...
constexpr int kRetrySlowMs = 200;          // ... and after kSlowAfterMs without one
constexpr int kSlowAfterMs = 5000;
constexpr int kFinishTimeoutMs = 10000;  // the daemon's acknowledgment at the end
constexpr int kGiveUpMs = 30000;         // CMD's output ended, no daemon (or no progress) this long
constexpr int kShortLivedMs = 100;     // a connection closed sooner with nothing sent: retry later
constexpr int kMaxUnansweredEnds = 5;  // ends closed without an acknowledgment before giving up
constexpr size_t kMaxPending = 1u << 20;  // bytes waiting per stream before CMD blocks
constexpr size_t kMaxResend = 64u << 10;  // of an unfinished line, kept for a resend
constexpr int kExitCannotRun = 126;       // as the shell: found but could not be run
constexpr int kExitNotFound = 127;        // as the shell: no such command

volatile sig_atomic_t g_child = 0;

// SIGTERM and SIGHUP sent to logctl go to CMD, which decides what to do.
void Forward(int sig) {
  if (g_child > 0) kill(pid_t(g_child), sig);
}

int64_t NowMs() {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

// Writes the child's failure (code byte, then the reason) to the parent and exits.
[[noreturn]] void ChildFail(int pipe_fd, int code, const std::string &why) {
  std::string msg(1, char(code));
  msg += why;
  ssize_t ignored = write(pipe_fd, msg.data(), msg.size());
  (void)ignored;
  _exit(code);
}

// The signals logctl handles while CMD runs; blocked from before the fork
// until each side has set its dispositions, so none is lost or misrouted.
constexpr int kSignals[] = {SIGINT, SIGQUIT, SIGTERM, SIGHUP};
struct SavedSignals {
  struct sigaction old[4];
  sigset_t mask;
};

// In the child: put the pipes on 1 and 2, say it is ready (a byte on
// go_fd, a socket pair), wait until the parent's streams are accepted (a
// byte back; EOF: they were not, and CMD is not run), exec CMD with the signal dispositions logctl
// was started with (an ignored SIGHUP under nohup stays ignored).
[[noreturn]] void Child(const Options &o, const std::string &app, int out_fd, int err_fd, int go_fd,
                        int fail_fd, const SavedSignals &saved) {
  signal(SIGPIPE, SIG_DFL);  // logctl ignores it; CMD must get the default
  for (size_t i = 0; i < 4; i++) sigaction(kSignals[i], &saved.old[i], nullptr);
  sigprocmask(SIG_SETMASK, &saved.mask, nullptr);
  // The daemon reads the process name when the parent's HELLO names this
  // pid, which is before the exec: name the child after CMD already.
  prctl(PR_SET_NAME, app.c_str());
  // dup2 clears close-on-exec on the copies; the originals go with the exec.
  if (dup2(out_fd, STDOUT_FILENO) < 0 || dup2(err_fd, STDERR_FILENO) < 0)
    ChildFail(fail_fd, kExitError, std::string("dup2: ") + std::strerror(errno));
  char go = 'r';
  ssize_t k;
  while ((k = write(go_fd, &go, 1)) < 0 && errno == EINTR) {
  }
  while (k == 1 && (k = read(go_fd, &go, 1)) < 0 && errno == EINTR) {
  }
  if (k != 1) _exit(kExitError);  // the parent says why
  std::vector<char *> argv;
  for (const std::string &w : o.words) argv.push_back(const_cast<char *>(w.c_str()));
  argv.push_back(nullptr);
  execvp(argv[0], argv.data());
  int e = errno;
  ChildFail(fail_fd, e == ENOENT ? kExitNotFound : kExitCannotRun,
            o.words[0] + ": " + std::strerror(e));
}

// One of CMD's outputs on its way to the daemon.
struct Stream {
  const char *name = "";  // "stdout", "stderr"
  uint32_t flags = 0;     // the HELLO's text-stream flags
  int pipe = -1;          // read end of CMD's output; -1 once it reached EOF
  int sock = -1;          // the connection, -1 while there is none
  // From the start of the first line the daemon may not have stored: the
  // bytes before `sent` went to the current connection; a new connection
  // starts over at 0 (the daemon stored every whole line it was sent and,
  // stopping, discarded the unfinished one).
  std::string buf;
  size_t sent = 0;
  int64_t next_try = 0;      // when to connect again (sock < 0)
  int64_t down_since = -1;   // since when there has been no connection
  int64_t connected_at = 0;  // when the connection was opened
  int64_t progress_at = 0;   // when it last took bytes (or was opened)
  bool carried = false;      // the connection took bytes
  int short_lived = 0;       // connections in a row closed at once, nothing sent
  int unanswered = 0;        // ends the daemon closed without an acknowledgment
  // Ending: our side is shut down and the daemon's acknowledgment is read
  // as it comes, in the loop (another stream's lines do not wait for it).
  bool ending = false;
  int64_t end_by = 0;  // when the acknowledgment is given up on
  std::string answer;  // what the daemon sent since
  bool told = false;   // the outage was reported on stderr
  bool done = false;
  LineFilter filter{LS_LEVEL_MAX, false, LS_LEVEL_MAX};  // $LOGSINK_LEVEL (SetUpStreams)
};

class Relay {
 public:
  Relay(const std::string &socket, const std::string &app, uint32_t pid)
      : socket_(socket), app_(app), pid_(pid) {}

  // Opens s's connection; false with *why when the daemon is not there or
  // refused. A daemon that closes a relayed stream's HELLO without a word
  // before any was accepted is older than relayed streams (it refuses the
  // flag): the streams are then plain text streams, said once on stderr.
  bool Connect(Stream &s, int timeout_ms, std::string *why) {
    int fd = OpenTextStream(socket_, app_, s.flags, timeout_ms, why, pid_);
    // A daemon that is stopping closes a new connection unanswered too:
    // ask again a few times, 50 ms apart (the next daemon takes the socket
    // by then), before taking the silence for an older daemon's refusal.
    for (int again = 0;
         fd < 0 && pid_ && !relayed_ && again < 3 && *why == "the daemon closed the connection";
         again++) {
      usleep(50 * 1000);
      fd = OpenTextStream(socket_, app_, s.flags, timeout_ms, why, pid_);
    }
    if (fd < 0 && pid_ && !relayed_ && *why == "the daemon closed the connection") {
      fd = OpenTextStream(socket_, app_, s.flags, timeout_ms, why, 0);
      if (fd >= 0) {
        pid_ = 0;
        std::fprintf(stderr,
                     "logctl: run: the daemon does not take relayed streams (a logsinkd older "
                     "than this logctl): the lines carry logctl's pid, and a restart of the "
                     "daemon may store the start of a line twice\n");
      }
    }
    if (fd < 0) return false;
    if (pid_) relayed_ = true;
    s.sock = fd;
    s.sent = 0;
    s.connected_at = s.progress_at = NowMs();
    s.carried = false;
    if (s.told)
      std::fprintf(stderr, "logctl: run: %s: the daemon is back; the output goes on\n", s.name);
    s.told = false;
    return true;
  }

  // Relays until both outputs ended and were acknowledged (or given up).
  void Loop(Stream *streams, size_t n) {
    for (;;) {
      std::vector<struct pollfd> pfds;
      std::vector<std::pair<size_t, int>> what;  // (stream, 0 pipe / 1 socket)
      int64_t now = NowMs();
      int timeout = -1;
      bool active = false;
      for (size_t i = 0; i < n; i++) {
        Stream &s = streams[i];
        if (s.done) continue;
        active = true;
        if (s.pipe >= 0 && s.buf.size() < kMaxPending) {
          pfds.push_back({s.pipe, POLLIN, 0});
          what.push_back({i, 0});
        }
        if (s.sock >= 0) {
          // Before the end the daemon sends nothing: readable is its close.
          short ev = POLLIN;
          if (!s.ending && s.sent < s.buf.size()) ev |= POLLOUT;
          pfds.push_back({s.sock, ev, 0});
          what.push_back({i, 1});
          if (s.ending) {
            int wait = int(std::max<int64_t>(0, s.end_by - now));
            timeout = timeout < 0 ? wait : std::min(timeout, wait);
          } else if (s.pipe < 0 && s.sent < s.buf.size()) {  // a daemon that takes nothing
            int wait = int(std::max<int64_t>(0, s.progress_at + kGiveUpMs - now));
            timeout = timeout < 0 ? wait : std::min(timeout, wait);
          }
        } else {
          int wait = int(std::max<int64_t>(0, s.next_try - now));
          timeout = timeout < 0 ? wait : std::min(timeout, wait);
        }
      }
      if (!active) return;
      int r = poll(pfds.data(), pfds.size(), timeout);
      if (r < 0 && errno != EINTR) {
        Error("run", std::string("poll: ") + std::strerror(errno));
        return;
      }
      for (size_t k = 0; r > 0 && k < pfds.size(); k++) {
        if (!pfds[k].revents) continue;
        Stream &s = streams[what[k].first];
        if (what[k].second == 0) {
          ReadPipe(s);
        } else if (s.ending) {
          ReadAnswer(s);
        } else {
          if (pfds[k].revents & (POLLIN | POLLHUP | POLLERR)) CheckClosed(s);
          if (s.sock >= 0 && (pfds[k].revents & POLLOUT)) Send(s);
        }
      }
      now = NowMs();
      for (size_t i = 0; i < n; i++) Advance(streams[i], now);
    }
  }

 private:
  void ReadPipe(Stream &s) {
    char tmp[65536];
    size_t room = std::min(sizeof tmp, kMaxPending - std::min(kMaxPending, s.buf.size()));
    if (room == 0) return;
    ssize_t k = read(s.pipe, tmp, room);
    if (k < 0 && (errno == EINTR || errno == EAGAIN)) return;
    if (k <= 0) {  // EOF (or an error: nothing more will come)
      s.filter.Finish(&s.buf);
      close(s.pipe);
      s.pipe = -1;
      return;
    }
    s.filter.Feed(std::string_view(tmp, size_t(k)), &s.buf);
  }

  // The daemon sends nothing after its confirmation until the stream
  // ends: a readable socket is a daemon that closed (or stops).
  void CheckClosed(Stream &s) {
    char tmp[512];
    ssize_t k = recv(s.sock, tmp, sizeof tmp, MSG_DONTWAIT);
    if (k > 0 || (k < 0 && (errno == EAGAIN || errno == EINTR))) return;
    Disconnect(s);
  }

  void Send(Stream &s) {
    bool gone = false;
    while (s.sent < s.buf.size()) {
      ssize_t k =
          send(s.sock, s.buf.data() + s.sent, s.buf.size() - s.sent, MSG_DONTWAIT | MSG_NOSIGNAL);
      if (k < 0 && errno == EINTR) continue;
      if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
      if (k < 0) {  // EPIPE, ECONNRESET: the daemon stops or is gone
        gone = true;
        break;
      }
      s.sent += size_t(k);
      s.progress_at = NowMs();
      s.carried = true;
    }
    // Whole lines sent are the daemon's now, also when a later send of this
    // call failed (a stopping daemon stores them); keep the unfinished one
    // (up to kMaxResend of it: beyond that only its rest would be resent).
    size_t nl = s.buf.rfind('\n', s.sent == 0 ? 0 : s.sent - 1);
    size_t drop = nl == std::string::npos || nl >= s.sent ? 0 : nl + 1;
    if (s.sent - drop > kMaxResend) drop = s.sent;
    if (drop) {
      s.buf.erase(0, drop);
      s.sent -= drop;
    }
    if (gone) Disconnect(s);
  }

  // At once after a connection that lived (a restarted daemon listens again
  // within milliseconds); after one closed at once with nothing taken (a
  // daemon that accepts and closes), 20, 40, ... up to kRetrySlowMs later,
  // and the outage goes on from where it started.
  void Disconnect(Stream &s) {
    close(s.sock);
    s.sock = -1;
    s.sent = 0;
    const int64_t now = NowMs();
    if (s.carried || now - s.connected_at >= kShortLivedMs) {
      s.short_lived = 0;
      s.next_try = now;
      s.down_since = now;
    } else {
      s.short_lived = std::min(s.short_lived + 1, 16);
      s.next_try = now + std::min<int64_t>(int64_t(kRetryMs) << s.short_lived, kRetrySlowMs);
      if (s.down_since < 0) s.down_since = now;
    }
  }

  // What the stream does next: connect again, end, or give up.
  void Advance(Stream &s, int64_t now) {
    if (s.done) return;
    if (s.ending) {
      if (now >= s.end_by)
        Ended(s, false,
              "no acknowledgment from the daemon within " +
                  std::to_string(kFinishTimeoutMs / 1000) + " s");
      return;
    }
    const bool ended = s.pipe < 0;
    if (s.sock < 0) {
      if (ended && s.buf.empty()) {  // nothing left to say to anyone
        s.done = true;
        return;
      }
      if (now < s.next_try) return;
      std::string why;
      if (!Connect(s, kReconnectTimeoutMs, &why)) {
        const int64_t down = now - s.down_since;
        if (!s.told && down >= kSlowAfterMs) {
          std::fprintf(stderr,
                       "logctl: run: %s: %s; the output waits (%zu bytes so far; past %zu "
                       "bytes the command's writes block)\n",
                       s.name, why.c_str(), s.buf.size(), kMaxPending);
          s.told = true;
        }
        if (ended && down >= kGiveUpMs) {
          std::fprintf(stderr, "logctl: run: %s: %s; %zu bytes of output not logged\n", s.name,
                       why.c_str(), s.buf.size());
          s.done = true;
          return;
        }
        s.next_try = NowMs() + (down >= kSlowAfterMs ? kRetrySlowMs : kRetryMs);
        return;
      }
      // Connected: send, and when the command's output has ended and all
      // of it went out, end the stream now (the loop's poll would wait for
      // the daemon, which waits for more).
      Send(s);
      if (s.sock < 0) return;
    }
    if (!ended) return;
    if (s.sent < s.buf.size()) {
      // A daemon that takes nothing (stopped, wedged) is given up on as one
      // that is not there: the command's output has ended.
      if (now - s.progress_at < kGiveUpMs) return;
      std::fprintf(stderr,
                   "logctl: run: %s: the daemon took nothing for %d s; %zu bytes of output not "
                   "logged\n",
                   s.name, kGiveUpMs / 1000, s.buf.size() - s.sent);
      close(s.sock);
      s.sock = -1;
      s.done = true;
      return;
    }
    // Everything is sent: end the stream; the loop reads the answer.
    if (shutdown(s.sock, SHUT_WR) != 0) {
      Ended(s, false, std::string("shutdown: ") + std::strerror(errno));
      return;
    }
    s.ending = true;
    s.end_by = now + kFinishTimeoutMs;
    s.answer.clear();
  }

  // Reads what the daemon sent after our end; its close ends the stream.
  void ReadAnswer(Stream &s) {
    char tmp[512];
    for (;;) {
      ssize_t k = recv(s.sock, tmp, sizeof tmp, MSG_DONTWAIT);
      if (k < 0 && errno == EINTR) continue;
      if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
      if (k < 0) {
        Ended(s, false,
              std::string("waiting for the daemon's acknowledgment: ") + std::strerror(errno));
        return;
      }
      if (k == 0) {
        Ended(s, true, "");
        return;
      }
      std::string why;
      if (!AddToAck(&s.answer, std::string_view(tmp, size_t(k)), &why)) {
        Ended(s, false, why);
        return;
      }
    }
  }

  // The stream's end is over: the daemon closed (closed: its answer is in
  // s.answer), an error, or no answer in time. Closed without an
  // acknowledgment (a daemon stopping now), an unfinished last line may
  // have been discarded: it goes to the next daemon, up to
  // kMaxUnansweredEnds times (a daemon whose writes fail closes so too).
  // No acknowledgment within the time, the daemon may still store it: it
  // is not sent again (it could land twice).
  void Ended(Stream &s, bool closed, std::string why) {
    close(s.sock);
    s.sock = -1;
    s.ending = false;
    TextAck ack;
    bool unanswered = false;
    if ((closed && ParseTextAck(s.answer, &ack, &why, &unanswered)) || s.buf.empty()) {
      s.done = true;
      return;
    }
    if (!unanswered || ++s.unanswered > kMaxUnansweredEnds) {
      std::fprintf(stderr, "logctl: run: %s: %s%s; the last %zu bytes (an unfinished line) %s\n",
                   s.name, why.c_str(), unanswered ? " (each time)" : "", s.buf.size(),
                   unanswered ? "not logged" : "may not be logged");
      s.done = true;
      return;
    }
    const int64_t now = NowMs();
    s.sent = 0;
    s.next_try = now + (int64_t(kRetryMs) << s.unanswered);
    s.down_since = now;
  }

  const std::string &socket_;
  const std::string &app_;
  uint32_t pid_;          // the child named in each HELLO; 0 once a daemon refused the flag
  bool relayed_ = false;  // a relayed stream was accepted: the daemon knows the flag
};

// The records' label: --app, else CMD's file name.
std::string AppName(const Options &o) {
  if (!o.send_app.empty()) return o.send_app;
  const std::string &cmd = o.words[0];
  size_t slash = cmd.rfind('/');
  return slash == std::string::npos ? cmd : cmd.substr(slash + 1);
}

// Descriptors 0-2 are open (on /dev/null if logctl got them closed), so
// the pipes never take those numbers and the child's dup2 onto 1 and 2
// always makes copies without close-on-exec. False after an error (printed).
bool OpenStandardDescriptors() {
  for (int fd = 0; fd <= 2; fd++)
    if (fcntl(fd, F_GETFD) < 0 && errno == EBADF && open("/dev/null", O_RDWR) != fd) {
      Error("run", std::string("/dev/null: ") + std::strerror(errno));
      return false;
    }
  return true;
}

// Between logctl and the child, all close-on-exec: out and err carry CMD's
// output (logctl reads [0]); go (a socket pair: logctl holds [1]) says the
// child is named and tells it to exec; fail carries the child's failure
// before or at exec (a successful exec closes it with nothing written;
// logctl reads [0]).
struct Channels {
  int out[2], err[2], go[2], fail[2];
};

// False after an error (printed).
bool OpenChannels(Channels *ch) {
  if (pipe2(ch->out, O_CLOEXEC) != 0 || pipe2(ch->err, O_CLOEXEC) != 0 ||
      socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ch->go) != 0 ||
      pipe2(ch->fail, O_CLOEXEC) != 0) {
    Error("run", std::string("pipe: ") + std::strerror(errno));
    return false;
  }
  return true;
}

// Forks the child, which waits to be told to become CMD (Child), with the
// signals logctl handles blocked across the fork; in logctl, sets their
// dispositions for the time CMD runs. Returns the child's pid, or -1 after
// an error (printed).
pid_t StartChild(const Options &o, const std::string &app, const Channels &ch) {
  SavedSignals saved;
  sigset_t block;
  sigemptyset(&block);
  for (size_t i = 0; i < 4; i++) {
    sigaction(kSignals[i], nullptr, &saved.old[i]);
    sigaddset(&block, kSignals[i]);
  }
  sigprocmask(SIG_BLOCK, &block, &saved.mask);
  std::fflush(nullptr);
  pid_t pid = fork();
  if (pid < 0) {
    sigprocmask(SIG_SETMASK, &saved.mask, nullptr);
    Error("run", std::string("fork: ") + std::strerror(errno));
    return -1;
  }
  if (pid == 0) {
    close(ch.out[0]);
    close(ch.err[0]);
    close(ch.go[1]);
    close(ch.fail[0]);
    Child(o, app, ch.out[1], ch.err[1], ch.go[0], ch.fail[1], saved);
  }
  close(ch.out[1]);
  close(ch.err[1]);
  close(ch.go[0]);
  close(ch.fail[1]);
  g_child = pid;
  // As system(3): an interrupt from the terminal reaches CMD (same process
  // group), and logctl stays to report its status. SIGTERM and SIGHUP are
  // passed on, unless logctl was started with them ignored (nohup).
  signal(SIGINT, SIG_IGN);
  signal(SIGQUIT, SIG_IGN);
  struct sigaction sa = {};
  sa.sa_handler = Forward;
  for (size_t i = 2; i < 4; i++)
    if (saved.old[i].sa_handler != SIG_IGN) sigaction(kSignals[i], &sa, nullptr);
  sigprocmask(SIG_SETMASK, &saved.mask, nullptr);
  return pid;
}

// CMD's standard output and standard error as streams to relay.
void SetUpStreams(const Options &o, const Channels &ch, Stream streams[2]) {
  unsigned fac = unsigned(o.send_facility);
  streams[0].name = "stdout";
  streams[0].flags =
      ls_hello_text_flags(unsigned(o.level_stdout), fac, LS_HELLO_STREAM_STDOUT, o.prio_prefix);
  streams[0].pipe = ch.out[0];
  streams[1].name = "stderr";
  streams[1].flags =
      ls_hello_text_flags(unsigned(o.level_stderr), fac, LS_HELLO_STREAM_STDERR, o.prio_prefix);
  streams[1].pipe = ch.err[0];
  const int threshold = LevelFromEnvironment();
  streams[0].filter = LineFilter(o.level_stdout, o.prio_prefix, threshold);
  streams[1].filter = LineFilter(o.level_stderr, o.prio_prefix, threshold);
}

// The child has its name (the daemon reads it at the HELLO) once it says
// so. Both streams are accepted before CMD runs: a daemon that is not
// there or refuses (its connection limits) is an error, and CMD is not
// run. Tells the child to exec CMD and returns true, or returns false with
// *why (the child, without its byte on go_fd, exits unrun).
bool OpenStreams(Relay &relay, Stream streams[2], int go_fd, std::string *why) {
  char ready = 0;
  ssize_t got;
  while ((got = read(go_fd, &ready, 1)) < 0 && errno == EINTR) {
  }
  bool ok = got == 1;
  if (!ok) *why = "the command's process ended before it was ready";
  ok = ok && relay.Connect(streams[0], kConnectTimeoutMs, why) &&
       relay.Connect(streams[1], kConnectTimeoutMs, why);
  if (ok) {
    ok = write(go_fd, "g", 1) == 1;
    if (!ok) *why = std::string("write: ") + std::strerror(errno);
  }
  close(go_fd);
  return ok;
}

// Reaps the child, only once its streams are done: until then its pid
// stays its own (an exited child is a zombie), so a reconnect can still
// name it. Returns logctl's exit status: CMD's (128 + N after signal N),
// or, with the reason printed, 1 when CMD was not started (!started: why,
// unless the child's own failure says more) or the child's code when it
// could not become CMD.
int Reap(pid_t pid, int fail_fd, bool started, const std::string &why) {
  std::string failure;
  char buf[512];
  ssize_t k;
  while ((k = read(fail_fd, buf, sizeof buf)) != 0) {
    if (k < 0 && errno == EINTR) continue;
    if (k < 0) break;
    failure.append(buf, size_t(k));
  }
  close(fail_fd);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) {
      Error("run", std::string("waitpid: ") + std::strerror(errno));
      return kExitError;
    }
  }
  if (!started) {  // the child's own failure (dup2) says more than its end
    Error("run", failure.empty() ? why : failure.substr(1));
    return kExitError;
  }
  if (!failure.empty()) {
    Error("run", failure.substr(1));
    return static_cast<unsigned char>(failure[0]);
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return kExitError;
}

}  // namespace

int RunRun(Options &o) {
  std::string socket;
  if (!SocketPath(o.socket, &socket)) return kExitError;
  const std::string app = AppName(o);
  Channels ch;
  if (!OpenStandardDescriptors() || !OpenChannels(&ch)) return kExitError;
  const pid_t pid = StartChild(o, app, ch);
  if (pid < 0) return kExitError;
  Stream streams[2];
  SetUpStreams(o, ch, streams);
  Relay relay(socket, app, uint32_t(pid));
  std::string why;
  const bool started = OpenStreams(relay, streams, ch.go[1], &why);
  if (started) relay.Loop(streams, 2);
  for (Stream &s : streams) {
    if (s.sock >= 0) close(s.sock);
    if (s.pipe >= 0) close(s.pipe);
  }
  return Reap(pid, ch.fail[0], started, why);
}

}  // namespace logsink::logctl
