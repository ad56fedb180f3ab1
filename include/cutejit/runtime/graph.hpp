/** \file
 * CUDA graphs: work queued on a stream, captured once and replayed with one launch. Kernels,
 * prepared launches and asynchronous copies queued on the stream while `capture` runs the
 * callable are recorded, not run; `launch` replays them in order, with the arguments they had
 * (the same memory: write new inputs into it before each replay). What the callable does must
 * be a stream operation on that stream: a first launch that compiles or loads a module, a
 * synchronous copy or an allocation belongs before the capture (run the work once first).
 */
#pragma once

#include <functional>

#include "cutejit/runtime/stream.hpp"

namespace cutejit {

class Graph {
 public:
  /// Captures what `work` queues on `stream` (a Stream of `gpu`'s, not the legacy default
  /// stream). If `work` throws, the capture is ended and the exception passes on.
  static Graph capture(const Device& gpu, StreamHandle stream, const std::function<void()>& work);

  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;
  Graph(Graph&& o) noexcept : exec_(o.exec_), context_(o.context_) { o.exec_ = nullptr; }
  Graph& operator=(Graph&& o) noexcept;
  ~Graph();

  /// Queues the captured work on `stream`.
  void launch(StreamHandle stream) const;

 private:
  Graph(void* exec, void* context) : exec_(exec), context_(context) {}
  void* exec_ = nullptr;
  void* context_ = nullptr;
};

}  // namespace cutejit
