#!/usr/bin/env python3
"""Medians over the rounds of each run's p50: 16 slots / 4 slots, per setup, collective, size."""
import collections
import csv
import pathlib
import re
import statistics

here = pathlib.Path(__file__).parent
runs = collections.defaultdict(list)
for f in here.glob("*.csv"):
    m = re.match(r"(np\d+)-slots(\d+)-(\w+)-r\d+\.csv", f.name)
    if not m:
        continue
    setup, slots, mode = m.group(1), int(m.group(2)), m.group(3)
    for r in csv.DictReader(open(f)):
        runs[(setup, mode, r["collective"], int(r["bytes"]), slots)].append(float(r["p50_us"]))
print("| setup | single copy | collective | bytes | 4 slots p50 (us) | 16 slots p50 (us) | 16 / 4 |")
print("|---|---|---|---:|---:|---:|---:|")
for key in sorted({k[:4] for k in runs}):
    a, b = runs.get(key + (4,)), runs.get(key + (16,))
    if not a or not b:
        continue
    ma, mb = statistics.median(a), statistics.median(b)
    print(f"| {key[0]} | {key[1]} | {key[2]} | {key[3]} | {ma:.1f} | {mb:.1f} | {mb / ma:.2f} |")
