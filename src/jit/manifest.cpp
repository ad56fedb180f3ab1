// Manifests: JSON Lines of specializations (specialization.hpp) and tuning questions (jit/tuning_manifest.hpp).
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <set>

#include <nlohmann/json.hpp>

#include "cutejit/core/error.hpp"
#include "cutejit/jit/autotune.hpp"
#include "cutejit/jit/specialization.hpp"
#include "jit/tuning_manifest.hpp"
#include "support/warnings.hpp"

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
/// Calls `each(line_number, text)` for every line of the manifest that is not blank. Throws
/// Error when the file does not exist, is not a file, or cannot be read.
void for_each_manifest_line(const std::filesystem::path& file, const std::function<void(int, const std::string&)>& each) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(file, ec))
    throw Error("error: the manifest " + file.string() + (std::filesystem::exists(file, ec) ? " is not a file" : " does not exist"));
  std::ifstream in(file);
  if (!in) throw Error("error: cannot read the manifest " + file.string() + ": " + std::strerror(errno));
  std::string text;
  for (int line = 1; std::getline(in, text); ++line)
    if (text.find_first_not_of(" \t\r") != std::string::npos) each(line, text);
  if (in.bad()) throw Error("error: reading the manifest " + file.string() + " failed: " + std::strerror(errno));
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
  int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return "cannot open " + file.string() + ": " + std::strerror(errno);
  // One write keeps the line whole among other processes' appends; the loop only finishes a
  // write that a signal or a full disk cut short.
  size_t done = 0;
  while (done < line.size()) {
    ssize_t n = ::write(fd, line.data() + done, line.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      int error = errno;
      ::close(fd);
      return "cannot write " + file.string() + ": " + (n < 0 ? std::strerror(error) : "no space");
    }
    done += size_t(n);
  }
  ::close(fd);
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
