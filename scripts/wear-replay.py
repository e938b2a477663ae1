#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Replays the cache's write pattern without the gateway, to compare layouts: the record
table, its indexes and outbox as Sources/Cache creates them, 36 heart-rate records (30
straps) per commit, a delivery every 5 commits, the saved state every 10, WAL with
synchronous = FULL; prints write_bytes (/proc/self/io) per record after a 60-commit
warm-up. Commits follow each other without waiting: the bytes, not the time, count.
Needs a directory on a real block device (not tmpfs).

  scripts/wear-replay.py DIR [--page-size 1024] [--layout typed|compact|plain] [--checkpoint-pages N] [--commits 600]

--layout typed (the default) is the cache's: typed columns, the device's facts in
device_info. compact and plain store each record's JSON text in a payload column instead,
as the compact text that caches read by the v4 migration hold (LegacyPayload, whose pieces
are copied below) or as it is, for comparison."""
import argparse, os, random, sqlite3

PIECES = [b'{"timestamp":"20', b'Z","device_id":"', b'","source":"ble_', b'","metrics":{', b'},"meta":{',
          b'"hr":', b'"sensor_contact":"', b'","rr_count":"', b'","manufacturer_name":"', b'","model_number":"',
          b'","serial_number":"', b'","firmware_version":"', b'","hardware_version":"', b'","software_version":"',
          b'","body_sensor_location":"', b'"battery":', b'"},"rr_ms":[', b'","hrv_', b'detected', b'unsupported',
          b'","', b'"}}', b'chest', b'window_s":"', b'_count":"', b'"device_timestamp":"', b'"hr_source":"',
          b'_pct":"', b'device', b'"energy_expended_kj":']


def compact(text):
    """The fewest bytes in the legacy compact text (LegacyPayload expands it)."""
    n = len(text)
    cost, choice = [0] * (n + 1), [None] * n
    for i in range(n - 1, -1, -1):
        cost[i] = cost[i + 1] + 1
        for k, p in enumerate(PIECES):
            if text.startswith(p, i) and cost[i + len(p)] + 1 < cost[i]:
                cost[i], choice[i] = cost[i + len(p)] + 1, k
    out, i = bytearray(b'\x01'), 0
    while i < n:
        if choice[i] is None:
            out.append(text[i]); i += 1
        else:
            out.append(2 + choice[i]); i += len(PIECES[choice[i]])
    return bytes(out)


RECORD = ('{"timestamp":"2026-11-25T12:52:%02d.%03dZ","device_id":"%s","source":"ble_hrm","metrics":{"hr":%d},'
          '"meta":{"sensor_contact":"detected","rr_count":"2","manufacturer_name":"COOSPO","model_number":"H6",'
          '"serial_number":"H6%08d","firmware_version":"V1.2.6","hardware_version":"H6_V2.0","software_version":"V1.2.6",'
          '"body_sensor_location":"chest","battery":"0.%02d"},"rr_ms":[495.1171875,501.953125]}')


def write_bytes():
    with open('/proc/self/io') as f:
        for line in f:
            if line.startswith('write_bytes'):
                return int(line.split()[1])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('dir')
    ap.add_argument('--page-size', type=int, default=1024)
    ap.add_argument('--layout', choices=('typed', 'compact', 'plain'), default='typed')
    ap.add_argument('--checkpoint-pages', type=int, default=None, help='default: 4 MiB of WAL')
    ap.add_argument('--commits', type=int, default=600)
    a = ap.parse_args()
    path = os.path.join(a.dir, 'wear-replay.sqlite')
    for suffix in ('', '-wal', '-shm'):
        if os.path.exists(path + suffix):
            os.unlink(path + suffix)
    db = sqlite3.connect(path, isolation_level=None)
    db.execute(f'PRAGMA page_size = {a.page_size}')
    db.execute('PRAGMA auto_vacuum = INCREMENTAL')
    db.execute('PRAGMA journal_mode = WAL')
    db.execute('PRAGMA synchronous = FULL')
    db.execute(f'PRAGMA wal_autocheckpoint = {a.checkpoint_pages or (4 << 20) // a.page_size}')
    if a.layout == 'typed':
        db.executescript('''
            CREATE TABLE record (sequence INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, timestamp_ms INTEGER NOT NULL,
                device INTEGER NOT NULL, source INTEGER NOT NULL, client_id TEXT, state INTEGER NOT NULL DEFAULT 0,
                stored_ms INTEGER NOT NULL, delivered_ms INTEGER, reason TEXT, device_info INTEGER, hr REAL, rr BLOB,
                contact INTEGER, hr_status INTEGER, rr_count INTEGER, energy_kj REAL, hrv_rmssd REAL, hrv_mean_rr REAL,
                hrv_mean_hr REAL, hrv_sdnn REAL, hrv_pnn50 REAL, hrv_sd1 REAL, hrv_sd2 REAL, hrv_window_s REAL,
                hrv_nn_count REAL, hrv_artifact_pct REAL, hrv_sdnn_window_s REAL, hrv_sdnn_nn_count REAL,
                hrv_sdnn_artifact_pct REAL, extra BLOB, sealed BLOB);
            CREATE TABLE device_info (key INTEGER PRIMARY KEY, device INTEGER NOT NULL, entries BLOB NOT NULL);''')
    else:
        db.executescript('''
            CREATE TABLE record (sequence INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, device_id TEXT NOT NULL,
                timestamp_ms INTEGER NOT NULL, client_id TEXT, state INTEGER NOT NULL DEFAULT 0, stored_ms INTEGER NOT NULL,
                delivered_ms INTEGER, reason TEXT, encrypted INTEGER NOT NULL, payload BLOB NOT NULL);''')
    db.executescript('''
        CREATE INDEX record_timestamp ON record(timestamp_ms);
        CREATE TABLE outbox_unpaired (sequence INTEGER PRIMARY KEY, device_id TEXT NOT NULL);
        CREATE TABLE cache_meta (key TEXT PRIMARY KEY NOT NULL, value BLOB NOT NULL);''')
    rng = random.Random(5)
    straps = ['%02X:27:F4:49:26:%02X' % (i, i) for i in range(30)]
    seq, pending, start_ms = 0, [], 1_764_000_000_000
    for c in range(a.commits):
        if c == 60:
            w0, s0 = write_bytes(), seq
        now = start_ms + c * 1000
        db.execute('BEGIN IMMEDIATE')
        for i in range(36):
            seq += 1
            strap = straps[i % 30]
            hr, ms = 60 + rng.randrange(100), rng.randrange(1000)
            uid = '%08x-%04x-7%03x-%04x-%012x' % (now >> 16, now & 0xffff, seq % 4096, 0x8000 | rng.getrandbits(14), rng.getrandbits(48))
            if a.layout == 'typed':
                # hr, RR as two 1/1024 s counts (495.1171875 and 501.953125 ms), contact detected, rr_count 2; the strap's
                # facts one device_info row (a new one when its battery changes: rare).
                db.execute('INSERT INTO record (sequence, id, timestamp_ms, device, source, client_id, stored_ms, device_info, '
                           'hr, rr, contact, rr_count) VALUES (?, ?, ?, ?, 1, NULL, ?, ?, ?, x\'fb010202\', 3, 2)',
                           (seq, uid, now - rng.randrange(900), i % 30 + 1, now, i % 30 + 1, hr))
            else:
                text = (RECORD % (c % 60, ms, strap, hr, i, 50 + i)).encode()
                payload = text if a.layout == 'plain' else compact(text)
                db.execute('INSERT INTO record (sequence, id, device_id, timestamp_ms, client_id, stored_ms, encrypted, payload) '
                           'VALUES (?, ?, ?, ?, NULL, ?, 0, ?)', (seq, uid, strap, now - rng.randrange(900), now, payload))
            db.execute('INSERT INTO outbox_unpaired VALUES (?, ?)', (seq, strap))
            pending.append(seq)
        db.execute('COMMIT')
        if c % 5 == 0:
            db.execute('BEGIN IMMEDIATE')
            db.executemany('DELETE FROM outbox_unpaired WHERE sequence = ?', [(s,) for s in pending])
            db.execute('COMMIT')
            pending = []
        if c % 10 == 0:
            db.execute("INSERT INTO cache_meta VALUES ('service_state', ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                       (rng.randbytes(536),))
    per = (write_bytes() - w0) / (seq - s0)
    print(f'wear-replay: page size {a.page_size}, {a.layout} layout: {per:.0f} bytes per record')
    db.close()
    for suffix in ('', '-wal', '-shm'):
        if os.path.exists(path + suffix):
            os.unlink(path + suffix)


if __name__ == '__main__':
    main()
