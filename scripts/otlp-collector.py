#!/usr/bin/env python3
"""A stand-in for an OpenTelemetry collector's OTLP/HTTP receiver, for Convey's tracing tests and
benchmarks, on loopback only. Every batch it receives is checked the way a collector reads it:
parsed into opentelemetry-proto's ExportTraceServiceRequest with unknown fields rejected, after its
ids are checked and converted as the OTLP JSON encoding says (trace and span ids as hex strings,
not protobuf JSON's base64).

Routes (KEY keeps one test's batches apart from another's):
  POST /ok/KEY/v1/traces           200 {} (ExportTraceServiceResponse)
  POST /throttle/KEY/v1/traces     429 with Retry-After: 1 the first time for KEY, then 200
  POST /unavailable/KEY/v1/traces  503 (no Retry-After), always
  POST /slow/KEY/v1/traces         answers 200 after 2 seconds
  POST /count/KEY/v1/traces        200 {}, keeping only counts (benchmarks)
  GET  /batches/KEY                {"requests": n, "batches": [body text…], "errors": [why…],
                                    "spans": [each span parsed, attributes as an object]}
  GET  /health

Usage: otlp-collector.py --port 0 --port-file FILE   (needs opentelemetry-proto: scripts/with-test-servers)
"""

import argparse
import base64
import copy
import json
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from google.protobuf import json_format
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

HEX = re.compile(r"^[0-9a-f]*$")
lock = threading.Lock()
received = {}  # key -> {"requests", "batches", "errors", "spans", "throttled"}


def entry(key):
    return received.setdefault(key, {"requests": 0, "batches": [], "errors": [], "spans": [], "span_count": 0, "throttled": False})


def check_id(value, length, name, errors, allow_empty=False):
    """A hex id of `length` bytes as the OTLP JSON encoding writes it; its base64 form for protobuf's parser."""
    if value == "" and allow_empty:
        return ""
    if not isinstance(value, str) or len(value) != 2 * length or not HEX.match(value):
        errors.append(f"{name} {value!r} is not {2 * length} lowercase hex digits")
        return ""
    if int(value, 16) == 0:
        errors.append(f"{name} is all zeros")
    return base64.b64encode(bytes.fromhex(value)).decode()


def attribute_value(value):
    kind = value.WhichOneof("value")
    return getattr(value, kind) if kind else None


def parse(body):
    """The batch's spans, flattened, and what is wrong with it."""
    errors = []
    try:
        document = json.loads(body)
    except ValueError as error:
        return [], [f"not JSON: {error}"]
    converted = copy.deepcopy(document)
    originals = []
    for resource in converted.get("resourceSpans", []):
        for scope in resource.get("scopeSpans", []):
            for span in scope.get("spans", []):
                originals.append((span.get("traceId"), span.get("spanId"), span.get("parentSpanId", "")))
                span["traceId"] = check_id(span.get("traceId"), 16, "traceId", errors)
                span["spanId"] = check_id(span.get("spanId"), 8, "spanId", errors)
                if "parentSpanId" in span:
                    span["parentSpanId"] = check_id(span["parentSpanId"], 8, "parentSpanId", errors, allow_empty=True)
                for key in ("kind",):
                    if not isinstance(span.get(key, 0), int):
                        errors.append(f"{key} is not an integer: the OTLP JSON encoding writes enums as integers")
    request = ExportTraceServiceRequest()
    try:
        json_format.ParseDict(converted, request, ignore_unknown_fields=False)
    except json_format.ParseError as error:
        return [], errors + [f"not an ExportTraceServiceRequest: {error}"]
    spans = []
    index = 0
    for resource_spans in request.resource_spans:
        resource = {a.key: attribute_value(a.value) for a in resource_spans.resource.attributes}
        for scope_spans in resource_spans.scope_spans:
            for span in scope_spans.spans:
                trace_id, span_id, parent_id = originals[index]
                index += 1
                if span.trace_id.hex() != trace_id or span.span_id.hex() != span_id or span.parent_span_id.hex() != (parent_id or ""):
                    errors.append("an id changed between its hex text and the parsed message")
                spans.append({
                    "traceId": span.trace_id.hex(), "spanId": span.span_id.hex(), "parentSpanId": span.parent_span_id.hex(),
                    "traceState": span.trace_state, "name": span.name, "kind": span.kind,
                    "start": span.start_time_unix_nano, "end": span.end_time_unix_nano,
                    "attributes": {a.key: attribute_value(a.value) for a in span.attributes},
                    "events": [{"name": e.name, "time": e.time_unix_nano} for e in span.events],
                    "status": span.status.code, "statusMessage": span.status.message,
                    "scope": scope_spans.scope.name, "service": resource.get("service.name"),
                })
    return spans, errors


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def answer(self, status, body=b"{}", headers=()):
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        for name, value in headers:
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        parts = self.path.strip("/").split("/")
        if parts == ["health"]:
            return self.answer(200, b'{"ok": true}')
        if len(parts) == 2 and parts[0] == "batches":
            with lock:
                found = entry(parts[1])
                document = {key: found[key] for key in ("requests", "batches", "errors", "spans", "span_count")}
            return self.answer(200, json.dumps(document).encode())
        self.answer(404)

    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length)
        parts = self.path.strip("/").split("/")
        if len(parts) != 4 or parts[2:] != ["v1", "traces"]:
            return self.answer(404)
        behaviour, key = parts[0], parts[1]
        if behaviour == "count":
            with lock:
                found = entry(key)
                found["requests"] += 1
                found["span_count"] += body.count(b'"spanId"')
            return self.answer(200)
        text = body.decode("utf-8", "replace")
        spans, errors = parse(body)
        if (self.headers.get("Content-Type") or "").split(";")[0].strip() != "application/json":
            errors.append(f"Content-Type is {self.headers.get('Content-Type')!r}, not application/json")
        with lock:
            found = entry(key)
            found["requests"] += 1
            throttle = behaviour == "throttle" and not found["throttled"]
            if throttle:
                found["throttled"] = True
            accepted = behaviour in ("ok", "slow") or (behaviour == "throttle" and not throttle)
            if accepted:
                found["batches"].append(text)
                found["errors"].extend(errors)
                found["spans"].extend(spans)
        if behaviour == "slow":
            time.sleep(2)
        if throttle:
            return self.answer(429, headers=[("Retry-After", "1")])
        if behaviour == "unavailable":
            return self.answer(503)
        if not accepted:
            return self.answer(404)
        self.answer(400 if errors else 200, json.dumps({"errors": errors}).encode() if errors else b"{}")


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
