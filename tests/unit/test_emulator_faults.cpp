// Kernels with planted faults on the emulated device: each launch fails with a report naming
// the kernel, the thread and the line of this file where the fault is, and the device runs the
// next launch as if nothing had happened.
#include <catch2/catch.hpp>

#include <cutejit/cutejit.hpp>
#include <cutejit/pipeline/mbarrier.hpp>

#include <functional>
#include <string>
#include <vector>

using namespace cutejit;

namespace {

constexpr int store_line = __LINE__ + 3;
Kernel fill_one{"fill_one", [](Tensor<f32> x) {
  Int i = thread_idx().x;
  x(i) = F32(1.0f);
}};

constexpr int wait_line = __LINE__ + 6;
Kernel wait_forever{"wait_forever", [](Tensor<i32> out) {
  Pointer<uint64_t> bar = shared_array<uint64_t>(1, 8);
  if_(thread_idx().x == 0, [&] { mbarrier_init(bar, 2); });
  sync_threads();
  mbarrier_arrive(bar);
  mbarrier_wait(bar, 0);
  out(0) = Int(1);
}};

constexpr int race_line = __LINE__ + 5;
Kernel racy{"racy", [](Tensor<i32> out, Constexpr<int> synchronise) {
  Pointer<int32_t> slot = shared_array<int32_t>(1, 4);
  if_(thread_idx().x == 0, [&] { slot[0] = Int(7); });
  if (synchronise) sync_threads();
  if_(thread_idx().x == 32, [&] { out(0) = Int(slot[0]); });
}};

constexpr int video_line = __LINE__ + 3;
Kernel video{"video", [](Tensor<i32> out) {
  Int a = thread_idx().x;
  out(a) = inline_ptx<int32_t>("vabsdiff.s32.s32.s32 $0, $1, $2, $3;", "=r,r,r,r", a, a, a);
}};

std::string failure(const std::function<void()>& launch) {
  try {
    launch();
  } catch (const Error& e) {
    return std::string(e.what());
  }
  return "";
}

bool names_line(const std::string& report, int line) {
  return report.find("test_emulator_faults.cpp:" + std::to_string(line)) != std::string::npos;
}

}  // namespace

TEST_CASE("the emulated device reports an out-of-bounds store at the kernel's line, then runs on", "[emulator]") {
  Device dev = Device::emulated(Target::parse("sm_90a"));
  auto x = dev.alloc<float>(32);
  std::string report = failure([&] { fill_one(dev, Launch{.grid = 1, .block = 64}, x); });
  INFO(report);
  CHECK(names_line(report, store_line));
  CHECK(report.find("'fill_one'") != std::string::npos);
  CHECK(report.find("thread (32, 0, 0)") != std::string::npos);
  CHECK(report.find("out of bounds") != std::string::npos);
  // The same device runs a correct launch next.
  fill_one(dev, Launch{.grid = 1, .block = 32}, x);
  dev.synchronize();
  CHECK(x.to_host() == std::vector<float>(32, 1.0f));
}

TEST_CASE("the emulated device reports a deadlock on an mbarrier phase with the waiting line", "[emulator]") {
  Device dev = Device::emulated(Target::parse("sm_90a"));
  auto out = dev.upload(std::vector<int32_t>(1, 0));
  // One thread arrives where the barrier expects two: the phase never completes.
  std::string report = failure([&] { wait_forever(dev, Launch{.grid = 1, .block = 1}, out); });
  INFO(report);
  CHECK(report.find("deadlock") != std::string::npos);
  CHECK(names_line(report, wait_line));
  // Two threads complete it.
  wait_forever(dev, Launch{.grid = 1, .block = 2}, out);
  CHECK(out.to_host()[0] == 1);
}

TEST_CASE("the emulated device reports a shared-memory race between two warps at the reading line", "[emulator]") {
  Device dev = Device::emulated(Target::parse("sm_90a"));
  auto out = dev.upload(std::vector<int32_t>(1, 0));
  std::string report = failure([&] { racy(dev, Launch{.grid = 1, .block = 64}, out, 0); });
  INFO(report);
  CHECK(report.find("data race") != std::string::npos);
  CHECK(names_line(report, race_line));
  racy(dev, Launch{.grid = 1, .block = 64}, out, 1);
  CHECK(out.to_host()[0] == 7);
}

TEST_CASE("an instruction the emulated device does not run is named, with its line", "[emulator]") {
  Device dev = Device::emulated(Target::parse("sm_100a"));
  auto out = dev.alloc<int32_t>(32);
  std::string report = failure([&] { video(dev, Launch{.grid = 1, .block = 32}, out); });
  INFO(report);
  CHECK(report.find("vabsdiff") != std::string::npos);
  CHECK(names_line(report, video_line));
}
