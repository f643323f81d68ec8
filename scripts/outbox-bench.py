#!/usr/bin/env python3
"""The outbox benchmark's driver; scripts/bench-outbox builds the binaries and starts the servers.

    outbox-bench.py BIN_DIR [--items N] [--kills K] [--concurrency C] [--seed S]
                    [--throughput-items N] [--skip-crash] [--skip-throughput]

Standard library only; traffic goes to the loopback servers of scripts/with-test-servers.
"""

import argparse
import json
import os
import random
import shutil
import signal
import statistics
import subprocess
import tempfile
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor


def get(url):
    with urllib.request.urlopen(url, timeout=10) as response:
        return response.read()


def harness(bin_dir, *arguments, **options):
    return subprocess.run([os.path.join(bin_dir, "convey-harness"), "--no-record", *arguments],
                          capture_output=True, text=True, **options)


def listed(bin_dir, folder):
    run = harness(bin_dir, "outbox", "list", folder, "--json")
    return json.loads(run.stdout)["items"]


def crash_test(arguments, scratch):
    base = os.environ["CONVEY_IDEMPOTENCY_URL"]
    get(base + "/reset")
    folder = os.path.join(scratch, "crash-outbox")
    url = base + "/fault/random/1000000/bench"
    started = time.monotonic()
    with ThreadPoolExecutor(max_workers=4) as pool:
        runs = list(pool.map(lambda index: harness(arguments.bin_dir, "post", url, "-d", f"item-{index}", "--outbox", folder),
                             range(arguments.items)))
    enqueue_seconds = time.monotonic() - started
    ids = [run.stdout.strip() for run in runs if run.returncode == 0]
    refused = [run for run in runs if run.returncode != 0]

    rng = random.Random(arguments.seed)
    kills = starts = 0
    started = time.monotonic()
    while True:
        starts += 1
        command = [os.path.join(arguments.bin_dir, "convey-harness"), "--no-record", "outbox", "run", folder,
                   "--concurrency", str(arguments.concurrency)]
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if kills < arguments.kills:
            try:
                process.wait(timeout=rng.uniform(0.2, 2.0))
            except subprocess.TimeoutExpired:
                process.send_signal(signal.SIGKILL)
                process.wait()
                kills += 1
                continue
        else:
            process.wait()
        if process.returncode in (0, 2) and not any(item["state"] == "pending" for item in listed(arguments.bin_dir, folder)):
            break
    drain_seconds = time.monotonic() - started

    items = {item["id"]: item for item in listed(arguments.bin_dir, folder)}
    delivered = [items[i] for i in ids if i in items and items[i]["state"] == "delivered"]
    failed = [items[i] for i in ids if i in items and items[i]["state"] == "failed"]
    lost = [i for i in ids if i not in items]
    stats = json.loads(get(base + "/stats"))
    attempts = [item["attempts"] for item in items.values()]
    return {
        "items enqueued": len(ids), "enqueues refused": len(refused), "enqueue seconds": round(enqueue_seconds, 1),
        "SIGKILLs": kills, "outbox run starts": starts,
        "delivered": len(delivered), "failed": len(failed), "lost": len(lost),
        "items processed twice (same body)": stats["bodiesProcessedTwice"], "keys processed twice": stats["keysProcessedTwice"],
        "server: requests": stats["requests"], "processed": stats["processed"], "replayed answers": stats["replays"],
        "dropped after acting": stats["dropped"], "503 Retry-After": stats["unavailable"], "409 (key in flight)": stats["conflicts"],
        "attempts per item (mean, max)": (round(statistics.mean(attempts), 2) if attempts else 0, max(attempts, default=0)),
        "server requests per key (histogram)": stats["requestsPerKey"],
        "drain seconds (with kills)": round(drain_seconds, 1), "concurrency": arguments.concurrency,
    }


def syscalls(command):
    """Syscalls the command made (perf's raw_syscalls tracepoint), or None without perf."""
    if shutil.which("perf") is None:
        return None, subprocess.run(command, capture_output=True, text=True, check=True).stdout
    with tempfile.NamedTemporaryFile("r", suffix=".perf") as report:
        run = subprocess.run(["perf", "stat", "-x,", "-e", "raw_syscalls:sys_enter", "-o", report.name, "--", *command],
                             capture_output=True, text=True, check=True)
        for line in report.read().splitlines():
            fields = line.split(",")
            if len(fields) > 2 and "raw_syscalls:sys_enter" in line and fields[0].strip().isdigit():
                return int(fields[0]), run.stdout
    return None, run.stdout


def throughput(arguments, scratch):
    bench = os.path.join(arguments.bin_dir, "OutboxBench")
    base = os.environ["CONVEY_NGINX_URL"]
    results = {}
    for count in (arguments.throughput_items, 2 * arguments.throughput_items):
        folder = os.path.join(scratch, f"throughput-{count}")
        for phase, command in (("fill", [bench, "fill", folder, base, "/upload-sink", str(count)]),
                               ("drain", [bench, "drain", folder]),
                               ("direct", [bench, "direct", base, "/upload-sink", str(count)])):
            calls, output = syscalls(command)
            results[(phase, count)] = (calls, json.loads(output.strip().splitlines()[-1]))
    small, large = arguments.throughput_items, 2 * arguments.throughput_items
    table = {}
    for phase in ("fill", "drain", "direct"):
        (calls_small, _), (calls_large, figures) = results[(phase, small)], results[(phase, large)]
        table[phase] = {
            "items/s": round(figures["perSecond"]),
            "CPU µs/item": round(figures["cpuMicrosecondsPerItem"], 1),
            "syscalls/item": None if calls_small is None or calls_large is None else round((calls_large - calls_small) / (large - small), 1),
        }
    return table


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("bin_dir")
    parser.add_argument("--items", type=int, default=1000)
    parser.add_argument("--kills", type=int, default=10)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--seed", type=int, default=28)
    parser.add_argument("--throughput-items", type=int, default=1000)
    parser.add_argument("--skip-crash", action="store_true")
    parser.add_argument("--skip-throughput", action="store_true")
    arguments = parser.parse_args()
    scratch = tempfile.mkdtemp(prefix="convey-outbox-bench-")
    try:
        if not arguments.skip_crash:
            print("Crash test (scripts/idempotency-server.py, fault mix 'random'):")
            for name, value in crash_test(arguments, scratch).items():
                print(f"  {name}: {value}")
        if not arguments.skip_throughput:
            print(f"Throughput and cost against nginx /upload-sink (POST 64 B → 204), one after another; "
                  f"per item from runs of {arguments.throughput_items} and {2 * arguments.throughput_items}:")
            print("  | phase | items/s | CPU µs/item | syscalls/item |")
            print("  |---|---|---|---|")
            names = {"fill": "enqueue (durable)", "drain": "deliver from a full folder", "direct": "same POSTs, no outbox"}
            for phase, row in throughput(arguments, scratch).items():
                print(f"  | {names[phase]} | {row['items/s']} | {row['CPU µs/item']} | {row['syscalls/item']} |")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
