// Manifests: JSON Lines of specializations (specialization.hpp) and tuning questions (jit/tuning_manifest.hpp).
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <sstream>
#include <functional>
#include <set>

#include <nlohmann/json.hpp>

#include "cutejit/core/error.hpp"
#include "cutejit/jit/autotune.hpp"
#include "cutejit/jit/specialization.hpp"
#include "cache/files.hpp"
#include "jit/tuning_manifest.hpp"
#include "core/atomic_file.hpp"
#include "core/warnings.hpp"

namespace cutejit {

namespace {
std::string hex_word(uint64_t w) {
  char text[19];
  std::snprintf(text, sizeof text, "0x%016llx", static_cast<unsigned long long>(w));
  return text;
}

// Words are written as hex strings: JSON numbers above 2^53 do not survive every JSON reader.
uint64_t parse_word(const nlohmann::json& j) {
  const std::string example = "a word is \"0x\" and 1 to 16 hex digits, e.g. \"0x0109010400000401\"";
  if (!j.is_string()) throw std::invalid_argument(example);
  const std::string& s = j.get_ref<const std::string&>();
  uint64_t w = 0;
  if (s.size() < 3 || s.size() > 18 || !s.starts_with("0x")) throw std::invalid_argument("'" + s + "': " + example);
  auto [end, error] = std::from_chars(s.data() + 2, s.data() + s.size(), w, 16);
  if (error != std::errc() || end != s.data() + s.size()) throw std::invalid_argument("'" + s + "': " + example);
  return w;
}
}  // namespace

std::string manifest_line(const Specialization& s) {
  nlohmann::json words = nlohmann::json::array();
  for (uint64_t w : s.words) words.push_back(hex_word(w));
  nlohmann::json line = {{"kernel", s.kernel}, {"target", s.target}, {"words", words}};
  return line.dump() + "\n";
}

namespace {
/// A manifest line is about 150 bytes: 64 MiB holds 400,000 specializations, far more than any
/// deployment warms, and is read without a risk to memory.
constexpr uint64_t max_manifest_bytes = uint64_t(64) << 20;

/// Calls `each(line_number, text)` for every line of the manifest that is not blank. Throws
/// Error when the file does not exist, is not a file, is larger than a manifest can be, or
/// cannot be read.
void for_each_manifest_line(const std::filesystem::path& file, const std::function<void(int, const std::string&)>& each) {
  // The size is checked before anything is read: a huge (or sparse) file is refused by a stat.
  detail::ReadResult read = detail::read_whole_file(file, max_manifest_bytes, /*follow_links=*/true);
  if (read.missing) throw Error("error: the manifest " + file.string() + " does not exist");
  if (read.refused)
    throw Error("error: the manifest " + file.string() + " is not a file a manifest can be (" + read.error +
                "); a manifest is a regular file of at most 64 MiB, as CUTEJIT_RECORD=FILE writes one");
  if (!read.bytes) throw Error("error: cannot read the manifest: " + read.error);
  std::istringstream in(*read.bytes);
  std::string text;
  for (int line = 1; std::getline(in, text); ++line)
    if (text.find_first_not_of(" \t\r") != std::string::npos) each(line, text);
}
}  // namespace

std::vector<Specialization> read_manifest(const std::filesystem::path& file) {
  std::vector<Specialization> out;
  std::set<std::string> seen;
  for_each_manifest_line(file, [&](int line, const std::string& text) {
    try {
      nlohmann::json j = nlohmann::json::parse(text);
      if (j.is_object() && j.contains("tune")) return;  // a tuning question (read_tuning_questions)
      if (!j.is_object() || !j.contains("kernel") || !j.contains("words") || !j["words"].is_array())
        throw std::invalid_argument("expected an object with \"kernel\" and \"words\"");
      Specialization s;
      s.kernel = j["kernel"].get<std::string>();
      if (j.contains("target")) s.target = j["target"].get<std::string>();
      for (const nlohmann::json& w : j["words"]) s.words.push_back(parse_word(w));
      if (seen.insert(manifest_line(s)).second) out.push_back(std::move(s));
    } catch (const std::exception& e) {
      throw Error("error: " + file.string() + ":" + std::to_string(line) + ": not a manifest line (" + e.what() +
                  "); each line is {\"kernel\": NAME, \"target\": TARGET, \"words\": [\"0x...\", ...]}");
    }
  });
  return out;
}

namespace {
std::string append_line(const std::filesystem::path& file, const std::string& line) {
  // Never through a link: a link planted at a shared path would make the append land in a file
  // of the planter's choosing, written with this process's rights.
  int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd < 0 && errno == ELOOP) return "cannot open " + file.string() + ": it is a symbolic link; give the file itself";
  if (fd < 0) return "cannot open " + file.string() + ": " + std::strerror(errno);
  // One write keeps the line whole among other processes' appends; write_all only finishes a
  // write that a signal cut short, and turns a file-size limit into an error.
  int error = detail::write_all(fd, line);
  ::close(fd);
  if (error) return "cannot write " + file.string() + ": " + std::strerror(error);
  return "";
}
}  // namespace

std::string append_to_manifest(const std::filesystem::path& file, const Specialization& s) { return append_line(file, manifest_line(s)); }

std::string tuning_question_line(const TuneKey& key) { return nlohmann::json{{"tune", key.name}, {"values", key.values}}.dump() + "\n"; }

std::vector<TuneKey> read_tuning_questions(const std::filesystem::path& file) {
  std::vector<TuneKey> out;
  std::set<std::string> seen;
  for_each_manifest_line(file, [&](int line, const std::string& text) {
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(text);
    } catch (const nlohmann::json::exception& e) {
      throw Error("error: " + file.string() + ":" + std::to_string(line) + ": not a manifest line (" + e.what() + ")");
    }
    if (!j.is_object() || !j.contains("tune")) return;  // a specialization (read_manifest)
    try {
      TuneKey key{j.at("tune").get<std::string>(), j.at("values").get<std::vector<int64_t>>()};
      if (seen.insert(tuning_question_line(key)).second) out.push_back(std::move(key));
    } catch (const nlohmann::json::exception& e) {
      throw Error("error: " + file.string() + ":" + std::to_string(line) + ": not a tuning question (" + e.what() +
                  "); each is {\"tune\": NAME, \"values\": [integers]}");
    }
  });
  return out;
}

namespace detail {
void record_tuning_question(const TuneKey& key) {
  std::string file = setting("CUTEJIT_RECORD");
  if (file.empty()) return;
  std::string error = append_line(file, tuning_question_line(key));
  if (!error.empty()) warn_once("CUTEJIT_RECORD", "CUTEJIT_RECORD: " + error + "; tuning questions are not recorded");
}
}  // namespace detail

}  // namespace cutejit
