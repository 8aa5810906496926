// forwarder_status.cc: the status file a running forwarder rewrites every
// second (counters, rates, lag, the time to catch up and to be lapped, the
// falling-behind warning) and --status, which prints it (see
// forwarder_impl.h).
#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "forwarder_impl.h"
#include "logsink/storage/small_file.h"

namespace logsink::forward {

using storage::RingReader;

void Forwarder::WriteStatus() {
  SinkState st = sink_->state();
  RingReader::Summary sum;
  bool have_sum = reader_->Summarize(&sum).ok();
  uint64_t end = have_sum ? sum.newest_seq + 1 : read_next_;
  uint64_t next = committed_;
  uint64_t lag_s = 0;
  if (!window_.empty()) {
    uint64_t now = WallNs();
    lag_s = now > window_.front().ts_ns ? (now - window_.front().ts_ns) / 1000000000u : 0;
  }
  // Rates over the time since the last status (about a second): records
  // the cursor moved past, records the writer added.
  const uint64_t now_ms = NowMs();
  uint64_t lag = end > next ? end - next : 0;
  if (rate_ms_ && now_ms > rate_ms_) {
    double dt = double(now_ms - rate_ms_) / 1000.0;
    out_rate_ = double(next >= rate_next_ ? next - rate_next_ : 0) / dt;
    in_rate_ = double(end >= rate_end_ ? end - rate_end_ : 0) / dt;
  }
  rate_ms_ = now_ms;
  rate_next_ = next;
  rate_end_ = end;
  std::string catch_up = lag == 0 ? "0"
                         : out_rate_ > in_rate_
                             ? fmt::format("{:.0f}", double(lag) / (out_rate_ - in_rate_))
                             : "never";
  // Falling a lap behind: the writer overwrites what is not shipped yet;
  // at these rates it reaches the cursor in lap seconds.
  uint64_t ring_records = have_sum ? sum.newest_seq + 1 - sum.oldest_seq : 0;
  std::string lap =
      in_rate_ > out_rate_ && ring_records
          ? fmt::format("{:.0f}", double(ring_records > lag ? ring_records - lag : 0) /
                                      (in_rate_ - out_rate_))
          : "never";
  // The writer laps the cursor only once it has wrapped (in tier 0, the
  // one it writes): before, it fills empty slots, and a ring of one record
  // that nothing shipped yet is not falling behind.
  const bool wrapped = have_sum && sum.wraps > 0;
  if (ring_records && wrapped && lag > ring_records / 2 && !behind_warned_) {
    behind_warned_ = true;
    spdlog::warn(
        "falling behind the ring: {} records not shipped, more than half of the {} it holds "
        "(in {:.0f}/s, out {:.0f}/s); records are lost once the writer laps the cursor "
        "(at these rates: {})",
        lag, ring_records, in_rate_, out_rate_, lap == "never" ? "never" : "in " + lap + " s");
  } else if (behind_warned_ && lag < ring_records / 4) {
    behind_warned_ = false;
    spdlog::info("caught up with the ring again: {} records not shipped", lag);
  }
  std::string text = fmt::format(
      "pid={}\nto={}\nring={}\nring_id={}\ndestination={}\naddress={}\nforwarded={}\nacked={}"
      "\nduplicates={}\n"
      "retries={}\nresent={}\nlost={}\nfiltered={}\nskipped_blocks={}\nin_flight={}\n"
      "cursor_next={}\nlag_records={}\nlag_seconds={}\nreconnects={}\nlast_error={}\n"
      "records_per_second={:.0f}\nring_records_per_second={:.0f}\ncatch_up_seconds={}\n"
      "ring_records={}\nbatch={}\noversize={}\nrefused={}\nlap_seconds={}\ncompress={}\n",
      getpid(), o_.to, o_.file, ring_id_, st.connected ? "connected" : "disconnected", st.address,
      c_.forwarded, c_.acked, c_.duplicates, c_.retries, st.resent, c_.lost, c_.filtered,
      c_.skipped_blocks, window_.size(), next, lag, lag_s, st.reconnects, st.last_error, out_rate_,
      in_rate_, catch_up, ring_records, o_.batch, c_.oversize, c_.refused, lap, o_.compress);
  // Through a new file of a unique name (O_EXCL|O_NOFOLLOW) renamed over the
  // status: never a fixed "<status>.tmp" that whoever can write in the
  // directory could point at a file of root's. Whatever is at the status
  // path is replaced, not written through. Not fsynced: rewritten every
  // second, and a lost one matters to nobody.
  storage::SmallFileOptions opts;
  opts.mode = 0644;
  opts.only_own_regular = false;
  std::string why;
  if (storage::WriteSmallFile(StatusPath(o_), text, opts, &why)) {
    status_error_.clear();
  } else if (why != status_error_) {
    spdlog::warn("cannot write the status file {}: {}", StatusPath(o_), why);
    status_error_ = why;  // once per distinct reason, not every second
  }
}

std::string StatusPath(const Options &o) { return o.cursor_file + ".status"; }

int PrintStatus(const Options &o) {
  std::ifstream in(StatusPath(o));
  if (!in) {
    std::fprintf(stderr,
                 "logsink-forward: no status at %s: is an instance running with "
                 "--cursor-file %s?\n",
                 StatusPath(o).c_str(), o.cursor_file.c_str());
    return 1;
  }
  std::stringstream ss;
  ss << in.rdbuf();
  std::fputs(ss.str().c_str(), stdout);
  return 0;
}

}  // namespace logsink::forward
