#!/usr/bin/env python3
"""A WebSocket server on the `websockets` package (PyPI) for Convey's WebSocket tests: the
reference implementation a client must interoperate with, permessage-deflate on (the package's
defaults: both windows 12 bits, context kept).

    scripts/ws-echo-server.py --port 0 --port-file PATH [--tls-cert CRT --tls-key KEY --tls-port-file PATH]

Binds 127.0.0.1 (port 0: a free one, written to --port-file once listening) and serves until
killed; with a certificate it also serves wss:// on a second port (--tls-port-file). Runs in
scripts/with-test-servers' .venv, which exports CONVEY_WS_URL (and CONVEY_WSS_URL).

Routes (the path of the opening request; a query is allowed everywhere):

  /echo                     echoes every text and binary message as it came (up to 32 MiB).
  /auth/echo                as /echo, but only with `Authorization: Bearer good`; otherwise the
                            handshake is answered 401 with `WWW-Authenticate: Bearer`.
  /handshake                first sends one text message, JSON: {"path": the request's path and
                            query, "headers": [[name, value], ...] as received, in order,
                            "subprotocol": the one chosen or null, "extensions": the response's
                            Sec-WebSocket-Extensions or null}; then echoes.
  /close/CODE[?reason=R&after=N]
                            closes with CODE and reason R (default empty) at once, or after
                            echoing N messages.
  /ping-client[?payload=P]  pings the client with P (default "convey"), waits up to 30 s for the
                            pong (a passing client answers at once; a loaded machine may take
                            seconds), then sends the text "pong P" or "no pong" and echoes.
  /rooms/NAME/socket        a chat room (Docs/websockets.md's example): each text message goes to
                            every connection in room NAME, the sender's included.
  /health                   plain HTTP 200 "ok" (no upgrade), for start-up checks.
  anything else             404 to the handshake.

Subprotocols: the server takes "chat" or "superchat" when the client offers one (first offered
wins) and goes on without one otherwise. Keepalive pings are off, so that a test sees only the
pings it asks for.
"""

import argparse
import asyncio
import http
import json
import os
import ssl
import urllib.parse

from websockets.asyncio.server import serve
from websockets.exceptions import ConnectionClosed

MAX_MESSAGE = 32 << 20
SUBPROTOCOLS = ["chat", "superchat"]
# The connections of each chat room.
ROOMS = {}


def select_subprotocol(connection, offered):
    for name in offered:
        if name in SUBPROTOCOLS:
            return name
    return None


def process_request(connection, request):
    path = urllib.parse.urlsplit(request.path).path
    if path == "/health":
        return connection.respond(http.HTTPStatus.OK, "ok\n")
    known = path in ("/echo", "/auth/echo", "/handshake", "/ping-client") or path.startswith("/close/") or is_room(path)
    if not known:
        return connection.respond(http.HTTPStatus.NOT_FOUND, f"no route {path}\n")
    if path.startswith("/auth/") and request.headers.get("Authorization") != "Bearer good":
        response = connection.respond(http.HTTPStatus.UNAUTHORIZED, "unauthorized\n")
        response.headers["WWW-Authenticate"] = 'Bearer realm="convey"'
        return response
    return None


def is_room(path):
    parts = path.split("/")
    return len(parts) == 4 and parts[1] == "rooms" and parts[2] != "" and parts[3] == "socket"


async def chat(connection, room):
    members = ROOMS.setdefault(room, set())
    members.add(connection)
    try:
        async for message in connection:
            for member in list(members):
                try:
                    await member.send(message)
                except ConnectionClosed:
                    pass
    finally:
        members.discard(connection)


async def echo(connection):
    async for message in connection:
        await connection.send(message)


async def handler(connection):
    split = urllib.parse.urlsplit(connection.request.path)
    query = urllib.parse.parse_qs(split.query)
    path = split.path
    try:
        if path in ("/echo", "/auth/echo"):
            await echo(connection)
        elif path == "/handshake":
            await connection.send(json.dumps({
                "path": connection.request.path,
                "headers": [[name, value] for name, value in connection.request.headers.raw_items()],
                "subprotocol": connection.subprotocol,
                "extensions": connection.response.headers.get("Sec-WebSocket-Extensions"),
            }))
            await echo(connection)
        elif path.startswith("/close/"):
            code = int(path[len("/close/"):])
            reason = query.get("reason", [""])[0]
            for _ in range(int(query.get("after", ["0"])[0])):
                await connection.send(await connection.recv())
            await connection.close(code, reason)
        elif is_room(path):
            await chat(connection, path.split("/")[2])
        elif path == "/ping-client":
            payload = query.get("payload", ["convey"])[0]
            waiter = await connection.ping(payload)
            try:
                await asyncio.wait_for(waiter, 30)
                await connection.send(f"pong {payload}")
            except asyncio.TimeoutError:
                await connection.send("no pong")
            await echo(connection)
    except ConnectionClosed:
        pass


async def main():
    parser = argparse.ArgumentParser(description="A WebSocket echo server on the websockets package (loopback only).")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--port-file")
    parser.add_argument("--tls-cert")
    parser.add_argument("--tls-key")
    parser.add_argument("--tls-port-file")
    arguments = parser.parse_args()

    options = dict(process_request=process_request, select_subprotocol=select_subprotocol, subprotocols=SUBPROTOCOLS,
                   ping_interval=None, max_size=MAX_MESSAGE, compression="deflate")
    servers = [await serve(handler, "127.0.0.1", arguments.port, **options)]
    if arguments.tls_cert:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(arguments.tls_cert, arguments.tls_key)
        servers.append(await serve(handler, "127.0.0.1", 0, ssl=context, **options))
    for server, port_file in zip(servers, [arguments.port_file, arguments.tls_port_file]):
        if port_file:
            port = server.sockets[0].getsockname()[1]
            # Written whole, then renamed: a reader never sees half a number.
            with open(port_file + ".tmp", "w") as file:
                file.write(str(port))
            os.replace(port_file + ".tmp", port_file)
    await asyncio.gather(*(server.serve_forever() for server in servers))


if __name__ == "__main__":
    asyncio.run(main())
