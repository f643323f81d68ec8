#!/usr/bin/env python3
"""A scripted WebSocket server of Convey's own for the WebSocket tests: plain sockets, one thread
per connection, standard library only (no websockets package, which refuses to break the rules).
It sends exactly the frames a script names, checks that every frame the client sends is masked,
and keeps what the client did for the test to read.

    scripts/ws-raw-server.py --port 0 --port-file PATH

Binds 127.0.0.1 (port 0: a free one, written to --port-file once listening) and serves until
killed. scripts/with-test-servers starts it and exports CONVEY_WS_RAW_URL.

A connection's opening request names its script: ws://HOST:PORT/SCRIPT[?id=ID&...]. The answer
is a 101 with the right Sec-WebSocket-Accept (and permessage-deflate, with no parameters, for the
deflate-* scripts, which need the client to offer it: 400 otherwise); then the script runs. Unless
a script says otherwise, the server then waits up to 60 s for the client's close frame, answers
it if it sent none itself, and closes the connection. Pings are answered with pongs, and a
client frame that is not masked is answered with a close 1002 (RFC 6455 §5.1).

With an id, what the client did is kept: GET /result/ID (plain HTTP) waits until that
connection has ended (at most 90 s) and answers JSON:
  {"script": name, "masked": whether every client frame was masked, "unmasked_frames": count,
   "frames": [[opcode, payload length], ...] (the first 1000), "close": {"code": code or null,
   "reason": text} of the client's close frame or null, "pongs": [payload as hex, ...],
   "messages": count of text and binary frames, "ended": "close", "eof" or "timeout"}

Scripts. The violations (each fails the connection; the client should close with the code shown):
  rsv1, rsv2, rsv3            a text frame with RSV1, RSV2 or RSV3 set, nothing negotiated (1002)
  unknown-opcode              a frame with opcode 0x3 (1002)
  unknown-control-opcode      a frame with opcode 0xB (1002)
  masked                      a masked text frame "Hello" (1002)
  long-ping                   a ping of 126 bytes (1002)
  fragmented-ping             a ping without FIN (1002)
  orphan-continuation         a continuation frame with no message to continue (1002)
  interleaved-data            a text frame without FIN, then a binary frame (1002)
  close/CODE[?reason=R]       a close frame with CODE, any number (1005, 1006, 999, 1004, 2999:
                              1002; 1000, 3000, 4999: valid, echoed)
  close-empty                 a close frame without a code (answered without one)
  close-one-byte              a close frame with one byte of payload (1002)
  close-bad-utf8              a close 1000 whose reason is not UTF-8 (1007)
  bad-utf8                    a text message that is not UTF-8 (1007)
  bad-utf8-split              a text message whose fragments end and start a bad sequence (1007)
  big/N                       a binary message of N bytes, in one frame (1009 past the client's maximum)
  deflate-rsv1-continuation   a compressed message with RSV1 on its continuation too (1002)
  deflate-bomb[?mib=N]        one compressed binary message inflating to N MiB of zeros (default
                              64, about 64 KB on the wire) (1009 past the client's maximum)
And the rest:
  echo                        echoes each text or binary message, uncompressed; the client closes
  utf8-split                  "κόσμε" with fragments cut inside characters, then close 1000
  fragments-with-pings        "Hello" in three fragments with a ping between each ("p1", "p2"),
                              then close 1000: the client's pongs are in the result
  trickle-15k                 a 15,000-byte text message ("aé" 5,000 times), one byte per send, then close 1000
  many[?count=N]              N small text messages, "0", "1", … (default 100,000), then close 1000
  deflate-hello               RFC 7692's "Hello" twice (the second through the shared window), then close 1000
  vanish-mid-frame            a binary frame's header (100 bytes announced) and 10 of its bytes, then
                              the connection ends (FIN) without a close frame
  no-pong                     never answers pings and sends nothing; waits up to 60 s for the client to leave
  ping[?payload=P]            pings the client with P (default "hello"), waits up to 60 s for the pong
                              (in the result), then close 1000
  once?id=ID&first=SCRIPT     the first connection with ID runs SCRIPT (default vanish-mid-frame), every
                              later one echo: for reconnection; the result counts the connections
  bad-accept                  a 101 whose Sec-WebSocket-Accept is not the key's, then waits for the client to leave
  redirect?to=SCRIPT          answers the handshake with 307 and Location: /SCRIPT (default echo)
"""

import argparse
import base64
import hashlib
import json
import os
import socket
import struct
import threading
import time
import urllib.parse
import zlib

GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
HEAD_LIMIT = 64 * 1024
# Seconds a script waits for the client's close, and /result/ID for a connection to end: long,
# since a client that passes returns at once, and a debug build on a loaded machine may take
# many seconds to read what a fast script sent.
CLIENT_WAIT = 60
RESULT_WAIT = 90
CLIENT_FRAME_LIMIT = 64 << 20
RESULTS = {}
RESULTS_DONE = {}
RESULTS_LOCK = threading.Lock()
BOMBS = {}
# How many connections each `once` id has had.
ONCE_COUNTS = {}


def frame(opcode, payload=b"", fin=True, rsv=0, mask=None):
    """A frame as the server sends it: unmasked unless `mask` (4 bytes) is given."""
    first = (0x80 if fin else 0) | rsv | opcode
    mask_bit = 0x80 if mask else 0
    n = len(payload)
    if n < 126:
        head = bytes([first, mask_bit | n])
    elif n < 65536:
        head = bytes([first, mask_bit | 126]) + struct.pack("!H", n)
    else:
        head = bytes([first, mask_bit | 127]) + struct.pack("!Q", n)
    if mask:
        payload = bytes(byte ^ mask[index % 4] for index, byte in enumerate(payload))
        head += mask
    return head + payload


def close_payload(code, reason=b""):
    return struct.pack("!H", code) + reason


def compressed(chunks):
    """Raw deflate of `chunks` as one permessage-deflate payload: sync-flushed, tail stripped."""
    compressor = zlib.compressobj(wbits=-15)
    data = b"".join(compressor.compress(chunk) for chunk in chunks) + compressor.flush(zlib.Z_SYNC_FLUSH)
    return data[:-4] if data.endswith(b"\x00\x00\xff\xff") else data


def bomb(mebibytes):
    if mebibytes not in BOMBS:
        zeros = bytes(1 << 20)
        BOMBS[mebibytes] = compressed(zeros for _ in range(mebibytes))
    return BOMBS[mebibytes]


class Connection:
    def __init__(self, sock, script, query, record):
        self.sock = sock
        self.script = script
        self.query = query
        self.record = record
        self.send_lock = threading.Lock()
        self.sent_close = False
        self.answers_pings = script != "no-pong"
        self.ended = threading.Event()

    def send(self, data):
        with self.send_lock:
            self.sock.sendall(data)

    def send_close(self, payload):
        with self.send_lock:
            if self.sent_close:
                return
            self.sent_close = True
            self.sock.sendall(frame(0x8, payload))

    def read_exactly(self, count):
        data = bytearray()
        while len(data) < count:
            chunk = self.sock.recv(min(count - len(data), 1 << 20))
            if not chunk:
                raise EOFError
            data += chunk
        return bytes(data)

    def read_client_frames(self):
        """Reads the client's frames until its close or the end of the connection."""
        message = None
        try:
            while True:
                first, second = self.read_exactly(2)
                opcode = first & 0x0F
                length = second & 0x7F
                if length == 126:
                    length = struct.unpack("!H", self.read_exactly(2))[0]
                elif length == 127:
                    length = struct.unpack("!Q", self.read_exactly(8))[0]
                masked = bool(second & 0x80)
                key = self.read_exactly(4) if masked else b""
                if length > CLIENT_FRAME_LIMIT:
                    self.send_close(close_payload(1009))
                    self.record["ended"] = "eof"
                    return
                payload = self.read_exactly(length)
                if masked:
                    payload = bytes(byte ^ key[index % 4] for index, byte in enumerate(payload))
                if len(self.record["frames"]) < 1000:
                    self.record["frames"].append([opcode, length])
                if not masked:
                    self.record["masked"] = False
                    self.record["unmasked_frames"] += 1
                    self.send_close(close_payload(1002, b"unmasked client frame"))
                    continue
                if opcode == 0x8:
                    code = struct.unpack("!H", payload[:2])[0] if len(payload) >= 2 else None
                    self.record["close"] = {"code": code, "reason": payload[2:].decode("utf-8", "replace")}
                    self.send_close(payload[:2])
                    self.record["ended"] = "close"
                    return
                if opcode == 0x9 and self.answers_pings:
                    self.send(frame(0xA, payload))
                elif opcode == 0xA:
                    self.record["pongs"].append(payload.hex())
                elif opcode in (0x0, 0x1, 0x2):
                    if opcode != 0x0:
                        self.record["messages"] += 1
                        message = (opcode, bytearray())
                    if message is not None:
                        message[1].extend(payload)
                        if first & 0x80:
                            if self.script == "echo" and not self.sent_close:
                                self.send(frame(message[0], bytes(message[1])))
                            message = None
        except (EOFError, OSError):
            self.record["ended"] = self.record["ended"] or "eof"
        finally:
            self.ended.set()

    def run(self):
        reader = threading.Thread(target=self.read_client_frames, daemon=True)
        reader.start()
        wait = self.run_script()
        if wait is not None and not self.ended.wait(wait):
            self.record["ended"] = "timeout"

    def run_script(self):
        """Sends the script's frames; returns how long to wait for the client, or None to leave at once."""
        script, query = self.script, self.query
        simple = {
            "rsv1": frame(0x1, b"x", rsv=0x40),
            "rsv2": frame(0x1, b"x", rsv=0x20),
            "rsv3": frame(0x1, b"x", rsv=0x10),
            "unknown-opcode": frame(0x3, b"x"),
            "unknown-control-opcode": frame(0xB, b"x"),
            "masked": frame(0x1, b"Hello", mask=b"\x37\xfa\x21\x3d"),
            "long-ping": frame(0x9, bytes(126)),
            "fragmented-ping": frame(0x9, b"p", fin=False),
            "orphan-continuation": frame(0x0, b"lo"),
            "interleaved-data": frame(0x1, b"Hel", fin=False) + frame(0x2, b"x"),
            "close-empty": frame(0x8),
            "close-one-byte": frame(0x8, b"\x03"),
            "close-bad-utf8": frame(0x8, close_payload(1000, b"\xce\xba\xed\xa0\x80")),
            "bad-utf8": frame(0x1, b"ab\xed\xa0\x80cd"),
            "bad-utf8-split": frame(0x1, b"ab\xf0\x9f", fin=False) + frame(0x0, b"\x41\x42"),
            "deflate-rsv1-continuation": frame(0x1, b"\xf2\x48\xcd", fin=False, rsv=0x40)
            + frame(0x0, b"\xc9\xc9\x07\x00", rsv=0x40),
        }
        if script in simple:
            if script.startswith("close"):
                self.sent_close = True
            self.send(simple[script])
            return CLIENT_WAIT
        if script in ("echo", "bad-accept"):
            return 60
        if script.startswith("close/"):
            reason = query.get("reason", [""])[0].encode()
            self.send_close(close_payload(int(script[len("close/"):]), reason))
            return CLIENT_WAIT
        if script.startswith("big/"):
            self.send(frame(0x2, bytes(int(script[len("big/"):]))))
            self.send_close(close_payload(1000))
            return CLIENT_WAIT
        if script == "deflate-bomb":
            self.send(frame(0x2, bomb(int(query.get("mib", ["64"])[0])), rsv=0x40))
            return CLIENT_WAIT
        if script == "utf8-split":
            text = "κόσμε".encode()
            self.send(frame(0x1, text[:3], fin=False) + frame(0x0, text[3:7], fin=False) + frame(0x0, text[7:]))
        elif script == "fragments-with-pings":
            self.send(frame(0x1, b"Hel", fin=False) + frame(0x9, b"p1") + frame(0x0, b"l", fin=False)
                      + frame(0x9, b"p2") + frame(0x0, b"o"))
        elif script == "trickle-15k":
            for byte in frame(0x1, ("aé" * 5000).encode()):
                self.send(bytes([byte]))
        elif script == "many":
            count = int(query.get("count", ["100000"])[0])
            batch = bytearray()
            for index in range(count):
                batch += frame(0x1, str(index).encode())
                if len(batch) >= 1 << 16:
                    self.send(bytes(batch))
                    batch.clear()
            self.send(bytes(batch))
        elif script == "deflate-hello":
            self.send(frame(0x1, b"\xf2\x48\xcd\xc9\xc9\x07\x00", rsv=0x40) + frame(0x1, b"\xf2\x00\x11\x00\x00", rsv=0x40))
        elif script == "vanish-mid-frame":
            self.send(bytes([0x82, 100]) + bytes(10))
            self.sock.shutdown(socket.SHUT_RDWR)
            return None
        elif script == "no-pong":
            return 60
        elif script == "ping":
            self.send(frame(0x9, query.get("payload", ["hello"])[0].encode()))
            deadline = time.monotonic() + CLIENT_WAIT
            while not self.record["pongs"] and not self.ended.is_set() and time.monotonic() < deadline:
                time.sleep(0.01)
        self.send_close(close_payload(1000))
        return CLIENT_WAIT


def read_head(sock):
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(4096)
        if not chunk or len(data) > HEAD_LIMIT:
            return None
        data += chunk
    head = data.split(b"\r\n\r\n", 1)[0].decode("latin-1")
    lines = head.split("\r\n")
    parts = lines[0].split(" ")
    if len(parts) != 3:
        return None
    fields = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        fields[name.strip().lower()] = value.strip()
    return parts[1], fields


def http_answer(sock, status, body, content_type="text/plain"):
    body = body.encode() if isinstance(body, str) else body
    sock.sendall(f"HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {len(body)}\r\n"
                 f"Connection: close\r\n\r\n".encode() + body)


def serve_connection(sock):
    try:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        request = read_head(sock)
        if request is None:
            return
        target, fields = request
        split = urllib.parse.urlsplit(target)
        path, query = split.path, urllib.parse.parse_qs(split.query)
        if fields.get("upgrade", "").lower() != "websocket":
            if path == "/health":
                http_answer(sock, "200 OK", "ok\n")
            elif path.startswith("/result/"):
                key = path[len("/result/"):]
                deadline = time.monotonic() + RESULT_WAIT
                while key not in RESULTS_DONE and time.monotonic() < deadline:
                    time.sleep(0.01)
                done = RESULTS_DONE.get(key)
                if done is None or not done.wait(max(0, deadline - time.monotonic())):
                    http_answer(sock, "404 Not Found", f"no finished connection with id {key}\n")
                else:
                    http_answer(sock, "200 OK", json.dumps(RESULTS[key]), "application/json")
            else:
                http_answer(sock, "426 Upgrade Required", "a WebSocket script, or /result/ID\n")
            return
        script = path.lstrip("/")
        connections = None
        if script == "redirect":
            target = query.get("to", ["echo"])[0]
            sock.sendall(f"HTTP/1.1 307 Temporary Redirect\r\nLocation: /{target}\r\nContent-Length: 0\r\n\r\n".encode())
            return
        if script == "once":
            with RESULTS_LOCK:
                once = query.get("id", [""])[0]
                ONCE_COUNTS[once] = ONCE_COUNTS.get(once, 0) + 1
                connections = ONCE_COUNTS[once]
            script = query.get("first", ["vanish-mid-frame"])[0] if connections == 1 else "echo"
        offered = "permessage-deflate" in fields.get("sec-websocket-extensions", "")
        if script.startswith("deflate-") and not offered:
            http_answer(sock, "400 Bad Request", "this script needs a permessage-deflate offer\n")
            return
        key_text = fields.get("sec-websocket-key", "") + ("-not-this-key" if script == "bad-accept" else "")
        accept = base64.b64encode(hashlib.sha1(key_text.encode() + GUID).digest()).decode()
        extensions = "Sec-WebSocket-Extensions: permessage-deflate\r\n" if script.startswith("deflate-") else ""
        sock.sendall(("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                      f"Sec-WebSocket-Accept: {accept}\r\n{extensions}\r\n").encode())
        record = {"script": script, "masked": True, "unmasked_frames": 0, "frames": [], "close": None, "pongs": [],
                  "messages": 0, "ended": None, "connections": connections}
        key = query.get("id", [None])[0]
        done = threading.Event()
        if key:
            with RESULTS_LOCK:
                RESULTS[key] = record
                RESULTS_DONE[key] = done
        try:
            Connection(sock, script, query, record).run()
        finally:
            done.set()
    except OSError:
        pass
    finally:
        # shutdown, not just close: close leaves the connection open while the reader thread is
        # blocked in recv on it, and only shutdown wakes that thread.
        for end in (lambda: sock.shutdown(socket.SHUT_RDWR), sock.close):
            try:
                end()
            except OSError:
                pass


def main():
    parser = argparse.ArgumentParser(description="A scripted WebSocket server (loopback only).")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--port-file")
    arguments = parser.parse_args()
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", arguments.port))
    listener.listen(128)
    if arguments.port_file:
        with open(arguments.port_file + ".tmp", "w") as file:
            file.write(str(listener.getsockname()[1]))
        os.replace(arguments.port_file + ".tmp", arguments.port_file)
    while True:
        sock, _ = listener.accept()
        threading.Thread(target=serve_connection, args=(sock,), daemon=True).start()


if __name__ == "__main__":
    main()
