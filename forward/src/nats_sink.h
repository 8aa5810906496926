// nats_sink.h: NATS JetStream destination (cnats). One message per record on
// a subject, header Nats-Msg-Id = the record's cursor so that the stream
// drops a re-sent copy within its duplicate window; asynchronous publishing
// with at most `window` acknowledgments outstanding.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "sink.h"

namespace logsink::forward {

struct NatsOptions {
  std::vector<std::string> servers;  // "nats://host:port"
  std::string subject;               // a fixed subject, or the wildcard of a template
  std::string create_stream;         // "" = never create a stream
  int window = 1024;
  uint64_t ack_timeout_ms = 5000;  // a publish not acknowledged by then is sent again
  // A batch's body compressed ("lz4": an LZ4 frame, "zstd": a zstd frame,
  // level 1), with the header Logsink-Encoding naming it; sent as it is
  // when that would not make it smaller. "none": never.
  std::string compress = "none";
};

// Parses "nats://h:p[,h:p...]" into servers; false with *error.
bool ParseNatsUrl(const std::string &to, std::vector<std::string> *servers, std::string *error);

std::unique_ptr<Sink> MakeNatsSink(const NatsOptions &opts);

}  // namespace logsink::forward
