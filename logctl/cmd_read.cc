// cmd_read.cc: `logctl tail`, `logctl cat` and `logctl export`: position the
// reader (SeekLast / SeekTime / SeekOldest, never a full scan for tail),
// filter (the reader skips blocks whose summaries rule out every record;
// each record read is still filtered), render into a big buffer, and for -f
// follow the writer, woken by inotify (uv_fs_event) with a poll timer as a
// fallback. Also --list-boots, and -b's choice of a boot.
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>
#include <uv.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <vector>

#include "commands.h"
#include "common.h"
#include "field_match.h"
#include "logsink/render/printer.h"
#include "logsink/storage/cursor.h"
#include "logsink/storage/env.h"
#include "logsink/storage/small_file.h"
#include "nats_read.h"
#include "out.h"
#include "pager.h"
#include "progress.h"
#include "read_setup.h"
#include "render_pool.h"

namespace logsink::logctl {
namespace {

using storage::Record;
using storage::Status;

constexpr uint64_t kPollMs = 250;  // fallback when inotify says nothing

// Reads, filters and prints records into an Out: one cat/tail/export run
// (named apart from the daemon's per-client daemon::Session).
class ReadPipeline {
 public:
  ReadPipeline(Options &o, RecordSource *r, Out *out, render::Printer *pr, const std::string &path,
               storage::Reporter *rep)
      : o_(o), r_(r), out_(out), pr_(pr), path_(path), rep_(rep) {}

  // A progress line while Drain reads (progress.h). Call before the
  // positioning seek: it looks up the newest record.
  void ShowProgress(Progress *p) {
    if (!p->enabled() || r_->own_records_only()) return;
    Record rec;
    if (r_->SeekLast(1).ok() && r_->Next(&rec).ok()) p->set_last(rec.seq);
    progress_ = p;
  }

  // Renders rec into *line if it passes the filter. Returns false if filtered out.
  // With -F (ListField): its value instead, when it is a new one.
  bool Render(const Record &rec, std::string *line) {
    if (!o_.filter.Match(rec)) return false;
    if (!o_.matches.Match(rec, &lookup_)) return false;
    if (lister_) {
      if (!o_.grep.empty() && (pr_->Message(rec, &msg_), !o_.grep.Match(msg_))) return false;
      return lister_->Add(rec, &lookup_, line);
    }
    bool ok = pr_->Message(rec, &msg_);
    if (!o_.grep.Match(msg_)) return false;
    pr_->Line(rec, msg_, ok, line);
    return true;
  }

  // Prints every record from the reader's position on. Returns false on a
  // read error (already reported) or when the output failed.
  bool Drain() {
    if (!collect_ && !lister_ && !ReadSwitchesFromEnv().plain) return DrainPooled();
    Record rec;
    for (;;) {
      if (lister_ && lister_->full()) return true;  // (the caller warns)
      Status s = r_->Next(&rec);
      if (s.IsNotFound()) return true;
      if (!s.ok()) return ReadError(s);
      if (progress_) progress_->Update(rec.seq);
      if (collect_) {
        std::string line;
        if (Render(rec, &line)) Emit(rec.seq, std::move(line));
      } else if (Render(rec, out_->buf())) {
        last_shown_ = rec.seq;
      }
      out_->MaybeFlush();
      if (out_->failed()) return false;
    }
  }

  // Drain with decoding, rendering and matching on a second thread
  // (render_pool.h): the same lines in the same order, the same records
  // read. Whole blocks go to the pool undecoded.
  bool DrainPooled() {
    if (!pool_)
      pool_ = std::make_unique<RenderPool>(*pr_, o_.filter, o_.matches, o_.grep, r_->ring(), rep_);
    Record rec;
    for (;;) {
      bool whole = false;
      Status s = r_->NextOrBlock(&rec, &block_, &whole);
      if (s.IsNotFound()) break;
      if (!s.ok()) {
        pool_->WaitAll(out_->buf(), &last_shown_);
        return ReadError(s);
      }
      bool sealed;
      if (whole) {
        if (progress_) progress_->Update(block_.first_seq);  // (its first record, as Next would)
        sealed = pool_->AddBlock(&block_);
      } else {
        if (progress_) progress_->Update(rec.seq);
        if (!o_.filter.Match(rec)) continue;
        sealed = pool_->Add(rec);
      }
      if (sealed && pool_->TakeReady(out_->buf(), &last_shown_)) {
        // The first lines go out at once (a --since far back in a big
        // ring shows something soon), then in big chunks.
        if (!first_out_ && !out_->buf()->empty()) {
          first_out_ = true;
          out_->Flush();
        }
        out_->MaybeFlush();
        if (out_->failed()) return false;
      }
    }
    pool_->WaitAll(out_->buf(), &last_shown_);
    out_->MaybeFlush();
    return !out_->failed();
  }

  // Before the "records lost" line goes out (the reporter tells while the
  // reader reads): the lines of the records read before it go first.
  void BeforeLost() {
    if (pool_) pool_->WaitAll(out_->buf(), &last_shown_);
  }

  // tail with a filter and no --since: the last n matching records. Reads the
  // last k records, then the last 4k, ... until n matched or the ring is
  // exhausted; records already judged in an earlier round are skipped.
  bool TailFiltered(uint64_t n) {
    std::map<uint64_t, std::string> got;
    uint64_t lo = UINT64_MAX, hi = 0;
    uint64_t k = n < 256 ? 1024 : n > (UINT64_MAX >> 2) ? UINT64_MAX : n * 4;  // (no wrap to 0)
    Record rec;
    for (;;) {
      Status s = r_->SeekLast(k);
      if (!s.ok() && !s.IsNotFound()) return ReadError(s);
      const uint64_t skipped = r_->blocks_skipped();
      uint64_t count = 0, first = UINT64_MAX, last = 0;
      bool any = false;
      for (;;) {
        // The first record with no block skipped: where the last k begin.
        s = any ? r_->Next(&rec) : NextUnskipped(&rec);
        if (s.IsNotFound()) break;
        if (!s.ok()) return ReadError(s);
        count++;
        any = true;
        if (first == UINT64_MAX) first = rec.seq;
        last = rec.seq;
        if (rec.seq >= lo && rec.seq < hi) continue;  // judged in an earlier round
        std::string line;
        if (Render(rec, &line)) {
          got[rec.seq] = std::move(line);
          if (got.size() > n) got.erase(got.begin());
        }
      }
      // Through the daemon only this user's records came back: the round
      // covered the records of every uid that the daemon passed.
      if (r_->own_records_only()) count = r_->examined();
      if (any) {
        lo = std::min(lo, first);
        hi = std::max(hi, last + 1);
      }
      bool exhausted = count < k;
      if (exhausted && any && got.size() < n && r_->blocks_skipped() != skipped) {
        // The records of skipped blocks were not counted: fewer than k
        // records from `first` to the newest one (read after this round, so
        // a live writer can only make it more) means SeekLast(k) could not
        // go back k records, as count < k does without skipping.
        uint64_t end = 0;
        s = EndSeq(&end);
        if (!s.ok() && !s.IsNotFound()) return ReadError(s);
        exhausted = s.IsNotFound() || end <= first || end - first < k;
        // EndSeq moved the reader: -f goes on after the last record read
        // (what lies between was skipped as not matching, and is again).
        if (exhausted && o_.follow) {
          s = r_->SeekSeq(last + 1);
          if (!s.ok() && !s.IsNotFound()) return ReadError(s);
        }
      }
      if (got.size() >= n || exhausted || k > (UINT64_MAX >> 3)) break;
      k *= 4;
    }
    for (auto &[seq, line] : got) Emit(seq, std::move(line));
    return true;
  }

  // tail with --since: stream from SeekTime keeping the last n matches.
  bool TailSince(uint64_t n) {
    Status s = r_->SeekTime(*o_.filter.since_ns);
    if (!s.ok() && !s.IsNotFound()) return ReadError(s);
    std::deque<std::pair<uint64_t, std::string>> keep;
    Record rec;
    for (;;) {
      s = r_->Next(&rec);
      if (s.IsNotFound()) break;
      if (!s.ok()) return ReadError(s);
      std::string line;
      if (n && Render(rec, &line)) {
        keep.emplace_back(rec.seq, std::move(line));
        if (keep.size() > n) keep.pop_front();
      }
    }
    for (auto &[seq, line] : keep) Emit(seq, std::move(line));
    return true;
  }

  // Lets the reader skip whole blocks whose summaries prove that no record
  // can pass the filter (Render still judges every record it returns).
  void UseFilter() {
    if (ReadSwitchesFromEnv().no_skip) return;
    skipping_ = true;
    r_->SetFilter(&o_.filter, !ReadSwitchesFromEnv().no_index);
  }

  // Next() without skipping the block it reads (the first record after a
  // seek: where reading starts).
  Status NextUnskipped(Record *rec) {
    if (!skipping_) return r_->Next(rec);
    r_->SetFilter(nullptr, false);
    Status s = r_->Next(rec);
    r_->SetFilter(&o_.filter, !ReadSwitchesFromEnv().no_index);
    return s;
  }

  // One past the newest record's sequence number now; NotFound when the ring
  // holds none. Moves the reader.
  Status EndSeq(uint64_t *end) {
    Status s = r_->SeekLast(1);
    if (!s.ok()) return s;
    Record rec;
    s = NextUnskipped(&rec);
    if (s.ok()) *end = rec.seq + 1;
    return s;
  }

  // Prints a rendered line, or keeps it for --reverse.
  void Emit(uint64_t seq, std::string &&line) {
    if (collect_) {
      collect_->push_back(std::move(line));
    } else {
      out_->buf()->append(line);
      out_->MaybeFlush();
    }
    last_shown_ = seq;
  }
  // --reverse: lines are kept here, and printed newest first by the caller.
  void Collect(std::vector<std::string> *lines) { collect_ = lines; }
  // -F: Render gives the lister's lines (values) instead of records'.
  void ListField(FieldLister *lister) { lister_ = lister; }

  bool ReadError(const Status &s) {
    Error(path_, s.ToString());
    failed_ = true;
    return false;
  }
  bool failed() const { return failed_; }
  // The sequence number of the last record printed, if any.
  const std::optional<uint64_t> &last_shown() const { return last_shown_; }

 private:
  Options &o_;
  RecordSource *r_;
  Out *out_;
  render::Printer *pr_;
  const std::string &path_;
  std::string msg_;
  std::vector<std::string> *collect_ = nullptr;
  FieldLister *lister_ = nullptr;
  FieldLookup lookup_;  // the FIELD=VALUE matches' and -F's (this thread's)
  Progress *progress_ = nullptr;
  bool skipping_ = false;  // the reader skips blocks by o_.filter (UseFilter)
  storage::Reporter *rep_;
  std::unique_ptr<RenderPool> pool_;  // DrainPooled's, made on first use
  storage::BlockImage block_;         // DrainPooled's block being handed over
  bool first_out_ = false;            // DrainPooled wrote lines already
  bool failed_ = false;
  std::optional<uint64_t> last_shown_;
};

struct Follow {
  ReadPipeline *pipeline;
  Out *out;
  uv_loop_t *loop;
  RecordSource *src;
  uv_poll_t *sock = nullptr;  // on src->wait_fd() when it has one
  int sock_fd = -1;
  bool stop_ok = true;
};

void OnReadable(uv_poll_t *h, int, int);

// Polls the source's socket, a new one when it connected again (a read
// through the daemon that outlived a restart), none while it has none.
void Rearm(Follow *f) {
  const int fd = f->src->wait_fd();
  if (fd == f->sock_fd) return;
  if (f->sock) {
    uv_poll_stop(f->sock);
    uv_close(reinterpret_cast<uv_handle_t *>(f->sock),
             [](uv_handle_t *h) { delete reinterpret_cast<uv_poll_t *>(h); });
    f->sock = nullptr;
  }
  f->sock_fd = fd;
  if (fd < 0) return;
  f->sock = new uv_poll_t;
  uv_poll_init(f->loop, f->sock, fd);
  f->sock->data = f;
  uv_poll_start(f->sock, UV_READABLE, OnReadable);
}

void FollowStep(Follow *f) {
  bool ok = f->pipeline->Drain();
  f->out->Flush();
  if (!ok || f->out->failed()) {
    f->stop_ok = !f->pipeline->failed();
    uv_stop(f->loop);
    return;
  }
  Rearm(f);
}

void OnFsEvent(uv_fs_event_t *h, const char *, int, int) {
  FollowStep(static_cast<Follow *>(h->data));
}
void OnTimer(uv_timer_t *h) { FollowStep(static_cast<Follow *>(h->data)); }
void OnSignal(uv_signal_t *h, int) { uv_stop(static_cast<Follow *>(h->data)->loop); }
void OnReadable(uv_poll_t *h, int, int) { FollowStep(static_cast<Follow *>(h->data)); }

// Runs until SIGINT/SIGTERM, the output closes, or a read error. Returns
// false on a read error.
// src->wait_fd(): readable when records arrive (a read through the
// daemon), or -1.
bool FollowLoop(ReadPipeline *pipeline, Out *out, const std::string &path, RecordSource *src) {
  uv_loop_t loop;
  if (uv_loop_init(&loop) != 0) {
    Error("follow", "cannot create the event loop");
    return false;
  }
  Follow f{pipeline, out, &loop, src};
  uv_fs_event_t fsev;
  uv_timer_t timer;
  uv_signal_t sig_int, sig_term;
  Rearm(&f);
  uv_fs_event_init(&loop, &fsev);
  uv_timer_init(&loop, &timer);
  uv_signal_init(&loop, &sig_int);
  uv_signal_init(&loop, &sig_term);
  fsev.data = timer.data = sig_int.data = sig_term.data = &f;
  // inotify wakes us as soon as the writer's pwrite lands; the timer covers
  // file systems without inotify and a watch that could not be added.
  uv_fs_event_start(&fsev, OnFsEvent, path.c_str(), 0);
  uv_timer_start(&timer, OnTimer, kPollMs, kPollMs);
  uv_signal_start(&sig_int, OnSignal, SIGINT);
  uv_signal_start(&sig_term, OnSignal, SIGTERM);
  uv_run(&loop, UV_RUN_DEFAULT);
  uv_close(reinterpret_cast<uv_handle_t *>(&fsev), nullptr);
  uv_close(reinterpret_cast<uv_handle_t *>(&timer), nullptr);
  uv_close(reinterpret_cast<uv_handle_t *>(&sig_int), nullptr);
  uv_close(reinterpret_cast<uv_handle_t *>(&sig_term), nullptr);
  if (f.sock)
    uv_close(reinterpret_cast<uv_handle_t *>(f.sock),
             [](uv_handle_t *h) { delete reinterpret_cast<uv_poll_t *>(h); });
  uv_run(&loop, UV_RUN_DEFAULT);
  uv_loop_close(&loop);
  return f.stop_ok;
}

// The cursor to start after: --after-cursor, else the one in --cursor-file
// (none when the file does not exist yet). False (and an error printed)
// when there is one that cannot be used with this ring.
bool StartCursor(const Options &o, const RecordSource &r, const std::string &path,
                 std::optional<storage::Cursor> *out, int *rc) {
  std::string text = o.cursor.empty() ? o.after_cursor : o.cursor;
  if (text.empty() && !o.cursor_file.empty()) {
    // Only a regular file of our own (storage/small_file.h): never another
    // user's file, a symlink or a FIFO.
    std::string why;
    int got = storage::ReadSmallFile(o.cursor_file, 255, &text, &why);
    if (got == 0) return true;
    if (got < 0) {
      Error(o.cursor_file, why);
      *rc = kExitError;
      return false;
    }
    while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  }
  if (text.empty()) return true;
  storage::Cursor c;
  std::string why;
  if (!storage::ParseCursor(text, &c, &why)) {
    const bool from_file = o.after_cursor.empty() && o.cursor.empty();
    Error(from_file ? o.cursor_file : o.cursor.empty() ? "--after-cursor" : "--cursor", why);
    *rc = from_file ? kExitError : kExitUsage;
    return false;
  }
  Status s = storage::CheckCursor(c, r.layout(), path);
  if (!s.ok()) {
    Error(path, s.message());
    *rc = kExitError;
    return false;
  }
  *out = c;
  return true;
}

// --show-cursor and --cursor-file after the output.
bool EndCursor(const Options &o, const RecordSource &r, const std::string &path,
               const std::optional<uint64_t> &last, Out *out) {
  if (!last || (!o.show_cursor && o.cursor_file.empty())) return true;
  std::string id = r.layout().RingIdHex();
  if (id.empty()) {
    Error(path, "has no ring identity yet (a file from an older logsink), so it has no cursors");
    return false;
  }
  std::string c = storage::FormatCursor(id, *last);
  if (o.show_cursor) out->buf()->append("-- cursor: " + c + "\n");
  if (o.cursor_file.empty()) return true;
  // A new file of a unique name beside it, renamed over it: never a fixed
  // "F.tmp" someone else may have created first (storage/small_file.h).
  storage::SmallFileOptions opts;
  opts.mode = 0600;
  std::string why;
  if (!storage::WriteSmallFile(o.cursor_file, c + "\n", opts, &why)) {
    Error(o.cursor_file, "cannot write the cursor file: " + why);
    return false;
  }
  return true;
}

// --list-boots: one line per boot, oldest first, numbered as journalctl does
// (0 the last boot, -1 the one before it), or a JSON array.
int ListBoots(const Options &o, RecordSource *r, const std::string &path) {
  std::vector<storage::BootInfo> boots;
  Status s = r->ListBoots(&boots);
  if (!s.ok()) {
    Error(path, s.ToString());
    return kExitError;
  }
  Out out(STDOUT_FILENO);
  std::string &b = *out.buf();
  auto it = std::back_inserter(b);
  const int64_t n = int64_t(boots.size());
  if (o.mode == render::OutputMode::kJson || o.mode == render::OutputMode::kJsonPretty) {
    b += '[';
    for (int64_t i = 0; i < n; i++) {
      const storage::BootInfo &bi = boots[size_t(i)];
      fmt::format_to(it,
                     "{}{{\"index\":{},\"boot_id\":\"{}\",\"first_ts_ns\":{},"
                     "\"first_ts_ns_str\":\"{}\",\"last_ts_ns\":{},\"last_ts_ns_str\":\"{}\","
                     "\"records\":{}}}",
                     i ? "," : "", i - (n - 1), render::BootIdHex(bi.boot_id), bi.first_ns,
                     bi.first_ns, bi.last_ns, bi.last_ns, bi.records);
    }
    b += "]\n";
  } else {
    render::TimeFormatter tf(o.utc);
    const size_t width = std::to_string(1 - n).size();  // the lowest index
    for (int64_t i = 0; i < n; i++) {
      const storage::BootInfo &bi = boots[size_t(i)];
      fmt::format_to(it, "{:>{}} {} ", i - (n - 1), width, render::BootIdHex(bi.boot_id));
      tf.AppendShort(bi.first_ns, &b);
      b += ' ';
      tf.AppendShort(bi.last_ns, &b);
      fmt::format_to(it, " {}\n", bi.records);
      out.MaybeFlush();
    }
  }
  return FinishOutput(&out, "stdout");
}

}  // namespace

namespace {

int Tail(Options &o, bool tty) {
  Reading reading;
  if (int rc = OpenReading(o, o.follow, &reading)) return rc;
  const std::string &path = reading.path;
  ReadReporter &rep = *reading.rep;
  std::unique_ptr<RecordSource> &r = reading.source;
  if (o.list_boots) return ListBoots(o, r.get(), path);
  if (int rc = SelectBoot(o, r.get(), path)) return rc;
  render::Printer pr(o.mode, UseColor(o, tty), o.utc);
  pr.SetOutputFields(o.output_fields);
  Out out(STDOUT_FILENO);
  ReadPipeline pipeline(o, r.get(), &out, &pr, path, &rep);
  pipeline.UseFilter();
  Progress progress("cat", tty);  // tty: stdout before the pager took it
  std::vector<std::string> reversed;
  if (o.reverse) pipeline.Collect(&reversed);
  // -F: values, not records (Finish allowed it with cat only, no -r, -f or
  // cursor output). JSON with --json, -o json and -o json-pretty.
  std::optional<FieldLister> lister;
  if (o.list_field) {
    lister.emplace(*o.list_field, o.mode == render::OutputMode::kJson ||
                                      o.mode == render::OutputMode::kJsonPretty);
    pipeline.ListField(&*lister);
  }
  rep.on_lost = [&](uint64_t n) {
    if (lister) {  // the output is values only: say it on stderr
      Warn(std::to_string(n) + " records lost (overwritten before they were read)");
      return;
    }
    pipeline.BeforeLost();
    if (!o.reverse) return pr.Lost(n, out.buf());
    std::string line;
    pr.Lost(n, &line);
    reversed.push_back(std::move(line));
  };
  bool ok = true;
  Status s;
  std::optional<storage::Cursor> start;
  int crc = kExitOk;
  if (!StartCursor(o, *r, path, &start, &crc)) return crc;
  if (start) {  // every record after the cursor, or from it (records overwritten since: "lost")
    s = r->SeekSeq(o.cursor.empty() ? start->seq + 1 : start->seq);
    if (!s.ok() && !s.IsNotFound()) return pipeline.ReadError(s), kExitError;
    ok = pipeline.Drain();
  } else if (o.cmd == Command::kCat) {
    if (!o.reverse) pipeline.ShowProgress(&progress);  // -r collects: no progress to show
    s = o.filter.since_ns ? r->SeekTime(*o.filter.since_ns) : r->SeekOldest();
    if (!s.ok() && !s.IsNotFound()) return pipeline.ReadError(s), kExitError;
    ok = pipeline.Drain();
  } else if (o.lines == 0) {
    s = r->SeekEnd();
    if (!s.ok() && !s.IsNotFound()) return pipeline.ReadError(s), kExitError;
  } else if (o.filter.since_ns) {
    ok = pipeline.TailSince(o.lines);
  } else if (o.filter.any() || !o.grep.empty() || !o.matches.empty() || r->own_records_only()) {
    ok = pipeline.TailFiltered(o.lines);
  } else {
    s = r->SeekLast(o.lines);
    if (!s.ok() && !s.IsNotFound()) return pipeline.ReadError(s), kExitError;
    ok = pipeline.Drain();
  }
  if (pipeline.failed()) return kExitError;
  if (lister && lister->full())
    Warn("-F " + lister->name() + ": stopped after " + lister->full_reason() +
         "; the rest of the selection was not read");
  for (auto it = reversed.rbegin(); it != reversed.rend(); ++it) {
    out.buf()->append(*it);
    out.MaybeFlush();
  }
  if (ok && o.follow) {
    // Through the daemon the read starts now (tail -n 0 has not asked yet),
    // so that its socket is there to wait on.
    if (r->own_records_only() && r->wait_fd() < 0) pipeline.Drain();
    if (pipeline.failed()) return kExitError;
    out.Flush();
    if (!out.failed() && !FollowLoop(&pipeline, &out, path, r.get())) return kExitError;
  }
  if (!EndCursor(o, *r, path, pipeline.last_shown(), &out)) {
    FinishOutput(&out, "stdout");
    return kExitError;
  }
  return FinishOutput(&out, "stdout");
}

}  // namespace

int RunTail(Options &o) {
  // The pager comes first, so that whatever is printed goes through it;
  // colours are decided by the terminal behind it.
  bool tty = isatty(STDOUT_FILENO) == 1;
  Pager pager;
  if (!o.follow && !o.no_pager && !o.list_field) pager.Start(o.pager_end);
  int rc = o.nats_url.empty() ? Tail(o, tty) : ReadNats(o, tty);
  pager.Finish();
  return rc;
}

int RunExport(Options &o) {
  Reading reading;
  if (int rc = OpenReading(o, false, &reading)) return rc;
  const std::string &path = reading.path;
  ReadReporter &rep = *reading.rep;
  std::unique_ptr<RecordSource> &r = reading.source;
  if (int rc = SelectBoot(o, r.get(), path)) return rc;  // before FILE is created
  // "-" is standard output (a file named "-" is "./-").
  const bool to_stdout = o.export_path == "-";
  const std::string dest = to_stdout ? "stdout" : o.export_path;
  struct stat a, b;
  if (stat(path.c_str(), &a) == 0 &&
      (to_stdout ? fstat(STDOUT_FILENO, &b) : stat(o.export_path.c_str(), &b)) == 0 &&
      a.st_dev == b.st_dev && a.st_ino == b.st_ino) {
    Error(dest, "is the ring file itself");
    return kExitError;
  }
  // A new file only (O_EXCL, which also never follows a symlink at the
  // path), with the ring's permission bits (less the umask): the copy holds
  // the same records, so no more people may read it than can read the ring.
  mode_t mode = 0600;
  if (stat(path.c_str(), &a) == 0) mode = a.st_mode & 0666;
  int fd = to_stdout ? STDOUT_FILENO
                     : open(o.export_path.c_str(),
                            O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
  if (fd < 0) {
    Error(o.export_path, errno == EEXIST ? std::string("exists; refusing to overwrite it")
                                         : std::string(std::strerror(errno)));
    return kExitError;
  }
  struct stat created {};
  if (!to_stdout && fstat(fd, &created) != 0) created = {};
  int rc;
  {
    o.mode = o.export_json ? render::OutputMode::kJson : render::OutputMode::kShort;
    render::Printer pr(o.mode, false, o.utc);
    pr.SetOutputFields(o.output_fields);
    Out out(fd);
    ReadPipeline pipeline(o, r.get(), &out, &pr, path, &rep);
    rep.on_lost = [&](uint64_t n) {
      pipeline.BeforeLost();
      pr.Lost(n, out.buf());
    };
    pipeline.UseFilter();
    Progress progress("export", isatty(fd) == 1);
    pipeline.ShowProgress(&progress);
    Status s = o.filter.since_ns ? r->SeekTime(*o.filter.since_ns) : r->SeekOldest();
    if (!s.ok() && !s.IsNotFound()) {
      pipeline.ReadError(s);
      rc = kExitError;
    } else {
      bool ok = pipeline.Drain();
      rc = FinishOutput(&out, dest);
      if (!ok && pipeline.failed()) rc = kExitError;
    }
  }
  if (!to_stdout && close(fd) != 0 && rc == kExitOk) {
    Error(o.export_path, std::strerror(errno));
    rc = kExitError;
  }
  // A copy cut short (a full disk, a file size limit) is not left behind
  // looking like a complete one: the file is ours (O_EXCL above), unless
  // someone replaced it meanwhile (then it is not ours to remove).
  struct stat now;
  if (!to_stdout && rc != kExitOk && lstat(o.export_path.c_str(), &now) == 0 &&
      now.st_dev == created.st_dev && now.st_ino == created.st_ino) {
    if (unlink(o.export_path.c_str()) == 0)
      std::fprintf(stderr, "logctl: %s: removed (incomplete)\n", o.export_path.c_str());
  }
  return rc;
}

}  // namespace logsink::logctl
