#!/usr/bin/env python3
"""Convey's event-stream test server: text/event-stream responses, standard library only.

    python3 scripts/event-server.py PORT

Listens on 127.0.0.1:PORT (HTTP/1.1, chunked bodies). Every route takes `key=NAME`, which names
a counter: tests use their own key so that parallel tests do not see each other's requests.

  /events?count=N&size=B     N events (ids 1...N, data `{"n": i, "pad": "..."}` of about B bytes), then the end
  /endless?size=B            events of about B bytes, as fast as the client reads, until it disconnects
  /comments                  comment lines (`: ...`) and no event, as fast as the client reads, until it disconnects
  /paced?count=N&ms=M        N comment lines, one every M ms (default 50 every 100 ms), then the end: a
                             transfer that keeps moving slowly, for idle-timeout tests
  /drop?after=K&total=T      events from Last-Event-ID + 1 on: K per connection, then the connection is
                             cut mid-body; once event T was sent, 204 No Content (the "stop" signal)
  /retry?ms=M&count=N        `retry: M`, then N events, then the end
  /nocontent                 204 No Content
  /storm                     `retry: 0`, then the end and a close, without an event: a reconnect storm
                             for a reader without a floor; /stats counts its connections as requests
  /headers                   one event whose data is the request's header fields as a JSON object
                             (names lowercased), then the end: what reached this origin
  /hostile?say=TEXT          a hostile server: terminal escape sequences (window title, clear screen, a C1
                             CSI) in an `X-Title` header and in event 1's data, which also carries TEXT;
                             `Set-Cookie: s=c00kie`; 204 No Content once the client sends Last-Event-ID
  /redirect?to=PATH          302 to PATH on this server (a same-origin redirect in front of a stream)
  /stats?key=NAME            JSON: {"requests": n, "lastEventIDs": [...], "disconnects": n, "sent": bytes of /endless}
"""
import json
import socket
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

lock = threading.Lock()
stats = {}


def record(key, **changes):
    with lock:
        entry = stats.setdefault(key, {"requests": 0, "lastEventIDs": [], "disconnects": 0, "sent": 0})
        for name, value in changes.items():
            if name == "lastEventID":
                entry["lastEventIDs"].append(value)
            else:
                entry[name] += value


def event(n, size=0):
    data = json.dumps({"n": n, "pad": "x" * max(0, size - 20)})
    return f"id: {n}\ndata: {data}\n\n".encode()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_GET(self):
        url = urlsplit(self.path)
        query = {name: values[-1] for name, values in parse_qs(url.query).items()}
        key = query.get("key", "")
        number = lambda name, default: int(query.get(name, default))
        if url.path == "/redirect":
            self.send_response(302)
            self.send_header("Location", query.get("to", "/events"))
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if url.path == "/stats":
            with lock:
                body = json.dumps(stats.get(key, {"requests": 0, "lastEventIDs": [], "disconnects": 0, "sent": 0})).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        record(key, requests=1, lastEventID=self.headers.get("Last-Event-ID"))
        try:
            if url.path == "/events":
                self.start_stream()
                size = number("size", 0)
                for n in range(1, number("count", 10) + 1):
                    self.chunk(event(n, size))
                self.end_stream()
            elif url.path == "/endless":
                self.start_stream()
                size, n = number("size", 1024), 0
                while True:
                    n += 1
                    data = b"".join(event(n + i, size) for i in range(16))
                    self.chunk(data)
                    record(key, sent=len(data))
                    n += 15
            elif url.path == "/paced":
                self.start_stream()
                for _ in range(number("count", 50)):
                    self.chunk(b": still here\n")
                    self.wfile.flush()
                    time.sleep(number("ms", 100) / 1000)
                self.end_stream()
            elif url.path == "/comments":
                self.start_stream()
                data = b": keeping the connection busy without an event\n" * 256
                while True:
                    self.chunk(data)
                    record(key, sent=len(data))
            elif url.path == "/drop":
                first = int(self.headers.get("Last-Event-ID") or 0) + 1
                total = number("total", 6)
                if first > total:
                    self.no_content()
                    return
                self.start_stream()
                for n in range(first, min(first + number("after", 2), total + 1)):
                    self.chunk(event(n))
                self.wfile.flush()
                # Cut the connection mid-body: no last chunk, so the client sees a broken transfer.
                self.connection.shutdown(socket.SHUT_RDWR)
                self.close_connection = True
            elif url.path == "/retry":
                self.start_stream()
                self.chunk(f"retry: {number('ms', 1500)}\n\n".encode())
                for n in range(1, number("count", 1) + 1):
                    self.chunk(event(n))
                self.end_stream()
            elif url.path == "/nocontent":
                self.no_content()
            elif url.path == "/storm":
                self.start_stream()
                self.chunk(b"retry: 0\n\n")
                self.end_stream()
                self.close_connection = True
            elif url.path == "/field-lines":
                # Every request field line as received, in order, repeats kept.
                self.start_stream()
                self.chunk(json.dumps([[name, value] for name, value in self.headers.items()]).encode())
                self.end_stream()
            elif url.path == "/headers":
                self.start_stream()
                fields = {name.lower(): value for name, value in self.headers.items()}
                self.chunk(f"data: {json.dumps(fields)}\n\n".encode())
                self.end_stream()
            elif url.path == "/hostile":
                if self.headers.get("Last-Event-ID"):
                    self.no_content()
                    return
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("X-Title", "\x1b]0;pwned\x07\x1b[2J")
                self.send_header("Set-Cookie", "s=c00kie")
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                self.chunk(f"id: 1\ndata: \x1b]0;title\x07\x1b[2J\u009b31m {query.get('say', '')}\n\n".encode())
                self.end_stream()
            else:
                self.send_error(404)
        except (BrokenPipeError, ConnectionResetError):
            record(key, disconnects=1)
            self.close_connection = True

    def start_stream(self):
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()

    def chunk(self, data):
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))

    def end_stream(self):
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def no_content(self):
        self.send_response(204)
        self.send_header("Content-Length", "0")
        self.end_headers()


class Server(ThreadingHTTPServer):
    daemon_threads = True


if __name__ == "__main__":
    Server(("127.0.0.1", int(sys.argv[1])), Handler).serve_forever()
