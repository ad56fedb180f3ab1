// Streams, events, pinned host memory and the asynchronous buffer operations, through the
// dlopen'ed driver. Each call makes the object's context current first: the primary context
// is shared with the CUDA runtime, but the calling thread may have another one current.
#include "cutejit/runtime/stream.hpp"

#include <string>

#include "cutejit/core/error.hpp"
#include "cutejit/runtime/buffer.hpp"
#include "cutejit/runtime/device.hpp"
#include "cutejit/runtime/pinned.hpp"
#include "driver/driver.hpp"
#include "driver/emulated_driver.hpp"

namespace cutejit {

namespace {
/// Whether the driver of `context` can be called (an emulated device's always can).
bool usable(void* context) { return detail::emulated_driver_for(context) || detail::Driver::available(); }

const detail::Driver& current(void* context) {
  const detail::Driver& d = detail::Driver::of(context);
  d.check(d.cuCtxSetCurrent(static_cast<CUcontext>(context)), "cuCtxSetCurrent");
  return d;
}
CUstream stream_of(StreamHandle s) { return static_cast<CUstream>(s); }
}  // namespace

Stream::Stream(const Device& gpu) : context_(gpu.context()) {
  const detail::Driver& d = current(context_);
  CUstream s = nullptr;
  d.check(d.cuStreamCreate(&s, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
  handle_ = s;
}

Stream& Stream::operator=(Stream&& o) noexcept {
  if (this != &o) {
    this->~Stream();
    handle_ = o.handle_, context_ = o.context_;
    o.handle_ = nullptr;
  }
  return *this;
}

Stream::~Stream() {
  if (!handle_ || !usable(context_)) return;
  const detail::Driver& d = detail::Driver::of(context_);
  d.cuCtxSetCurrent(static_cast<CUcontext>(context_));
  d.cuStreamDestroy(stream_of(handle_));  // returns at once; the driver frees it when its work is done
  handle_ = nullptr;
}

void Stream::synchronize() const {
  const detail::Driver& d = current(context_);
  d.check(d.cuStreamSynchronize(stream_of(handle_)), "cuStreamSynchronize (a kernel failed; the error may come from an earlier launch)");
}

Event::Event(const Device& gpu) : context_(gpu.context()) {
  const detail::Driver& d = current(context_);
  CUevent e = nullptr;
  d.check(d.cuEventCreate(&e, CU_EVENT_DEFAULT), "cuEventCreate");
  event_ = e;
}

Event& Event::operator=(Event&& o) noexcept {
  if (this != &o) {
    this->~Event();
    event_ = o.event_, context_ = o.context_;
    o.event_ = nullptr;
  }
  return *this;
}

Event::~Event() {
  if (!event_ || !usable(context_)) return;
  const detail::Driver& d = detail::Driver::of(context_);
  d.cuCtxSetCurrent(static_cast<CUcontext>(context_));
  d.cuEventDestroy(static_cast<CUevent>(event_));
  event_ = nullptr;
}

void Event::record(StreamHandle stream) {
  const detail::Driver& d = current(context_);
  d.check(d.cuEventRecord(static_cast<CUevent>(event_), stream_of(stream)), "cuEventRecord");
}

void Event::synchronize() const {
  const detail::Driver& d = current(context_);
  d.check(d.cuEventSynchronize(static_cast<CUevent>(event_)), "cuEventSynchronize (a kernel failed; the error may come from an earlier launch)");
}

bool Event::done() const {
  const detail::Driver& d = current(context_);
  CUresult rc = d.cuEventQuery(static_cast<CUevent>(event_));
  if (rc == CUDA_ERROR_NOT_READY) return false;
  d.check(rc, "cuEventQuery");
  return true;
}

float elapsed_ms(const Event& start, const Event& end) {
  end.synchronize();
  const detail::Driver& d = detail::Driver::of(end.context());
  float ms = 0;
  d.check(d.cuEventElapsedTime(&ms, static_cast<CUevent>(start.handle()), static_cast<CUevent>(end.handle())),
          "cuEventElapsedTime (were both events recorded, start before end?)");
  return ms;
}

namespace detail {

void fill_device(uint64_t dst, uint32_t bits, int element_bytes, size_t count, StreamHandle stream, void* context) {
  if (count == 0) return;
  const Driver& d = current(context);
  switch (element_bytes) {
    case 1: d.check(d.cuMemsetD8Async(dst, static_cast<unsigned char>(bits), count, stream_of(stream)), "cuMemsetD8Async"); break;
    case 2: d.check(d.cuMemsetD16Async(dst, static_cast<unsigned short>(bits), count, stream_of(stream)), "cuMemsetD16Async"); break;
    case 4: d.check(d.cuMemsetD32Async(dst, bits, count, stream_of(stream)), "cuMemsetD32Async"); break;
    default: throw Error("error: a device fill sets 1-, 2- or 4-byte elements, not " + std::to_string(element_bytes) + "-byte ones");
  }
}

void copy_device_to_device(uint64_t dst, uint64_t src, size_t bytes, StreamHandle stream, void* context) {
  if (bytes == 0) return;
  const Driver& d = current(context);
  d.check(d.cuMemcpyDtoDAsync(dst, src, bytes, stream_of(stream)), "cuMemcpyDtoDAsync");
}

void copy_to_device_async(uint64_t dst, const void* src, size_t bytes, StreamHandle stream, void* context) {
  if (bytes == 0) return;
  const Driver& d = current(context);
  d.check(d.cuMemcpyHtoDAsync(dst, src, bytes, stream_of(stream)), "cuMemcpyHtoDAsync");
}

void copy_to_host_async(void* dst, uint64_t src, size_t bytes, StreamHandle stream, void* context) {
  if (bytes == 0) return;
  const Driver& d = current(context);
  d.check(d.cuMemcpyDtoHAsync(dst, src, bytes, stream_of(stream)), "cuMemcpyDtoHAsync");
}

void check_transfer(const char* what, size_t given, size_t count) {
  if (given != count)
    throw Error(std::string("error: ") + what + " moves a whole buffer: " + std::to_string(count) + " elements, not " +
                std::to_string(given) + " (make a buffer of that size, or a span of exactly the buffer's)");
}

void* allocate_pinned(size_t bytes, void* context) {
  if (bytes == 0) return nullptr;
  const Driver& d = current(context);
  void* p = nullptr;
  d.check(d.cuMemAllocHost(&p, bytes), "cuMemAllocHost");
  return p;
}

void free_pinned(void* p, void* context) noexcept {
  if (!p || !usable(context)) return;
  const Driver& d = Driver::of(context);
  d.cuCtxSetCurrent(static_cast<CUcontext>(context));
  d.cuMemFreeHost(p);
}

}  // namespace detail
}  // namespace cutejit
