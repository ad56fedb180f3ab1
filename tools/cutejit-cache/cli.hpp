// What the subcommands of cutejit-cache share: their parsed arguments and their table.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <cutejit/cache/kernel_cache.hpp>

namespace cli {

/// Exit codes: the scripts that call the CLI branch on them.
inline constexpr int exit_ok = 0;
inline constexpr int exit_problems_found = 1;  ///< e.g. verify found bad entries
inline constexpr int exit_usage = 2;           ///< a mistake in the command line

/// A subcommand's arguments: positional words, `--flag`s and `--option value`s.
class Arguments {
 public:
  /// `options` take a value (not empty, given once); `flags` do not. Any other word starting
  /// with "-" is an error.
  Arguments(const std::vector<std::string>& words, const std::vector<std::string>& flags, const std::vector<std::string>& options);
  bool flag(const std::string& name) const;
  std::optional<std::string> option(const std::string& name) const;
  const std::vector<std::string>& positional() const { return positional_; }

 private:
  std::vector<std::string> flags_;
  std::vector<std::pair<std::string, std::string>> options_;
  std::vector<std::string> positional_;
};

/// A usage mistake: printed with the subcommand's name and a pointer to its --help.
struct UsageError {
  std::string message;
};

struct Command {
  const char* name;
  const char* summary;  ///< one line, for the overall --help
  const char* help;     ///< the subcommand's --help
  std::vector<std::string> flags;
  std::vector<std::string> options;
  int (*run)(const Arguments&, const cutejit::KernelCache&);
  size_t positional = 0;  ///< how many plain words (not options) the subcommand takes at most
};

extern const Command list_command, stats_command, show_command;     // inspect.cpp
extern const Command verify_command, prune_command, clear_command;  // maintain.cpp
extern const Command warm_command;                                  // warm.cpp
extern const Command export_command;                                // export.cpp
extern const Command tune_command;                                  // tune.cpp

/// "1.5 MiB"
std::string human_size(uint64_t bytes);
/// "2026-11-29 10:17:12 UTC"
std::string human_time(int64_t unix_seconds);

}  // namespace cli
