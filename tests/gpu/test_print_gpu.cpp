// Device printf and print_tensor, their output read back from the process's stdout: what a user
// debugging a kernel sees, checked character by character.
#include <catch2/catch.hpp>

#include <cutejit/cutejit.hpp>
#include <cutejit/tensor/print_tensor.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

using namespace cutejit;

namespace {
/// What `run` (which launches and synchronizes) makes the device print on stdout.
template <class F>
std::string stdout_of(F&& run) {
  std::fflush(stdout);
  auto path = std::filesystem::temp_directory_path() / ("cutejit_printf_" + std::to_string(getpid()));
  int saved = dup(1), file = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  REQUIRE((saved >= 0 && file >= 0));
  dup2(file, 1);
  run();
  std::fflush(stdout);
  dup2(saved, 1);
  close(saved);
  close(file);
  std::ifstream in(path);
  std::string text((std::istreambuf_iterator<char>(in)), {});
  std::filesystem::remove(path);
  return text;
}

Kernel printing{"printing_gpu", [](Tensor<f32> x, Tensor<i32> m) {
  if_(thread_idx().x == 0, [&] {
    device_printf("block %d of %d, x[1] = %f\n", Int(block_idx().x), Int(grid_dim().x), cast<double>(F32(x(1))));
    // The first 2 x 3 of m, column-major as its layout says, and the first four of x.
    print_tensor(make_tensor(m.data(), make_layout(IntTuple{2, 3})));
    print_tensor(make_tensor(x.data(), make_layout(IntTuple(4))));
  });
}};
}  // namespace

TEST_CASE("device printf and print_tensor print what the host expects", "[gpu]") {
  Device gpu;
  auto x = gpu.upload(std::vector<float>{0.5f, -1.25f, 3.0f, 1e6f});
  auto m = gpu.upload(std::vector<int32_t>{1, 2, 3, 4, -5, 6});
  std::string out = stdout_of([&] {
    printing(gpu, Launch{.grid = 1, .block = 32}, x.view({4}), m.view({6}));
    gpu.synchronize();
  });
  CHECK(out ==
        "block 0 of 1, x[1] = -1.250000\n"
        "tensor (2,3):(1,2):\n"
        "       1      3     -5\n"
        "       2      4      6\n"
        "tensor 4:1:\n"
        "         0.5      -1.25          3      1e+06\n");
}
