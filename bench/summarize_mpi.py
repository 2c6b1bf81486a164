#!/usr/bin/env python3
"""Comparison table from bench/compare_mpi.sh results.

usage: bench/summarize_mpi.py DIR
Prints, for np and collective at selected sizes, the median over repetitions of the OSU average
latency (us) of each MPI natively and with the shmcoll plugin, and the ratio plugin / native:
the median of the repetitions' own ratios (each compares two launches next to each other);
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
    data = {}  # (np, collective, bytes, mpi, mode) -> {repetition: avg_us}
    refs = {}  # (np, collective, bytes) -> {"memcpy_us": [...], "floor_us": [...]}
    for path in glob.glob(os.path.join(folder, "*-np*-*.csv")):
        mpi, mode, np_part, rep = os.path.basename(path)[:-4].split("-")
        for row in csv.DictReader(open(path)):
            key = (int(np_part[2:]), row["collective"], int(row["bytes"]), mpi, mode)
            data.setdefault(key, {})[rep] = float(row["avg_us"])
            for ref in ("memcpy_us", "floor_us"):
                if row.get(ref):
                    refs.setdefault(key[:3], {}).setdefault(ref, []).append(float(row[ref]))
    med = {k: statistics.median(v.values()) for k, v in data.items()}

    def ratio(key, num_mode, den_mode):
        """Median over the repetitions with both runs of num / den, or None."""
        num, den = data.get(key + (num_mode,)), data.get(key + (den_mode,))
        if not num or not den:
            return None
        per_rep = [num[r] / den[r] for r in num if r in den and den[r] > 0]
        return statistics.median(per_rep) if per_rep else None

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
    print(f"OSU-style average latency, us, median of {reps} runs; ratio = with plugin / native,")
    print("the median of the runs' own ratios.\n")
    for n in sorted({k[0] for k in med}):
        print(f"np={n}\n")
        print("| collective | size | Open MPI | +shmcoll | ratio | MPICH | +shmcoll | ratio |")
        print("|---|---|---|---|---|---|---|---|")
        present = {k[1] for k in med if k[0] == n}
        order = ["bcast", "scatter", "scatterv", "gather", "gatherv"]
        for coll in [c for c in order if c in present] + sorted(present - set(order)):
            measured = sorted({k[2] for k in med if k[0] == n and k[1] == coll})
            rows = [(b, lab) for b, lab in SIZES if b in measured] or [(b, f"{b} B") for b in measured]
            for size, label in rows:
                cells = []
                for mpi in ["openmpi", "mpich"]:
                    native = med.get((n, coll, size, mpi, "native"))
                    plugin = med.get((n, coll, size, mpi, "shmcoll"))
                    r = ratio((n, coll, size, mpi), "shmcoll", "native")
                    if native is None or plugin is None or r is None:
                        cells += ["-", "-", "-"]
                    else:
                        cells += [f"{native:.2f}", f"{plugin:.2f}", f"{r:.2f}"]
                print(f"| {coll} | {label} | " + " | ".join(cells) + " |")
        print()
        if not any(k[0] == n and k[2] in dict(LARGE) for k in refs):
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
                natives = [v for v in natives if v is not None]
                if r is None or "floor_us" not in r or not natives:
                    continue
                best = min(natives)
                mc = statistics.median(r["memcpy_us"])
                fl = statistics.median(r["floor_us"])

                def cells(scale):
                    return ", ".join("-" if p is None else f"{p / scale:.2f}" for p in plugins)

                print(f"| {coll} | {label} | {best:.1f} | "
                      + " | ".join("-" if p is None else f"{p:.1f}" for p in plugins)
                      + f" | {cells(best)} | {mc:.1f} | {fl:.1f} | {cells(fl)} |")
        print()


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else ".")
