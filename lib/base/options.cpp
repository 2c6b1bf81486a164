// The parameter registry: one row per tunable, read from the environment in one place.
#include "shmcoll/options.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <string_view>

#include "shmcoll/bootstrap.hpp"
#include "shmcoll/byte_size.hpp"
#include "shmcoll/error.hpp"

namespace shmcoll {
namespace {

struct Row {
  const char* name;  // environment variable
  const char* doc;
  std::function<std::string(const Options&)> get;
  std::function<void(Options&, const std::string&)> set;
};

long long parse_integer(const char* name, const std::string& v, long long lo, long long hi) {
  const std::optional<long long> n = parse_byte_size(v);  // sizes may carry K/M/G suffixes
  if (!n || *n < lo || *n > hi) {
    throw InvalidArgument(std::string(name) + "='" + v + "' is not an integer in [" +
                          std::to_string(lo) + ", " + std::to_string(hi) + "]");
  }
  return *n;
}

// One algorithm choice (auto, flat, tree) per collective.
Row algorithm_parameter(const char* name, const char* doc, Algorithm Options::*field) {
  return {name, doc,
          [field](const Options& o) {
            const Algorithm a = o.*field;
            return std::string(a == Algorithm::kFlat   ? "flat"
                               : a == Algorithm::kTree ? "tree"
                                                       : "auto");
          },
          [name, field](Options& o, const std::string& v) {
            if (v == "auto")
              o.*field = Algorithm::kAuto;
            else if (v == "flat")
              o.*field = Algorithm::kFlat;
            else if (v == "tree")
              o.*field = Algorithm::kTree;
            else
              throw InvalidArgument(std::string(name) + "='" + v + "' must be auto, flat or tree");
          }};
}

const std::vector<Row>& rows() {
  static const std::vector<Row> table = {
      {"SHMCOLL_SLOT_BYTES", "bytes per data slot; larger messages move in chunks of this size",
       [](const Options& o) { return std::to_string(o.slot_bytes); },
       [](Options& o, const std::string& v) {
         o.slot_bytes =
             static_cast<std::size_t>(parse_integer("SHMCOLL_SLOT_BYTES", v, 64, 1ll << 30));
       }},
      {"SHMCOLL_SLOTS",
       "slots per rank: chunks in flight per writer and overlapping small calls; auto: 1 MiB of "
       "slots for teams of up to 8 ranks, 4 slots for larger ones",
       [](const Options& o) { return o.slots > 0 ? std::to_string(o.slots) : std::string("auto"); },
       [](Options& o, const std::string& v) {
         o.slots = v == "auto" ? 0 : static_cast<int>(parse_integer("SHMCOLL_SLOTS", v, 1, 64));
       }},
      {"SHMCOLL_CHECKS",
       "deferred: every rank's cross-rank checks (collective, root, sizes) without waiting for "
       "the others, a mismatch raised at the latest in a later call or when the team ends; "
       "full: every rank also waits for all ranks' agreement and raises a mismatch in the "
       "failing call",
       [](const Options& o) { return std::string(check_level_name(o.checks)); },
       [](Options& o, const std::string& v) {
         if (v == "deferred")
           o.checks = CheckLevel::kDeferred;
         else if (v == "full")
           o.checks = CheckLevel::kFull;
         else
           throw InvalidArgument("SHMCOLL_CHECKS='" + v + "' must be 'deferred' or 'full'");
       }},
      {"SHMCOLL_TIMEOUT", "seconds a rank waits for a peer before raising Timeout",
       [](const Options& o) {
         char text[32];
         std::snprintf(text, sizeof text, "%g", o.timeout_s);
         return std::string(text);
       },
       [](Options& o, const std::string& v) {
         char* end = nullptr;
         double d = std::strtod(v.c_str(), &end);
         if (end == v.c_str() || *end != '\0' || !(d > 0)) {
           throw InvalidArgument("SHMCOLL_TIMEOUT='" + v +
                                 "' must be a positive number of seconds");
         }
         o.timeout_s = d;
       }},
      {"SHMCOLL_PEER_CHECK_MS",
       "milliseconds between a waiter's checks that the awaited process is alive (a dead peer "
       "is an error within about this long)",
       [](const Options& o) { return std::to_string(o.peer_check_ms); },
       [](Options& o, const std::string& v) {
         o.peer_check_ms = static_cast<int>(parse_integer("SHMCOLL_PEER_CHECK_MS", v, 1, 2000));
       }},
      {"SHMCOLL_SPIN",
       "pause iterations before a waiter yields; -1: automatic (0 when oversubscribed)",
       [](const Options& o) { return std::to_string(o.spin_iterations); },
       [](Options& o, const std::string& v) {
         o.spin_iterations = static_cast<int>(parse_integer("SHMCOLL_SPIN", v, -1, 1 << 30));
       }},
      {"SHMCOLL_YIELDS", "sched_yield rounds before a waiter sleeps on a futex",
       [](const Options& o) { return std::to_string(o.yield_iterations); },
       [](Options& o, const std::string& v) {
         o.yield_iterations = static_cast<int>(parse_integer("SHMCOLL_YIELDS", v, 0, 1 << 30));
       }},
      algorithm_parameter("SHMCOLL_BCAST_ALGORITHM",
                          "auto: down the topology tree when the ranks span several packages, "
                          "NUMA nodes or L3 caches, else flat; flat; tree",
                          &Options::bcast_algorithm),
      algorithm_parameter("SHMCOLL_SCATTER_ALGORITHM",
                          "scatter and scatterv. auto: down the topology tree when the ranks span "
                          "several groups and the blocks are below the single-copy size (scatterv: "
                          "when the team has no single copy), else flat; flat; tree",
                          &Options::scatter_algorithm),
      algorithm_parameter("SHMCOLL_GATHER_ALGORITHM",
                          "gather and gatherv: as SHMCOLL_SCATTER_ALGORITHM, up the tree",
                          &Options::gather_algorithm),
      {"SHMCOLL_SINGLE_COPY",
       "auto: messages of SHMCOLL_SINGLE_COPY_MIN_BYTES and more per rank move with one copy "
       "between the ranks' buffers (cross-memory attach) when every pair of ranks may use it; "
       "from 256 KiB where cross-memory attach measures slow when the team forms; in a team with "
       "more ranks than CPUs a broadcast only from 1 MiB and past the slot ring, gather(v) "
       "blocks from 32 KiB; in a team of more than 2 ranks with "
       "a CPU each, never a broadcast, and scatter(v) and gather(v) blocks from "
       "SHMCOLL_{SCATTER,GATHER}_SINGLE_COPY_MIN_TEAM_BYTES; always: from "
       "SHMCOLL_SINGLE_COPY_MIN_BYTES without those exceptions; off: never (the slots, or a "
       "memcpy between shared buffers: SHMCOLL_SHARED_COPY_MIN_BYTES)",
       [](const Options& o) {
         return std::string(o.single_copy == SingleCopy::kAuto  ? "auto"
                            : o.single_copy == SingleCopy::kOff ? "off"
                                                                : "always");
       },
       [](Options& o, const std::string& v) {
         if (v == "auto")
           o.single_copy = SingleCopy::kAuto;
         else if (v == "off")
           o.single_copy = SingleCopy::kOff;
         else if (v == "always")
           o.single_copy = SingleCopy::kAlways;
         else
           throw InvalidArgument("SHMCOLL_SINGLE_COPY='" + v +
                                 "' must be 'auto', 'always' or 'off'");
       }},
      {"SHMCOLL_SINGLE_COPY_MIN_BYTES",
       "block size per rank from which broadcast, scatter and gather use the single copy",
       [](const Options& o) { return std::to_string(o.single_copy_min_bytes); },
       [](Options& o, const std::string& v) {
         o.single_copy_min_bytes = static_cast<std::size_t>(
             parse_integer("SHMCOLL_SINGLE_COPY_MIN_BYTES", v, 1, 1ll << 40));
       }},
      {"SHMCOLL_SHARED_COPY_MIN_BYTES",
       "block size per rank from which broadcast, scatter and gather whose root and other ranks "
       "(the v-forms: the root and that block's rank) pass buffers inside one shared allocation "
       "(allocate_shared, adopt_shared, an MPI "
       "shared window) copy straight between them, where the single copy does not take the "
       "blocks (below its threshold, or without cross-memory attach)",
       [](const Options& o) { return std::to_string(o.shared_copy_min_bytes); },
       [](Options& o, const std::string& v) {
         o.shared_copy_min_bytes = static_cast<std::size_t>(
             parse_integer("SHMCOLL_SHARED_COPY_MIN_BYTES", v, 1, 1ll << 50));
       }},
      {"SHMCOLL_SCATTER_SINGLE_COPY_MIN_TEAM_BYTES",
       "in a team of more than 2 ranks with a CPU each, scatter(v) blocks take the single copy "
       "only when ranks x block reaches this (SHMCOLL_SINGLE_COPY=auto)",
       [](const Options& o) { return std::to_string(o.scatter_single_copy_min_team_bytes); },
       [](Options& o, const std::string& v) {
         o.scatter_single_copy_min_team_bytes = static_cast<std::size_t>(
             parse_integer("SHMCOLL_SCATTER_SINGLE_COPY_MIN_TEAM_BYTES", v, 1, 1ll << 50));
       }},
      {"SHMCOLL_GATHER_SINGLE_COPY_MIN_TEAM_BYTES", "the same for gather(v) blocks",
       [](const Options& o) { return std::to_string(o.gather_single_copy_min_team_bytes); },
       [](Options& o, const std::string& v) {
         o.gather_single_copy_min_team_bytes = static_cast<std::size_t>(
             parse_integer("SHMCOLL_GATHER_SINGLE_COPY_MIN_TEAM_BYTES", v, 1, 1ll << 50));
       }},
      {"SHMCOLL_TEAM_CPUS",
       "CPUs the team counts on to tell whether it is oversubscribed (more ranks than CPUs); "
       "auto: those the ranks' affinity masks allow",
       [](const Options& o) {
         return o.team_cpus > 0 ? std::to_string(o.team_cpus) : std::string("auto");
       },
       [](Options& o, const std::string& v) {
         o.team_cpus =
             v == "auto" ? 0 : static_cast<int>(parse_integer("SHMCOLL_TEAM_CPUS", v, 1, 1 << 20));
       }},
      {"SHMCOLL_HUGE_PAGES",
       "1: a rank's buffer of 64 KiB or more that peers copy from or into with cross-memory "
       "attach moves onto huge pages (madvise MADV_COLLAPSE: every 2 MiB page it overlaps) once "
       "its uses have moved 4 times the bytes of those pages, and a broadcast between two ranks "
       "splits its copy by the parts of both buffers that moved (a head both keep on small pages "
       "the root stages in a private 2 MiB huge page); 0: never",
       [](const Options& o) { return std::string(o.huge_pages ? "1" : "0"); },
       [](Options& o, const std::string& v) {
         o.huge_pages = parse_integer("SHMCOLL_HUGE_PAGES", v, 0, 1) == 1;
       }},
      {"SHMCOLL_VERBOSE", "1: rank 0 logs each team's data paths to stderr when it forms",
       [](const Options& o) { return std::string(o.verbose ? "1" : "0"); },
       [](Options& o, const std::string& v) {
         o.verbose = parse_integer("SHMCOLL_VERBOSE", v, 0, 1) == 1;
       }},
      {"SHMCOLL_PROGRESS_THREAD",
       "1: a thread per rank advances non-blocking collectives while the caller computes; 0: "
       "they advance inside test, wait and the other calls into the team",
       [](const Options& o) { return std::string(o.progress_thread ? "1" : "0"); },
       [](Options& o, const std::string& v) {
         o.progress_thread = parse_integer("SHMCOLL_PROGRESS_THREAD", v, 0, 1) == 1;
       }},
      {"SHMCOLL_TOPOLOGY",
       "topology for placing ranks: empty = this machine, an hwloc synthetic description, or an "
       "XML file (*.xml); with the latter two, rank r sits on PU r mod (number of PUs)",
       [](const Options& o) { return o.topology; },
       [](Options& o, const std::string& v) { o.topology = v; }},
  };
  return table;
}

}  // namespace

const char* check_level_name(CheckLevel level) {
  return level == CheckLevel::kFull ? "full" : "deferred";
}

int Options::slots_for(int team_size) const {
  if (slots > 0) return slots;
  if (team_size > kDeepRingMaxRanks) return 4;
  const std::uint64_t ring_slots = (kPipelineRingBytes + slot_bytes - 1) / slot_bytes;
  return static_cast<int>(std::clamp<std::uint64_t>(ring_slots, 4, 64));
}

Options Options::from_env() {
  Options o;
  for (const Row& row : rows()) {
    if (const char* v = std::getenv(row.name); v != nullptr && *v != '\0') row.set(o, v);
  }
  return o;
}

Options Options::from_env(std::vector<std::string>& problems) {
  const Options defaults;
  Options o;
  for (const Row& row : rows()) {
    const char* v = std::getenv(row.name);
    if (v == nullptr || *v == '\0') continue;
    try {
      row.set(o, v);
    } catch (const InvalidArgument& e) {
      problems.push_back(std::string(e.what()) + "; using the default, " + row.get(defaults));
    }
  }
  return o;
}

namespace {

// Edits (insertions, deletions, substitutions) between two names.
std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

}  // namespace

std::vector<std::string> unknown_variables(const std::vector<std::string>& also_known) {
  constexpr std::string_view kPrefix = "SHMCOLL_";
  std::vector<std::string> known = {SocketBootstrap::kRankVariable, SocketBootstrap::kSizeVariable,
                                    SocketBootstrap::kJobVariable, SocketBootstrap::kFdVariable};
  for (const Row& row : rows()) known.emplace_back(row.name);
  known.insert(known.end(), also_known.begin(), also_known.end());
  std::vector<std::string> out;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    const std::string_view setting(*entry);
    const std::string_view name = setting.substr(0, setting.find('='));
    if (name.substr(0, kPrefix.size()) != kPrefix ||
        std::find(known.begin(), known.end(), name) != known.end())
      continue;
    // The closest known name, if a few edits away: a typo rather than a name of its own.
    const std::string* closest = nullptr;
    std::size_t best = 4;
    for (const std::string& k : known) {
      if (const std::size_t d = edit_distance(name, k); d < best) {
        best = d;
        closest = &k;
      }
    }
    out.push_back(std::string(name) + " is not a shmcoll variable" +
                  (closest ? " (did you mean " + *closest + "?)" : std::string()) + "; ignored");
  }
  return out;
}

std::vector<ParameterInfo> parameters(const Options& current) {
  const Options defaults;
  std::vector<ParameterInfo> out;
  for (const Row& row : rows()) {
    out.push_back({row.name, row.get(defaults), row.get(current), row.doc});
  }
  return out;
}

}  // namespace shmcoll
