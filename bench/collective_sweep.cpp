#include "collective_sweep.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <numeric>

#include "warmup.hpp"

namespace shmcoll::bench {

namespace {

using Clock = std::chrono::steady_clock;

std::byte pattern(std::uint64_t seq, int rank, std::uint64_t i) {
  return std::byte(static_cast<unsigned char>(
      (seq * 131 + static_cast<std::uint64_t>(rank) * 31 + i * 7) % 251));
}

void call(Team& team, Coll coll, SweepBuffers& b, std::uint64_t bytes, int root) {
  const auto n = static_cast<Count>(bytes);
  switch (coll) {
    case Coll::kBcast:
      team.bcast(b.send.data(), n, kByte, root);
      break;
    case Coll::kScatter:
      team.scatter(b.send.data(), n, kByte, b.recv.data(), n, kByte, root);
      break;
    case Coll::kScatterv:
      team.scatterv(b.send.data(), b.counts, b.displs, kByte, b.recv.data(), n, kByte, root);
      break;
    case Coll::kGather:
      team.gather(b.send.data(), n, kByte, b.recv.data(), n, kByte, root);
      break;
    case Coll::kGatherv:
      team.gatherv(b.send.data(), n, kByte, b.recv.data(), b.counts, b.displs, kByte, root);
      break;
  }
}

// Fills the inputs of one call from the pattern for `seq`; checks the outputs afterwards.
int validate_once(Team& team, Coll coll, SweepBuffers& b, std::uint64_t bytes, std::uint64_t seq,
                  int root) {
  const int me = team.rank(), size = team.size();
  std::fill(b.recv.begin(), b.recv.end(), std::byte{0});
  const bool root_sends_all = coll == Coll::kScatter || coll == Coll::kScatterv;
  for (int r = 0; r < size; ++r) {
    if (root_sends_all && me == root) {
      for (std::uint64_t i = 0; i < bytes; ++i) b.send[r * bytes + i] = pattern(seq, r, i);
    }
  }
  if (coll == Coll::kBcast && me == root) {
    for (std::uint64_t i = 0; i < bytes; ++i) b.send[i] = pattern(seq, root, i);
  }
  if (coll == Coll::kGather || coll == Coll::kGatherv) {
    for (std::uint64_t i = 0; i < bytes; ++i) b.send[i] = pattern(seq, me, i);
  }
  call(team, coll, b, bytes, root);
  int bad = 0;
  auto expect = [&](const std::byte* p, int owner) {
    for (std::uint64_t i = 0; i < bytes; ++i) bad += p[i] != pattern(seq, owner, i);
  };
  if (coll == Coll::kBcast) expect(b.send.data(), root);
  if (root_sends_all) expect(b.recv.data(), me);
  if ((coll == Coll::kGather || coll == Coll::kGatherv) && me == root) {
    for (int r = 0; r < size; ++r) expect(b.recv.data() + r * bytes, r);
  }
  return bad;
}

double micros(Clock::time_point from, Clock::time_point to) {
  return std::chrono::duration<double, std::micro>(to - from).count();
}

}  // namespace

const char* name_of(Coll c) {
  switch (c) {
    case Coll::kBcast:
      return "bcast";
    case Coll::kScatter:
      return "scatter";
    case Coll::kScatterv:
      return "scatterv";
    case Coll::kGather:
      return "gather";
    case Coll::kGatherv:
      return "gatherv";
  }
  return "?";
}

const std::vector<Coll>& all_collectives() {
  static const std::vector<Coll> list = {Coll::kBcast, Coll::kScatter, Coll::kScatterv,
                                         Coll::kGather, Coll::kGatherv};
  return list;
}

int iterations_for(const SweepSettings& s, std::uint64_t bytes) {
  if (s.iterations > 0) return s.iterations;
  int n = 10;
  if (bytes <= 4096)
    n = 2000;
  else if (bytes <= 65536)
    n = 500;
  else if (bytes <= (1u << 20))
    n = 100;
  else if (bytes <= (8u << 20))
    n = 30;
  return s.quick ? std::max(3, n / 10) : n;
}

std::vector<std::uint64_t> sizes_of(const SweepSettings& s) {
  std::vector<std::uint64_t> sizes;
  for (std::uint64_t bytes = s.min_bytes; bytes <= s.max_bytes; bytes *= s.quick ? 4 : 2)
    sizes.push_back(bytes);
  return sizes;
}

double expected_seconds(const SweepSettings& s, std::uint64_t bytes, int ranks, double rate) {
  const int iters = iterations_for(s, bytes);
  const int calls = iters + warmup_iterations(iters, bytes);
  const double moved = static_cast<double>(bytes) * std::max(1, ranks - 1);
  return calls * (5e-6 + moved / rate) + std::min(iters, 50) * (5e-6 + moved / ranks / rate);
}

SweepPoint measure_point(Team& team, Coll coll, SweepBuffers& b, const SweepSettings& s,
                         std::uint64_t bytes, int root, std::uint64_t& seq) {
  const int me = team.rank(), size = team.size();
  const auto usize = static_cast<std::uint64_t>(size);
  b.counts.assign(usize, static_cast<Count>(bytes));
  b.displs.resize(usize);
  for (int r = 0; r < size; ++r)
    b.displs[static_cast<std::size_t>(r)] =
        static_cast<Count>(bytes * static_cast<std::uint64_t>(r));
  const int iters = iterations_for(s, bytes);
  const int warmup = warmup_iterations(iters, bytes);
  std::vector<double> times(static_cast<std::size_t>(iters));
  for (int it = -warmup; it < iters; ++it) {
    const int this_root = root >= 0 ? root : (it + warmup) % size;
    // New content every iteration: a stamp in every page of the root's data.
    const auto stamp = std::byte(static_cast<unsigned char>(it));
    for (std::uint64_t i = 0; i < bytes; i += 4096) b.send[i] = stamp;
    team.barrier();
    const auto t0 = Clock::now();
    call(team, coll, b, bytes, this_root);
    const auto t1 = Clock::now();
    if (it >= 0) times[static_cast<std::size_t>(it)] = micros(t0, t1);
  }
  // Results travel to rank 0 through the team itself, outside the timed region.
  std::vector<double> all(me == 0 ? times.size() * usize : 0);
  team.gather(times.data(), static_cast<Count>(times.size()), kDouble, all.data(),
              static_cast<Count>(times.size()), kDouble, 0);
  SweepPoint p;
  p.collective = name_of(coll);
  p.bytes = bytes;
  p.iterations = iters;
  if (me == 0) {
    std::vector<double> c(static_cast<std::size_t>(std::min(iters, 200)));
    for (double& t : c) {
      const auto t0 = Clock::now();
      std::memcpy(b.copy_destination.data(), b.send.data(), bytes);
      t = micros(t0, Clock::now());
    }
    p.memcpy_us = spread_of(std::move(c));
  }
  std::vector<double> floor_samples;
  const std::uint64_t share = bytes * (usize - 1) / usize;
  for (int k = -2; k < std::min(iters, 50); ++k) {  // two warm-up copies
    team.barrier();
    const auto t0 = Clock::now();
    std::memcpy(b.recv.data(), b.send.data(), share);
    const double us = micros(t0, Clock::now());
    std::vector<double> each(me == 0 ? usize : 0);
    team.gather(&us, 1, kDouble, each.data(), 1, kDouble, 0);
    if (me == 0 && k >= 0) floor_samples.push_back(*std::max_element(each.begin(), each.end()));
  }
  if (me == 0) p.floor_us = spread_of(std::move(floor_samples));
  p.valid = "-";
  if (s.validate) {
    ++seq;
    int mine =
        validate_once(team, coll, b, bytes, seq, root >= 0 ? root : static_cast<int>(seq % usize));
    std::vector<int> bads(me == 0 ? usize : 0);
    team.gather(&mine, 1, kInt32, bads.data(), 1, kInt32, 0);
    p.valid = std::accumulate(bads.begin(), bads.end(), 0) == 0 ? "ok" : "FAIL";
  }
  if (me == 0) {
    std::vector<double> rank_mean(usize, 0), slowest(times.size(), 0);
    for (std::size_t r = 0; r < usize; ++r) {
      for (std::size_t i = 0; i < times.size(); ++i) {
        const double t = all[r * times.size() + i];
        rank_mean[r] += t / static_cast<double>(times.size());
        slowest[i] = std::max(slowest[i], t);
      }
    }
    p.osu_average_us =
        std::accumulate(rank_mean.begin(), rank_mean.end(), 0.0) / static_cast<double>(usize);
    p.rank_mean_min_us = *std::min_element(rank_mean.begin(), rank_mean.end());
    p.rank_mean_max_us = *std::max_element(rank_mean.begin(), rank_mean.end());
    p.slowest_us = spread_of(slowest);
    p.bandwidth_mbps = p.slowest_us.median > 0
                           ? static_cast<double>(bytes * (usize - 1)) / p.slowest_us.median
                           : 0;
  }
  return p;
}

const char* table_legend() {
  return "# avg/min/max: mean over ranks of each rank's mean latency, and its extremes (OSU);\n"
         "# p50: median over iterations of the slowest rank's latency; MB/s: bytes that cross\n"
         "# processes ((ranks-1) x size) / p50; memcpy: one rank copying size bytes; floor: "
         "every\n"
         "# rank at once copying its share of (ranks-1) x size bytes (the slowest).\n";
}

std::string table_header(const std::string& collective) {
  char line[200];
  std::snprintf(line, sizeof line, "\n# %s\n%12s %10s %10s %10s %10s %11s %11s %10s %7s %6s\n",
                collective.c_str(), "bytes", "avg(us)", "min(us)", "max(us)", "p50(us)", "MB/s",
                "memcpy(us)", "floor(us)", "iters", "valid");
  return line;
}

std::string table_row(const SweepPoint& p) {
  char line[200];
  std::snprintf(line, sizeof line,
                "%12llu %10.2f %10.2f %10.2f %10.2f %11.1f %11.2f %10.2f %7d %6s\n",
                static_cast<unsigned long long>(p.bytes), p.osu_average_us, p.rank_mean_min_us,
                p.rank_mean_max_us, p.slowest_us.median, p.bandwidth_mbps, p.memcpy_us.median,
                p.floor_us.median, p.iterations, p.valid.c_str());
  return line;
}

}  // namespace shmcoll::bench
