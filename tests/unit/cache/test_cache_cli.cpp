// The cutejit-cache program, run as a user would: output, exit codes and its effect on disk.
#include <catch2/catch.hpp>

#include "cache_test_support.hpp"

using namespace cache_test;


TEST_CASE("cutejit-cache lists, shows, verifies, prunes and clears", "[cache]") {
  REQUIRE(std::filesystem::exists(cli_path()));
  TempCache tmp;
  std::string a = compile_vector_add("sm_90a").cache_key;
  std::string b = compile_vector_add("sm_120a").cache_key;

  Run list = cli(tmp, "list");
  CHECK(list.exit_code == 0);
  CHECK_THAT(list.output, Catch::Contains(a) && Catch::Contains(b) && Catch::Contains("vector_add") && Catch::Contains("sm_120a"));

  Run json = cli(tmp, "list --json");
  CHECK(json.exit_code == 0);
  CHECK_THAT(json.output, Catch::StartsWith("[") && Catch::Contains("\"key\": \"" + a + "\"") && Catch::Contains("\"metadata\""));

  Run stats = cli(tmp, "stats");
  CHECK(stats.exit_code == 0);
  CHECK_THAT(stats.output, Catch::Contains("2 readable"));

  Run show = cli(tmp, "show " + a.substr(0, 6));
  CHECK(show.exit_code == 0);
  CHECK_THAT(show.output, Catch::Contains("\"target\": \"sm_90a\"") && Catch::Contains(".entry"));
  CHECK_THAT(cli(tmp, "show " + a + " --ptx").output, Catch::Contains(".entry vector_add"));
  CHECK(cli(tmp, "show").exit_code == 2);

  CHECK(cli(tmp, "verify").exit_code == 0);
  std::string bytes = read_text(tmp.entry(b));
  write_bytes(tmp.entry(b), bytes.substr(0, 100));
  Run verify = cli(tmp, "verify");
  CHECK(verify.exit_code == 1);
  CHECK_THAT(verify.output, Catch::Contains(b + ".entry") && Catch::Contains("removed") && Catch::Contains("2 entries checked, 1 bad"));
  CHECK_FALSE(std::filesystem::exists(tmp.entry(b)));

  CHECK(cli(tmp, "prune").exit_code == 2);
  CHECK(cli(tmp, "prune --max-size 1G").exit_code == 0);
  CHECK(std::filesystem::exists(tmp.entry(a)));
  CHECK(cli(tmp, "prune --max-size 0").exit_code == 0);
  CHECK_FALSE(std::filesystem::exists(tmp.entry(a)));

  compile_vector_add("sm_90a");
  Run clear = cli(tmp, "clear");
  CHECK(clear.exit_code == 0);
  CHECK_THAT(clear.output, Catch::Contains("removed 1 entries"));
  CHECK(tmp.cache().list().empty());
}

TEST_CASE("cutejit-cache explains itself and rejects mistakes", "[cache]") {
  REQUIRE(std::filesystem::exists(cli_path()));
  TempCache tmp;
  Run help = cli(tmp, "--help");
  CHECK(help.exit_code == 0);
  for (const char* command : {"list", "stats", "show", "verify", "prune", "clear"}) {
    CHECK_THAT(help.output, Catch::Contains(command));
    Run sub = cli(tmp, std::string(command) + " --help");
    CHECK(sub.exit_code == 0);
    CHECK_THAT(sub.output, Catch::StartsWith(std::string("usage: cutejit-cache ") + command));
  }
  Run unknown = cli(tmp, "frobnicate");
  CHECK(unknown.exit_code == 2);
  CHECK_THAT(unknown.output, Catch::Contains("unknown command 'frobnicate'"));
  Run bad_option = cli(tmp, "list --colour");
  CHECK(bad_option.exit_code == 2);
  CHECK_THAT(bad_option.output, Catch::Contains("unknown option --colour") && Catch::Contains("cutejit-cache list --help"));
  Run bad_size = cli(tmp, "prune --max-size lots");
  CHECK(bad_size.exit_code == 2);
  CHECK_THAT(bad_size.output, Catch::Contains("'lots' is not a size") && Catch::Contains("cutejit-cache prune --help"));
  // A bad size in the environment is the library's warning, not a failure of every command.
  setenv("CUTEJIT_CACHE_MAX_SIZE", "bogus", 1);
  Run bad_environment = cli(tmp, "stats");
  unsetenv("CUTEJIT_CACHE_MAX_SIZE");
  CHECK(bad_environment.exit_code == 0);
  CHECK_THAT(bad_environment.output, Catch::Contains("warning: CUTEJIT_CACHE_MAX_SIZE ignored, using 1G") && Catch::Contains("'bogus' is not a size"));
}

TEST_CASE("cutejit-cache stops at extra words, unknown short flags, empty and repeated options", "[cache]") {
  TempCache tmp;
  std::string key = compile_vector_add().cache_key;
  REQUIRE(std::filesystem::exists(tmp.entry(key)));
  // `clear KEY` used to clear everything.
  for (const std::string& args : std::vector<std::string>{"clear " + key, "list extra", "stats extra", "verify extra", "prune --max-size 1M extra"}) {
    Run r = cli(tmp, args);
    INFO(args << ": " << r.output);
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.output, Catch::Contains("unexpected argument '"));
  }
  CHECK(std::filesystem::exists(tmp.entry(key)));
  Run short_flag = cli(tmp, "list -x");
  CHECK(short_flag.exit_code == 2);
  CHECK_THAT(short_flag.output, Catch::Contains("unknown option -x"));
  Run twice = cli(tmp, "prune --max-size 1G --max-size 1");
  CHECK(twice.exit_code == 2);
  CHECK_THAT(twice.output, Catch::Contains("--max-size is given twice"));
  CHECK(std::filesystem::exists(tmp.entry(key)));
  Run empty = cli(tmp, "prune --max-size ''");
  CHECK(empty.exit_code == 2);
  CHECK_THAT(empty.output, Catch::Contains("--max-size needs a value, not an empty string"));
  Run second_dir = cli(tmp, "--dir /tmp list");
  CHECK(second_dir.exit_code == 2);
  CHECK_THAT(second_dir.output, Catch::Contains("--dir is given twice"));
  // An empty --dir is a mistake, not the default directory.
  Run empty_dir = cli_raw("--dir '' stats");
  CHECK(empty_dir.exit_code == 2);
  CHECK_THAT(empty_dir.output, Catch::Contains("--dir needs a directory, not an empty string"));
}

TEST_CASE("cutejit-cache stats --json and list --json take a cache directory whose name is not UTF-8", "[cache]") {
  TempCache tmp;
  const std::filesystem::path odd = tmp.path() / "caf\xe9-\xff";  // Latin-1 bytes, invalid UTF-8
  std::filesystem::create_directories(odd);
  for (const char* command : {"stats --json", "list --json"}) {
    Run r = cli_raw("--dir '" + odd.string() + "' " + command);
    INFO(command << ": " << r.output);
    CHECK(r.exit_code == 0);
    CHECK(r.output.find("type_error") == std::string::npos);
  }
}

TEST_CASE("on a read-only cache, clear, prune and verify say what they could not remove, and exit 1", "[cache]") {
  TempCache tmp;
  std::string a = compile_vector_add("sm_90a").cache_key;
  std::string b = compile_vector_add("sm_120a").cache_key;
  write_bytes(tmp.entry(b), read_text(tmp.entry(b)).substr(0, 100));  // a bad entry for verify to remove
  // Permissions stop root from nothing: as root, the CLI runs as nobody, which owns the cache
  // but may not change the entries' directory.
  std::string as_user;
  if (geteuid() == 0) {
    if (!std::filesystem::exists("/usr/bin/setpriv")) {
      WARN("running as root without setpriv: the read-only cases were not run");
      return;
    }
    for (const std::filesystem::path& p : {tmp.path(), tmp.path() / "v1", tmp.entry(a), tmp.entry(b)})
      REQUIRE(::chown(p.c_str(), 65534, 65534) == 0);
    as_user = "/usr/bin/setpriv --reuid=65534 --regid=65534 --clear-groups ";
  }
  std::filesystem::permissions(tmp.path() / "v1", std::filesystem::perms::owner_read | std::filesystem::perms::owner_exec);
  auto run = [&](const std::string& args) { return cli_raw_prefixed(as_user, "--dir " + tmp.path().string() + " " + args); };

  Run clear = run("clear");
  CHECK(clear.exit_code == 1);
  CHECK_THAT(clear.output, Catch::Contains("removed 0 entries") && Catch::Contains("2 file(s) could not be removed") &&
                               Catch::Contains("Permission denied"));
  Run prune = run("prune --max-size 0");
  CHECK(prune.exit_code == 1);
  CHECK_THAT(prune.output, Catch::Contains("removed 0 B") && Catch::Contains("could not be removed"));
  Run verify = run("verify");
  CHECK(verify.exit_code == 1);
  CHECK_THAT(verify.output, Catch::Contains(b + ".entry") && Catch::Contains("(not removed: ") && Catch::Contains("2 entries checked, 1 bad, 0 removed"));
  CHECK(std::filesystem::exists(tmp.entry(a)));
  CHECK(std::filesystem::exists(tmp.entry(b)));
}
