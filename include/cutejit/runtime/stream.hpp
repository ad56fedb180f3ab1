/** \file
 * Streams and events, the driver's CUstream and CUevent as owning, movable objects. A
 * `Stream` converts to the `StreamHandle` launches and asynchronous copies take, as does a
 * framework's stream (a cudaStream_t or a torch stream's pointer is the same CUstream); a null
 * handle is the legacy default stream. `Event::record` marks a point in a stream, and
 * `elapsed_ms(start, end)` is the GPU time between two recorded events.
 */
#pragma once

namespace cutejit {

class Device;

/// A CUstream / cudaStream_t, owned elsewhere (null: the legacy default stream).
using StreamHandle = void*;

/// A stream of the device's primary context, created non-blocking (it does not wait for the
/// legacy default stream), destroyed with the object once its work is done.
class Stream {
 public:
  explicit Stream(const Device& gpu);
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  Stream(Stream&& o) noexcept : handle_(o.handle_), context_(o.context_) { o.handle_ = nullptr; }
  Stream& operator=(Stream&& o) noexcept;
  ~Stream();

  StreamHandle handle() const { return handle_; }
  operator StreamHandle() const { return handle_; }
  /// Waits until everything queued on the stream has finished (a kernel's fault is reported here).
  void synchronize() const;

 private:
  StreamHandle handle_ = nullptr;
  void* context_ = nullptr;
};

/// A CUDA event with timing: record it on a stream, wait for it, or time the work between two.
class Event {
 public:
  explicit Event(const Device& gpu);
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  Event(Event&& o) noexcept : event_(o.event_), context_(o.context_) { o.event_ = nullptr; }
  Event& operator=(Event&& o) noexcept;
  ~Event();

  /// Marks the point after all work queued on `stream` so far.
  void record(StreamHandle stream = nullptr);
  /// Waits until the recorded point is reached.
  void synchronize() const;
  /// True once the recorded point is reached (or if the event was never recorded).
  bool done() const;
  void* handle() const { return event_; }
  void* context() const { return context_; }

 private:
  void* event_ = nullptr;
  void* context_ = nullptr;
};

/// GPU milliseconds from `start` to `end`, both recorded; waits for `end`.
float elapsed_ms(const Event& start, const Event& end);

}  // namespace cutejit
