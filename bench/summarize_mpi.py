#!/usr/bin/env python3
"""Comparison table from bench/compare_mpi.sh results.

usage: bench/summarize_mpi.py DIR
Prints, for np and collective at selected sizes, the median over repetitions of the OSU average
latency (us) of each MPI natively and with the shmcoll plugin, and the ratio plugin / native;
then, where the runs recorded them, the memcpy and copy-floor references (median over every
run of that np) and each plugin result against the best native one and against the floor.
Also writes DIR/plot-np<N>-<collective>.dat (bytes, the four medians and the references) for
bench/plot_mpi.gp.
"""
import csv
import glob
import os
import statistics
import sys

SIZES = [(8, "8 B"), (65536, "64 KiB"), (1 << 20, "1 MiB"), (4 << 20, "4 MiB"), (16 << 20, "16 MiB")]
LARGE = [(1 << 20, "1 MiB"), (4 << 20, "4 MiB"), (16 << 20, "16 MiB")]


def main(folder):
    data = {}
    refs = {}  # (np, collective, bytes) -> {"memcpy_us": [...], "floor_us": [...]}
    for path in glob.glob(os.path.join(folder, "*-np*-*.csv")):
        mpi, mode, np_part, _rep = os.path.basename(path)[:-4].split("-")
        for row in csv.DictReader(open(path)):
            key = (int(np_part[2:]), row["collective"], int(row["bytes"]), mpi, mode)
            data.setdefault(key, []).append(float(row["avg_us"]))
            for ref in ("memcpy_us", "floor_us"):
                if row.get(ref):
                    refs.setdefault(key[:3], {}).setdefault(ref, []).append(float(row[ref]))
    med = {k: statistics.median(v) for k, v in data.items()}
    series = [("openmpi", "native"), ("openmpi", "shmcoll"), ("mpich", "native"), ("mpich", "shmcoll")]
    for n in sorted({k[0] for k in med}):
        for coll in sorted({k[1] for k in med}):
            sizes = sorted({k[2] for k in med if k[0] == n and k[1] == coll})
            with open(os.path.join(folder, f"plot-np{n}-{coll}.dat"), "w") as out:
                out.write("# bytes openmpi openmpi+shmcoll mpich mpich+shmcoll memcpy floor (us)\n")
                for b in sizes:
                    vals = [med.get((n, coll, b, m, mode)) for m, mode in series]
                    r = refs.get((n, coll, b), {})
                    vals += [statistics.median(r[ref]) if ref in r else None
                             for ref in ("memcpy_us", "floor_us")]
                    out.write(f"{b} " + " ".join("NaN" if v is None else f"{v:.3f}" for v in vals) + "\n")
    reps = max(len(v) for v in data.values())
    print(f"OSU-style average latency, us, median of {reps} runs; ratio = with plugin / native.\n")
    for n in sorted({k[0] for k in med}):
        print(f"np={n}\n")
        print("| collective | size | Open MPI | +shmcoll | ratio | MPICH | +shmcoll | ratio |")
        print("|---|---|---|---|---|---|---|---|")
        for coll in ["bcast", "scatter", "scatterv", "gather", "gatherv"]:
            for size, label in SIZES:
                cells = []
                for mpi in ["openmpi", "mpich"]:
                    native = med.get((n, coll, size, mpi, "native"))
                    plugin = med.get((n, coll, size, mpi, "shmcoll"))
                    if native is None or plugin is None:
                        cells += ["-", "-", "-"]
                    else:
                        cells += [f"{native:.2f}", f"{plugin:.2f}", f"{plugin / native:.2f}"]
                print(f"| {coll} | {label} | " + " | ".join(cells) + " |")
        print()
        if not any(k[0] == n for k in refs):
            continue
        print(f"np={n}, large messages against the references (floor: all ranks copy the bytes that")
        print("must land, (np-1) x size, at once with memcpy)\n")
        print("| collective | size | best native | Open MPI+shmcoll | MPICH+shmcoll | / best native | memcpy | floor | / floor |")
        print("|---|---|---|---|---|---|---|---|---|")
        for coll in ["bcast", "scatter", "scatterv", "gather", "gatherv"]:
            for size, label in LARGE:
                r = refs.get((n, coll, size))
                natives = [med.get((n, coll, size, m, "native")) for m in ["openmpi", "mpich"]]
                plugins = [med.get((n, coll, size, m, "shmcoll")) for m in ["openmpi", "mpich"]]
                if r is None or None in natives or None in plugins:
                    continue
                best = min(natives)
                mc = statistics.median(r["memcpy_us"])
                fl = statistics.median(r["floor_us"])
                print(f"| {coll} | {label} | {best:.1f} | {plugins[0]:.1f} | {plugins[1]:.1f} | "
                      f"{plugins[0] / best:.2f}, {plugins[1] / best:.2f} | {mc:.1f} | {fl:.1f} | "
                      f"{plugins[0] / fl:.2f}, {plugins[1] / fl:.2f} |")
        print()


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else ".")
