// Writes the manifest of the launches consumer.cpp makes: what CUTEJIT_RECORD would record if
// the consumer were a cutejit program (its buffers are cuMemAlloc'd: 256-byte aligned).
#include <cstdio>

#include <cutejit/cutejit.hpp>

#include "block_reduce.hpp"
#include "saxpy.hpp"
#include "vector_add.hpp"

int main(int argc, char** argv) {
  if (argc != 2) return std::fprintf(stderr, "usage: write_manifest FILE\n"), 2;
  using cutejit::DeviceTensor;
  auto vector = [](int64_t n) { return DeviceTensor<float>::make(256, std::array<int64_t, 1>{n}, std::array<int64_t, 1>{1}); };
  auto v = vector(1 << 20), one = vector(1);
  std::remove(argv[1]);
  for (const cutejit::Specialization& s : {fixtures::vector_add.specialization(v, v, v), fixtures::saxpy.specialization(2.0f, v, v),
                                           fixtures::block_reduce.specialization(v, one, 256)}) {
    std::string error = cutejit::append_to_manifest(argv[1], s);
    if (!error.empty()) return std::fprintf(stderr, "%s\n", error.c_str()), 1;
  }
  return 0;
}
