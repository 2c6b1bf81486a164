#!/usr/bin/env python3
"""Plugin / native ratios at every size, one line per collective, from bench/compare_mpi.sh runs.

usage: bench/ratios_mpi.py DIR [MPI] [--per-run]
For each np found in DIR and each collective: "bytes:ratio" for every size, where ratio is the
median over repetitions of each one's MPI+shmcoll / MPI natively (MPI: openmpi by default).
A compact view for finding the sizes at which the plugin is slower.
With --per-run, instead, each repetition's own ratios at the sizes where they exceed 1.0: on a
machine whose state changes between repetitions (a VM whose CPUs the host moves), medians
over them mix the states, and a repetition compares a plugin run with the native run next to it.
"""
import csv
import glob
import os
import statistics
import sys


COLLECTIVES = ["bcast", "scatter", "scatterv", "gather", "gatherv"]


def load(folder, mpi):
    """Every row of the folder's CSVs: {(np, rep, collective, bytes, mode): avg_us}."""
    data = {}
    for path in glob.glob(os.path.join(folder, f"{mpi}-*-np*-*.csv")):
        _mpi, mode, np_part, rep = os.path.basename(path)[:-4].split("-")
        for row in csv.DictReader(open(path)):
            key = (int(np_part[2:]), int(rep), row["collective"], int(row["bytes"]), mode)
            data[key] = float(row["avg_us"])
    return data


def sizes(data, n, coll):
    return sorted({k[3] for k in data if k[0] == n and k[2] == coll})


def per_run(folder, mpi):
    data = load(folder, mpi)
    for n, rep in sorted({(k[0], k[1]) for k in data}):
        print(f"np={n} run {rep}")
        for coll in COLLECTIVES:
            cells = []
            for b in sizes(data, n, coll):
                native = data.get((n, rep, coll, b, "native"))
                plugin = data.get((n, rep, coll, b, "shmcoll"))
                if native and plugin and plugin > native:
                    cells.append(f"{b}:{plugin / native:.2f}")
            if cells:
                print(coll, " ".join(cells))


def main(folder, mpi):
    data = load(folder, mpi)
    for n in sorted({k[0] for k in data}):
        print(f"np={n}")
        for coll in COLLECTIVES:
            cells = []
            for b in sizes(data, n, coll):
                ratios = [v / data[(n, k[1], coll, b, "native")] for k, v in data.items()
                          if k[0] == n and k[2:] == (coll, b, "shmcoll")
                          and data.get((n, k[1], coll, b, "native"))]
                if ratios:
                    cells.append(f"{b}:{statistics.median(ratios):.1f}")
            print(coll, " ".join(cells))


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if a != "--per-run"]
    folder = args[0] if args else "."
    mpi = args[1] if len(args) > 1 else "openmpi"
    (per_run if "--per-run" in sys.argv[1:] else main)(folder, mpi)
