// CUDA graphs through the dlopen'ed driver (or the emulated device's, which keeps a captured
// stream's calls and replays them).
#include "cutejit/runtime/graph.hpp"

#include "cutejit/core/error.hpp"
#include "cutejit/runtime/device.hpp"
#include "driver/driver.hpp"
#include "driver/emulated_driver.hpp"

namespace cutejit {

namespace {
const detail::Driver& current(void* context) {
  const detail::Driver& d = detail::Driver::of(context);
  d.check(d.cuCtxSetCurrent(static_cast<CUcontext>(context)), "cuCtxSetCurrent");
  return d;
}
}  // namespace

Graph Graph::capture(const Device& gpu, StreamHandle stream, const std::function<void()>& work) {
  if (!stream) throw Error("error: Graph::capture: the legacy default stream cannot be captured; capture a Stream of the device's");
  const detail::Driver& d = current(gpu.context());
  const auto s = static_cast<CUstream>(stream);
  d.check(d.cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL), "cuStreamBeginCapture");
  CUgraph graph = nullptr;
  try {
    work();
  } catch (...) {
    d.cuStreamEndCapture(s, &graph);  // the stream leaves capture mode; what was recorded is dropped
    if (graph) d.cuGraphDestroy(graph);
    throw;
  }
  d.check(d.cuStreamEndCapture(s, &graph), "cuStreamEndCapture (a call inside the capture was not a stream operation)");
  CUgraphExec exec = nullptr;
  const CUresult rc = d.cuGraphInstantiateWithFlags(&exec, graph, 0);
  d.cuGraphDestroy(graph);
  d.check(rc, "cuGraphInstantiateWithFlags");
  return Graph(exec, gpu.context());
}

Graph& Graph::operator=(Graph&& o) noexcept {
  if (this != &o) {
    this->~Graph();
    exec_ = o.exec_, context_ = o.context_;
    o.exec_ = nullptr;
  }
  return *this;
}

Graph::~Graph() {
  if (!exec_) return;
  const detail::Driver& d = detail::Driver::of(context_);
  d.cuGraphExecDestroy(static_cast<CUgraphExec>(exec_));
  exec_ = nullptr;
}

void Graph::launch(StreamHandle stream) const {
  const detail::Driver& d = current(context_);
  d.check(d.cuGraphLaunch(static_cast<CUgraphExec>(exec_), static_cast<CUstream>(stream)), "cuGraphLaunch");
}

}  // namespace cutejit
