#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The load of many gateways on blegate-server, for scripts/bench-server.sh: each gateway has
S straps at 1 Hz and sends what it measured every INTERVAL seconds as one gzip batch, the
way `blegate run` does (backend.interval), with its bearer token and the two headers, over
a kept-alive connection of its own. Gateways 2k and 2k+1 share their first 3 straps (heard
by both rooms), so the server's once-per-second rule is on the path. Each gateway waits for
an answer before its next batch (one request in flight, like the sync engine) and resends a
batch that failed.

  steady: N gateways (every line of TOKENS_FILE) for SECONDS; prints one JSON object:
          requests, records sent, inserted, duplicates, failures, batch latency (ms) p50/p90/p99/max.
  ramp:   gateways added step by step (--steps 100,200,...), STEP_SECONDS each, until a
          step's batch p99 passes --p99-ms or what is answered falls below 85 % of what is sent; prints a
          JSON line per step (records/s stored, p50/p99, server, PostgreSQL and this
          generator's CPU in % of one core), then {"knee": records/s of the last good step}.

With --probe-dir DIR (a directory on the database's filesystem), a thread writes 8 KiB and
fdatasyncs it every 50 ms there, as a commit flushes the WAL: each result gets that flush's
p99 and max, this disk's own floor under any durable batch's latency.

  bench-server-load.py steady URL TOKENS_FILE --straps 40 --seconds 600
  bench-server-load.py ramp URL TOKENS_FILE --steps 100,200,400 --step-seconds 40 --server-pid P --postmaster-pid Q
  (TOKENS_FILE: one "gateway_id token" per line)
"""
import argparse
import asyncio
import gzip
import json
import os
import sys
import threading
import time
from datetime import datetime, timezone
from urllib.parse import urlparse


def iso(t):
    return datetime.fromtimestamp(t, tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.") + "%03dZ" % int((t % 1) * 1000)


def device(gateway_index, strap):
    # Straps 0-2 of an odd gateway are those of the even one before it.
    owner = gateway_index - 1 if gateway_index % 2 == 1 and strap < 3 else gateway_index
    return "B0:%02X:%02X:00:00:%02X" % (owner >> 8, owner & 0xFF, strap)


RECORD = ('{"id":"%s","client_id":"%s","timestamp":"%s","device_id":"%s","source":"ble_hrm",'
          '"metrics":{"hr":%d,"hrv_rmssd":41.5},'
          '"meta":{"battery":"0.8","body_sensor_location":"chest","sensor_contact":"detected"},"rr_ms":[%.1f]}')


def records(index, straps, first, last):
    """The records a gateway heard in seconds [first, last), as JSON texts."""
    out = []
    n = (last - first) * straps
    raw = os.urandom(16 * n).hex()
    k = 0
    for second in range(first, last):
        for s in range(straps):
            h = raw[32 * k:32 * k + 32]
            k += 1
            uid = "%s-%s-4%s-a%s-%s" % (h[0:8], h[8:12], h[13:16], h[17:20], h[20:32])
            d = device(index, s)
            # Each gateway hears the strap a few ms after the beat, at its own offset.
            t = second + 0.1 + 0.0003 * (index % 300) + 0.01 * s
            hr = 90 + (second + s * 7) % 80
            out.append(RECORD % (uid, "m-" + d[3:].replace(":", ""), iso(t), d, hr, 60000 / hr))
    return out


class Stats:
    def __init__(self):
        self.latency, self.records, self.inserted, self.duplicates, self.failures = [], 0, 0, 0, 0
        self.last_error = None


async def post(reader, writer, host, path, token, body, depth):
    head = ("POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Encoding: gzip\r\n"
            "Authorization: Bearer %s\r\nBlegate-Outbox-Depth: %d\r\nBlegate-Version: bench\r\n"
            "Content-Length: %d\r\n\r\n" % (path, host, token, depth, len(body)))
    writer.write(head.encode() + body)
    await writer.drain()
    status_line = await reader.readline()
    if not status_line:
        raise ConnectionError("connection closed")
    status = int(status_line.split()[1])
    length, chunked = 0, False
    while True:
        line = await reader.readline()
        if line in (b"\r\n", b"\n", b""):
            break
        name, _, value = line.decode("latin-1").partition(":")
        name = name.strip().lower()
        if name == "content-length":
            length = int(value.strip())
        elif name == "transfer-encoding" and "chunked" in value.lower():
            chunked = True
    if chunked:
        data = b""
        while True:
            size = int((await reader.readline()).strip(), 16)
            if size == 0:
                await reader.readline()
                break
            data += await reader.readexactly(size)
            await reader.readline()
    else:
        data = await reader.readexactly(length)
    return status, data


async def gateway(index, gateway_id, token, a, stats, stop_at, begin):
    url = urlparse(a.url)
    reader = writer = None
    # Stagger gateways over the interval, as real ones are.
    next_send = begin + a.interval * ((index * 7919) % 1000) / 1000
    last = int(begin)
    backlog = []
    while True:
        now = time.time()
        if now >= stop_at():
            break
        await asyncio.sleep(max(0, next_send - now))
        now = time.time()
        backlog += records(index, a.straps, last, int(now))
        last = int(now)
        while backlog and time.time() < stop_at() + 10:
            batch, backlog = backlog[:500], backlog[500:]
            body = gzip.compress(('{"gateway_id":"%s","records":[%s]}' % (gateway_id, ",".join(batch))).encode(), 1)
            t0 = time.perf_counter()
            try:
                if writer is None:
                    reader, writer = await asyncio.open_connection(url.hostname, url.port)
                status, data = await asyncio.wait_for(
                    post(reader, writer, url.netloc, "/api/v1/metrics", token, body, len(batch) + len(backlog)), 60)
                if status != 200:
                    raise ValueError("HTTP %d: %s" % (status, data[:200]))
                answer = json.loads(data)
                stats.latency.append((time.time(), (time.perf_counter() - t0) * 1000))
                stats.records += len(batch)
                stats.inserted += answer["inserted"]
                stats.duplicates += answer["duplicates"]
            except (OSError, ValueError, ConnectionError, asyncio.TimeoutError, asyncio.IncompleteReadError) as e:
                stats.failures += 1
                stats.last_error = repr(e)
                if writer is not None:
                    writer.close()
                reader = writer = None
                backlog = batch + backlog
                await asyncio.sleep(1)
                break
        next_send += a.interval
    if writer is not None:
        writer.close()


class FlushProbe:
    """8 KiB written and fdatasynced every 50 ms in DIR: (time, ms) of each flush."""

    def __init__(self, directory):
        self.flushes = []
        self.stopped = False
        self.directory = directory
        if directory:
            threading.Thread(target=self.run, daemon=True).start()

    def run(self):
        path = os.path.join(self.directory, "bench-flush-probe.%d" % os.getpid())
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        block, offset = os.urandom(8192), 0
        try:
            while not self.stopped:
                t0 = time.perf_counter()
                os.pwrite(fd, block, offset)
                os.fdatasync(fd)
                self.flushes.append((time.time(), (time.perf_counter() - t0) * 1000))
                offset = (offset + len(block)) % (16 << 20)
                time.sleep(0.05)
        finally:
            os.close(fd)
            os.unlink(path)

    def summary(self, since=0.0):
        """p99 and max of the flushes since a time, or None without a probe."""
        ms = [m for t, m in self.flushes if t >= since]
        if not self.directory or not ms:
            return None
        return {"p99_ms": pct(ms, 99), "max_ms": round(max(ms), 1), "over_250_ms": sum(1 for m in ms if m > 250)}


def pct(values, p):
    if not values:
        return None
    v = sorted(values)
    return round(v[min(len(v) - 1, int(len(v) * p / 100))], 1)


def ticks(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return int(fields[11]) + int(fields[12])
    except OSError:
        return 0


def pg_ticks(postmaster):
    total = ticks(postmaster)
    try:
        children = open("/proc/%d/task/%d/children" % (postmaster, postmaster)).read().split()
    except OSError:
        children = []
    return total + sum(ticks(int(c)) for c in children)


def read_tokens(path):
    return [line.split() for line in open(path) if line.strip()]


async def steady(a):
    pairs = read_tokens(a.tokens)
    a.gateways = len(pairs)
    stats = Stats()
    probe = FlushProbe(a.probe_dir)
    begin = time.time()
    end = begin + a.seconds
    await asyncio.gather(*(gateway(i, g, t, a, stats, lambda: end, begin) for i, (g, t) in enumerate(pairs)))
    lat = [ms for _, ms in stats.latency]
    print(json.dumps({"requests": len(lat), "records": stats.records, "inserted": stats.inserted,
                      "duplicates": stats.duplicates, "failures": stats.failures, "last_error": stats.last_error,
                      "latency_ms": {"p50": pct(lat, 50), "p90": pct(lat, 90), "p99": pct(lat, 99),
                                     "max": round(max(lat), 1) if lat else None},
                      "disk_flush": probe.summary()}))
    probe.stopped = True


async def ramp(a):
    pairs = read_tokens(a.tokens)
    steps = [int(s) for s in a.steps.split(",")]
    hz = os.sysconf("SC_CLK_TCK")
    stats = Stats()
    probe = FlushProbe(a.probe_dir)
    running = []
    stop = {"at": float("inf")}
    knee = None
    begin = time.time()
    for n in steps:
        if n > len(pairs):
            break
        for i in range(len(running), n):
            g, t = pairs[i]
            running.append(asyncio.create_task(gateway(i, g, t, a, stats, lambda: stop["at"], time.time())))
        # One interval for the new gateways to find their pace, then the step is measured.
        await asyncio.sleep(a.interval + 1)
        r0, i0, lat0 = stats.records, stats.inserted + stats.duplicates, len(stats.latency)
        s0, p0, c0, t0 = ticks(a.server_pid), pg_ticks(a.postmaster_pid), time.process_time(), time.time()
        await asyncio.sleep(a.step_seconds)
        s1, p1, c1, t1 = ticks(a.server_pid), pg_ticks(a.postmaster_pid), time.process_time(), time.time()
        wall = t1 - t0
        lat = [ms for _, ms in stats.latency[lat0:]]
        offered = n * a.straps
        done = (stats.inserted + stats.duplicates - i0) / wall
        per_record = 1e6 / hz / max(done * wall, 1)   # µs of CPU per record answered, per tick
        step = {"gateways": n, "offered_records_per_s": offered, "answered_records_per_s": round(done),
                "batches": len(lat), "p50_ms": pct(lat, 50), "p99_ms": pct(lat, 99), "failures": stats.failures,
                "server_cpu_pct": round(100 * (s1 - s0) / hz / wall), "postgres_cpu_pct": round(100 * (p1 - p0) / hz / wall),
                "generator_cpu_pct": round(100 * (c1 - c0) / wall),
                "server_us_per_record": round((s1 - s0) * per_record, 1),
                "postgres_us_per_record": round((p1 - p0) * per_record, 1),
                "disk_flush": probe.summary(since=t0)}
        print(json.dumps(step), flush=True)
        good = lat and step["p99_ms"] <= a.p99_ms and done >= 0.85 * offered
        if not good:
            break
        knee = {"records_per_s": round(done), "gateways": n, "p50_ms": step["p50_ms"], "p99_ms": step["p99_ms"],
                "server_cpu_pct": step["server_cpu_pct"], "postgres_cpu_pct": step["postgres_cpu_pct"],
                "generator_cpu_pct": step["generator_cpu_pct"]}
    stop["at"] = time.time()
    probe.stopped = True
    await asyncio.gather(*running, return_exceptions=True)
    print(json.dumps({"knee": knee, "seconds": round(time.time() - begin), "last_error": stats.last_error}), flush=True)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("mode", choices=["steady", "ramp"])
    p.add_argument("url")
    p.add_argument("tokens")
    p.add_argument("--straps", type=int, default=40)
    p.add_argument("--seconds", type=float, default=600)
    p.add_argument("--interval", type=float, default=5)
    p.add_argument("--steps", default="25,50,100,150,200,250,300,400,500,600,800,1000")
    p.add_argument("--step-seconds", type=float, default=30)
    p.add_argument("--p99-ms", type=float, default=250)
    p.add_argument("--server-pid", type=int, default=0)
    p.add_argument("--postmaster-pid", type=int, default=0)
    p.add_argument("--probe-dir", default="")
    a = p.parse_args()
    asyncio.run(steady(a) if a.mode == "steady" else ramp(a))


if __name__ == "__main__":
    sys.exit(main())
