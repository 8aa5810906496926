// nats_stream.cc: the stream a fleet read reads (nats_stream.h).
#include "nats_stream.h"

#include <fnmatch.h>

#include <nlohmann/json.hpp>
#include <string_view>

#include "common.h"
#include "logsink/render/escape.h"

namespace logsink::logctl::fleet {
namespace {

using nlohmann::json;

constexpr int64_t kRequestMs = 5000;  // each NATS request

std::string StatusText(natsStatus s) { return natsStatus_GetText(s); }

// The host a subject names, "" when it is not of the layout.
std::string HostOf(const std::string &prefix, const std::string &subject) {
  const size_t n = prefix.size();
  if (subject.compare(0, n, prefix) != 0 || subject.size() <= n + 1 || subject[n] != '.') return "";
  const size_t end = subject.find('.', n + 1);
  return subject.substr(n + 1, end == std::string::npos ? std::string::npos : end - n - 1);
}

bool HostSelected(const Options &o, const std::string &host) {
  if (o.hosts.empty()) return true;
  for (const std::string &g : o.hosts)
    if (fnmatch(g.c_str(), host.c_str(), 0) == 0) return true;
  return false;
}

// A host token a consumer's request can carry (cnats writes the subject
// into JSON as it is) and a terminal can show: printable ASCII, no '"' or
// '\\'.
bool HostNameOk(const std::string &h) {
  for (unsigned char c : h)
    if (c < 0x21 || c >= 0x7f || c == '"' || c == '\\') return false;
  return true;
}

// The stream that captures all (the only one), or "" with *why.
std::string FindStream(natsConnection *nc, const std::string &all, std::string *why) {
  const std::string req = "{\"subject\":\"" + all + "\"}";
  natsMsg *reply = nullptr;
  natsStatus s = natsConnection_Request(&reply, nc, "$JS.API.STREAM.NAMES", req.data(),
                                        int(req.size()), kRequestMs);
  if (s != NATS_OK) {
    *why = "asking which stream captures " + all + ": " + StatusText(s);
    return "";
  }
  json j =
      json::parse(std::string_view(natsMsg_GetData(reply), size_t(natsMsg_GetDataLength(reply))),
                  nullptr, false);
  natsMsg_Destroy(reply);
  std::vector<std::string> names;
  if (j.is_object() && j.contains("streams") && j["streams"].is_array())
    for (const json &n : j["streams"])
      if (n.is_string()) names.push_back(n.get<std::string>());
  if (names.size() == 1) return names[0];
  if (names.empty()) {
    *why = "no stream captures " + all + ": name one with --stream";
  } else {
    *why = "several streams capture " + all + " (";
    for (size_t i = 0; i < names.size(); i++) *why += (i ? ", " : "") + names[i];
    *why += "): name one with --stream";
  }
  return "";
}

}  // namespace

Stream::~Stream() {
  if (js) jsCtx_Destroy(js);
  if (nc) natsConnection_Destroy(nc);
}

bool Survey(const Options &o, Stream *out, std::map<std::string, std::pair<bool, bool>> *hosts,
            std::string *why) {
  const std::string all = o.nats_prefix + ".>";
  jsStreamInfo *si = nullptr;
  jsOptions io;
  jsOptions_Init(&io);
  io.Wait = kRequestMs;
  io.Stream.Info.SubjectsFilter = all.c_str();
  jsErrCode jerr = jsErrCode(0);
  natsStatus s = js_GetStreamInfo(&si, out->js, out->name.c_str(), &io, &jerr);
  if (s != NATS_OK) {
    *why = s == NATS_NOT_FOUND ? "no stream " + out->name + " on " + o.nats_url
                               : "asking about the stream " + out->name + ": " + StatusText(s);
    return false;
  }
  out->first_seq = si->State.FirstSeq;
  out->last_seq = si->State.LastSeq;
  out->msgs = si->State.Msgs;
  out->bytes = si->State.Bytes;
  out->host_msgs.clear();
  out->readers.clear();
  hosts->clear();
  if (si->State.Subjects)
    for (int i = 0; i < si->State.Subjects->Count; i++) {
      const jsStreamStateSubject &sub = si->State.Subjects->List[i];
      const std::string subject = sub.Subject;
      const std::string host = HostOf(o.nats_prefix, subject);
      if (host.empty()) continue;
      if (!HostNameOk(host)) {
        out->odd_hosts.insert(host);
        continue;
      }
      auto &h = (*hosts)[host];
      (subject.size() == o.nats_prefix.size() + 1 + host.size() ? h.first : h.second) = true;
      if (HostSelected(o, host)) out->host_msgs[host] += sub.Msgs;
    }
  jsStreamInfo_Destroy(si);
  out->hosts_total = hosts->size();
  for (const auto &[host, kinds] : *hosts) {
    if (!HostSelected(o, host)) continue;
    const std::string base = o.nats_prefix + "." + host;
    if (kinds.first) out->readers.emplace_back(host, base);
    if (kinds.second) out->readers.emplace_back(host, base + ".>");
  }
  return true;
}

int OpenStream(const Options &o, bool follow, const std::string &named_by, Stream *out) {
  natsOptions *no = nullptr;
  natsStatus s = natsOptions_Create(&no);
  if (s == NATS_OK) s = natsOptions_SetURL(no, o.nats_url.c_str());
  if (s == NATS_OK) s = natsOptions_SetTimeout(no, kRequestMs);
  // A follower rides out a server restart; a one-shot read fails instead.
  if (s == NATS_OK) s = natsOptions_SetMaxReconnect(no, follow ? -1 : 0);
  if (s == NATS_OK) s = natsConnection_Connect(&out->nc, no);
  natsOptions_Destroy(no);
  if (s != NATS_OK) {
    Error("--nats", "cannot connect to " + o.nats_url + ": " + StatusText(s));
    return kExitError;
  }
  jsOptions jo;
  jsOptions_Init(&jo);
  jo.Wait = kRequestMs;
  if ((s = natsConnection_JetStream(&out->js, out->nc, &jo)) != NATS_OK) {
    Error("--nats", "JetStream on " + o.nats_url + ": " + StatusText(s));
    return kExitError;
  }
  std::string why;
  const std::string all = o.nats_prefix + ".>";
  out->name = !o.nats_stream.empty() ? o.nats_stream
              : !named_by.empty()    ? named_by
                                     : FindStream(out->nc, all, &why);
  if (out->name.empty()) {
    Error("--nats", why);
    return kExitError;
  }
  std::map<std::string, std::pair<bool, bool>> hosts;
  if (!Survey(o, out, &hosts, &why)) {
    Error("--nats", why);
    return kExitError;
  }
  for (const std::string &h : out->odd_hosts) {
    std::string shown;
    render::AppendTerminalSafe(&shown, h);
    Warn("the stream " + out->name + " has subjects of a host named '" + shown +
         "', which holds characters a host name never has: not read");
  }
  // A follower waits for the hosts to come (Survey again, nats_read.cc).
  if (!out->readers.empty() || follow) return -1;
  if (hosts.empty()) {
    Warn("the stream " + out->name + " holds no subject " + all);
  } else if (!o.hosts.empty()) {
    std::string list;
    size_t i = 0;
    for (auto it = hosts.begin(); it != hosts.end() && i < 20; ++it, ++i)
      render::AppendTerminalSafe(&(list += (i ? ", " : "")), it->first);
    if (hosts.size() > 20) list += ", ...";
    Warn("no host of the stream " + out->name + " matches --host (its hosts: " + list + ")");
  }
  return kExitOk;
}

}  // namespace logsink::logctl::fleet
