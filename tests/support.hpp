// Small helpers shared by the test files.
#pragma once

#include <cutejit/cutejit.hpp>

#include <stdlib.h>

#include <array>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace test {

/// Sets an environment variable for one scope and puts the old value back.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::optional<std::string>& value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value) setenv(name, value->c_str(), 1);
    else unsetenv(name);
  }
  ~ScopedEnv() {
    if (old_) setenv(name_, old_->c_str(), 1);
    else unsetenv(name_);
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

/// A fresh directory under the system's temporary folder, removed at the end of the test.
struct TempDir {
  std::filesystem::path path;
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "cutejit-test-XXXXXX").string();
    path = ::mkdtemp(pattern.data());
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir() { std::filesystem::remove_all(path); }
};

/// A 1-D tensor argument for cross-compiling (no memory behind it).
template <class T>
cutejit::DeviceTensor<T> vector_arg(int64_t n = 1024, uint64_t ptr = 0) {
  return cutejit::DeviceTensor<T>::make(ptr, std::array<int64_t, 1>{n}, std::array<int64_t, 1>{1});
}

inline bool contains(std::string_view haystack, std::string_view needle) { return haystack.find(needle) != std::string_view::npos; }

/// How many times `needle` occurs in `haystack` (non-overlapping).
inline size_t count(std::string_view haystack, std::string_view needle) {
  size_t n = 0;
  for (size_t at = haystack.find(needle); at != std::string_view::npos; at = haystack.find(needle, at + needle.size())) ++n;
  return n;
}

inline bool cubin_contains(const std::vector<char>& cubin, std::string_view needle) {
  return contains(std::string_view(cubin.data(), cubin.size()), needle);
}

}  // namespace test
