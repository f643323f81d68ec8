#!/usr/bin/env python3
"""The reference client of scripts/bench-websocket: the `websockets` package's own asyncio client,
echoing 1 KB text messages through scripts/ws-echo-server.py with the workloads WebSocketBench
runs, printing rows of the same table (messages/s, the process's CPU per message, resident growth).

    scripts/ws-bench-client.py [--quick|--smoke]     (needs CONVEY_WS_URL; scripts/bench-websocket sets it)
"""

import asyncio
import os
import resource
import sys
import time

from websockets.asyncio.client import connect

FILLER = ("Convey echoes WebSocket messages over loopback; " * 30)[:1016]


def message(number):
    return f"{number:08d}" + FILLER


def resident_mb():
    """Resident memory now, in MiB (Linux's /proc/self/statm)."""
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1048576


async def echo(url, count, in_flight, name):
    async with connect(url, max_size=None, ping_interval=None) as connection:
        start_memory = resident_mb()
        peak = start_memory
        cpu = time.process_time()
        started = time.monotonic()
        sent = 0
        while sent < min(in_flight, count):
            await connection.send(message(sent))
            sent += 1
        for received in range(count):
            text = await connection.recv()
            if len(text) != 1024 or int(text[:8]) != received:
                sys.exit(f"{name}: echo {received} was wrong")
            if sent < count:
                await connection.send(message(sent))
                sent += 1
            if received % 10000 == 0:
                peak = max(peak, resident_mb())
        seconds = time.monotonic() - started
        used = (time.process_time() - cpu) * 1e6
        end = resident_mb()
        peak = max(peak, end)
    print(f"| websockets (Python) | {name} | {count} | {seconds:.2f} | {count / seconds:.0f} | {used / count:.1f} | "
          f"{peak - start_memory:.1f} | {end - start_memory:.1f} |")


async def main():
    smoke = "--smoke" in sys.argv
    quick = "--quick" in sys.argv
    url = os.environ.get("CONVEY_WS_URL")
    if not url:
        sys.exit("CONVEY_WS_URL is not set: run scripts/bench-websocket")
    url += "/echo"
    one = 200 if smoke else 2_000 if quick else 20_000
    many = 2_000 if smoke else 20_000 if quick else 200_000
    memory = 5_000 if smoke else 100_000 if quick else 1_000_000
    for name, count, in_flight in [("1 in flight", one, 1), ("64 in flight", many, 64), ("64 in flight, memory", memory, 64)]:
        await echo(url, count, in_flight, name)


if __name__ == "__main__":
    asyncio.run(main())
