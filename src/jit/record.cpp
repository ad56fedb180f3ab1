#include "jit/record.hpp"

#include <cstdio>
#include <cstdlib>
#include <mutex>

#include "cutejit/jit/specialization.hpp"

namespace cutejit::detail {

void record_launch(const std::string& kernel, const Key& key, const Target& target) {
  const char* file = std::getenv("CUTEJIT_RECORD");
  if (!file || !*file) return;
  Specialization s{kernel, std::vector<uint64_t>(key.words.begin(), key.words.begin() + key.size), target.name()};
  std::string error = append_to_manifest(file, s);
  static std::once_flag warned;
  if (!error.empty())
    std::call_once(warned, [&] { std::fprintf(stderr, "cutejit: warning: CUTEJIT_RECORD: %s; launches are not recorded\n", error.c_str()); });
}

}  // namespace cutejit::detail
