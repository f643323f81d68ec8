#!/usr/bin/env python3
"""An HTTP server instrumented with OpenTelemetry's own Python SDK, for Convey's tracing tests, on
loopback only. Each request's trace context is extracted with the SDK's W3C propagator
(TraceContextTextMapPropagator) and a SERVER span is started in it, as an instrumented service
does; what the server saw is logged per KEY for the tests to read.

Routes (KEY keeps one test's requests apart from another's):
  /KEY/ok                 200
  /KEY/status/N           status N
  /KEY/flaky              503 (Retry-After: 0) the first time for KEY, then 200
  /KEY/redirect           302 to /KEY/ok
  /KEY/redirect-to?url=U  302 to U (another origin: http://localhost:PORT/… is one)
  /KEY/slow               200 after 60 seconds (tests end it sooner: a timeout, a cancellation)
  /KEY/cache              200 with Cache-Control: max-age=600
  /log/KEY                [{"path", "traceparent", "tracestate", "remote_trace_id", "remote_span_id",
                            "remote_sampled", "remote_trace_state", "trace_id", "parent_span_id",
                            "recording"} …], one per request, in order
  /health

Usage: traced-server.py --port 0 --port-file FILE   (needs opentelemetry-sdk: scripts/with-test-servers)
"""

import argparse
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

provider = TracerProvider()
provider.add_span_processor(SimpleSpanProcessor(InMemorySpanExporter()))
tracer = provider.get_tracer("convey-traced-server")
propagator = TraceContextTextMapPropagator()
lock = threading.Lock()
logs = {}
flaky_seen = set()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def answer(self, status, body=b"", headers=()):
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        for name, value in headers:
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        split = urlsplit(self.path)
        parts = split.path.strip("/").split("/")
        if parts == ["health"]:
            return self.answer(200, b'{"ok": true}')
        if len(parts) == 2 and parts[0] == "log":
            with lock:
                return self.answer(200, json.dumps(logs.get(parts[1], [])).encode())
        if len(parts) < 2:
            return self.answer(404)
        key, route = parts[0], parts[1:]
        carrier = {name.lower(): value for name, value in self.headers.items()}
        context = propagator.extract(carrier)
        remote = trace.get_current_span(context).get_span_context()
        with tracer.start_as_current_span("GET /" + "/".join(route), context=context, kind=SpanKind.SERVER) as span:
            own = span.get_span_context()
            parent = getattr(span, "parent", None)
            record = {
                "path": split.path, "traceparent": self.headers.get("traceparent"), "tracestate": self.headers.get("tracestate"),
                "remote_trace_id": format(remote.trace_id, "032x") if remote.is_valid else None,
                "remote_span_id": format(remote.span_id, "016x") if remote.is_valid else None,
                "remote_sampled": remote.trace_flags.sampled if remote.is_valid else None,
                "remote_trace_state": remote.trace_state.to_header() if remote.is_valid else None,
                "trace_id": format(own.trace_id, "032x"),
                "parent_span_id": format(parent.span_id, "016x") if parent is not None else None,
                "recording": span.is_recording(),
            }
            with lock:
                logs.setdefault(key, []).append(record)
                first_flaky = route == ["flaky"] and key not in flaky_seen
                if route == ["flaky"]:
                    flaky_seen.add(key)
            if route == ["ok"]:
                return self.answer(200, b'{"ok": true}')
            if len(route) == 2 and route[0] == "status" and route[1].isdigit():
                return self.answer(int(route[1]), b'{"status": true}')
            if route == ["flaky"]:
                if first_flaky:
                    return self.answer(503, b'{"again": true}', [("Retry-After", "0")])
                return self.answer(200, b'{"ok": true}')
            if route == ["redirect"]:
                return self.answer(302, headers=[("Location", f"/{key}/ok")])
            if route == ["redirect-to"]:
                target = parse_qs(split.query).get("url", [""])[0]
                return self.answer(302, headers=[("Location", target)])
            if route == ["slow"]:
                time.sleep(60)
                return self.answer(200, b'{"slow": true}')
            if route == ["cache"]:
                return self.answer(200, b'{"cached": true}', [("Cache-Control", "max-age=600")])
            return self.answer(404)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--port-file")
    arguments = parser.parse_args()
    server = ThreadingHTTPServer(("127.0.0.1", arguments.port), Handler)
    server.daemon_threads = True
    if arguments.port_file:
        with open(arguments.port_file, "w") as file:
            file.write(str(server.server_address[1]))
    server.serve_forever()


if __name__ == "__main__":
    main()
