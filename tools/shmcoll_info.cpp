// shmcoll-info: prints the configuration parameters (name, default, current value, meaning),
// the segment size a team of a given size would map, and the topology with the tree a
// collective would use for a given number of ranks and root; lists the team segments in
// /dev/shm and removes those killed jobs left behind.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "cli.hpp"
#include "mpi/plugin_parameters.hpp"
#include "shmcoll/introspection.hpp"
#include "shmcoll/shmcoll.hpp"
#include "tree_png.hpp"

namespace {

constexpr const char* kDescription =
    "Prints every SHMCOLL_* parameter with its default and its value in this environment;\n"
    "with --ranks, where N ranks would sit, their tree and each collective's algorithm.";

namespace introspection = shmcoll::introspection;

// --segments and --remove-stale.
int segments(bool remove) {
  const std::vector<introspection::SegmentListing> entries = introspection::team_segments();
  if (entries.empty()) std::printf("no team segments of this user in /dev/shm\n");
  for (const introspection::SegmentListing& e : entries) {
    const bool removing = remove && e.stale;
    if (removing) introspection::remove_team_segment(e.name);
    std::printf("%s  %llu bytes  %s%s\n", e.name.c_str(), static_cast<unsigned long long>(e.bytes),
                e.state.c_str(), removing ? ": removed" : "");
  }
  return 0;
}

// Which path each collective takes on the team at each size (the registry's, see
// introspection::TeamPreview).
void print_algorithms(const introspection::TeamPreview& team) {
  std::printf("\nalgorithms on this team (%s single copy%s):\n",
              team.single_copy ? "assuming the probe grants" : "without",
              team.oversubscribed ? "; more ranks than this process's CPUs" : "");
  if (team.cross_copy_cost > 0) {
    std::printf(
        "  (cross-memory attach measured at %.1fx memcpy here: the single copy from %llu "
        "bytes per rank)\n",
        team.cross_copy_cost, static_cast<unsigned long long>(team.single_copy_min_bytes));
  }
  for (const introspection::PathChoice& c : team.paths) {
    if (c.bytes == 0) {
      std::printf("  %-9s any size      %s\n", c.collective.c_str(), c.why.c_str());
      continue;
    }
    std::printf("  %-9s %9llu B   %-6s %s\n", c.collective.c_str(),
                static_cast<unsigned long long>(c.bytes), c.single_copy ? "single" : "slots",
                c.why.c_str());
  }
}

// Every parameter, the core's and the MPI plugin's, with its default, its value here and its
// meaning, in aligned columns.
void print_parameters(const shmcoll::Options& options) {
  std::vector<shmcoll::ParameterInfo> rows = shmcoll::parameters(options);
  const std::size_t core_rows = rows.size();
  for (const shmcoll::mpi::PluginParameter* p : shmcoll::mpi::kPluginParameters) {
    const char* value = std::getenv(p->name);
    rows.push_back(
        {p->name, p->default_value, value != nullptr ? value : p->default_value, p->doc});
  }
  std::size_t name_width = 9, default_width = 7, value_width = 5;
  for (const shmcoll::ParameterInfo& p : rows) {
    name_width = std::max(name_width, p.name.size());
    default_width = std::max(default_width, p.default_value.size());
    value_width = std::max(value_width, p.value.empty() ? 7 : p.value.size());
  }
  const auto line = [&](const std::string& name, const std::string& def, const std::string& value,
                        const std::string& doc) {
    std::printf("%-*s  %-*s  %-*s  %s\n", static_cast<int>(name_width), name.c_str(),
                static_cast<int>(default_width), def.c_str(), static_cast<int>(value_width),
                value.empty() ? "(empty)" : value.c_str(), doc.c_str());
  };
  line("parameter", "default", "value", "meaning");
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (i == core_rows) std::printf("\nthe MPI plugin's own (libshmcoll_mpi_*.so):\n");
    line(rows[i].name, rows[i].default_value, rows[i].value, rows[i].doc);
  }
}

// A parameter list as a Markdown table: the core's (docs/tuning.md) or the MPI plugin's
// (README.md), with the defaults whatever the environment says. Tests compare both documents
// with this output.
void print_markdown_table(const std::string& which) {
  std::printf("| variable | default | meaning |\n|---|---|---|\n");
  const auto row = [](const std::string& name, const std::string& def, const std::string& doc) {
    std::printf("| `%s` | %s | %s |\n", name.c_str(), def.empty() ? "(empty)" : def.c_str(),
                doc.c_str());
  };
  if (which == "core") {
    for (const shmcoll::ParameterInfo& p : shmcoll::parameters(shmcoll::Options{}))
      row(p.name, p.default_value, p.doc);
    return;
  }
  for (const shmcoll::mpi::PluginParameter* p : shmcoll::mpi::kPluginParameters)
    row(p->name, p->default_value, p->doc);
}

}  // namespace

int main(int argc, char** argv) {
  int segment_ranks = 0, ranks = 0, root = 0;
  std::string topology_spec, png;
  bool list_segments = false, remove_stale = false;
  CLI::App app(kDescription, "shmcoll-info");
  shmcoll::tools::set_usage(
      app,
      "shmcoll-info [--segment-size RANKS] [--ranks N [--root R] [--png FILE]] "
      "[--topology SPEC]\n       shmcoll-info --segments | --remove-stale");
  app.add_option("--segment-size", segment_ranks,
                 "also the bytes of shared memory a team of RANKS maps")
      ->check(CLI::Range(1, 1 << 20));
  CLI::Option* ranks_option =
      app.add_option("--ranks", ranks,
                     "the topology, where N ranks would sit (on this machine as shmcoll-run "
                     "--bind core places them: rank r on core r mod cores; with a synthetic or "
                     "XML topology on PU r mod PUs), the tree from --root, and which algorithm "
                     "each collective takes at each size on such a team")
          ->check(CLI::Range(1, 1 << 20));
  app.add_option("--root", root, "the tree's root (default 0), below --ranks")
      ->needs(ranks_option)
      ->check(CLI::NonNegativeNumber);
  app.add_option("--png", png, "also draw that tree into FILE (with gnuplot)")->needs(ranks_option);
  app.add_option("--topology", topology_spec,
                 "an hwloc synthetic description (\"package:2 numa:2 core:4 pu:1\") or an XML "
                 "file, instead of SHMCOLL_TOPOLOGY or this machine");
  std::string markdown;
  app.add_option("--markdown", markdown,
                 "print one parameter list as a Markdown table with the defaults, and nothing "
                 "else: core (docs/tuning.md) or plugin (the MPI plugin's, README.md)")
      ->check(CLI::IsMember({"core", "plugin"}));
  CLI::Option* segments_flag = app.add_flag(
      "--segments", list_segments,
      "list this user's team segments in /dev/shm: a team's segment has a name only while the "
      "team forms, so one that stays is stale once its creator has ended");
  CLI::Option* remove_flag = app.add_flag("--remove-stale", remove_stale,
                                          "remove the stale ones (teams formed later do so too)");
  segments_flag->excludes(remove_flag);
  for (CLI::Option* listing : {segments_flag, remove_flag}) {
    for (const char* other : {"--segment-size", "--ranks", "--root", "--png", "--topology"})
      listing->excludes(app.get_option(other));
  }
  shmcoll::tools::parse_or_exit(app, argc, argv);
  if (list_segments || remove_stale) return segments(remove_stale);
  if (!markdown.empty()) {
    print_markdown_table(markdown);
    return 0;
  }
  if (ranks > 0 && root >= ranks) {
    std::fprintf(stderr, "shmcoll-info: --root: %d is not a rank of --ranks %d (see --help)\n",
                 root, ranks);
    return 2;
  }
  // A topology the flag names and hwloc refuses is the flag's fault, not SHMCOLL_TOPOLOGY's.
  if (!topology_spec.empty()) {
    try {
      shmcoll::Options without_probe;  // nothing measured: the topology alone is in question
      without_probe.single_copy = shmcoll::SingleCopy::kOff;
      (void)introspection::preview_team(1, 0, topology_spec, without_probe);
    } catch (const shmcoll::Error& e) {
      std::fprintf(stderr, "shmcoll-info: --topology: %s (see --help)\n", e.what());
      return 2;
    }
  }
  try {
    const shmcoll::Options options = shmcoll::Options::from_env();
    print_parameters(options);
    if (segment_ranks > 0) {
      const introspection::SegmentSize size = introspection::segment_size(segment_ranks, options);
      std::printf("\nsegment for %d ranks: %llu bytes (%llu fixed + %llu per rank)\n",
                  segment_ranks, static_cast<unsigned long long>(size.total),
                  static_cast<unsigned long long>(size.fixed),
                  static_cast<unsigned long long>(size.per_rank));
    }
    if (ranks > 0) {
      const introspection::TeamPreview team =
          introspection::preview_team(ranks, root, topology_spec, options);
      std::printf("\ntopology: %s\n", team.topology.c_str());
      std::printf("ranks: %s\n",
                  team.this_machine
                      ? "placed as shmcoll-run --bind core would (rank r on core r mod cores)"
                      : "rank r on PU r mod PUs");
      std::printf("tree for a broadcast, scatter or gather rooted at %d (depth %d):\n%s", root,
                  team.depth, team.tree_text.c_str());
      if (!png.empty()) {
        const std::string title =
            std::to_string(ranks) + " ranks, root " + std::to_string(root) + ", " + team.source;
        const std::string problem = shmcoll::tools::draw_tree_png(team, title, png);
        if (!problem.empty()) {
          std::fprintf(stderr, "shmcoll-info: --png %s: %s\n", png.c_str(), problem.c_str());
          return 1;
        }
        std::printf("tree drawn into %s\n", png.c_str());
      }
      print_algorithms(team);
    }
  } catch (const shmcoll::Error& e) {
    std::fprintf(stderr, "shmcoll-info: %s\n", e.what());
    return 1;
  }
  return 0;
}
