// cutejit-cache: fill, inspect, verify and trim cutejit's on-disk kernel cache, and export
// kernels ahead of time (docs/cache.md).
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include <cutejit/core/error.hpp>

#include "cli.hpp"
#include "work_list.hpp"

namespace {

const std::vector<const cli::Command*> all_commands = {&cli::list_command,  &cli::stats_command, &cli::show_command,
                                                       &cli::verify_command, &cli::prune_command, &cli::clear_command,
                                                       &cli::warm_command,   &cli::export_command, &cli::tune_command};

void print_help() {
  fmt::print(
      "usage: cutejit-cache [--dir DIR] COMMAND [ARGS]\n\n"
      "Fills, inspects and maintains cutejit's on-disk kernel cache; exports kernels ahead of time;\n"
      "answers tuning questions ahead of deployment.\n\n"
      "commands:\n");
  for (const cli::Command* c : all_commands) fmt::print("  {:<8} {}\n", c->name, c->summary);
  fmt::print(
      "\n"
      "  --dir DIR   the cache directory; default: $CUTEJIT_CACHE_DIR, else $XDG_CACHE_HOME/cutejit,\n"
      "              else ~/.cache/cutejit\n"
      "`cutejit-cache COMMAND --help` describes one command.\n");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 3 && std::string_view(argv[1]) == cli::probe_flag) cli::probe_plugin(argv[2]);
  std::vector<std::string> words(argv + 1, argv + argc);
  std::string directory;
  bool directory_given = false;
  for (size_t i = 0; i < words.size();)
    if (words[i] == "--dir") {
      const char* problem = i + 1 == words.size() ? "--dir needs a directory"
                            : words[i + 1].empty() ? "--dir needs a directory, not an empty string"
                            : directory_given      ? "--dir is given twice"
                                                   : nullptr;
      if (problem) {
        fmt::print(stderr, "cutejit-cache: {}\n", problem);
        return cli::exit_usage;
      }
      directory = words[i + 1];
      directory_given = true;
      words.erase(words.begin() + long(i), words.begin() + long(i) + 2);
    } else {
      ++i;
    }
  if (words.empty() || words[0] == "--help" || words[0] == "-h" || words[0] == "help") {
    print_help();
    return words.empty() ? cli::exit_usage : cli::exit_ok;
  }

  const cli::Command* command = nullptr;
  for (const cli::Command* c : all_commands)
    if (words[0] == c->name) command = c;
  if (!command) {
    fmt::print(stderr, "cutejit-cache: unknown command '{}'; `cutejit-cache --help` lists them\n", words[0]);
    return cli::exit_usage;
  }
  std::vector<std::string> rest(words.begin() + 1, words.end());
  for (const std::string& w : rest)
    if (w == "--help" || w == "-h") {
      fmt::print("{}", command->help);
      return cli::exit_ok;
    }

  try {
    cli::Arguments args(rest, command->flags, command->options);
    // An extra word is a mistake to stop at: `clear KEY` must not clear everything.
    if (args.positional().size() > command->positional)
      throw cli::UsageError{"unexpected argument '" + args.positional()[command->positional] + "'"};
    if (directory.empty()) directory = cutejit::KernelCache::default_directory().string();
    if (directory.empty()) throw cutejit::Error("error: no cache directory: set CUTEJIT_CACHE_DIR or HOME, or pass --dir DIR");
    uint64_t max_bytes = cutejit::KernelCache::default_max_bytes;
    // The library's rule: a size it cannot read is ignored with a warning, not a failure.
    if (const char* size = std::getenv("CUTEJIT_CACHE_MAX_SIZE"); size && *size) try {
        max_bytes = cutejit::KernelCache::parse_size(size);
      } catch (const cutejit::Error& e) {
        fmt::print(stderr, "cutejit-cache: warning: CUTEJIT_CACHE_MAX_SIZE ignored, using 1G: {}\n", e.what());
      }
    cutejit::KernelCache cache(directory, max_bytes);
    return command->run(args, cache);
  } catch (const cli::UsageError& e) {
    fmt::print(stderr, "cutejit-cache {0}: {1}; see `cutejit-cache {0} --help`\n", command->name, e.message);
    return cli::exit_usage;
  } catch (const cutejit::Error& e) {
    fmt::print(stderr, "cutejit-cache {}: {}\n", command->name, e.what());  // "error: ...", as every cutejit::Error reads
    return cli::exit_problems_found;
  } catch (const std::exception& e) {  // e.g. a file system error the command did not foresee
    fmt::print(stderr, "cutejit-cache {}: error: {}\n", command->name, e.what());
    return cli::exit_problems_found;
  } catch (...) {  // thrown by a plugin's code, outside any kernel's compile
    fmt::print(stderr, "cutejit-cache {}: error: the plugin's code threw an exception that is not a std::exception\n", command->name);
    return cli::exit_problems_found;
  }
}
