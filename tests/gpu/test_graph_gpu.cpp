// Launches take part in CUDA graph capture: kernels launched on a capturing stream (plain and
// prepared launches) are recorded, not run, and replaying the graph runs them in order; first
// through the driver's own calls (the GPU only), then through cutejit::Graph (the emulated
// device too, which keeps a captured stream's calls).
#include <catch2/catch.hpp>

#include <dlfcn.h>

#include <cuda.h>

#include <vector>

#include <cutejit/runtime/graph.hpp>

#include "support.hpp"

using namespace cutejit;

namespace {
Kernel add_one{"add_one", [](Tensor<i32> x) {
  Int i = block_idx().x * block_dim().x + thread_idx().x;
  if_(i < size(x), [&] { x(i) = Int(x(i)) + 1; });
}};
Kernel times_two{"times_two", [](Tensor<i32> x) {
  Int i = block_idx().x * block_dim().x + thread_idx().x;
  if_(i < size(x), [&] { x(i) = Int(x(i)) * 2; });
}};

/// The driver entry points the test needs, from the driver the process already loaded.
struct GraphApi {
  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  template <class F> F get(const char* name) { return reinterpret_cast<F>(dlsym(lib, name)); }
  decltype(&cuStreamCreate) stream_create = get<decltype(&cuStreamCreate)>("cuStreamCreate");
  decltype(&cuStreamDestroy) stream_destroy = get<decltype(&cuStreamDestroy)>("cuStreamDestroy_v2");
  decltype(&cuStreamBeginCapture) begin = get<decltype(&cuStreamBeginCapture)>("cuStreamBeginCapture_v2");
  decltype(&cuStreamEndCapture) end = get<decltype(&cuStreamEndCapture)>("cuStreamEndCapture");
  decltype(&cuGraphInstantiateWithFlags) instantiate = get<decltype(&cuGraphInstantiateWithFlags)>("cuGraphInstantiateWithFlags");
  decltype(&cuGraphLaunch) launch = get<decltype(&cuGraphLaunch)>("cuGraphLaunch");
  decltype(&cuStreamSynchronize) sync = get<decltype(&cuStreamSynchronize)>("cuStreamSynchronize");
  decltype(&cuGraphExecDestroy) exec_destroy = get<decltype(&cuGraphExecDestroy)>("cuGraphExecDestroy");
  decltype(&cuGraphDestroy) graph_destroy = get<decltype(&cuGraphDestroy)>("cuGraphDestroy");
};
}  // namespace

TEST_CASE("kernel launches are captured into a CUDA graph and replay in order", "[gpu][gpu_runtime]") {
  Device gpu;
  const int n = 4096;
  auto x = gpu.upload(std::vector<int32_t>(n, 1));
  Launch cfg{.grid = n / 256, .block = 256};
  // Compile and load outside the capture: loading a module is not a stream operation.
  add_one(gpu, cfg, x);
  times_two(gpu, cfg, x);
  gpu.synchronize();  // x = (1 + 1) * 2 = 4

  GraphApi api;
  REQUIRE(api.lib);
  REQUIRE(api.begin);
  CUstream stream = nullptr;
  REQUIRE(api.stream_create(&stream, CU_STREAM_NON_BLOCKING) == CUDA_SUCCESS);
  cfg.stream = stream;
  PreparedLaunch doubled = times_two.prepare(gpu, cfg, x);
  REQUIRE(api.begin(stream, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL) == CUDA_SUCCESS);
  add_one(gpu, cfg, x);  // a plain launch...
  doubled();             // ...and a prepared one, both recorded
  CUgraph graph = nullptr;
  REQUIRE(api.end(stream, &graph) == CUDA_SUCCESS);
  CHECK(x.to_host() == std::vector<int32_t>(n, 4));  // captured, not run

  CUgraphExec exec = nullptr;
  REQUIRE(api.instantiate(&exec, graph, 0) == CUDA_SUCCESS);
  for (int replay = 0; replay < 3; ++replay) REQUIRE(api.launch(exec, stream) == CUDA_SUCCESS);
  REQUIRE(api.sync(stream) == CUDA_SUCCESS);
  CHECK(x.to_host() == std::vector<int32_t>(n, ((((4 + 1) * 2 + 1) * 2) + 1) * 2));  // three replays of (+1, *2)
  api.exec_destroy(exec);
  api.graph_destroy(graph);
  api.stream_destroy(stream);
}

TEST_CASE("Graph captures launches and copies queued on a stream, and each launch replays them in order", "[gpu]") {
  Device gpu;
  const int n = 4096;
  auto x = gpu.upload(std::vector<int32_t>(n, 1)), y = gpu.alloc<int32_t>(n);
  Launch cfg{.grid = n / 256, .block = 256};
  add_one(gpu, cfg, x);  // compiled and loaded before the capture
  times_two(gpu, cfg, x);
  gpu.synchronize();  // x = 4
  Stream stream(gpu);
  cfg.stream = stream;
  PreparedLaunch doubled = times_two.prepare(gpu, cfg, x);
  Graph graph = Graph::capture(gpu, stream, [&] {
    add_one(gpu, cfg, x);
    doubled();
    y.copy_from(x, stream);
  });
  stream.synchronize();
  CHECK(x.to_host() == std::vector<int32_t>(n, 4));  // recorded, not run
  graph.launch(stream);
  graph.launch(stream);
  stream.synchronize();
  CHECK(x.to_host() == std::vector<int32_t>(n, ((4 + 1) * 2 + 1) * 2));
  CHECK(y.to_host() == x.to_host());
  // The legacy default stream cannot be captured; a capture whose work throws ends, and the
  // stream runs work again.
  CHECK_THROWS_WITH(Graph::capture(gpu, nullptr, [] {}), Catch::Contains("legacy default stream cannot be captured"));
  CHECK_THROWS_WITH(Graph::capture(gpu, stream, [&] {
    add_one(gpu, cfg, x);
    throw Error("error: stop");
  }), Catch::Contains("stop"));
  add_one(gpu, cfg, x);
  stream.synchronize();
  CHECK(x.to_host() == std::vector<int32_t>(n, 23));
}
