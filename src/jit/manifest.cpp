// Manifests: JSON Lines of specializations (specialization.hpp).
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <set>

#include <nlohmann/json.hpp>

#include "cutejit/jit/error.hpp"
#include "cutejit/jit/specialization.hpp"

namespace cutejit {

namespace {
std::string hex_word(uint64_t w) {
  char text[19];
  std::snprintf(text, sizeof text, "0x%016llx", static_cast<unsigned long long>(w));
  return text;
}

// Words are written as hex strings: JSON numbers above 2^53 do not survive every JSON reader.
uint64_t parse_word(const nlohmann::json& j) {
  if (j.is_number_unsigned()) return j.get<uint64_t>();
  if (!j.is_string()) throw std::invalid_argument("a word is a hex string such as \"0x0109040000000e49\"");
  const std::string& s = j.get_ref<const std::string&>();
  size_t used = 0;
  uint64_t w = std::stoull(s, &used, 16);
  if (used != s.size() || s.size() < 3 || s.size() > 18) throw std::invalid_argument("'" + s + "' is not a 64-bit hex word");
  return w;
}
}  // namespace

std::string manifest_line(const Specialization& s) {
  nlohmann::json words = nlohmann::json::array();
  for (uint64_t w : s.words) words.push_back(hex_word(w));
  nlohmann::json line = {{"kernel", s.kernel}, {"target", s.target}, {"words", words}};
  return line.dump() + "\n";
}

std::vector<Specialization> read_manifest(const std::filesystem::path& file) {
  std::ifstream in(file);
  if (!in) throw Error("error: cannot read the manifest " + file.string() + ": " + std::strerror(errno));
  std::vector<Specialization> out;
  std::set<std::string> seen;
  std::string text;
  for (int line = 1; std::getline(in, text); ++line) {
    if (text.find_first_not_of(" \t\r") == std::string::npos) continue;
    try {
      nlohmann::json j = nlohmann::json::parse(text);
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
  }
  return out;
}

std::string append_to_manifest(const std::filesystem::path& file, const Specialization& s) {
  std::string line = manifest_line(s);
  int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return "cannot open " + file.string() + ": " + std::strerror(errno);
  ssize_t written = ::write(fd, line.data(), line.size());
  int error = errno;
  ::close(fd);
  if (written != ssize_t(line.size()))
    return "cannot write " + file.string() + ": " + (written < 0 ? std::strerror(error) : "short write");
  return "";
}

}  // namespace cutejit
