// A stand-in for NVSHMEM's host library of another release (2.11.0), built as
// fake_nvshmem/lib/libnvshmem_host.so.3: what cutejit must refuse with a clear message.
extern "C" void nvshmemx_vendor_get_version_info(int* major, int* minor, int* patch) {
  *major = 2;
  *minor = 11;
  *patch = 0;
}
