#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The load of N gateways on blegate-server, for scripts/bench-server.sh: each gateway has
S straps at 1 Hz and sends what it measured every INTERVAL seconds as one gzip batch, the
way `blegate run` does (backend.interval), with its bearer token and the two headers.
Gateways 2k and 2k+1 share their first 3 straps (heard by both rooms), so the server's
once-per-second rule is on the path. Each gateway waits for an answer before its next
batch (one request in flight, like the sync engine) and resends a batch that failed.

Prints one JSON object: requests, records sent, inserted, duplicates, failures, and the
request latency (ms) p50/p90/p99/max.

  bench-server-load.py URL TOKENS_FILE --straps 40 --seconds 600 --interval 5
  (TOKENS_FILE: one "gateway_id token" per line)
"""
import argparse
import gzip
import json
import threading
import time
import urllib.error
import urllib.request
import uuid
from datetime import datetime, timezone


def iso(t):
    return datetime.fromtimestamp(t, tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.") + "%03dZ" % int((t % 1) * 1000)


def device(gateway_index, strap):
    # Straps 0-2 of an odd gateway are those of the even one before it.
    owner = gateway_index - 1 if gateway_index % 2 == 1 and strap < 3 else gateway_index
    return "B0:%02X:%02X:00:00:%02X" % (owner >> 8, owner & 0xFF, strap)


class Gateway(threading.Thread):
    def __init__(self, index, gateway_id, token, a, results, lock):
        super().__init__(daemon=True)
        self.index, self.gateway_id, self.token, self.a = index, gateway_id, token, a
        self.results, self.lock = results, lock

    def run(self):
        a = self.a
        start = time.time()
        # Stagger gateways over the interval, as real ones are.
        next_send = start + a.interval * (self.index + 1) / a.gateways
        last = start
        backlog = []
        while True:
            now = time.time()
            if now >= start + a.seconds:
                break
            time.sleep(max(0, next_send - now))
            now = time.time()
            for second in range(int(last), int(now)):
                for s in range(a.straps):
                    # Each gateway hears the strap a few ms after the beat, at its own offset.
                    t = second + 0.1 + 0.003 * self.index + 0.01 * s
                    hr = 90 + (second + s * 7) % 80
                    backlog.append({
                        "id": str(uuid.uuid4()), "client_id": "m-%s" % device(self.index, s)[3:].replace(":", ""),
                        "timestamp": iso(t), "device_id": device(self.index, s), "source": "ble_hrm",
                        "metrics": {"hr": hr, "hrv_rmssd": 41.5},
                        "meta": {"battery": "0.8", "body_sensor_location": "chest", "sensor_contact": "detected"},
                        "rr_ms": [round(60000 / hr, 1)],
                    })
            last = int(now)
            while backlog:
                batch, backlog = backlog[:500], backlog[500:]
                body = gzip.compress(json.dumps({"gateway_id": self.gateway_id, "records": batch}).encode(), 1)
                req = urllib.request.Request(a.url + "/api/v1/metrics", data=body, method="POST", headers={
                    "Content-Type": "application/json", "Content-Encoding": "gzip",
                    "Authorization": "Bearer " + self.token,
                    "Blegate-Outbox-Depth": str(len(batch) + len(backlog)), "Blegate-Version": "bench"})
                t0 = time.perf_counter()
                try:
                    with urllib.request.urlopen(req, timeout=60) as r:
                        answer = json.loads(r.read())
                    ms = (time.perf_counter() - t0) * 1000
                    with self.lock:
                        self.results["latency"].append(ms)
                        self.results["records"] += len(batch)
                        self.results["inserted"] += answer["inserted"]
                        self.results["duplicates"] += answer["duplicates"]
                except (urllib.error.URLError, OSError, ValueError) as e:
                    with self.lock:
                        self.results["failures"] += 1
                        self.results["last_error"] = str(e)
                    backlog = batch + backlog
                    time.sleep(1)
                    break
            next_send += a.interval


def pct(values, p):
    if not values:
        return None
    v = sorted(values)
    return round(v[min(len(v) - 1, int(len(v) * p / 100))], 1)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("url")
    p.add_argument("tokens")
    p.add_argument("--straps", type=int, default=40)
    p.add_argument("--seconds", type=float, default=600)
    p.add_argument("--interval", type=float, default=5)
    a = p.parse_args()
    pairs = [line.split() for line in open(a.tokens) if line.strip()]
    a.gateways = len(pairs)
    results = {"latency": [], "records": 0, "inserted": 0, "duplicates": 0, "failures": 0}
    lock = threading.Lock()
    threads = [Gateway(i, g, t, a, results, lock) for i, (g, t) in enumerate(pairs)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    lat = results.pop("latency")
    results.update({"requests": len(lat), "latency_ms": {"p50": pct(lat, 50), "p90": pct(lat, 90), "p99": pct(lat, 99),
                                                          "max": round(max(lat), 1) if lat else None}})
    print(json.dumps(results))


if __name__ == "__main__":
    main()
