/* logsink/spdlog_sink.h: a spdlog sink that sends records to logsinkd
 * through liblogsink's C API (header-only, C++17, spdlog 1.10 as Debian 12
 * ships it). An existing spdlog program switches with one line:
 *
 *   #include <logsink/spdlog_sink.h>
 *   auto lg = std::make_shared<spdlog::logger>("web", std::make_shared<logsink::spdlog_sink_mt>());
 *   // or, registered with spdlog like its own factories:
 *   auto lg = logsink::spdlog_logger_mt("web");                          // default client
 *   auto lg = logsink::spdlog_logger_mt<spdlog::async_factory>("web");   // behind spdlog's queue
 *
 * Link liblogsink and spdlog (CMake: logsink::logsink spdlog::spdlog).
 *
 * What a record keeps: a spdlog sink receives the text spdlog formatted
 * (msg.payload), the level, the logger's name and, when spdlog has it, the
 * source location (the SPDLOG_LOGGER_INFO(...) family of macros, enabled by
 * SPDLOG_ACTIVE_LEVEL); never the format string or the arguments. So a record
 * keeps
 *   - the text, stored as a "%.*s" argument (at most the client's
 *     max_record_bytes, 8192 by default; the rest is cut and counted in
 *     ls_stats.truncated; text after a NUL byte is not kept);
 *   - the level: trace and debug -> LS_DEBUG, info -> LS_INFO, warn ->
 *     LS_WARNING, err -> LS_ERR, critical -> LS_CRIT (off, which spdlog lets
 *     a program log at, -> LS_INFO, as spdlog's own syslog and systemd sinks
 *     do);
 *   - the logger's name as the named field `logger` (`logctl logger=web`,
 *     LS_FIELDS in logsink.h);
 *   - the source file and line as the record's call site: the sink makes one
 *     ls_site per (file, line, level), kept for the life of the process in a
 *     table of at most LOGSINK_SPDLOG_SITES_MAX (4096) sites shared by every
 *     sink of the module; past it, and for records without a location,
 *     records go through a site without a location (file "", line 0), and
 *     spdlog_site_stats().overflowed counts the records that had a location
 *     and lost it;
 *   - what liblogsink adds to every record: time of the call (the sink's
 *     call, not spdlog's msg.time: they differ only behind an async logger's
 *     queue), pid, tid of the thread that calls the sink (spdlog's worker
 *     behind an async logger), app name.
 * What it does not keep: spdlog's pattern and formatter are not applied
 * (set_pattern changes nothing: logsink stores the text and readers render
 * the time, level and fields), nor msg.time, msg.thread_id, the function
 * name (source_loc.funcname) or colour ranges.
 *
 * Levels: spdlog's logger and sink levels filter first; then liblogsink's
 * levels at the source apply as to LS_LOG (ls_options.level/.levels,
 * $LOGSINK_LEVEL, `logctl level`), by the record's file and line when it
 * has them: a record below its site's level is skipped by liblogsink and
 * costs about one load and one branch (plus the site lookup when some
 * client enables its level somewhere).
 *
 * Clients: spdlog_sink(ls_client *c) borrows c (NULL: liblogsink's default
 * client, opened on first use); spdlog_sink(socket_path, app_name, opts)
 * opens its own client with ls_open (its arguments: NULL socket_path is
 * $LOGSINK_SOCKET or the default) and ls_close's it when the sink is
 * destroyed (what is buffered is sent, waiting at most close_timeout_ms); an
 * ls_open that fails throws spdlog::spdlog_ex with its errno. flush() (and
 * spdlog's flush_on/flush_every) calls ls_flush. Drops and errors are
 * liblogsink's: counted in ls_get_stats(sink.client()), never thrown.
 *
 * Threads: the sink's own state is its client pointer; the site table and
 * liblogsink are thread-safe without spdlog's mutex, so spdlog_sink_st is
 * safe from several threads too; spdlog_sink_mt takes spdlog's mutex as
 * base_sink does (a flush then holds it while ls_flush waits).
 * Sites are in the census (`logctl sites --all`) once they have logged. */
#ifndef LOGSINK_SPDLOG_SINK_H
#define LOGSINK_SPDLOG_SINK_H

#include <logsink/logsink.h>
#include <spdlog/details/null_mutex.h>
#include <spdlog/details/synchronous_factory.h>
#include <spdlog/sinks/base_sink.h>

#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

/* Call sites with a source location the sinks of one module make at most. */
#define LOGSINK_SPDLOG_SITES_MAX 4096
/* The format of every site of the sink: the text (a string_view, not
 * NUL-terminated: hence the precision), then the field `logger`. */
#define LOGSINK_SPDLOG_FMT "%.*s" LS_FIELDS("logger=%s")

namespace logsink {

/* The sink's site table, read without a lock. */
struct spdlog_site_stats {
  size_t sites;        /* sites with a location made so far (<= limit) */
  size_t limit;        /* LOGSINK_SPDLOG_SITES_MAX */
  uint64_t overflowed; /* records with a location logged without one: table full */
};

namespace spdlog_detail {

/* liblogsink's level for a spdlog level (see the header's comment). */
constexpr int ls_level(spdlog::level::level_enum l) noexcept {
  switch (l) {
    case spdlog::level::trace:
    case spdlog::level::debug:
      return LS_DEBUG;
    case spdlog::level::info:
      return LS_INFO;
    case spdlog::level::warn:
      return LS_WARNING;
    case spdlog::level::err:
      return LS_ERR;
    case spdlog::level::critical:
      return LS_CRIT;
    default:
      return LS_INFO;
  }
}

/* The sites of the sinks: one per (file, line, level), made on first use and
 * never freed (liblogsink keeps pointers to them), in an open-addressing
 * table of twice the bound, so a probe always ends at an empty slot. Lookups
 * take no lock: a slot is written once, under the lock, with release order.
 * The file name is copied (a source_loc may point at a buffer that changes)
 * and compared by content. */
class site_table {
 public:
  static site_table &get() {
    /* Never destroyed: a spdlog worker may log during static destruction,
     * and liblogsink's sender holds the sites' addresses. */
    static site_table *const t = new site_table;
    return *t;
  }

  /* The site for a record at level (0..7) from file:line; a site without a
   * location when there is none or the table is full. */
  ls_site *find(const char *file, int line, int level) {
    if (!file || !*file || line <= 0) return &unlocated_[level];
    const std::string_view f(file);
    const uint64_t h = hash(f, line, level);
    if (entry *e = probe(f, line, level, h)) return &e->site;
    return insert(f, line, level, h);
  }

  spdlog_site_stats stats() const noexcept {
    return {count_.load(std::memory_order_acquire), LOGSINK_SPDLOG_SITES_MAX,
            overflowed_.load(std::memory_order_relaxed)};
  }

 private:
  static constexpr size_t kSlots = 2 * LOGSINK_SPDLOG_SITES_MAX;
  static_assert((kSlots & (kSlots - 1)) == 0, "a power of two");

  struct entry {
    ls_site site; /* first: &site is what liblogsink sees */
    uint64_t hash;
    size_t file_len;
  };

  site_table() {
    for (int l = 0; l < 8; l++) unlocated_[l] = ls_site{LOGSINK_SPDLOG_FMT, "", 0, l, 0, 0, 0};
  }

  static uint64_t hash(std::string_view f, int line, int level) {
    uint64_t h = std::hash<std::string_view>{}(f);
    h ^= (uint64_t(unsigned(line)) << 3 | unsigned(level)) * 0x9e3779b97f4a7c15ull;
    return h ^ (h >> 29);
  }

  entry *probe(std::string_view f, int line, int level, uint64_t h) const {
    for (size_t i = h & (kSlots - 1);; i = (i + 1) & (kSlots - 1)) {
      entry *e = slots_[i].load(std::memory_order_acquire);
      if (!e) return nullptr;
      if (e->hash == h && e->site.line == line && e->site.level == level &&
          e->file_len == f.size() && std::memcmp(e->site.file, f.data(), f.size()) == 0)
        return e;
    }
  }

  ls_site *insert(std::string_view f, int line, int level, uint64_t h) {
    std::lock_guard<std::mutex> lock(mu_);
    if (entry *e = probe(f, line, level, h)) return &e->site; /* another thread's */
    const size_t n = count_.load(std::memory_order_relaxed);
    if (n >= LOGSINK_SPDLOG_SITES_MAX) {
      overflowed_.fetch_add(1, std::memory_order_relaxed);
      return &unlocated_[level];
    }
    char *file = new char[f.size() + 1];
    std::memcpy(file, f.data(), f.size());
    file[f.size()] = '\0';
    /* The library's fields zero, as logsink.h asks. */
    entry *e = new entry{ls_site{LOGSINK_SPDLOG_FMT, file, line, level, 0, 0, 0}, h, f.size()};
    size_t i = h & (kSlots - 1);
    while (slots_[i].load(std::memory_order_relaxed)) i = (i + 1) & (kSlots - 1);
    slots_[i].store(e, std::memory_order_release);
    count_.store(n + 1, std::memory_order_release);
    return &e->site;
  }

  std::atomic<entry *> slots_[kSlots] = {};
  std::atomic<size_t> count_{0};
  std::atomic<uint64_t> overflowed_{0};
  std::mutex mu_;
  ls_site unlocated_[8];
};

}  // namespace spdlog_detail

/* How many sites the sinks of this module made, and records that lost
 * their location because the table was full. */
inline spdlog_site_stats spdlog_sites() noexcept {
  return spdlog_detail::site_table::get().stats();
}

/* The sink: spdlog's base_sink over Mutex (std::mutex or
 * spdlog::details::null_mutex). */
template <typename Mutex>
class spdlog_sink : public spdlog::sinks::base_sink<Mutex> {
 public:
  /* Logs to client (not owned; NULL: liblogsink's default client). */
  explicit spdlog_sink(ls_client *client = nullptr) noexcept : client_(client), owned_(false) {}

  /* Logs to a client of its own: ls_open(socket_path, app_name, opts),
   * closed with the sink. Throws spdlog::spdlog_ex when ls_open fails. */
  spdlog_sink(const char *socket_path, const char *app_name, const ls_options *opts = nullptr)
      : client_(ls_open(socket_path, app_name, opts)), owned_(true) {
    if (!client_) spdlog::throw_spdlog_ex("logsink: ls_open failed", errno);
  }

  ~spdlog_sink() override {
    if (owned_) ls_close(client_);
  }

  /* The client records go to (NULL: the default client), for ls_get_stats. */
  ls_client *client() const noexcept { return client_; }

 protected:
  void sink_it_(const spdlog::details::log_msg &msg) override {
    const int level = spdlog_detail::ls_level(msg.level);
    if (!LS__LEVEL_ON(level)) return; /* LS_LOG's first check */
    ls_site *site =
        spdlog_detail::site_table::get().find(msg.source.filename, msg.source.line, level);
    /* The name as a C string: behind an async logger it is followed by the
     * payload in spdlog's buffer, not by a NUL. */
    const spdlog::string_view_t name = msg.logger_name;
    char small[128];
    std::string large;
    const char *cname = small;
    if (name.size() < sizeof small) {
      std::memcpy(small, name.data(), name.size());
      small[name.size()] = '\0';
    } else {
      large.assign(name.data(), name.size());
      cname = large.c_str();
    }
    const size_t n = msg.payload.size();
    const int len = n > size_t(INT_MAX) ? INT_MAX : int(n);
    /* As LS_LOG: the site, then its format again (site->fmt's text, a
     * literal here so that the compiler checks the arguments). */
    (void)ls__log(client_, site, LOGSINK_SPDLOG_FMT, len, msg.payload.data(), cname);
  }

  void flush_() override {
    ls_client *c = client_ ? client_ : ls_default();
    if (c) (void)ls_flush(c);
  }

 private:
  ls_client *const client_;
  const bool owned_;
};

using spdlog_sink_mt = spdlog_sink<std::mutex>;
using spdlog_sink_st = spdlog_sink<spdlog::details::null_mutex>;

/* spdlog's factory convention: a logger named logger_name with one logsink
 * sink, registered with spdlog (spdlog::get(name); a name taken throws).
 * Factory: spdlog::synchronous_factory, or spdlog::async_factory (from
 * <spdlog/async.h>) for a logger behind spdlog's queue and worker. */
template <typename Factory = spdlog::synchronous_factory>
inline std::shared_ptr<spdlog::logger> spdlog_logger_mt(const std::string &logger_name,
                                                        ls_client *client = nullptr) {
  return Factory::template create<spdlog_sink_mt>(logger_name, client);
}
template <typename Factory = spdlog::synchronous_factory>
inline std::shared_ptr<spdlog::logger> spdlog_logger_mt(const std::string &logger_name,
                                                        const char *socket_path,
                                                        const char *app_name,
                                                        const ls_options *opts = nullptr) {
  return Factory::template create<spdlog_sink_mt>(logger_name, socket_path, app_name, opts);
}
template <typename Factory = spdlog::synchronous_factory>
inline std::shared_ptr<spdlog::logger> spdlog_logger_st(const std::string &logger_name,
                                                        ls_client *client = nullptr) {
  return Factory::template create<spdlog_sink_st>(logger_name, client);
}
template <typename Factory = spdlog::synchronous_factory>
inline std::shared_ptr<spdlog::logger> spdlog_logger_st(const std::string &logger_name,
                                                        const char *socket_path,
                                                        const char *app_name,
                                                        const ls_options *opts = nullptr) {
  return Factory::template create<spdlog_sink_st>(logger_name, socket_path, app_name, opts);
}

}  // namespace logsink

#endif
