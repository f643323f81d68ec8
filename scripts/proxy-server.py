#!/usr/bin/env python3
"""Convey's test proxies, on loopback, Python standard library only.

    proxy-server.py HTTP_PORT SOCKS_PORT

HTTP_PORT: an HTTP proxy. `CONNECT host:port` opens a tunnel; a request with an absolute URI
(`GET http://host/path`) is forwarded. Every proxied request needs
`Proxy-Authorization: Basic` with the password PASSWORD (any user name), else 407.
SOCKS_PORT: a SOCKS5 proxy (RFC 1928, CONNECT only) with user/password authentication
(RFC 1929), the same password.

Counts, read with a plain request to the HTTP port: `GET /stats?user=NAME` gives
`{"tunnels": n, "forwards": n, "socks": n, "refused": n}` for that user name (refused: a wrong
or missing password, counted under the name given, or "" for none), and
`GET /stats?target=TEXT` counts the proxied requests and tunnels whose target contains TEXT.
Tests use a unique user name or path each, so that counts of parallel tests do not mix.
"""
import base64
import json
import select
import socket
import socketserver
import sys
import threading
import urllib.parse
from collections import Counter

PASSWORD = "proxy-secret"
counts = Counter()
targets = []
lock = threading.Lock()


def count(kind, user):
    with lock:
        counts[(kind, user)] += 1


def relay(a, b):
    """Copies bytes both ways until either side closes."""
    sockets = [a, b]
    try:
        while True:
            readable, _, _ = select.select(sockets, [], [], 60)
            if not readable:
                return
            for s in readable:
                data = s.recv(65536)
                if not data:
                    return
                (b if s is a else a).sendall(data)
    except OSError:
        return


def read_head(conn):
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(4096)
        if not chunk:
            return None, b""
        data += chunk
        if len(data) > 65536:
            return None, b""
    head, rest = data.split(b"\r\n\r\n", 1)
    return head.decode("latin-1"), rest


def credentials(fields):
    value = fields.get("proxy-authorization", "")
    if not value.lower().startswith("basic "):
        return "", None
    try:
        user, _, password = base64.b64decode(value[6:]).decode().partition(":")
    except Exception:
        return "", None
    return user, password


class HTTPProxy(socketserver.BaseRequestHandler):
    def handle(self):
        conn = self.request
        head, rest = read_head(conn)
        if head is None:
            return
        lines = head.split("\r\n")
        method, target, _ = (lines[0].split(" ") + ["", ""])[:3]
        fields = {}
        for line in lines[1:]:
            name, _, value = line.partition(":")
            fields[name.strip().lower()] = value.strip()
        if target.startswith("/stats"):
            return self.stats(conn, target)
        user, password = credentials(fields)
        if password != PASSWORD:
            count("refused", user)
            conn.sendall(b"HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm=\"convey\"\r\n"
                         b"Content-Length: 0\r\nConnection: close\r\n\r\n")
            return
        with lock:
            targets.append(target)
        if method == "CONNECT":
            host, _, port = target.rpartition(":")
            try:
                upstream = socket.create_connection((host.strip("[]"), int(port)), timeout=10)
            except (OSError, ValueError):
                conn.sendall(b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n")
                return
            count("tunnels", user)
            conn.sendall(b"HTTP/1.1 200 Connection Established\r\n\r\n")
            if rest:
                upstream.sendall(rest)
            relay(conn, upstream)
            upstream.close()
            return
        url = urllib.parse.urlsplit(target)
        if url.scheme != "http" or not url.hostname:
            conn.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")
            return
        count("forwards", user)
        upstream = socket.create_connection((url.hostname, url.port or 80), timeout=10)
        path = url.path or "/"
        if url.query:
            path += "?" + url.query
        kept = [line for line in lines[1:] if not line.lower().startswith(("proxy-authorization:", "proxy-connection:", "connection:"))]
        request = "\r\n".join([f"{method} {path} HTTP/1.1"] + kept + ["Connection: close", "", ""])
        upstream.sendall(request.encode("latin-1") + rest)
        relay(conn, upstream)
        upstream.close()

    def stats(self, conn, target):
        query = urllib.parse.parse_qs(urllib.parse.urlsplit(target).query)
        with lock:
            if "target" in query:
                text = query["target"][0]
                body = {"matching": sum(1 for t in targets if text in t)}
            else:
                user = query.get("user", [""])[0]
                body = {kind: counts[(kind, user)] for kind in ("tunnels", "forwards", "socks", "refused")}
        data = json.dumps(body).encode()
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n"
                     + f"Content-Length: {len(data)}\r\n\r\n".encode() + data)


def recv_exact(conn, n):
    data = b""
    while len(data) < n:
        chunk = conn.recv(n - len(data))
        if not chunk:
            raise ConnectionError("closed")
        data += chunk
    return data


class SOCKS5Proxy(socketserver.BaseRequestHandler):
    def handle(self):
        conn = self.request
        try:
            version, method_count = recv_exact(conn, 2)
            methods = recv_exact(conn, method_count)
            if version != 5 or 2 not in methods:
                conn.sendall(b"\x05\xff")
                count("refused", "")
                return
            conn.sendall(b"\x05\x02")
            _, user_length = recv_exact(conn, 2)
            user = recv_exact(conn, user_length).decode()
            (password_length,) = recv_exact(conn, 1)
            password = recv_exact(conn, password_length).decode()
            if password != PASSWORD:
                count("refused", user)
                conn.sendall(b"\x01\x01")
                return
            conn.sendall(b"\x01\x00")
            _, command, _, address_type = recv_exact(conn, 4)
            if address_type == 1:
                host = socket.inet_ntoa(recv_exact(conn, 4))
            elif address_type == 3:
                (length,) = recv_exact(conn, 1)
                host = recv_exact(conn, length).decode()
            else:
                conn.sendall(b"\x05\x08\x00\x01\x00\x00\x00\x00\x00\x00")
                return
            port = int.from_bytes(recv_exact(conn, 2), "big")
            if command != 1:
                conn.sendall(b"\x05\x07\x00\x01\x00\x00\x00\x00\x00\x00")
                return
            try:
                upstream = socket.create_connection((host, port), timeout=10)
            except OSError:
                conn.sendall(b"\x05\x05\x00\x01\x00\x00\x00\x00\x00\x00")
                return
            count("socks", user)
            with lock:
                targets.append(f"socks:{host}:{port}")
            conn.sendall(b"\x05\x00\x00\x01\x7f\x00\x00\x01" + port.to_bytes(2, "big"))
            relay(conn, upstream)
            upstream.close()
        except (ConnectionError, OSError, ValueError):
            return


class Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True


def main():
    http_port, socks_port = int(sys.argv[1]), int(sys.argv[2])
    socks = Server(("127.0.0.1", socks_port), SOCKS5Proxy)
    threading.Thread(target=socks.serve_forever, daemon=True).start()
    Server(("127.0.0.1", http_port), HTTPProxy).serve_forever()


if __name__ == "__main__":
    main()
