// relp_sink.cc: see relp_sink.h.
#include "relp_sink.h"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <deque>
#include <vector>

namespace logsink::forward {
namespace {

constexpr uint64_t kMaxTxnr = 999999999;  // then 1 again (RELP)
// A session that answers nothing for this long while messages wait (or
// that does not connect and open in it) is taken as broken.
constexpr uint64_t kResponseTimeoutMs = 10000;
// A session that lasted this long resets the reconnect backoff (see Handle).
constexpr uint64_t kSessionLastedMs = 1000;
// A response (or server command) carrying more is not one of RELP's.
constexpr uint64_t kAckAfterMs = 2;  // see AckSoon()
constexpr size_t kMaxResponseData = 64 << 10;
// What the client offers when it opens a session.
constexpr std::string_view kOffers =
    "relp_version=0\nrelp_software=logsink-forward\ncommands=syslog";

uint64_t NowMs() { return uv_hrtime() / 1000000; }

// Acknowledges the receiver's segments now (the TCP acknowledgment).
void QuickAck(uv_tcp_t *tcp) {
  uv_os_fd_t fd;
  int one = 1;
  if (uv_fileno((uv_handle_t *)tcp, &fd) == 0)
    setsockopt(fd, IPPROTO_TCP, TCP_QUICKACK, &one, sizeof one);
}

// One TCP connection; freed by its close callback (writes in flight on it
// end with UV_ECANCELED first).
struct Conn {
  uv_tcp_t tcp{};
  uv_connect_t connect{};
  class RelpSink *sink = nullptr;
  bool closed = false;  // uv_close was called: ignore its callbacks
  bool writing = false;
  std::string in;  // bytes read, not parsed yet
};

struct Write {
  uv_write_t req{};
  Conn *conn = nullptr;
  std::string buf;
};

class RelpSink : public Sink {
 public:
  explicit RelpSink(const RelpOptions &o) : opts_(o) {}

  Body body() const override { return Body::kRfc5424; }

  bool Start(std::string *error) override {
    if (!loop()) {
      *error = "the RELP client needs the forwarder's loop";
      return false;
    }
    uv_timer_init(loop(), &retry_);
    uv_timer_init(loop(), &tick_);
    uv_timer_init(loop(), &ack_);
    uv_check_init(loop(), &flush_);
    for (uv_handle_t *h : {(uv_handle_t *)&retry_, (uv_handle_t *)&tick_, (uv_handle_t *)&ack_,
                           (uv_handle_t *)&flush_})
      h->data = this;
    uv_timer_start(
        &tick_, [](uv_timer_t *t) { static_cast<RelpSink *>(t->data)->Tick(); }, 1000, 1000);
    started_ = true;
    return true;
  }

  bool Publish(const Message &m) override {
    if (stopped_) return false;
    unacked_.push_back(Pending{m.seq, 0, false, m.body});
    if (state_ == State::kOpen)
      Frame(&unacked_.back());
    else if (state_ == State::kDown && !draining_ && !uv_is_active((uv_handle_t *)&retry_))
      Connect();
    return true;
  }

  // No new session from now on: without one nothing can be acknowledged,
  // so the forwarder's drain waits only while a session is open or being
  // opened (one that breaks ends it).
  void BeginDrain() override {
    draining_ = true;
    if (started_) uv_timer_stop(&retry_);
  }

  bool CanStillAcknowledge() override { return !draining_ || state_ != State::kDown; }

  // Does not wait: the forwarder's drain waited for the acknowledgments
  // that could come (what is still unacknowledged is sent again after a
  // restart). Says goodbye to the receiver when nothing waits for an
  // answer.
  void Stop(uint64_t) override {
    if (!started_ || stopped_) return;
    stopped_ = true;
    if (conn_ && state_ == State::kOpen && !conn_->writing && out_.empty() && unacked_.empty()) {
      std::string close = fmt::format("{} close 0\n", NextTxnr());
      uv_buf_t b = uv_buf_init(close.data(), unsigned(close.size()));
      uv_try_write((uv_stream_t *)&conn_->tcp, &b, 1);
    }
    CloseConn();
    for (uv_handle_t *h : {(uv_handle_t *)&retry_, (uv_handle_t *)&tick_, (uv_handle_t *)&ack_,
                           (uv_handle_t *)&flush_})
      if (!uv_is_closing(h)) uv_close(h, nullptr);
    if (resolving_) uv_cancel((uv_req_t *)&resolve_);
  }

  SinkState state() override {
    SinkState st;
    st.connected = state_ == State::kOpen;
    st.reconnects = reconnects_;
    st.resent = resent_;
    st.last_error = last_error_;
    if (state_ == State::kOpen) st.address = address_;
    return st;
  }

 private:
  enum class State { kDown, kResolving, kConnecting, kOpening, kOpen };

  // A message handed over and not acknowledged yet, in order.
  struct Pending {
    uint64_t seq = 0;
    uint64_t txnr = 0;  // in the current session; 0 = not framed in it yet
    bool sent = false;  // framed in an earlier session (sending it again is a resend)
    std::string body;
  };

  uint64_t NextTxnr() {
    uint64_t t = next_txnr_;
    next_txnr_ = t == kMaxTxnr ? 1 : t + 1;
    return t;
  }

  // Appends p's syslog frame to what the next write sends.
  void Frame(Pending *p) {
    if (p->sent) ++resent_;
    p->sent = true;
    p->txnr = NextTxnr();
    fmt::format_to(std::back_inserter(out_), "{} syslog {}", p->txnr, p->body.size());
    if (!p->body.empty()) {
      out_ += ' ';
      out_ += p->body;
    }
    out_ += '\n';
    ++framed_;
    if (framed_ == 1) progress_ms_ = NowMs();
    // Written once the callbacks of this loop iteration handed over what
    // they have: one write for all of them.
    uv_check_start(&flush_, [](uv_check_t *c) { static_cast<RelpSink *>(c->data)->Flush(); });
  }

  void Flush() {
    uv_check_stop(&flush_);
    if (!conn_ || conn_->writing || out_.empty()) return;
    auto *w = new Write;
    w->conn = conn_;
    w->buf.swap(out_);
    w->req.data = w;
    uv_buf_t b = uv_buf_init(w->buf.data(), unsigned(w->buf.size()));
    conn_->writing = true;
    AckSoon();
    int rc = uv_write(&w->req, (uv_stream_t *)&conn_->tcp, &b, 1, [](uv_write_t *req, int status) {
      auto *w = static_cast<Write *>(req->data);
      Conn *c = w->conn;
      delete w;
      if (c->closed) return;
      c->writing = false;
      if (status < 0)
        c->sink->Break(std::string("RELP session broken: ") + uv_strerror(status));
      else
        c->sink->Flush();
    });
    if (rc < 0) {
      delete w;
      conn_->writing = false;
      Break(std::string("RELP session broken: ") + uv_strerror(rc));
    }
  }

  // rsyslog's imrelp answers each message with a small send of its own;
  // with Nagle's algorithm on its side, the answers after the first wait for
  // our TCP acknowledgment, which Linux delays by up to 40 ms when we send
  // nothing back: with the window full (nothing to send until answers come)
  // every window waited that long (16 k records/s with --window 1024).
  // Acknowledging every segment at once (TCP_QUICKACK after each read)
  // costs ~1.2 us of CPU per record, the answers then coming one per
  // segment; so it is done every 2 ms from a write of ours on, for as
  // long as answers are awaited (a write restarts the count).
  void AckSoon() {
    uv_timer_start(
        &ack_,
        [](uv_timer_t *t) {
          auto *s = static_cast<RelpSink *>(t->data);
          if (s->conn_ && s->framed_)
            QuickAck(&s->conn_->tcp);
          else
            uv_timer_stop(t);
        },
        kAckAfterMs, kAckAfterMs);
  }

  void Connect() {
    state_ = State::kResolving;
    state_ms_ = NowMs();
    resolve_.data = this;
    struct addrinfo hints {};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    resolving_ = true;
    int rc = uv_getaddrinfo(
        loop(), &resolve_,
        [](uv_getaddrinfo_t *req, int status, struct addrinfo *res) {
          auto *s = static_cast<RelpSink *>(req->data);
          s->resolving_ = false;
          s->Resolved(status, res);
          uv_freeaddrinfo(res);
        },
        opts_.host.c_str(), opts_.port.c_str(), &hints);
    if (rc < 0) {
      resolving_ = false;
      Break("cannot resolve " + opts_.host + ": " + uv_strerror(rc));
    }
  }

  // Keeps every address HOST resolved to, in the resolver's order (RFC
  // 6724's, as configured in gai.conf), and tries them from the first.
  void Resolved(int status, struct addrinfo *res) {
    if (stopped_) return;
    if (status < 0 || !res) {
      Break("cannot resolve " + opts_.host + ": " + uv_strerror(status));
      return;
    }
    addrs_.clear();
    for (const struct addrinfo *ai = res; ai; ai = ai->ai_next) {
      if ((ai->ai_family != AF_INET && ai->ai_family != AF_INET6) ||
          ai->ai_addrlen > sizeof(sockaddr_storage))
        continue;
      Address a;
      std::memcpy(&a.sa, ai->ai_addr, ai->ai_addrlen);
      a.text = AddressText(ai->ai_addr);
      if (std::none_of(addrs_.begin(), addrs_.end(),
                       [&](const Address &b) { return b.text == a.text; }))
        addrs_.push_back(std::move(a));
    }
    if (addrs_.empty()) {
      Break("cannot resolve " + opts_.host + ": no IPv4 or IPv6 address");
      return;
    }
    addr_at_ = 0;
    failures_.clear();
    TryAddress();
  }

  // "127.0.0.1:2514", "[::1]:2514".
  static std::string AddressText(const struct sockaddr *sa) {
    char ip[INET6_ADDRSTRLEN] = {};
    if (sa->sa_family == AF_INET6) {
      const auto *in6 = reinterpret_cast<const sockaddr_in6 *>(sa);
      uv_ip6_name(in6, ip, sizeof ip);
      return fmt::format("[{}]:{}", ip, ntohs(in6->sin6_port));
    }
    const auto *in = reinterpret_cast<const sockaddr_in *>(sa);
    uv_ip4_name(in, ip, sizeof ip);
    return fmt::format("{}:{}", ip, ntohs(in->sin_port));
  }

  // Connects to addrs_[addr_at_]; a failure moves on to the next address
  // at once (ConnectFailed).
  void TryAddress() {
    conn_ = new Conn;
    conn_->sink = this;
    conn_->tcp.data = conn_;
    conn_->connect.data = conn_;
    uv_tcp_init(loop(), &conn_->tcp);
    uv_tcp_nodelay(&conn_->tcp, 1);
    state_ = State::kConnecting;
    state_ms_ = NowMs();  // each address has 10 s to accept (Tick)
    int rc = uv_tcp_connect(&conn_->connect, &conn_->tcp,
                            reinterpret_cast<const sockaddr *>(&addrs_[addr_at_].sa),
                            [](uv_connect_t *req, int status) {
                              Conn *c = static_cast<Conn *>(req->data);
                              if (c->closed) return;
                              c->sink->Connected(status);
                            });
    if (rc < 0) ConnectFailed(uv_strerror(rc));
  }

  // The current address did not connect: the next one is tried at once;
  // after the last one (or when the forwarder is stopping: no new session)
  // the attempt failed and the backoff applies (Break).
  void ConnectFailed(const std::string &why) {
    failures_.push_back(addrs_[addr_at_].text + ": " + why);
    CloseConn();
    if (++addr_at_ < addrs_.size() && !stopped_ && !draining_) return TryAddress();
    std::string to = "cannot connect to relp://" + opts_.host + ":" + opts_.port;
    if (addrs_.size() == 1)
      Break(to + " at " + failures_[0]);
    else if (failures_.size() == addrs_.size())
      Break(fmt::format("{}: all {} addresses failed ({})", to, addrs_.size(),
                        fmt::join(failures_, "; ")));
    else
      Break(fmt::format("{}: {} of its {} addresses failed, no other tried while stopping ({})", to,
                        failures_.size(), addrs_.size(), fmt::join(failures_, "; ")));
  }

  void Connected(int status) {
    if (status < 0) return ConnectFailed(uv_strerror(status));
    uv_read_start((uv_stream_t *)&conn_->tcp,
                  [](uv_handle_t *h, size_t, uv_buf_t *b) {
                    auto *s = static_cast<Conn *>(h->data)->sink;
                    *b = uv_buf_init(s->rbuf_, sizeof s->rbuf_);
                  },
                  [](uv_stream_t *st, ssize_t n, const uv_buf_t *b) {
                    Conn *c = static_cast<Conn *>(st->data);
                    if (c->closed) return;
                    if (n < 0)
                      c->sink->Break(n == UV_EOF ? "the receiver closed the RELP session"
                                                 : std::string("RELP session broken: ") +
                                                       uv_strerror(int(n)));
                    else if (n > 0)
                      c->sink->Read(std::string_view(b->base, size_t(n)));
                  });
    // The session opens with transaction 1; messages follow its answer.
    state_ = State::kOpening;
    state_ms_ = NowMs();
    next_txnr_ = 1;
    out_ = fmt::format("{} open {} {}\n", NextTxnr(), kOffers.size(), kOffers);
    Flush();
  }

  void Read(std::string_view bytes) {
    // (Bytes alone are no progress: only an answer to one of our messages
    // is, see Handle, so a receiver that trickles bytes or answers
    // transactions that are not ours still times out.)
    Conn *c = conn_;
    c->in.append(bytes);
    size_t at = 0;
    for (;;) {
      RelpFrame f;
      std::string err;
      long len = ParseRelpFrame(std::string_view(c->in).substr(at), kMaxResponseData, &f, &err);
      if (len < 0) return Break("the receiver sent no RELP: " + err);
      if (len == 0) break;
      at += size_t(len);
      if (!Handle(f) || c->closed) return;
    }
    c->in.erase(0, at);
  }

  // One frame from the receiver; false when it ended the session.
  bool Handle(const RelpFrame &f) {
    if (f.command == "serverclose") {
      Break("the receiver closed the RELP session (serverclose)");
      return false;
    }
    if (f.command != "rsp") {
      Break(fmt::format("unexpected RELP command from the receiver: {:.32}", f.command));
      return false;
    }
    // "200", alone or followed by a space or a line of text: not "2001".
    bool ok = f.data.substr(0, 3) == "200" &&
              (f.data.size() == 3 || f.data[3] == ' ' || f.data[3] == '\n');
    std::string_view text = f.data.substr(0, f.data.find('\n'));
    if (state_ == State::kOpening) {
      if (f.txnr != 1 || !ok || !OffersSyslog(f.data)) {
        Break(fmt::format("the receiver refused to open a RELP session for syslog: {:.200}", text));
        return false;
      }
      state_ = State::kOpen;
      state_ms_ = NowMs();
      address_ = addrs_[addr_at_].text;
      SetConnected();
      for (Pending &p : unacked_) Frame(&p);
      return true;
    }
    // Answers come in order: normally for the oldest message.
    auto it = std::find_if(unacked_.begin(), unacked_.begin() + long(framed_),
                           [&](const Pending &p) { return p.txnr == f.txnr; });
    if (it == unacked_.begin() + long(framed_)) return true;  // not ours (close's, or stale)
    const uint64_t now = NowMs();
    progress_ms_ = now;
    if (ok) {
      // The backoff starts again from its least only after a session that
      // lasted: a receiver that answers one message and closes each
      // session is not reconnected to (and sent the window) every 50 ms.
      if (now - state_ms_ >= kSessionLastedMs) backoff_ms_ = 0;
      Report(Ack{it->seq, true, false, ""});
    } else {
      // Refused: the forwarder sends it again after a backoff.
      Ack a{it->seq, false, false, fmt::format("refused by the receiver: {:.200}", text)};
      a.refused = true;
      Report(std::move(a));
    }
    unacked_.erase(it);
    --framed_;
    return true;
  }

  // Says which address the session is open at (and which ones failed
  // before it in this attempt).
  void SetConnected() {
    if (ever_connected_) ++reconnects_;
    std::string at = fmt::format("relp://{}:{} at {}", opts_.host, opts_.port, address_);
    if (!failures_.empty()) at += fmt::format(" (failed: {})", fmt::join(failures_, "; "));
    if (!last_error_.empty())
      spdlog::info("RELP session open again to {} (after: {})", at, last_error_);
    else
      spdlog::info("RELP session open to {}", at);
    ever_connected_ = true;
    last_error_.clear();
  }

  // Whether an open's answer lists syslog among its commands
  // ("commands=syslog" or "commands=a,syslog,b" on a line of its own).
  static bool OffersSyslog(std::string_view data) {
    for (size_t at = 0; at <= data.size();) {
      size_t end = data.find('\n', at);
      if (end == std::string_view::npos) end = data.size();
      std::string_view line = data.substr(at, end - at);
      constexpr std::string_view kKey = "commands=";
      if (line.substr(0, kKey.size()) == kKey) {
        line.remove_prefix(kKey.size());
        for (size_t c = 0; c <= line.size();) {
          size_t comma = line.find(',', c);
          if (comma == std::string_view::npos) comma = line.size();
          if (line.substr(c, comma - c) == "syslog") return true;
          c = comma + 1;
        }
      }
      at = end + 1;
    }
    return false;
  }

  void CloseConn() {
    if (!conn_) return;
    conn_->closed = true;
    uv_close((uv_handle_t *)&conn_->tcp,
             [](uv_handle_t *h) { delete static_cast<Conn *>(h->data); });
    conn_ = nullptr;
  }

  // The session is gone: everything not acknowledged goes again, in order,
  // in the next one (after a backoff).
  void Break(const std::string &why) {
    // Said once per kind of failure (a receiver down is retried quietly
    // until something else goes wrong); the status file has the last one.
    if (state_ == State::kOpen || why != last_error_) spdlog::warn("{}", why);
    last_error_ = why;
    CloseConn();
    out_.clear();
    framed_ = 0;
    for (Pending &p : unacked_) p.txnr = 0;
    state_ = State::kDown;
    if (stopped_) return;
    if (draining_) {  // no new session: the forwarder's drain ends (CanStillAcknowledge)
      Wake();
      return;
    }
    backoff_ms_ = std::clamp<uint64_t>(backoff_ms_ * 2, 50, opts_.backoff_max_ms);
    uv_timer_start(
        &retry_,
        [](uv_timer_t *t) {
          auto *s = static_cast<RelpSink *>(t->data);
          if (s->state_ == State::kDown && !s->unacked_.empty()) s->Connect();
        },
        backoff_ms_, 0);
  }

  void Tick() {
    uint64_t now = NowMs();
    if (state_ == State::kConnecting && now - state_ms_ > kResponseTimeoutMs)
      ConnectFailed("no connection within 10 s");
    else if (state_ == State::kOpening && now - state_ms_ > kResponseTimeoutMs)
      Break("no RELP session within 10 s");
    else if (state_ == State::kOpen && framed_ && now - progress_ms_ > kResponseTimeoutMs)
      Break("no RELP response within 10 s");
  }

  RelpOptions opts_;
  uv_timer_t retry_{}, tick_{}, ack_{};
  uv_check_t flush_{};
  uv_getaddrinfo_t resolve_{};
  bool resolving_ = false, started_ = false, stopped_ = false, ever_connected_ = false;
  bool draining_ = false;  // BeginDrain: no new session
  Conn *conn_ = nullptr;
  // The addresses HOST resolved to; the one being tried (or open); the
  // failures of this attempt ("ADDRESS: why"); the open session's address.
  struct Address {
    sockaddr_storage sa{};
    std::string text;
  };
  std::vector<Address> addrs_;
  size_t addr_at_ = 0;
  std::vector<std::string> failures_;
  std::string address_;
  State state_ = State::kDown;
  uint64_t state_ms_ = 0, progress_ms_ = 0, backoff_ms_ = 0;
  uint64_t next_txnr_ = 1;
  std::deque<Pending> unacked_;  // the first framed_ are framed in this session
  size_t framed_ = 0;
  std::string out_;  // frames not written yet
  char rbuf_[64 << 10];
  uint64_t reconnects_ = 0, resent_ = 0;
  std::string last_error_;
};

}  // namespace

long ParseRelpFrame(std::string_view in, size_t max_data, RelpFrame *f, std::string *error) {
  // TXNR: 1-9 digits; COMMAND: 1-32 letters; DATALEN: 1-9 digits.
  auto number = [&](size_t *at, uint64_t *v) {
    size_t start = *at;
    *v = 0;
    while (*at < in.size() && *at - start < 10 && in[*at] >= '0' && in[*at] <= '9')
      *v = *v * 10 + uint64_t(in[(*at)++] - '0');
    return *at - start;
  };
  size_t at = 0;
  size_t digits = number(&at, &f->txnr);
  if (at == in.size()) return 0;
  if (digits == 0 || digits > 9 || in[at] != ' ') {
    *error = "bad transaction number";
    return -1;
  }
  size_t cmd = ++at;
  while (at < in.size() && at - cmd <= 32 && std::isalpha(static_cast<unsigned char>(in[at]))) ++at;
  if (at == in.size()) return 0;
  if (at == cmd || at - cmd > 32 || in[at] != ' ') {
    *error = "bad command";
    return -1;
  }
  f->command = in.substr(cmd, at - cmd);
  uint64_t len = 0;
  ++at;
  digits = number(&at, &len);
  if (at == in.size()) return 0;
  if (digits == 0 || digits > 9 || len > max_data || (in[at] != ' ' && in[at] != '\n') ||
      (len == 0) != (in[at] == '\n')) {
    *error = "bad data length";
    return -1;
  }
  if (len == 0) {
    f->data = {};
    return long(at + 1);
  }
  ++at;  // the SP
  if (in.size() < at + len + 1) return 0;
  if (in[at + len] != '\n') {
    *error = "no LF after the data";
    return -1;
  }
  f->data = in.substr(at, len);
  return long(at + len + 1);
}

bool ParseRelpUrl(const std::string &to, RelpOptions *out, std::string *error) {
  const std::string scheme = "relp://";
  std::string hp = to.compare(0, scheme.size(), scheme) == 0 ? to.substr(scheme.size()) : "";
  size_t colon = hp.rfind(':');
  if (hp.empty() || colon == std::string::npos || colon == 0 || colon + 1 == hp.size() ||
      hp.find_first_not_of("0123456789", colon + 1) != std::string::npos) {
    *error = "expected relp://HOST:PORT, got " + to;
    return false;
  }
  out->host = hp.substr(0, colon);
  if (out->host.size() > 2 && out->host.front() == '[' && out->host.back() == ']')
    out->host = out->host.substr(1, out->host.size() - 2);
  out->port = hp.substr(colon + 1);
  return true;
}

std::unique_ptr<Sink> MakeRelpSink(const RelpOptions &opts) {
  return std::make_unique<RelpSink>(opts);
}

}  // namespace logsink::forward
