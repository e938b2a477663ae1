#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Checks a FIT activity file with Garmin's FIT SDK for Python (PyPI garmin-fit-sdk).

    check_fit.py FILE [--avg-hr N] [--max-hr N] [--elapsed S] [--records N]
                      [--calories N] [--distance M] [--zones S0,S1,...]

Exits 0 when the file passes the SDK's integrity check (header and file CRC), decodes
without errors, holds exactly one session, and every figure given matches that session
(or the number of record messages). Prints what it decoded as JSON either way.
"""
import argparse
import json
import sys

from garmin_fit_sdk import Decoder, Stream


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("file")
    p.add_argument("--avg-hr", type=int)
    p.add_argument("--max-hr", type=int)
    p.add_argument("--elapsed", type=float)
    p.add_argument("--records", type=int)
    p.add_argument("--calories", type=int)
    p.add_argument("--distance", type=float)
    p.add_argument("--zones", help="seconds per zone, comma-separated")
    p.add_argument("--zone-bounds", help="time_in_zone's hr_zone_high_boundary, comma-separated bpm")
    a = p.parse_args()

    # One decoder per pass: the checks leave the stream where they stopped.
    problems = []
    if not Decoder(Stream.from_file(a.file)).is_fit():
        problems.append("not a FIT file")
    if not Decoder(Stream.from_file(a.file)).check_integrity():
        problems.append("integrity check failed (header, size or CRC)")
    messages, errors = Decoder(Stream.from_file(a.file)).read()
    problems += [f"decoder: {e}" for e in errors]

    sessions = messages.get("session_mesgs", [])
    records = messages.get("record_mesgs", [])
    summary = {"sessions": len(sessions), "records": len(records)}
    if len(sessions) != 1:
        problems.append(f"{len(sessions)} sessions, expected 1")
    else:
        s = sessions[0]
        summary.update({
            "sport": s.get("sport"),
            "avg_hr": s.get("avg_heart_rate"),
            "max_hr": s.get("max_heart_rate"),
            "elapsed": s.get("total_elapsed_time"),
            "timer": s.get("total_timer_time"),
            "calories": s.get("total_calories"),
            "distance": s.get("total_distance"),
            "zones": s.get("time_in_hr_zone"),
        })
        checks = [
            ("avg_hr", a.avg_hr), ("max_hr", a.max_hr), ("elapsed", a.elapsed), ("timer", a.elapsed),
            ("calories", a.calories), ("distance", a.distance),
        ]
        for key, want in checks:
            if want is not None and summary[key] != want:
                problems.append(f"session {key} {summary[key]!r}, expected {want!r}")
        if a.zones is not None:
            want = [float(x) for x in a.zones.split(",")]
            if [float(x) for x in (summary["zones"] or [])] != want:
                problems.append(f"session time_in_hr_zone {summary['zones']!r}, expected {want!r}")
    if a.zone_bounds is not None:
        zones = messages.get("time_in_zone_mesgs", [])
        got = zones[0].get("hr_zone_high_boundary") if zones else None
        if got != [int(x) for x in a.zone_bounds.split(",")]:
            problems.append(f"time_in_zone hr_zone_high_boundary {got!r}, expected {a.zone_bounds}")
    if a.records is not None and len(records) != a.records:
        problems.append(f"{len(records)} record messages, expected {a.records}")
    for key in ("file_id_mesgs", "activity_mesgs", "lap_mesgs", "event_mesgs"):
        if not messages.get(key):
            problems.append(f"no {key}")
    summary["problems"] = problems
    print(json.dumps(summary, default=str))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
