#!/usr/bin/env python3
"""A misbehaving HTTP/1.1 server for Convey's fault tests: raw sockets, one thread per connection,
standard library only. Every answer is built on the fly; nothing is read from disk.

    scripts/fault-server.py --port 0 --port-file PATH

Binds 127.0.0.1 (port 0: a free one, written to --port-file once listening) and serves until
killed. scripts/with-test-servers starts it and exports CONVEY_FAULT_URL.

Routes (any method; the request body is read and ignored unless said otherwise):

  /health                        200 "ok", keep-alive. A well-behaved answer.
  /bytes/N[?chunked]             200 with N bytes (a repeating pattern), Content-Length or chunked.
  /count/ID                      counts one request under ID, answers 200 with the count, keep-alive.
  /count/ID?read                 the count for ID, not counting this request.
  /keepalive-then-drop           200 "ok", keep-alive; then reads the NEXT request on that
                                 connection (counting it if it is /count/ID) and closes without
                                 answering: a reused connection that dies before any response byte.
  /answer-then-close             200 "ok", keep-alive, then closes at once: an idle connection the
                                 server closed, which the client finds when it would reuse it.
  /never-ending-head             "HTTP/1.1 200 OK" and one header line, then close: no blank line.
  /slow-head[?interval=MS]       a valid head dripped one byte every MS ms (default 100), then "ok".
  /many-headers[?count=N]        N header fields (default 10,000), then "ok".
  /huge-header-line[?size=N]     one header line of N bytes (default 10 MiB), then "ok".
  /invalid-status-line           "HTTP/1.1 2x0 Nope" as the status line.
  /not-http                      bytes that are not HTTP at all, then close.
  /gzip-bomb[?size=N]            Content-Encoding: gzip, N zero bytes once inflated (default 10 GiB,
                                 ~10 MB on the wire), compressed while it is sent.
  /gzip-truncated                a gzip body cut after half its bytes (Content-Length says half).
  /gzip-garbage                  Content-Encoding: gzip, the gzip magic bytes, then garbage.
  /conflicting-content-length    two Content-Length fields (5 and 11) and an 11-byte body.
  /short-body                    Content-Length: 1000, 500 bytes, then close.
  /broken-chunked                Transfer-Encoding: chunked with a chunk size that is not hex.
  /unknown-content-encoding      Content-Encoding: x-custom and a plain body.
  /unknown-transfer-encoding     Transfer-Encoding: x-custom and a body delimited by close.
  /stall-mid-body                Content-Length: 1000, 100 bytes, then nothing until the client leaves.
  /reset/before-head             reads the request, then resets the connection (RST).
  /reset/mid-head                part of a head, then RST.
  /reset/mid-body                a head and part of the body, then RST.
  /redirect/gopher|ftp|file      302 to gopher://, ftp:// or file:// (the last to file:///etc/passwd).
  /signed                        checks a request signed by a test's interceptor: `Signature` must be
                                 hex(HMAC-SHA256(SIGNING_KEY, "METHOD PATH\nDATE")) with the request's
                                 own method, path and `Date` field. 200 with JSON {"verified": true,
                                 "authorization": whether an Authorization field came}, else 401.
  anything else                  404.
"""

import argparse
import hashlib
import hmac
import json
import os
import socket
import struct
import threading
import time
import urllib.parse
import zlib

COUNTS = {}
COUNTS_LOCK = threading.Lock()
IDLE_TIMEOUT = 60  # seconds a connection may sit idle before the server drops it
PORT = 0
# The key a test's signing interceptor shares with /signed.
SIGNING_KEY = b"convey-signing-test-key"


class ClientGone(Exception):
    pass


def count(identifier):
    with COUNTS_LOCK:
        COUNTS[identifier] = COUNTS.get(identifier, 0) + 1
        return COUNTS[identifier]


def read_request(conn, buffer):
    """Reads one request; returns (method, target, headers, rest of buffer) or None at EOF."""
    while b"\r\n\r\n" not in buffer:
        data = conn.recv(65536)
        if not data:
            return None
        buffer += data
        if len(buffer) > 1 << 20:
            return None
    head, _, buffer = buffer.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    parts = lines[0].split(" ")
    if len(parts) < 2:
        return None
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    if headers.get("transfer-encoding", "").lower() == "chunked":
        body = b""
        while True:
            while b"\r\n" not in buffer:
                data = conn.recv(65536)
                if not data:
                    return None
                buffer += data
            size_line, _, buffer = buffer.partition(b"\r\n")
            size = int(size_line.split(b";")[0], 16)
            while len(buffer) < size + 2:
                data = conn.recv(65536)
                if not data:
                    return None
                buffer += data
            body, buffer = body + buffer[:size], buffer[size + 2:]
            if size == 0:
                break
    else:
        length = int(headers.get("content-length", "0") or 0)
        while len(buffer) < length:
            data = conn.recv(65536)
            if not data:
                return None
            buffer += data
        buffer = buffer[length:]
    return parts[0], parts[1], headers, buffer


def head(status, fields, reason="OK"):
    lines = [f"HTTP/1.1 {status} {reason}"] + [f"{name}: {value}" for name, value in fields]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


def answer(conn, status, body, fields=(), reason="OK", keep_alive=True):
    fields = list(fields) + [("Content-Length", str(len(body)))]
    fields.append(("Connection", "keep-alive" if keep_alive else "close"))
    conn.sendall(head(status, fields, reason) + body)
    return keep_alive


def reset(conn):
    conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    conn.close()


def pattern(size):
    block = bytes(range(256)) * 256
    while size > 0:
        piece = block[: min(size, len(block))]
        size -= len(piece)
        yield piece


def gzip_bomb(conn, size):
    block = bytes(1 << 20)
    blocks = max(1, size // len(block))
    compressor = zlib.compressobj(9, zlib.DEFLATED, -15)
    # After a full flush the compressor starts afresh, so every block compresses to the same bytes.
    first = compressor.compress(block) + compressor.flush(zlib.Z_FULL_FLUSH)
    repeated = compressor.compress(block) + compressor.flush(zlib.Z_FULL_FLUSH)
    final = compressor.flush(zlib.Z_FINISH)
    header = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\x03"
    length = len(header) + len(first) + (blocks - 1) * len(repeated) + len(final) + 8
    conn.sendall(head(200, [("Content-Type", "application/octet-stream"), ("Content-Encoding", "gzip"),
                            ("Content-Length", str(length)), ("Connection", "close")]))
    conn.sendall(header + first)
    crc = zlib.crc32(block)
    for _ in range(blocks - 1):
        conn.sendall(repeated)
        crc = zlib.crc32(block, crc)
    conn.sendall(final + struct.pack("<II", crc, (blocks * len(block)) & 0xFFFFFFFF))
    return False


def sample_gzip():
    text = b"".join(b"line %d of a gzip body that a client must not accept when cut short\n" % i for i in range(4000))
    compressor = zlib.compressobj(6, zlib.DEFLATED, 31)
    return compressor.compress(text) + compressor.flush()


def wait_for_client_to_leave(conn, limit=120):
    conn.settimeout(limit)
    try:
        while conn.recv(65536):
            pass
    except OSError:
        pass


def handle(conn, method, target, query, path, buffer, headers):
    """Answers one request. Returns True to keep the connection for another request."""
    params = urllib.parse.parse_qs(query, keep_blank_values=True)

    def param(name, default):
        return int(params[name][0]) if name in params and params[name][0] else default

    if path == "/health":
        return answer(conn, 200, b"ok", [("Content-Type", "text/plain")])
    if path.startswith("/bytes/"):
        size = int(path[len("/bytes/"):])
        if "chunked" in params:
            conn.sendall(head(200, [("Content-Type", "application/octet-stream"), ("Transfer-Encoding", "chunked")]))
            for piece in pattern(size):
                conn.sendall(b"%x\r\n" % len(piece) + piece + b"\r\n")
            conn.sendall(b"0\r\n\r\n")
        else:
            conn.sendall(head(200, [("Content-Type", "application/octet-stream"), ("Content-Length", str(size))]))
            for piece in pattern(size):
                conn.sendall(piece)
        return True
    if path.startswith("/count/"):
        identifier = path[len("/count/"):]
        if "read" in params:
            with COUNTS_LOCK:
                value = COUNTS.get(identifier, 0)
        else:
            value = count(identifier)
        return answer(conn, 200, str(value).encode(), [("Content-Type", "text/plain")])
    if path == "/keepalive-then-drop":
        answer(conn, 200, b"ok", [("Content-Type", "text/plain")])
        request = read_request(conn, buffer)
        if request is not None:
            next_path = urllib.parse.urlsplit(request[1]).path
            if next_path.startswith("/count/"):
                count(next_path[len("/count/"):])
        conn.close()
        return False
    if path == "/answer-then-close":
        # Says keep-alive, then closes once the answer is out: the client's idle connection is
        # closed by the server, which the client finds when it next tries to reuse it.
        answer(conn, 200, b"ok", [("Content-Type", "text/plain")])
        return False
    if path == "/never-ending-head":
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n")
        return False
    if path == "/slow-head":
        interval = param("interval", 100) / 1000
        for byte in head(200, [("Content-Type", "text/plain"), ("Content-Length", "2"), ("Connection", "close")]):
            conn.sendall(bytes([byte]))
            time.sleep(interval)
        conn.sendall(b"ok")
        return False
    if path == "/many-headers":
        fields = [(f"X-Field-{index}", f"value-{index}") for index in range(param("count", 10000))]
        return answer(conn, 200, b"ok", fields, keep_alive=False)
    if path == "/huge-header-line":
        size = param("size", 10 << 20)
        conn.sendall(b"HTTP/1.1 200 OK\r\nX-Huge: ")
        for piece in pattern(size):
            conn.sendall(b"a" * len(piece))
        conn.sendall(b"\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok")
        return False
    if path == "/invalid-status-line":
        conn.sendall(b"HTTP/1.1 2x0 Nope\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok")
        return False
    if path == "/not-http":
        conn.sendall(b"SSH-2.0-OpenSSH_9.2 not an HTTP server\r\n" * 4)
        return False
    if path == "/gzip-bomb":
        return gzip_bomb(conn, param("size", 10 << 30))
    if path == "/gzip-truncated":
        body = sample_gzip()
        return answer(conn, 200, body[: len(body) // 2], [("Content-Type", "text/plain"), ("Content-Encoding", "gzip")],
                      keep_alive=False)
    if path == "/gzip-garbage":
        body = b"\x1f\x8b" + bytes((index * 37 + 11) % 256 for index in range(4096))
        return answer(conn, 200, body, [("Content-Type", "text/plain"), ("Content-Encoding", "gzip")], keep_alive=False)
    if path == "/conflicting-content-length":
        conn.sendall(head(200, [("Content-Type", "text/plain"), ("Content-Length", "5"), ("Content-Length", "11"),
                                ("Connection", "close")]) + b"hello world")
        return False
    if path == "/short-body":
        conn.sendall(head(200, [("Content-Type", "application/octet-stream"), ("Content-Length", "1000"),
                                ("Connection", "close")]) + b"x" * 500)
        return False
    if path == "/broken-chunked":
        conn.sendall(head(200, [("Content-Type", "text/plain"), ("Transfer-Encoding", "chunked"), ("Connection", "close")])
                     + b"5\r\nhello\r\nzz-not-hex\r\nworld\r\n0\r\n\r\n")
        return False
    if path == "/unknown-content-encoding":
        return answer(conn, 200, b"opaque body", [("Content-Type", "text/plain"), ("Content-Encoding", "x-custom")],
                      keep_alive=False)
    if path == "/unknown-transfer-encoding":
        conn.sendall(head(200, [("Content-Type", "text/plain"), ("Transfer-Encoding", "x-custom"),
                                ("Connection", "close")]) + b"opaque body")
        return False
    if path == "/stall-mid-body":
        conn.sendall(head(200, [("Content-Type", "application/octet-stream"), ("Content-Length", "1000")]) + b"x" * 100)
        wait_for_client_to_leave(conn)
        return False
    if path == "/reset/before-head":
        reset(conn)
        return False
    if path == "/reset/mid-head":
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Len")
        time.sleep(0.05)
        reset(conn)
        return False
    if path == "/reset/mid-body":
        conn.sendall(head(200, [("Content-Type", "application/octet-stream"), ("Content-Length", "100000")]) + b"x" * 1000)
        time.sleep(0.05)
        reset(conn)
        return False
    if path.startswith("/redirect/"):
        targets = {
            "gopher": f"gopher://127.0.0.1:{PORT}/1count",
            "ftp": f"ftp://127.0.0.1:{PORT}/file.txt",
            "file": "file:///etc/passwd",
        }
        target_url = targets.get(path[len("/redirect/"):])
        if target_url:
            return answer(conn, 302, b"", [("Location", target_url)])
    if path == "/signed":
        date = headers.get("date", "")
        expected = hmac.new(SIGNING_KEY, f"{method} {path}\n{date}".encode(), hashlib.sha256).hexdigest()
        if not date or not hmac.compare_digest(headers.get("signature", ""), expected):
            return answer(conn, 401, b"bad signature", [("Content-Type", "text/plain")])
        body = json.dumps({"verified": True, "authorization": "authorization" in headers}).encode()
        return answer(conn, 200, body, [("Content-Type", "application/json")])
    return answer(conn, 404, b"no such fault", [("Content-Type", "text/plain")])


def serve(conn):
    buffer = b""
    try:
        conn.settimeout(IDLE_TIMEOUT)
        while True:
            request = read_request(conn, buffer)
            if request is None:
                break
            method, target, headers, buffer = request
            split = urllib.parse.urlsplit(target)
            if not handle(conn, method, target, split.query, split.path, buffer, headers):
                break
    except (OSError, ValueError):
        pass
    finally:
        try:
            conn.close()
        except OSError:
            pass


def main():
    global PORT
    parser = argparse.ArgumentParser(description="A misbehaving HTTP server for fault tests (loopback only).")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--port-file")
    arguments = parser.parse_args()
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", arguments.port))
    listener.listen(128)
    PORT = listener.getsockname()[1]
    if arguments.port_file:
        with open(arguments.port_file + ".tmp", "w") as file:
            file.write(str(PORT))
        os.replace(arguments.port_file + ".tmp", arguments.port_file)
    else:
        print(PORT, flush=True)
    while True:
        conn, _ = listener.accept()
        threading.Thread(target=serve, args=(conn,), daemon=True).start()


if __name__ == "__main__":
    main()
