#!/usr/bin/env python3
"""A local HTTP/1.1 server that honours Idempotency-Key, for Convey's outbox tests and benchmark:
standard library only, loopback only, one thread per connection.

    scripts/idempotency-server.py --port 0 --port-file PATH [--seed N]

scripts/with-test-servers starts it and exports CONVEY_IDEMPOTENCY_URL.

Any path not listed below is an endpoint that acts on the request. A request with an
Idempotency-Key is processed once: the first one is processed and its answer stored; a later one
with the same key gets the stored answer again (a replay) without being processed; one arriving
while the first is still being processed gets 409. A request without a key is processed every time.
Processing counts the key and the body (so a client that sent one body under two keys shows up as
a body processed twice) and answers 201 with {"key", "sequence", "bytes"}.

Faults go in the path, so each test picks its own: /fault/MODE/N/REST applies MODE to the first N
requests of each key on that path, then acts normally:

  drop-after-act     processes, then closes the connection without answering.
  stall-before-act   reads the request, counts it as seen, then holds the connection unanswered
                     (until /release or 120 s) and closes it without processing.
  stall-after-act    processes, then holds the connection unanswered, then closes it.
  503                answers 503 with Retry-After (?retry-after=S, default 0), not processing.
  status-C           answers status C (say status-422), not processing.
  random             the crash benchmark's mix, per request (seeded by --seed): a fifth processed
                     and dropped before the answer, a tenth answered 503 with Retry-After: 1.

Reading the counts:

  /health                 200 "ok".
  /stats?key=K            {"seen", "processed", "replays", "conflicts"} for one key.
  /stats                  totals: {"requests", "processed", "replays", "conflicts", "dropped",
                          "unavailable", "keys", "keysProcessedTwice", "bodiesProcessedTwice",
                          "requestsPerKey": {histogram}}.
  /keys?path=P            the keys received on path P, in order (JSON list; null for none).
  /release[?key=K]        ends the stalls of key K (of every key without one) now.
  /reset                  forgets everything.
"""

import argparse
import hashlib
import json
import os
import random
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

LOCK = threading.Lock()
RELEASES = {}  # key -> Event; None -> every stall
RANDOM = random.Random(0)
STALL_LIMIT = 120


def fresh_state():
    return {
        "seen": {}, "processed": {}, "replays": {}, "conflicts": {}, "answers": {}, "in_progress": set(),
        "bodies": {}, "keys_by_path": {}, "fault_counts": {}, "requests": 0, "dropped": 0, "unavailable": 0, "sequence": 0,
    }


STATE = fresh_state()


def bump(table, key):
    table[key] = table.get(key, 0) + 1
    return table[key]


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *arguments):
        pass

    def answer(self, status, body=b"", headers=None):
        self.send_response(status)
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def answer_json(self, value, status=200):
        self.answer(status, json.dumps(value).encode(), {"Content-Type": "application/json"})

    def do_GET(self):
        self.handle_any()

    def do_POST(self):
        self.handle_any()

    def do_PUT(self):
        self.handle_any()

    def do_PATCH(self):
        self.handle_any()

    def do_DELETE(self):
        self.handle_any()

    def handle_any(self):
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length > 0 else b""
        split = urllib.parse.urlsplit(self.path)
        query = urllib.parse.parse_qs(split.query)
        path = split.path
        if path == "/health":
            return self.answer(200, b"ok")
        if path == "/release":
            with LOCK:
                for key in query.get("key", []) or list(RELEASES):
                    RELEASES.setdefault(key, threading.Event()).set()
            return self.answer(200, b"released")
        if path == "/reset":
            global STATE
            with LOCK:
                STATE = fresh_state()
            with LOCK:
                RELEASES.clear()
            return self.answer(200, b"reset")
        if path == "/stats":
            return self.answer_json(self.stats(query.get("key", [None])[0]))
        if path == "/keys":
            with LOCK:
                return self.answer_json(STATE["keys_by_path"].get(query.get("path", [""])[0]))
        self.act(path, query, body)

    def stats(self, key):
        with LOCK:
            if key is not None:
                return {name: STATE[name].get(key, 0) for name in ("seen", "processed", "replays", "conflicts")}
            per_key = {}
            for count in STATE["seen"].values():
                per_key[str(count)] = per_key.get(str(count), 0) + 1
            return {
                "requests": STATE["requests"], "processed": sum(STATE["processed"].values()),
                "replays": sum(STATE["replays"].values()), "conflicts": sum(STATE["conflicts"].values()),
                "dropped": STATE["dropped"], "unavailable": STATE["unavailable"], "keys": len(STATE["processed"]),
                "keysProcessedTwice": sum(1 for count in STATE["processed"].values() if count > 1),
                "bodiesProcessedTwice": sum(1 for count in STATE["bodies"].values() if count > 1),
                "requestsPerKey": per_key,
            }

    def act(self, path, query, body):
        key = self.headers.get("Idempotency-Key")
        mode, limit = None, 0
        parts = path.split("/")
        if len(parts) > 4 and parts[1] == "fault":
            mode = parts[2]
            limit = int(parts[3]) if parts[3].isdigit() else 0
        with LOCK:
            STATE["requests"] += 1
            STATE["keys_by_path"].setdefault(path, []).append(key)
            if key is not None:
                bump(STATE["seen"], key)
            faulted = False
            if mode is not None:
                faulted = bump(STATE["fault_counts"], (path, key)) <= limit
        if faulted and mode == "random":
            roll = RANDOM.random()
            mode = "drop-after-act" if roll < 0.2 else "503-bench" if roll < 0.3 else None
        if faulted and mode == "503":
            with LOCK:
                STATE["unavailable"] += 1
            return self.answer(503, b"try again", {"Retry-After": query.get("retry-after", ["0"])[0]})
        if faulted and mode == "503-bench":
            with LOCK:
                STATE["unavailable"] += 1
            return self.answer(503, b"try again", {"Retry-After": "1"})
        if faulted and mode and mode.startswith("status-"):
            return self.answer(int(mode[7:]), b"refused")
        if faulted and mode == "stall-before-act":
            self.stall(key)
            self.close_connection = True
            return
        status, answer = self.process(key, body)
        if faulted and mode == "drop-after-act":
            with LOCK:
                STATE["dropped"] += 1
            self.close_connection = True
            return
        if faulted and mode == "stall-after-act":
            self.stall(key)
            self.close_connection = True
            return
        self.answer(status, answer, {"Content-Type": "application/json"})

    def stall(self, key):
        with LOCK:
            release = RELEASES.setdefault(key, threading.Event())
        release.wait(STALL_LIMIT)

    def process(self, key, body):
        """Processes the request once per key; returns the (stored) answer."""
        with LOCK:
            if key is not None:
                if key in STATE["answers"]:
                    bump(STATE["replays"], key)
                    return STATE["answers"][key]
                if key in STATE["in_progress"]:
                    bump(STATE["conflicts"], key)
                    return 409, b'{"error": "a request with this key is being processed"}'
                STATE["in_progress"].add(key)
            STATE["sequence"] += 1
            sequence = STATE["sequence"]
            bump(STATE["processed"], key if key is not None else "(no key)")
            bump(STATE["bodies"], hashlib.sha256(body).hexdigest())
            answer = (201, json.dumps({"key": key, "sequence": sequence, "bytes": len(body)}).encode())
            if key is not None:
                STATE["answers"][key] = answer
                STATE["in_progress"].discard(key)
            return answer


def main():
    parser = argparse.ArgumentParser(description="An HTTP server that honours Idempotency-Key (loopback only).")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--port-file")
    parser.add_argument("--seed", type=int, default=0)
    arguments = parser.parse_args()
    RANDOM.seed(arguments.seed)
    server = ThreadingHTTPServer(("127.0.0.1", arguments.port), Handler)
    server.daemon_threads = True
    port = server.server_address[1]
    if arguments.port_file:
        with open(arguments.port_file + ".tmp", "w") as file:
            file.write(str(port))
        os.replace(arguments.port_file + ".tmp", arguments.port_file)
    else:
        print(port, flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
