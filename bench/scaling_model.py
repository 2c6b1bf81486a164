#!/usr/bin/env python3
"""The cost model of docs/scaling.md: shmcoll's two-level broadcast, scatter and gather against
the MPIs' binomial algorithms over all ranks, from 2 to 1024 nodes and 1 to 128 ranks per node.

Intra-node costs are the ones measured on the 16-core machine of docs/performance.md
(docs/results/16core-intel/summary.md: OSU average, us, Open MPI alone and with the plugin);
inter-node costs are a model of a named network. Prints the markdown tables the document
shows: python3 bench/scaling_model.py
"""
import math

# The network: 200 Gb/s InfiniBand (HDR), one port per node. Assumed figures of the class
# vendors and OSU benchmarks publish for it, not measured here.
ALPHA_NET = 1.0  # us: one small message between two nodes (MPI latency)
GAP_NET = 0.25  # us: a process's injection cost per message (LogGP's g)
BW_NET = 24e3  # bytes/us (24 GB/s: 25 GB/s line rate less headers)

# Measured intra-node times, us: {collective: {ranks: {bytes: (Open MPI alone, shmcoll)}}}.
# Scatter and gather sizes are one rank's block, as in OSU.
KIB, MIB = 1024, 1024 * 1024
MEASURED = {
    "bcast": {2: {8: (0.53, 0.42), 64 * KIB: (13.21, 3.88), MIB: (110.51, 21.54)},
              8: {8: (1.27, 0.87), 64 * KIB: (33.25, 12.55), MIB: (648.24, 167.36)},
              16: {8: (1.46, 1.31), 64 * KIB: (41.41, 13.31), MIB: (398.90, 171.44)}},
    "scatter": {2: {8: (0.55, 0.51), 64 * KIB: (14.30, 4.74), MIB: (212.97, 59.43)},
                8: {8: (1.55, 0.98), 64 * KIB: (34.55, 25.06), MIB: (616.06, 180.18)},
                16: {8: (1.93, 1.42), 64 * KIB: (61.56, 53.44), MIB: (1877.35, 159.65)}},
    "gather": {2: {8: (0.55, 0.47), 64 * KIB: (13.65, 4.54), MIB: (178.60, 62.29)},
               8: {8: (0.87, 0.89), 64 * KIB: (32.80, 8.91), MIB: (455.95, 182.41)},
               16: {8: (1.04, 1.28), 64 * KIB: (40.29, 29.48), MIB: (636.32, 209.04)}},
}
SIZES = (8, 64 * KIB, MIB)
NODES = (2, 16, 128, 1024)
RANKS_PER_NODE = (1, 2, 8, 16, 128)


def intra(coll, p, m):
    """(MPI alone, shmcoll) inside one node of p ranks; measured at 2, 8 and 16 ranks.
    Beyond 16 (marked extrapolated): the latency grows with log2(p) and the bytes that land
    on the node with p - 1, from the 8- and 16-rank points."""
    if p == 1:
        return 0.0, 0.0
    if p in MEASURED[coll]:
        return MEASURED[coll][p][m]
    lo, hi = MEASURED[coll][8][m], MEASURED[coll][16][m]
    if m == 8:
        return tuple(h + (h - l) * (math.log2(p) - 4) for l, h in zip(lo, hi))
    return tuple(h * (p - 1) / 15 for h in hi)


def net_bcast(n, m):
    """The MPI's broadcast over n ranks, one per node: binomial, or scatter and allgather for
    large messages, whichever is shorter."""
    if n == 1:
        return 0.0
    rounds = math.ceil(math.log2(n))
    binomial = rounds * (ALPHA_NET + m / BW_NET)
    scatter_allgather = (rounds + n - 1) * ALPHA_NET + 2 * (n - 1) / n * m / BW_NET
    return min(binomial, scatter_allgather)


def bcast(n, p, m):
    """(MPI, shmcoll), root leading its node. Both move the same bytes between nodes: the MPI's
    binomial tree over n x p ranks placed by node crosses the network in its first log2(n)
    rounds, one rank per node at a time; shmcoll runs the MPI's broadcast between the leaders.
    They differ inside the node."""
    mpi_in, shm_in = intra("bcast", p, m)
    return net_bcast(n, m) + mpi_in, net_bcast(n, m) + shm_in


def rooted(coll, n, p, m):
    """(MPI, shmcoll) scatter or gather of m bytes per rank. The root's port carries every other
    node's p x m bytes in both. The MPI's binomial tree takes log2(n) rounds between nodes;
    shmcoll's root sends (receives) one message per other node itself, n - 1 injections."""
    mpi_in, shm_in = intra(coll, p, m)
    if n == 1:
        return mpi_in, shm_in
    bytes_out = (n - 1) * p * m / BW_NET
    rounds = math.ceil(math.log2(n))
    mpi = rounds * (ALPHA_NET + GAP_NET) + bytes_out + mpi_in
    shm = ALPHA_NET + (n - 1) * GAP_NET + bytes_out + shm_in
    return mpi, shm


def size_name(m):
    return f"{m} B" if m < KIB else f"{m // KIB} KiB" if m < MIB else f"{m // MIB} MiB"


def table(coll, model):
    print(f"\n{coll}: predicted time with shmcoll / the MPI alone (below 1: shmcoll faster)\n")
    heads = [f"{size_name(m)}, {n} nodes" for m in SIZES for n in NODES]
    print("| ranks per node | " + " | ".join(heads) + " |")
    print("|---" * (len(heads) + 1) + "|")
    for p in RANKS_PER_NODE:
        cells = []
        for m in SIZES:
            for n in NODES:
                mpi, shm = model(n, p, m)
                cells.append(f"{shm / mpi:.2f}")
        mark = " (extrapolated)" if p not in (1, 2, 8, 16) else ""
        print(f"| {p}{mark} | " + " | ".join(cells) + " |")


def main():
    table("bcast", bcast)
    table("scatter", lambda n, p, m: rooted("scatter", n, p, m))
    table("gather", lambda n, p, m: rooted("gather", n, p, m))


if __name__ == "__main__":
    main()
