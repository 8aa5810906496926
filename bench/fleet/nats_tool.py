#!/usr/bin/env python3
"""nats_tool.py: the NATS side of bench/fleet/run.sh, in the NATS text
protocol over a socket (no client library):

  create PORT NAME SUBJECT       creates the file stream NAME on SUBJECT
                                 ($JS.API.STREAM.CREATE.NAME, one replica);
                                 exit 1 on an error reply
  subjects PORT NAME FILTER      prints "SUBJECT COUNT" for every subject of
                                 the stream under FILTER (messages each holds:
                                 $JS.API.STREAM.INFO with subjects_filter),
                                 then "total MESSAGES"
  proxy PORTFILE UPSTREAM OUT    a TCP proxy on a free loopback port (written
                                 to PORTFILE) to 127.0.0.1:UPSTREAM for one
                                 client connection; counts every protocol
                                 message each way and writes them to OUT
                                 (JSON) when the connection ends, see below

What the proxy counts, server -> client (every MSG/HMSG frame the server
sent, i.e. what the server's out_msgs counts for that connection):
  stream    messages delivered from a stream: a reply subject of
            $JS.ACK.<stream>.<consumer>...; counted per subject and per host
            (the token after PREFIX.)
  other     the rest: replies to JetStream API requests and pull status
            messages (404 No Messages, 408 Request Timeout, ...), which have
            no $JS.ACK reply
and client -> server (PUB/HPUB, what the server's in_msgs counts):
  fetch     $JS.API.CONSUMER.MSG.NEXT.* (pull requests)
  api       other $JS.API.* requests (stream names/info, consumer create,
            info, delete)
  other     anything else
plus "upstream_port": the proxy's local port towards the server, which is
the "port" the server's /connz shows for the connection.
"""
import json
import os
import socket
import sys
import threading


def connect(port):
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    f = s.makefile("rb")
    info = f.readline()
    if not info.startswith(b"INFO "):
        raise SystemExit(f"nats_tool: unexpected greeting {info[:80]!r}")
    s.sendall(b'CONNECT {"verbose":false,"pedantic":false,"headers":true,"lang":"py-bench","version":"0"}\r\n'
              b"SUB _INBOX.bench 1\r\nPING\r\n")
    while True:
        line = f.readline()
        if line.startswith(b"PONG"):
            return s, f
        if line.startswith(b"-ERR"):
            raise SystemExit(f"nats_tool: {line.decode().strip()}")


def request(port, subject, body):
    s, f = connect(port)
    data = json.dumps(body).encode()
    s.sendall(b"PUB %s _INBOX.bench %d\r\n%s\r\n" % (subject.encode(), len(data), data))
    while True:
        line = f.readline()
        if not line:
            raise SystemExit("nats_tool: the server closed the connection")
        if line.startswith(b"PING"):
            s.sendall(b"PONG\r\n")
        elif line.startswith(b"MSG "):
            n = int(line.split()[-1])
            payload = f.read(n + 2)[:n]
            s.close()
            return json.loads(payload)
        elif line.startswith(b"-ERR"):
            raise SystemExit(f"nats_tool: {line.decode().strip()}")


def create(port, name, subject):
    r = request(port, f"$JS.API.STREAM.CREATE.{name}",
                {"name": name, "subjects": [subject], "storage": "file", "num_replicas": 1})
    if "error" in r:
        raise SystemExit(f"nats_tool: creating {name}: {r['error']}")


def subjects(port, name, filt):
    # The server pages the subject map (100,000 subjects a page): ask
    # with offset until it is complete.
    counts, offset = {}, 0
    while True:
        r = request(port, f"$JS.API.STREAM.INFO.{name}", {"subjects_filter": filt, "offset": offset})
        if "error" in r:
            raise SystemExit(f"nats_tool: stream {name}: {r['error']}")
        page = r.get("state", {}).get("subjects") or {}
        counts.update(page)
        offset += len(page)
        if not page or offset >= r.get("total", 0):
            break
    for subj in sorted(counts):
        print(subj, counts[subj])
    print("total", r["state"]["messages"])


class Counter:
    """Parses one direction of the protocol as it passes (a copy)."""

    def __init__(self, server_side):
        self.server_side = server_side
        self.buf = b""
        self.skip = 0  # payload bytes (and CRLF) still to pass
        self.c = {}

    def add(self, key, n=1):
        self.c[key] = self.c.get(key, 0) + n

    def feed(self, data):
        self.buf += data
        while True:
            if self.skip:
                k = min(self.skip, len(self.buf))
                self.buf = self.buf[k:]
                self.skip -= k
                if self.skip:
                    return
            i = self.buf.find(b"\r\n")
            if i < 0:
                return
            line, self.buf = self.buf[:i], self.buf[i + 2:]
            parts = line.split()
            if not parts:
                continue
            op = parts[0].upper()
            if self.server_side and op in (b"MSG", b"HMSG"):
                # MSG subj sid [reply] n / HMSG subj sid [reply] hdr total
                nargs = 4 if op == b"MSG" else 5
                reply = parts[3].decode() if len(parts) == nargs + 1 else ""
                self.skip = int(parts[-1]) + 2
                subj = parts[1].decode()
                if reply.startswith("$JS.ACK."):
                    self.add("stream")
                    self.add("subject:" + subj)
                else:
                    self.add("other")
            elif not self.server_side and op in (b"PUB", b"HPUB"):
                self.skip = int(parts[-1]) + 2
                subj = parts[1].decode()
                if subj.startswith("$JS.API.CONSUMER.MSG.NEXT."):
                    self.add("fetch")
                elif subj.startswith("$JS.API."):
                    self.add("api")
                    self.add("api:" + ".".join(subj.split(".")[2:4]))
                else:
                    self.add("other")
            else:
                self.add("op:" + op.decode(errors="replace"))


def pump(src, dst, counter):
    try:
        while True:
            data = src.recv(1 << 16)
            if not data:
                break
            counter.feed(data)
            dst.sendall(data)
    except OSError:
        pass
    finally:
        for s in (dst, src):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


def proxy(portfile, upstream, out):
    ls = socket.socket()
    ls.bind(("127.0.0.1", 0))
    ls.listen(1)
    tmp = portfile + ".tmp"
    with open(tmp, "w") as f:
        f.write(f"{ls.getsockname()[1]}\n")
    os.rename(tmp, portfile)
    client, _ = ls.accept()
    ls.close()
    server = socket.create_connection(("127.0.0.1", upstream))
    down, up = Counter(True), Counter(False)
    t = threading.Thread(target=pump, args=(server, client, down))
    t.start()
    pump(client, server, up)
    t.join()
    result = {"upstream_port": server.getsockname()[1],
              "server_to_client": down.c, "client_to_server": up.c}
    with open(out + ".tmp", "w") as f:
        json.dump(result, f, indent=1, sort_keys=True)
    os.rename(out + ".tmp", out)


def main():
    a = sys.argv[1:]
    if len(a) == 4 and a[0] == "create":
        create(int(a[1]), a[2], a[3])
    elif len(a) == 4 and a[0] == "subjects":
        subjects(int(a[1]), a[2], a[3])
    elif len(a) == 4 and a[0] == "proxy":
        proxy(a[1], int(a[2]), a[3])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
