// The test runner. Asked for the [gpu] suite on a machine with no GPU, it says so and exits
// with 77, which CTest reports as skipped, so a GPU test that did not run never looks passed.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <cstdio>
#include <string_view>

#include <cutejit/runtime/device.hpp>

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i)
    if (std::string_view(argv[i]) == "[gpu]" && cutejit::Device::count() == 0) {
      std::printf("SKIPPED: the [gpu] tests need an NVIDIA GPU and its driver; none found on this machine.\n");
      return 77;
    }
  return Catch::Session().run(argc, argv);
}
