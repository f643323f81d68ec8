#!/usr/bin/env python3
"""A stand-in for an OpenTelemetry collector's OTLP/HTTP receiver, for Convey's tracing and metrics
tests and benchmarks, on loopback only. Every batch it receives is checked the way a collector
reads it: parsed into opentelemetry-proto's ExportTraceServiceRequest or ExportMetricsServiceRequest
with unknown fields rejected, after its ids are checked and converted as the OTLP JSON encoding says
(trace and span ids, exemplars' too, as hex strings, not protobuf JSON's base64).

Routes (KEY keeps one test's batches apart from another's; SIGNAL is traces or metrics):
  POST /ok/KEY/v1/SIGNAL           200 {} (ExportTraceServiceResponse, ExportMetricsServiceResponse)
  POST /throttle/KEY/v1/SIGNAL     429 with Retry-After: 1 the first time for KEY and SIGNAL, then 200
  POST /unavailable/KEY/v1/SIGNAL  503 (no Retry-After), always
  POST /slow/KEY/v1/SIGNAL         answers 200 after 2 seconds
  POST /hang/KEY/v1/SIGNAL         reads the batch and never answers (the connection stays open)
  POST /count/KEY/v1/SIGNAL        200 {}, keeping only counts (benchmarks)
  GET  /batches/KEY                {"requests": n, "batches": [body text…], "errors": [why…],
                                    "spans": [each span parsed, attributes as an object],
                                    "metrics": [each data point parsed, with its metric's name, unit,
                                    kind, temporality and monotonicity]}
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
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import ExportMetricsServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

HEX = re.compile(r"^[0-9a-f]*$")
lock = threading.Lock()
received = {}  # key -> {"requests", "batches", "errors", "spans", "metrics", "throttled"}
never = threading.Event()  # what /hang waits for: never set


def entry(key):
    return received.setdefault(key, {"requests": 0, "batches": [], "errors": [], "spans": [], "metrics": [], "span_count": 0,
                                     "throttled": set()})


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


def parse_metrics(body):
    """The batch's data points, flattened, and what is wrong with it."""
    errors = []
    try:
        document = json.loads(body)
    except ValueError as error:
        return [], [f"not JSON: {error}"]
    converted = copy.deepcopy(document)
    originals = []
    for resource in converted.get("resourceMetrics", []):
        for scope in resource.get("scopeMetrics", []):
            for metric in scope.get("metrics", []):
                for kind in ("histogram", "sum", "gauge"):
                    if kind in metric and not isinstance(metric[kind].get("aggregationTemporality", 0), int):
                        errors.append("aggregationTemporality is not an integer: the OTLP JSON encoding writes enums as integers")
                    for point in metric.get(kind, {}).get("dataPoints", []):
                        for exemplar in point.get("exemplars", []):
                            originals.append((exemplar.get("traceId"), exemplar.get("spanId")))
                            exemplar["traceId"] = check_id(exemplar.get("traceId"), 16, "exemplar traceId", errors)
                            exemplar["spanId"] = check_id(exemplar.get("spanId"), 8, "exemplar spanId", errors)
    request = ExportMetricsServiceRequest()
    try:
        json_format.ParseDict(converted, request, ignore_unknown_fields=False)
    except json_format.ParseError as error:
        return [], errors + [f"not an ExportMetricsServiceRequest: {error}"]
    points = []
    index = 0
    for resource_metrics in request.resource_metrics:
        resource = {a.key: attribute_value(a.value) for a in resource_metrics.resource.attributes}
        for scope_metrics in resource_metrics.scope_metrics:
            for metric in scope_metrics.metrics:
                kind = metric.WhichOneof("data")
                data = getattr(metric, kind)
                for point in data.data_points:
                    parsed = {
                        "name": metric.name, "unit": metric.unit, "description": metric.description, "kind": kind,
                        "temporality": data.aggregation_temporality if kind != "gauge" else 0,
                        "isMonotonic": data.is_monotonic if kind == "sum" else False,
                        "attributes": {a.key: attribute_value(a.value) for a in point.attributes},
                        "start": point.start_time_unix_nano, "time": point.time_unix_nano,
                        "scope": scope_metrics.scope.name, "service": resource.get("service.name"),
                    }
                    if kind == "histogram":
                        exemplars = []
                        for exemplar in point.exemplars:
                            trace_id, span_id = originals[index]
                            index += 1
                            if exemplar.trace_id.hex() != trace_id or exemplar.span_id.hex() != span_id:
                                errors.append("an exemplar's id changed between its hex text and the parsed message")
                            exemplars.append({"traceId": exemplar.trace_id.hex(), "spanId": exemplar.span_id.hex(),
                                              "value": exemplar.as_double})
                        if sum(point.bucket_counts) != point.count:
                            errors.append(f"{metric.name}: the bucket counts do not add up to the count")
                        if len(point.bucket_counts) != len(point.explicit_bounds) + 1:
                            errors.append(f"{metric.name}: not one bucket more than bounds")
                        parsed.update({"count": point.count, "sum": point.sum, "min": point.min, "max": point.max,
                                       "bucketCounts": list(point.bucket_counts), "explicitBounds": list(point.explicit_bounds),
                                       "exemplars": exemplars})
                    else:
                        parsed["value"] = point.as_int if point.WhichOneof("value") == "as_int" else point.as_double
                    if point.start_time_unix_nano > point.time_unix_nano:
                        errors.append(f"{metric.name}: a data point starts after its time")
                    points.append(parsed)
    return points, errors


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
                document = {key: found[key] for key in ("requests", "batches", "errors", "spans", "metrics", "span_count")}
            return self.answer(200, json.dumps(document).encode())
        self.answer(404)

    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length)
        parts = self.path.strip("/").split("/")
        if len(parts) != 4 or parts[2] != "v1" or parts[3] not in ("traces", "metrics"):
            return self.answer(404)
        behaviour, key, signal = parts[0], parts[1], parts[3]
        if behaviour == "count":
            with lock:
                found = entry(key)
                found["requests"] += 1
                found["span_count"] += body.count(b'"spanId"')
            return self.answer(200)
        text = body.decode("utf-8", "replace")
        if signal == "traces":
            spans, errors = parse(body)
            points = []
        else:
            points, errors = parse_metrics(body)
            spans = []
        if (self.headers.get("Content-Type") or "").split(";")[0].strip() != "application/json":
            errors.append(f"Content-Type is {self.headers.get('Content-Type')!r}, not application/json")
        with lock:
            found = entry(key)
            found["requests"] += 1
            throttle = behaviour == "throttle" and signal not in found["throttled"]
            if throttle:
                found["throttled"].add(signal)
            accepted = behaviour in ("ok", "slow") or (behaviour == "throttle" and not throttle)
            if accepted:
                found["batches"].append(text)
                found["errors"].extend(errors)
                found["spans"].extend(spans)
                found["metrics"].extend(points)
        if behaviour == "hang":
            never.wait()
            return
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
