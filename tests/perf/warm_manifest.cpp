// Writes a manifest of 50 specializations of the test plugin's kernels, as a deployment's
// recorded launches would look: vector_add and saxpy over tensors of varied alignment and
// length, block_reduce over varied block sizes (30 of them). bench_warm.sh times `cutejit-cache warm` on it.
#include <cstdio>

#include <cutejit/cutejit.hpp>

#include "block_reduce.hpp"
#include "saxpy.hpp"
#include "vector_add.hpp"

int main(int argc, char** argv) {
  if (argc != 2) return std::fprintf(stderr, "usage: cutejit_warm_manifest FILE\n"), 2;
  using cutejit::DeviceTensor;
  auto vector = [](uint64_t ptr, int64_t n) { return DeviceTensor<float>::make(ptr, std::array<int64_t, 1>{n}, std::array<int64_t, 1>{1}); };
  std::vector<cutejit::Specialization> specs;
  // Lengths divisible by 1, 2, 4, 8, 16; for saxpy also pointers aligned to 4, 8, 16 bytes
  // (vector_add's 16-byte accesses need 16-byte aligned data).
  for (int64_t n : {1001, 1002, 1004, 1032, 1040}) {
    specs.push_back(fixtures::vector_add.specialization(vector(256, n), vector(256, n), vector(256, n)));
    for (uint64_t ptr : {260, 264, 256}) specs.push_back(fixtures::saxpy.specialization(2.0f, vector(ptr, n), vector(ptr, n)));
  }
  for (int block = 32; specs.size() < 50; block += 32) specs.push_back(fixtures::block_reduce.specialization(vector(256, 1 << 20), vector(256, 1), block));
  std::remove(argv[1]);
  for (const cutejit::Specialization& s : specs) {
    std::string error = cutejit::append_to_manifest(argv[1], s);
    if (!error.empty()) return std::fprintf(stderr, "%s\n", error.c_str()), 1;
  }
  std::printf("%zu specializations written to %s\n", specs.size(), argv[1]);
  return 0;
}
