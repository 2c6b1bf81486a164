// Command-line parsing shared by shmcoll's programs, with CLI11: --help everywhere, errors
// that name the flag and exit with status 2, byte sizes with K, M or G suffixes.
#pragma once

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <utility>

#include "shmcoll/bootstrap.hpp"
#include "shmcoll/byte_size.hpp"

namespace shmcoll::tools {

// Whether this process prints what every rank would: not a rank of a shmcoll-run job other
// than rank 0 (a benchmark's ranks all parse the same command line).
inline bool speaks_for_the_job() {
  const char* rank = std::getenv(SocketBootstrap::kRankVariable);
  return rank == nullptr || std::string(rank) == "0";
}

// Ends the program with status 2: "<program>: <what> (see --help)". The other ranks of a job,
// which find the same error, first give rank 0 the time to say it: shmcoll-run stops the whole
// job when the first rank exits.
[[noreturn]] inline void usage_error(const CLI::App& app, const std::string& what) {
  if (speaks_for_the_job()) {
    std::fprintf(stderr, "%s: %s (see --help)\n", app.get_name().c_str(), what.c_str());
  } else {
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
  std::exit(2);
}

// Parses argv into `app`. --help prints the help and exits 0; any other failure prints what
// CLI11 says, which names the flag, and exits 2 (usage_error).
inline void parse_or_exit(CLI::App& app, int argc, char** argv) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    if (speaks_for_the_job()) std::fputs(app.help().c_str(), stdout);
    std::exit(0);
  } catch (const CLI::ParseError& e) {
    usage_error(app, e.what());
  }
}

// The usage line of `app` (CLI11 would write "[OPTIONS]" alone), above its description.
inline void set_usage(CLI::App& app, std::string usage) {
  struct UsageFormatter final : CLI::Formatter {
    explicit UsageFormatter(std::string text) : text_(std::move(text)) {}
    std::string make_usage(const CLI::App*, std::string) const override { return text_ + "\n"; }
    std::string text_;
  };
  app.formatter(std::make_shared<UsageFormatter>("usage: " + std::move(usage)));
}

// A positive number of seconds.
inline CLI::Validator positive_seconds() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        char* end = nullptr;
        const double v = std::strtod(text.c_str(), &end);
        if (end == text.c_str() || *end != '\0' || !(v > 0))
          return "'" + text + "' is not a positive number of seconds";
        return {};
      },
      "SECONDS");
}

// An option taking a byte size ("4096", "64K", "16M", "1G") into `bytes`, at least `min`.
inline CLI::Option* add_bytes_option(CLI::App& app, const std::string& name, std::uint64_t& bytes,
                                     const std::string& doc, std::uint64_t min = 0) {
  const std::string flag = name.substr(0, name.find(','));
  return app.add_option_function<std::string>(
      name,
      [&bytes, flag, min](const std::string& text) {
        const auto parsed = parse_byte_size(text);
        if (!parsed || *parsed < 0 || static_cast<std::uint64_t>(*parsed) < min)
          throw CLI::ValidationError(
              flag, "'" + text + "' is not a byte size" +
                        (min > 0 ? " of at least " + std::to_string(min) : std::string()) +
                        " (a number, optionally with K, M or G)");
        bytes = static_cast<std::uint64_t>(*parsed);
      },
      doc);
}

}  // namespace shmcoll::tools
