import Foundation

/// Spans as an OTLP/HTTP JSON request body (`ExportTraceServiceRequest`, OTLP 1.x): one resource
/// (the service) with one scope (Convey), ids as lowercase hex and enums as integers, as the
/// specification's JSON encoding says, 64-bit integers as strings, as protobuf's JSON mapping writes them.
enum OTLPJSON {
    /// The body for `spans`, sent by `serviceName`.
    static func body(_ spans: some Collection<TraceSpan>, serviceName: String) -> Data {
        var out = OTLPJSONBytes()
        out.bytes.reserveCapacity(256 + spans.count * 900)
        out.raw(#"{"resourceSpans":[{"#)
        writeResource(serviceName: serviceName, to: &out)
        out.raw(#","scopeSpans":[{"#)
        writeScope(to: &out)
        out.raw(#","spans":["#)
        var first = true
        for span in spans {
            if !first { out.raw(",") }
            first = false
            write(span, to: &out)
        }
        out.raw("]}]}]}")
        return Data(out.bytes)
    }

    /// `"resource":{…}`: the service's name and the SDK's, as OTLP's resource attributes.
    static func writeResource(serviceName: String, to out: inout OTLPJSONBytes) {
        out.raw(#""resource":{"attributes":["#)
        out.attribute("service.name", string: serviceName)
        out.raw(",")
        out.attribute("telemetry.sdk.name", string: "convey")
        out.raw(",")
        out.attribute("telemetry.sdk.language", string: "swift")
        out.raw(",")
        out.attribute("telemetry.sdk.version", string: conveyVersion)
        out.raw("]}")
    }

    /// `"scope":{…}`: Convey, the instrumentation scope of every span and metric.
    static func writeScope(to out: inout OTLPJSONBytes) {
        out.raw(#""scope":{"name":"Convey","version":"#)
        out.string(conveyVersion)
        out.raw("}")
    }

    private static func write(_ span: TraceSpan, to out: inout OTLPJSONBytes) {
        out.raw(#"{"traceId":""#)
        out.hex(span.trace.high)
        out.hex(span.trace.low)
        out.raw(#"","spanId":""#)
        out.hex(span.span)
        out.raw("\"")
        if let parent = span.parent {
            out.raw(#","parentSpanId":""#)
            out.hex(parent)
            out.raw("\"")
        }
        if let traceState = span.traceState {
            out.raw(#","traceState":"#)
            out.string(traceState)
        }
        out.raw(#","name":"#)
        out.string(span.name)
        // SPAN_KIND_CLIENT is 3, SPAN_KIND_INTERNAL 1.
        out.raw(span.isClient ? #","kind":3"# : #","kind":1"#)
        out.raw(#","startTimeUnixNano":""#)
        out.raw(String(nanoseconds(span.start)))
        out.raw(#"","endTimeUnixNano":""#)
        out.raw(String(nanoseconds(span.end)))
        out.raw(#"","attributes":["#)
        var first = true
        for key in span.attributes.keys.sorted() {
            if !first { out.raw(",") }
            first = false
            out.attribute(key, string: span.attributes[key] ?? "")
        }
        for key in span.integerAttributes.keys.sorted() {
            if !first { out.raw(",") }
            first = false
            out.attribute(key, integer: span.integerAttributes[key] ?? 0)
        }
        out.raw("]")
        if !span.events.isEmpty {
            out.raw(#","events":["#)
            for (index, event) in span.events.enumerated() {
                if index > 0 { out.raw(",") }
                out.raw(#"{"timeUnixNano":""#)
                out.raw(String(nanoseconds(event.date)))
                out.raw(#"","name":"#)
                out.string(event.name)
                out.raw("}")
            }
            out.raw("]")
        }
        // STATUS_CODE_ERROR is 2; an unset status is the empty message.
        if span.isError {
            out.raw(#","status":{"code":2"#)
            if let message = span.statusMessage {
                out.raw(#","message":"#)
                out.string(message)
            }
            out.raw("}}")
        } else {
            out.raw(#","status":{}}"#)
        }
    }

    /// Nanoseconds since 1970, as OTLP's `fixed64` times count them.
    static func nanoseconds(_ date: Date) -> UInt64 {
        let seconds = date.timeIntervalSince1970
        guard seconds > 0 else { return 0 }
        return UInt64(seconds * 1e9)
    }
}

/// OTLP JSON written byte by byte: strings escaped as RFC 8259 requires.
struct OTLPJSONBytes {
    var bytes: [UInt8] = []

    mutating func raw(_ text: String) { bytes.append(contentsOf: text.utf8) }

    mutating func hex(_ value: UInt64) {
        let start = bytes.count
        bytes.append(contentsOf: repeatElement(0, count: 16))
        bytes.withUnsafeMutableBufferPointer { buffer in TraceHex.write(value, into: buffer, at: start) }
    }

    mutating func string(_ text: String) {
        bytes.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
            case UInt8(ascii: "\\"): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
            case 0x0A: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
            case 0x0D: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
            case 0x09: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
            case 0..<0x20:
                let digits = Array("0123456789abcdef".utf8)
                bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"),
                                          digits[Int(byte >> 4)], digits[Int(byte & 0xF)]])
            default: bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }

    mutating func attribute(_ key: String, string value: String) {
        raw(#"{"key":"#)
        string(key)
        raw(#","value":{"stringValue":"#)
        string(value)
        raw("}}")
    }

    mutating func attribute(_ key: String, integer value: Int) {
        raw(#"{"key":"#)
        string(key)
        raw(#","value":{"intValue":""#)
        raw(String(value))
        raw("\"}}")
    }

    mutating func attribute(_ key: String, bool value: Bool) {
        raw(#"{"key":"#)
        string(key)
        raw(value ? #","value":{"boolValue":true}}"# : #","value":{"boolValue":false}}"#)
    }

    /// A 64-bit integer as protobuf's JSON mapping writes one: a string.
    mutating func integerString(_ value: some BinaryInteger) {
        raw("\"")
        raw(String(value))
        raw("\"")
    }

    /// A double as a JSON number (0 for one that is not finite, which JSON cannot write).
    mutating func double(_ value: Double) {
        raw(value.isFinite ? String(describing: value) : "0")
    }
}
