// The host's share of a launch, before the driver is called, with no GPU: what a launch of an
// already loaded specialization costs cutejit for three and for eight tensors (the Python launch
// figures' kernels), and the run-time-typed steps a launch from Python adds (a DLPack view of
// each tensor, its conversion to the parameter's host type). Lookups run against an emulated
// device's loaded functions, as they do against a GPU's. Medians of 41 rounds of 20000 calls.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <new>
#include <string>
#include <vector>

#include <cutejit/cutejit.hpp>
#include <cutejit/interop/dlpack.hpp>

#include "sum7.hpp"
#include "vector_add.hpp"

using namespace cutejit;
using fixtures::sum7;
using fixtures::vector_add;

namespace {

volatile uint64_t sink;

template <class F>
double median_ns(F&& f) {
  const int rounds = 41, calls = 20000;
  std::vector<double> per;
  for (int r = 0; r < rounds; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < calls; ++i) f();
    per.push_back(std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count() / calls);
  }
  std::sort(per.begin(), per.end());
  return per[per.size() / 2];
}

}  // namespace

int main() {
  setenv("CUTEJIT_CACHE", "off", 0);
  Device device = Device::emulated(Target::parse("sm_90a"));
  const int64_t n = 1024;
  std::vector<Buffer<float>> buffers;
  std::vector<DeviceTensor<f32>> t;
  for (int i = 0; i < 8; ++i) buffers.push_back(device.alloc<float>(n));
  for (const auto& b : buffers) t.push_back(DeviceTensor<f32>(b));
  const Launch cfg{.grid = uint32_t(n / 256), .block = 256};

  // What a launch does before the driver: specialize, check and pack the arguments, find the
  // loaded function (a PreparedLaunch is made with exactly that, and launches without it).
  vector_add.prepare(device, cfg, t[0], t[1], t[2]);
  sum7.prepare(device, cfg, t[0], t[1], t[2], t[3], t[4], t[5], t[6], t[7]);
  const double resolve3 = median_ns([&] {
    PreparedLaunch p = vector_add.prepare(device, cfg, t[0], t[1], t[2]);
    sink = sink + uint64_t(&p != nullptr);
  });
  const double resolve8 = median_ns([&] {
    PreparedLaunch p = sum7.prepare(device, cfg, t[0], t[1], t[2], t[3], t[4], t[5], t[6], t[7]);
    sink = sink + uint64_t(&p != nullptr);
  });

  // A launch from Python: each tensor's DLTensor to a run-time-typed argument, then that to its
  // parameter's host type.
  const int64_t shape[1] = {n}, stride[1] = {1};
  std::vector<DLTensor> dl(8);
  for (int i = 0; i < 8; ++i) {
    dl[size_t(i)] = DLTensor{};
    dl[size_t(i)].data = reinterpret_cast<void*>(buffers[size_t(i)].data());
    dl[size_t(i)].device = DLDevice{kDLCUDA, 0};
    dl[size_t(i)].ndim = 1;
    dl[size_t(i)].dtype = DLDataType{kDLFloat, 32, 1};
    dl[size_t(i)].shape = const_cast<int64_t*>(shape);
    dl[size_t(i)].strides = const_cast<int64_t*>(stride);
  }
  const double views8 = median_ns([&] {
    alignas(DynamicArg) unsigned char room[8 * sizeof(DynamicArg)];
    auto* args = reinterpret_cast<DynamicArg*>(room);
    for (int i = 0; i < 8; ++i) new (args + i) DynamicArg(dynamic_arg_from_dlpack(dl[size_t(i)], 0));
    sink = sink + args[7].ptr;
  });
  std::vector<DynamicArg> args;
  for (const DLTensor& d : dl) args.push_back(dynamic_arg_from_dlpack(d, 0));
  const std::string name = sum7.name();
  const double converted8 = median_ns([&] {
    uint64_t s = 0;
    for (int i = 0; i < 8; ++i) s += detail::FromDynamic<Tensor<f32>>::convert(args[size_t(i)], name, i).ptr;
    sink = sink + s;
  });

  std::printf("launch_host: resolve (specialize, check, pack, find) 3 tensors %.1f ns, 8 tensors %.1f ns\n", resolve3, resolve8);
  std::printf("launch_host_python: 8 DLPack views %.1f ns, 8 conversions to DeviceTensor %.1f ns\n", views8, converted8);
  return 0;
}
