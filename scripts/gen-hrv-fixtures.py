#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Generate HRV reference fixtures for Tests/HRVTests/Fixtures/.

Independent implementations from PyPI compute the expected values: neurokit2
(hrv_time; signal_fixpeaks Kubios correction) and hrv-analysis (time-domain and
Poincare features; Kamath/linear preprocessing). Run once, commit the JSON; the Swift
tests never run Python.

    scripts/gen-hrv-fixtures.py            # creates .build-hrv-venv if needed

RR series are generated in BLE ticks (1/1024 s) with a fixed seed, so every value is
exactly representable in binary floating point (ms = ticks * 1000 / 1024), like the
values the gateway decodes from 0x2A37.
"""
import json
import math
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VENV = os.path.join(ROOT, ".build-hrv-venv")
OUT = os.path.join(ROOT, "Tests", "HRVTests", "Fixtures")


def ensure_venv():
    """Re-exec inside a venv that has neurokit2 and hrv-analysis."""
    if os.environ.get("BLEGATE_FIXTURE_VENV") == "1":
        return
    py = os.path.join(VENV, "bin", "python")
    if not os.path.exists(py):
        subprocess.check_call([sys.executable, "-m", "venv", VENV])
    # hrv-analysis 1.0.5 with nolds 0.6.2 resolves on Python 3.11 (1.0.6 pins a conflicting nolds).
    subprocess.check_call([py, "-m", "pip", "install", "-q", "neurokit2==0.2.13", "hrv-analysis==1.0.5", "nolds==0.6.2"])
    env = dict(os.environ, BLEGATE_FIXTURE_VENV="1")
    os.execve(py, [py, os.path.abspath(__file__)] + sys.argv[1:], env)


ensure_venv()

import numpy as np  # noqa: E402
import neurokit2 as nk  # noqa: E402
from hrvanalysis import get_time_domain_features, get_poincare_plot_features, get_nn_intervals  # noqa: E402

TICK_MS = 1000.0 / 1024.0


def synth_ticks(seed, n, mean_ms, rsa_ms, noise_ms, drift_ms=0.0):
    """RR ticks with respiratory sinus arrhythmia (0.25 Hz), slow drift and noise."""
    rng = np.random.default_rng(seed)
    out = []
    t = 0.0
    for i in range(n):
        rr = mean_ms + rsa_ms * math.sin(2 * math.pi * 0.25 * t) \
            + drift_ms * math.sin(2 * math.pi * t / 180.0) + rng.normal(0, noise_ms)
        ticks = int(round(rr / TICK_MS))
        out.append(ticks)
        t += ticks / 1024.0
    return out


def ms(ticks):
    return [t * 1000.0 / 1024.0 for t in ticks]


def neurokit_time(rr_ms, rri_time=None):
    rri = np.array(rr_ms, dtype=float)
    if rri_time is None:
        rri_time = np.cumsum(rri) / 1000.0
    d = nk.hrv_time({"RRI": rri, "RRI_Time": np.array(rri_time)}, sampling_rate=1000)
    return {k: float(d["HRV_" + k].iloc[0]) for k in ["MeanNN", "SDNN", "RMSSD", "pNN50", "SDSD"]}


def hrvanalysis_time(rr_ms):
    td = get_time_domain_features(list(rr_ms))
    pc = get_poincare_plot_features(list(rr_ms))
    return {
        "mean_nni": float(td["mean_nni"]), "sdnn": float(td["sdnn"]), "rmssd": float(td["rmssd"]),
        "pnni_50": float(td["pnni_50"]), "nni_50": int(td["nni_50"]), "mean_hr": float(td["mean_hr"]),
        "sd1": float(pc["sd1"]), "sd2": float(pc["sd2"]),
    }


def check_close(a, b, what, tol=1e-9):
    if abs(a - b) > tol * max(1.0, abs(a)):
        raise SystemExit(f"libraries disagree on {what}: {a} vs {b}")


def clean_fixture(name, ticks, description):
    rr = ms(ticks)
    nkv = neurokit_time(rr)
    hav = hrvanalysis_time(rr)
    check_close(nkv["RMSSD"], hav["rmssd"], name + " RMSSD")
    check_close(nkv["SDNN"], hav["sdnn"], name + " SDNN")
    check_close(nkv["MeanNN"], hav["mean_nni"], name + " MeanNN")
    n = len(rr)
    # neurokit2 divides NN50 by N, hrv-analysis by N - 1: check the factor.
    check_close(nkv["pNN50"] * n / (n - 1), hav["pnni_50"], name + " pNN50 denominators")
    return {
        "name": name,
        "description": description,
        "rr_ms": rr,
        "expected": {
            "rmssd_ms": hav["rmssd"],
            "sdnn_ms": hav["sdnn"],
            "mean_nn_ms": hav["mean_nni"],
            "pnn50_pct": hav["pnni_50"],
            "nn50": hav["nni_50"],
            "mean_hr_bpm": 60000.0 / hav["mean_nni"],
            "mean_instantaneous_hr_bpm": hav["mean_hr"],
            "sd1_ms": hav["sd1"],
            "sd2_ms": hav["sd2"],
        },
        "neurokit2": nkv,
        "hrv_analysis": hav,
        "sources": "neurokit2 0.2.13 hrv_time; hrv-analysis 1.0.5 get_time_domain_features + get_poincare_plot_features",
    }


def gap_fixture(name, ticks_a, ticks_b):
    """Two recordings separated by a 30 s disconnect. Given beat times (RRI_Time),
    neurokit2 drops every successive difference whose time step does not match the
    interval (_intervals_successive), which is what blegate's gap marker does."""
    a, b = ms(ticks_a), ms(ticks_b)
    times = list(np.cumsum(a) / 1000.0)
    times += list(times[-1] + 30.0 + np.cumsum(b) / 1000.0)
    nkv = neurokit_time(a + b, times)
    diffs = list(np.diff(a)) + list(np.diff(b))
    nn50 = int(sum(1 for d in diffs if abs(d) > 50))
    return {
        "name": name,
        "description": "two segments separated by a disconnect; no successive difference across the gap",
        "segments_ms": [a, b],
        "expected": {
            "rmssd_ms": nkv["RMSSD"], "sdnn_ms": nkv["SDNN"], "mean_nn_ms": nkv["MeanNN"],
            "difference_count": len(diffs), "nn50": nn50,
            "pnn50_pct": 100.0 * nn50 / len(diffs),
        },
        "neurokit2": nkv,
        "gap_seconds": 30.0,
        "sources": "neurokit2 0.2.13 hrv_time with RRI_Time jumping 30 s at the gap (RMSSD, SDNN, MeanNN); "
                   "pNN50 = NN50 / valid differences (blegate convention; neurokit2 divides by len(diff)+1)",
    }


def median20_flags(rr, half=5, thr=0.20, lo=300.0, hi=2000.0):
    """Plain-Python statement of blegate's rule, used to state its expected output."""
    flags = []
    for i, v in enumerate(rr):
        if not (lo <= v <= hi):
            flags.append("out_of_range")
            continue
        win = [x for x in rr[max(0, i - half): i + half + 1] if lo <= x <= hi]
        med = float(np.median(win))
        flags.append("short" if v < med * (1 - thr) else "long" if v > med * (1 + thr) else "normal")
    return flags


def median20_values(rr, flags):
    nn, diffs = [], []
    prev_ok = False
    for v, f in zip(rr, flags):
        if f != "normal":
            prev_ok = False
            continue
        if prev_ok:
            diffs.append(v - nn[-1])
        nn.append(v)
        prev_ok = True
    d = np.array(diffs)
    nn50 = int(np.sum(np.abs(d) > 50))
    return {
        "nn_count": len(nn), "difference_count": len(diffs),
        "rmssd_ms": float(np.sqrt(np.mean(d ** 2))), "sdnn_ms": float(np.std(nn, ddof=1)),
        "mean_nn_ms": float(np.mean(nn)), "pnn50_pct": 100.0 * nn50 / len(diffs),
    }


def artifact_fixture(name, base_ticks, kinds, description):
    ticks = list(base_ticks)
    injected = []  # indices in the corrupted series
    shift = 0
    for kind, at in kinds:
        i = at + shift
        if kind == "ectopic":       # premature beat + compensatory pause, total time kept
            early = int(round(ticks[i] * 0.35))
            ticks[i] -= early
            ticks[i + 1] += early
            injected += [i, i + 1]
        elif kind == "missed":      # a beat not detected: two intervals merged
            ticks[i] = ticks[i] + ticks[i + 1]
            del ticks[i + 1]
            injected += [i]
            shift -= 1
        elif kind == "extra":       # a spurious beat splits one interval
            first = int(round(ticks[i] * 0.4))
            ticks[i:i + 1] = [first, ticks[i] - first]
            injected += [i, i + 1]
            shift += 1
    rr = ms(ticks)
    truth = hrvanalysis_time(ms(base_ticks))
    flags = median20_flags(rr)
    flagged = [i for i, f in enumerate(flags) if f != "normal"]
    if flagged != sorted(injected):
        raise SystemExit(f"{name}: median20 flagged {flagged}, injected {sorted(injected)}")
    mine = median20_values(rr, flags)

    # neurokit2 Kubios (Lipponen & Tarvainen 2019) correction, peaks in 1/1024 s samples.
    peaks = np.concatenate([[0], np.cumsum(ticks)])
    _, fixed = nk.signal_fixpeaks(peaks, sampling_rate=1024, iterative=True, method="Kubios")
    nk_rr = list(np.diff(fixed) * 1000.0 / 1024.0)
    nk_fixed = {"rmssd_ms": float(np.sqrt(np.mean(np.diff(nk_rr) ** 2))), "sdnn_ms": float(np.std(nk_rr, ddof=1)),
                "nn_count": len(nk_rr)}

    # hrv-analysis default preprocessing (range filter, Kamath, linear interpolation).
    nn = get_nn_intervals(rr, low_rri=300, high_rri=2000, ectopic_beats_removal_method="kamath",
                          interpolation_method="linear", verbose=False)
    nn = [v for v in nn if not (isinstance(v, float) and math.isnan(v))]
    ha = hrvanalysis_time(nn)
    raw = hrvanalysis_time(rr)
    return {
        "name": name,
        "description": description,
        "rr_ms": rr,
        "injected_indices": sorted(injected),
        "expected_classes": flags,
        "expected": mine,
        "ground_truth": {"rmssd_ms": truth["rmssd"], "sdnn_ms": truth["sdnn"], "mean_nn_ms": truth["mean_nni"],
                         "pnn50_pct": truth["pnni_50"]},
        "uncorrected": {"rmssd_ms": raw["rmssd"], "sdnn_ms": raw["sdnn"]},
        "neurokit2_kubios": nk_fixed,
        "hrv_analysis_kamath": {"rmssd_ms": ha["rmssd"], "sdnn_ms": ha["sdnn"], "nn_count": len(nn)},
        "sources": "ground truth and comparison columns: hrv-analysis 1.0.5, neurokit2 0.2.13; "
                   "'expected' = blegate median20 rule (delete, no difference across a deletion)",
    }


def main():
    os.makedirs(OUT, exist_ok=True)
    fixtures = {
        "clean-rest-60s": clean_fixture("clean-rest-60s", synth_ticks(1, 72, 830, 35, 12),
                                        "60 s at rest, RSA 35 ms, noise 12 ms"),
        "clean-rest-300s": clean_fixture("clean-rest-300s", synth_ticks(2, 330, 900, 40, 15, drift_ms=30),
                                         "5 min at rest with slow drift"),
        "clean-exercise-120s": clean_fixture("clean-exercise-120s", synth_ticks(3, 290, 410, 4, 3),
                                             "2 min during exercise (~146 bpm), low variability"),
        "clean-high-hrv-120s": clean_fixture("clean-high-hrv-120s", synth_ticks(7, 120, 1050, 90, 25),
                                             "2 min, high vagal tone (many |dRR| > 50 ms)"),
        "gap-two-segments": gap_fixture("gap-two-segments", synth_ticks(5, 80, 860, 30, 10), synth_ticks(6, 70, 870, 30, 10)),
    }
    base = synth_ticks(4, 330, 880, 35, 12)
    fixtures["artifact-ectopic"] = artifact_fixture("artifact-ectopic", base, [("ectopic", 60)],
                                                    "one premature beat (35 % early) with its compensatory pause")
    fixtures["artifact-missed"] = artifact_fixture("artifact-missed", base, [("missed", 150)],
                                                   "one missed beat: two intervals merged")
    fixtures["artifact-extra"] = artifact_fixture("artifact-extra", base, [("extra", 240)],
                                                  "one extra detection splitting an interval 40/60")
    fixtures["artifact-mixed"] = artifact_fixture("artifact-mixed", base,
                                                  [("ectopic", 60), ("missed", 150), ("extra", 240)],
                                                  "ectopic pair, missed beat and extra beat in one 5 min series")
    for name, fx in fixtures.items():
        with open(os.path.join(OUT, name + ".json"), "w") as f:
            json.dump(fx, f, indent=1, allow_nan=False)
            f.write("\n")
        summary = fx.get("expected", {})
        print(name, {k: round(v, 4) if isinstance(v, float) else v for k, v in summary.items()})
        for col in ("ground_truth", "uncorrected", "neurokit2_kubios", "hrv_analysis_kamath"):
            if col in fx:
                print("   ", col, {k: round(v, 4) if isinstance(v, float) else v for k, v in fx[col].items()})


main()
