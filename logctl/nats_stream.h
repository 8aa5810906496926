// nats_stream.h: the JetStream stream a fleet read reads (`logctl --nats`,
// `logctl stats --nats`): the connection, the stream (named, else the one
// that captures PREFIX.>), its hosts from its subject list (PREFIX.HOST
// and PREFIX.HOST.MORE...) and the consumers a read of the selected hosts
// needs: one per host on PREFIX.HOST, one more on PREFIX.HOST.> when the
// stream has such subjects.
#pragma once

#include <nats/nats.h>

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "options.h"

namespace logsink::logctl::fleet {

struct Stream {
  natsConnection *nc = nullptr;
  jsCtx *js = nullptr;
  std::string name;                      // the stream
  uint64_t first_seq = 0, last_seq = 0;  // its messages when it was opened
  uint64_t msgs = 0, bytes = 0;
  // The selected hosts' consumers, by host name: (host, subject filter).
  std::vector<std::pair<std::string, std::string>> readers;
  // Messages per selected host, from the subject list.
  std::map<std::string, uint64_t> host_msgs;
  size_t hosts_total = 0;  // hosts in the stream, selected or not
  // Host tokens no reader takes (quotes, backslashes, controls, non-ASCII).
  std::set<std::string> odd_hosts;
  Stream() = default;
  ~Stream();
  Stream(const Stream &) = delete;
  Stream &operator=(const Stream &) = delete;
};

// Connects to o.nats_url (reconnecting for ever when follow, else never),
// finds the stream (o.nats_stream, else named_by, else the one that
// captures PREFIX.>) and the selected hosts. -1 to go on; else the exit
// code, after the message: kExitError when it cannot, kExitOk when no host
// is selected (a warning names those there are).
// With follow, no host selected yet is no reason to stop (-1).
int OpenStream(const Options &o, bool follow, const std::string &named_by, Stream *out);
// Reads out->name's state and subjects again: its sequences, messages and
// the selected hosts' readers (hosts: every host, with whether it has
// PREFIX.HOST and deeper subjects). False with *why when NATS cannot say.
bool Survey(const Options &o, Stream *out, std::map<std::string, std::pair<bool, bool>> *hosts,
            std::string *why);

}  // namespace logsink::logctl::fleet
