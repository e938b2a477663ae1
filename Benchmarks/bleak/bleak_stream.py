# SPDX-License-Identifier: MIT
"""bleak's side of `blegate-bench stream`: every heart-rate strap on the bus, followed
with bleak's own `start_notify`, one callback per notification that decodes the heart
rate and counts it. The same work a minimal bleak gateway does, so that the benchmark
compares blegate with the library most Python projects would use instead.

    DBUS_SYSTEM_BUS_ADDRESS=unix:path=... python bleak_stream.py STRAPS

stderr: `connected N` once every strap notifies; on SIGINT or SIGTERM, `notifications N`
and exit 0.
"""
import asyncio
import signal
import sys

from bleak import BleakClient, BleakScanner

HEART_RATE_SERVICE = "0000180d-0000-1000-8000-00805f9b34fb"
HEART_RATE_MEASUREMENT = "00002a37-0000-1000-8000-00805f9b34fb"

count = 0
last_bpm = {}


def on_heart_rate(address):
    def handle(_characteristic, data: bytearray):
        global count
        count += 1
        if not data:
            return
        flags = data[0]
        if flags & 1 and len(data) >= 3:
            last_bpm[address] = data[1] | (data[2] << 8)
        elif len(data) >= 2:
            last_bpm[address] = data[1]
    return handle


async def follow(device, clients):
    client = BleakClient(device, timeout=30)
    await client.connect()
    await client.start_notify(HEART_RATE_MEASUREMENT, on_heart_rate(device.address))
    clients.append(client)


async def main(straps: int):
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for s in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(s, stop.set)
    found = {}
    async with BleakScanner(service_uuids=[HEART_RATE_SERVICE]) as scanner:
        async for device, _advert in scanner.advertisement_data():
            found[device.address] = device
            if len(found) >= straps or stop.is_set():
                break
    clients = []
    await asyncio.gather(*(follow(d, clients) for d in found.values()))
    print(f"connected {len(clients)}", file=sys.stderr, flush=True)
    await stop.wait()
    print(f"notifications {count}", file=sys.stderr, flush=True)
    for c in clients:
        try:
            await asyncio.wait_for(c.disconnect(), 2)
        except Exception:
            pass


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 10))
