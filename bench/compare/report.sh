#!/usr/bin/env bash
# report.sh: turns the raw lines of run.sh (compare-raw.txt) into the plot's
# data file, the plot (gnuplot) and the markdown table for the README.
#
# usage: bench/compare/report.sh RAW OUTDIR "MACHINE LINE"
set -euo pipefail
raw=$1 out=$2 machine=$3
data=$out/compare-data.txt md=$out/compare.md png=$out/compare.png

# Display names, in plot order.
names='logsink=logsink logsink-nb=logsink_(never_blocks:_the_previous_default) spdlog=spdlog_async_(in-process) rsyslog=rsyslog syslog-ng=syslog-ng syslog-ng-nopasscred=syslog-ng_so-passcred(no)'

awk -v names="$names" -v data="$data" -v md="$md" -v machine="$machine" '
function kv(line, key,   m) { if (match(line, " " key "=[^ ]*")) return substr(line, RSTART + length(key) + 2, RLENGTH - length(key) - 2); return "" }
function human(x) { if (x == "") return "-"; x = x + 0; if (x >= 1e6) return sprintf("%.2f M", x / 1e6); if (x >= 1e3) return sprintf("%.0f k", x / 1e3); return sprintf("%.0f", x) }
function cnt(x) { x = x + 0; return x >= 1e6 ? sprintf("%gM", x / 1e6) : sprintf("%gk", x / 1e3) }
# A sender configuration "PxT" (processes x threads) for people.
function who(c,   q) { split(c, q, "x"); if (q[2] > 1) return q[2] " threads"; return q[1] > 1 ? q[1] " processes" : "1 thread" }
function whoshort(c,   q) { split(c, q, "x"); if (q[2] > 1) return q[2] "t"; return q[1] > 1 ? q[1] "p" : "1" }
BEGIN {
  ns = split(names, arr, " ")
  for (i = 1; i <= ns; i++) { split(arr[i], p, "="); order[i] = p[1]; disp[p[1]] = p[2]; gsub("_", " ", disp[p[1]]) }
}
/^label=latency/ { lat = $0; next }
/^# load average/ { sub(/^# load average /, ""); load = (load == "" ? "" : load "; ") $0; next }
/^label=/ {
  sys = substr($1, 7); n = kv($0, "n"); k = kv($0, "clients"); t = kv($0, "threads")
  if (n == "") next
  k = k "x" (t == "" ? 1 : t)
  key = sys SUBSEP n SUBSEP k
  seen[sys] = 1; if (!(n in nseen)) { nseen[n] = 1; nlist[++nn] = n }
  row[key] = $0
}
END {
  # Configurations in run order: smallest N first, then 1 thread, 4 processes, 4 threads.
  for (i = 1; i <= nn; i++) for (j = i + 1; j <= nn; j++) if (nlist[j] + 0 < nlist[i] + 0) { t = nlist[i]; nlist[i] = nlist[j]; nlist[j] = t }
  nc = 0
  for (i = 1; i <= nn; i++) { cfg[++nc] = nlist[i] SUBSEP "1x1"; cfg[++nc] = nlist[i] SUBSEP "4x1"; cfg[++nc] = nlist[i] SUBSEP "1x4" }
  # Plot data: one row per system, e2e records/s per configuration, then bytes/record.
  printf "system" > data
  for (c = 1; c <= nc; c++) { split(cfg[c], q, SUBSEP); printf "\t\"%s x%s\"", cnt(q[1]), whoshort(q[2]) > data }
  printf "\tbytes_per_rec\n" > data
  for (i = 1; i <= ns; i++) {
    # LS_BLOCK_NEVER drops under a tight loop: its landed/s is in the table only.
    s = order[i]; if (!(s in seen) || s == "logsink-nb") continue
    printf "\"%s\"", disp[s] > data
    b = "-"
    for (c = 1; c <= nc; c++) {
      r = row[s SUBSEP cfg[c]]; v = kv(r, "e2e_rps")
      printf "\t%s", (v == "" ? "-" : v) > data
      if (b == "-" && r != "") b = kv(r, "bytes_per_rec")
    }
    printf "\t%s\n", b > data
  }
  # Markdown.
  print "Measured by `bench/compare/run.sh` on " machine "." > md
  print "Same message everywhere: `user %d logged in from port %d request %d`. \"Accepted\" is the" > md
  print "sender side (all calls returned); \"end to end\" is until every record was on disk (counted" > md
  print "there: ring records by sequence number, text lines containing the message). Daemon CPU is" > md
  print "utime+stime of the daemon process over the run. logsink: liblogsink with default options (a full" > md
  print "thread buffer waits while the daemon drains, like syslog(3) on a full socket); the previous default," > md
  print "LS_BLOCK_NEVER (drop and count when the thread buffer is full), is shown too. Senders: one thread," > md
  print "four processes, or four threads of one process (one client, socket or logger per process)." > md
  print "Bytes/record: text log size / lines; logsink: ring blocks holding the records (8 KiB each," > md
  print "headers and slack included) / records in them; the string table (once per call site) is not counted." > md
  print "Machine load while measuring: " load ". Raw numbers: `compare-raw.txt`; plot: `compare.png`." > md
  print "" > md
  print "| system | records | senders | accepted rec/s | end-to-end rec/s | landed / sent | bytes/record on disk | daemon CPU s |" > md
  print "|---|---:|---:|---:|---:|---:|---:|---:|" > md
  for (c = 1; c <= nc; c++) for (i = 1; i <= ns; i++) {
    s = order[i]; r = row[s SUBSEP cfg[c]]; if (r == "") continue
    split(cfg[c], q, SUBSEP)
    if (r ~ /FAILED_TO_START/) { printf "| %s | %s | %s | did not start | | | | |\n", disp[s], cnt(q[1]), who(q[2]) > md; continue }
    cpu = kv(r, "daemon_cpu_s")
    if (cpu + 0 < 0) cpu = "in-process"
    else if (kv(r, "landed") + 0 > 0) cpu = sprintf("%s (%.2f µs/rec)", cpu, cpu * 1e6 / kv(r, "landed"))
    land = kv(r, "landed") " / " kv(r, "sent")
    if (kv(r, "client_dropped") + 0 > 0) land = land " (" kv(r, "client_dropped") " dropped+counted)"
    if (kv(r, "timeout") == "1") land = land " TIMEOUT"
    printf "| %s | %s | %s | %s | %s | %s | %s | %s |\n", disp[s], cnt(q[1]), who(q[2]), human(kv(r, "accepted_rps")), human(kv(r, "e2e_rps")), land, kv(r, "bytes_per_rec"), cpu > md
  }
  print "" > md
  # Targets: the rate of one thread, logsink vs rsyslog.
  print "| target | measured | met |" > md
  print "|---|---|---|" > md
  for (c = 1; c <= nc; c++) {
    split(cfg[c], q, SUBSEP); a = row["logsink" SUBSEP cfg[c]]
    if (q[2] != "1x1" || a == "") continue
    printf "| end to end >= 10 M records/s from one thread, default options, nothing lost (%s records) | %s/s, lost %s | %s |\n", cnt(q[1]), human(kv(a, "e2e_rps")), kv(a, "lost"), (kv(a, "e2e_rps") + 0 >= 1e7 && kv(a, "lost") == "0") ? "yes" : "NO" > md
  }
  if ("rsyslog" in seen) {
    for (c = 1; c <= nc; c++) {
      split(cfg[c], q, SUBSEP); a = row["logsink" SUBSEP cfg[c]]; b = row["rsyslog" SUBSEP cfg[c]]
      if (a == "" || b == "") continue
      x = kv(b, "e2e_rps") > 0 ? kv(a, "e2e_rps") / kv(b, "e2e_rps") : 0
      ok = (x >= 30 && kv(a, "lost") == "0") ? "yes" : "NO"
      printf "| end to end >= 30x rsyslog, nothing lost (%s records, %s) | %.1fx, lost %s | %s |\n", cnt(q[1]), who(q[2]), x, kv(a, "lost"), ok > md
    }
    a = row["logsink" SUBSEP cfg[1]]; b = row["rsyslog" SUBSEP cfg[1]]; g = row["syslog-ng" SUBSEP cfg[1]]
    if (a != "" && b != "") {
      rb = kv(a, "bytes_per_rec") / kv(b, "bytes_per_rec")
      msg = sprintf("%.1f B vs rsyslog %.1f B (1/%.1f)", kv(a, "bytes_per_rec"), kv(b, "bytes_per_rec"), 1 / rb)
      okb = rb <= 0.2
      if (g != "") { rg = kv(a, "bytes_per_rec") / kv(g, "bytes_per_rec"); msg = msg sprintf(", syslog-ng %.1f B (1/%.1f)", kv(g, "bytes_per_rec"), 1 / rg); okb = okb && rg <= 0.2 }
      printf "| bytes/record <= 1/5 of the syslog daemons | %s | %s |\n", msg, okb ? "yes" : "NO" > md
    }
  }
  if (lat != "") {
    p99 = kv(lat, "p99_ms")
    printf "| visibility p99 <= 110 ms (flush interval 100 ms + 10 ms) | p50 %s ms, p90 %s ms, p99 %s ms, max %s ms (%s/%s records at %s Hz, via `logctl tail -f --json`) | %s |\n", kv(lat, "p50_ms"), kv(lat, "p90_ms"), p99, kv(lat, "max_ms"), kv(lat, "received"), kv(lat, "count"), kv(lat, "rate_hz"), (p99 + 0 <= 110 && p99 + 0 >= 0) ? "yes" : "NO" > md
  }
}' "$raw"

ncols=$(awk -F'\t' 'NR==1{print NF}' "$data")
gnuplot <<EOF
set terminal pngcairo size 1400,560 font ",10"
set output "$png"
set datafile separator "\t"
set datafile missing "-"
set multiplot layout 1,2 title "logsink vs rsyslog, syslog-ng, spdlog — $machine"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set key top right font ",9"
set xtics rotate by -25 font ",9" nomirror
set grid ytics
set title "records/s end to end (until on disk), log scale"
set logscale y
set yrange [1000:*]
set ylabel "records/s"
plot for [i=2:$((ncols - 1))] "$data" using i:xtic(1) title columnhead(i)
unset logscale y
set yrange [0:*]
set title "bytes on disk per record"
set ylabel "bytes"
set key off
plot "$data" using $ncols:xtic(1) lc rgb "#4477aa" notitle, \
     "" using 0:$ncols:(sprintf("%.1f", column($ncols))) with labels offset 0,0.7 notitle
unset multiplot
EOF
