#include "emulator/tensor_copy.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>

namespace cutejit::emulator {

namespace {

std::string str(int64_t v) { return std::to_string(v); }

// ---- number formats (private: the emulator's shared decoders are another module's) ----

/// The value of an IEEE-style binary format of `e` exponent and `m` mantissa bits (f16, bf16).
double binary_value(uint32_t raw, int e, int m) {
  const int bias = (1 << (e - 1)) - 1;
  const uint32_t exp = raw >> m & ((1u << e) - 1), man = raw & ((1u << m) - 1);
  const double sign = raw >> (e + m) & 1u ? -1.0 : 1.0;
  if (exp == (1u << e) - 1) return man ? std::numeric_limits<double>::quiet_NaN() : sign * std::numeric_limits<double>::infinity();
  if (exp == 0) return sign * std::ldexp(double(man), 1 - bias - m);
  return sign * std::ldexp(double(man | 1u << m), int(exp) - bias - m);
}

/// `v` rounded to nearest even in that format, subnormals kept; NaN is the canonical 0x7f..f.
uint32_t binary_bits(double v, int e, int m) {
  const int bias = (1 << (e - 1)) - 1;
  if (std::isnan(v)) return (1u << (e + m)) - 1;
  const uint32_t sign = std::signbit(v) ? 1u << (e + m) : 0u, infinity = ((1u << e) - 1) << m;
  const double a = std::fabs(v);
  if (std::isinf(a)) return sign | infinity;
  if (a == 0) return sign;
  int binade;
  std::frexp(a, &binade);
  int exp = std::max(binade - 1, 1 - bias);  // subnormals share the least normal exponent's quantum
  double q = std::nearbyint(std::ldexp(a, m - exp));
  if (q == std::ldexp(1.0, m + 1)) q /= 2, ++exp;
  if (q < std::ldexp(1.0, m)) return sign | uint32_t(q);
  if (exp + bias >= (1 << e) - 1) return sign | infinity;
  return sign | uint32_t(exp + bias) << m | (uint32_t(q) - (1u << m));
}

struct HalfFormat {
  int e, m;
};
HalfFormat half_format(TensorDataType t) { return t == TensorDataType::bfloat16 ? HalfFormat{8, 7} : HalfFormat{5, 10}; }

// ---- the box ----

void check_copyable(const TensorMapDescription& map, std::span<const int32_t> coords, uint64_t shared_address, const char* what) {
  const TensorDataType t = map.data_type;
  if (map.interleave != TensorInterleave::none)
    throw Fault(std::string(what) + " with an interleaved tensor map: not modelled by the emulator");
  if (tensor_element_bytes(t) == 0 || t == TensorDataType::float32_ftz || t == TensorDataType::tfloat32 ||
      t == TensorDataType::tfloat32_ftz)
    throw Fault(std::string(what) + " of tensor map data type " + str(int64_t(t)) +
                " (a packed, FTZ or TF32 type): not modelled by the emulator");
  if (map.swizzle == TensorSwizzle::b128_atom32_flip8)
    throw Fault(std::string(what) + " with the 128-byte swizzle of 32-byte atoms and 8-byte flip: not modelled by the emulator");
  if (coords.size() != map.rank)
    throw Fault(std::string(what) + " gives " + str(int64_t(coords.size())) + " coordinates for a rank-" + str(map.rank) + " tensor map");
  if (shared_address % 128)
    throw Fault(std::string(what) + ": the shared memory address " + str(int64_t(shared_address)) + " is not 128-byte aligned");
}

/// Elements the box holds along dimension `i`.
uint32_t box_count(const TensorMapDescription& map, uint32_t i) {
  return i == 0 ? map.box_dims[0] : (map.box_dims[i] + map.element_strides[i] - 1) / map.element_strides[i];
}

/// One row of the box: its elements' span along dimension 0 that lies inside the tensor, and the
/// global address of its element 0 (valid when `inside`).
struct Row {
  bool inside = false;  ///< every outer coordinate lies inside the tensor and lo < hi
  int64_t lo = 0, hi = 0;  ///< box-relative element range [lo, hi) inside the tensor
  uint64_t address = 0;    ///< global address of box element lo
};

/// Calls f(row index, Row) for every row of the box (the outer dimensions, dimension 1 fastest).
template <class F>
void for_each_row(const TensorMapDescription& map, std::span<const int32_t> coords, F&& f) {
  const uint32_t elem = tensor_element_bytes(map.data_type);
  uint64_t rows = 1;
  for (uint32_t i = 1; i < map.rank; ++i) rows *= box_count(map, i);
  const int64_t c0 = coords[0];
  const int64_t lo = std::max<int64_t>(c0, 0), hi = std::min<int64_t>(c0 + map.box_dims[0], int64_t(map.global_dims[0]));
  uint32_t j[5] = {0, 0, 0, 0, 0};
  for (uint64_t r = 0; r < rows; ++r) {
    Row row;
    row.inside = lo < hi;
    uint64_t address = map.global_address + uint64_t(lo) * elem;
    for (uint32_t i = 1; i < map.rank && row.inside; ++i) {
      const int64_t g = int64_t(coords[i]) + int64_t(j[i]) * map.element_strides[i];
      row.inside = g >= 0 && g < int64_t(map.global_dims[i]);
      address += uint64_t(g) * map.global_strides[i - 1];
    }
    if (row.inside) row = Row{true, lo - c0, hi - c0, address};
    f(r, row);
    for (uint32_t i = 1; i < map.rank; ++i) {
      if (++j[i] < box_count(map, i)) break;
      j[i] = 0;
    }
  }
}

/// A row's bytes: box[0] <= 256 elements of at most 8 bytes.
constexpr size_t max_row_bytes = 256 * 8;

void check_store(const TensorMapDescription& map, std::span<const int32_t> coords, uint64_t shared_address, const char* what) {
  check_copyable(map, coords, shared_address, what);
  for (uint32_t i = 0; i < map.rank; ++i)
    if (coords[i] < 0)
      throw Fault(std::string(what) + ": coordinate " + str(i) + " is " + str(coords[i]) +
                  "; the ISA requires a shared-to-global tensor copy's starting coordinates to be non-negative");
}

/// Reads the 16-byte chunks of a box row that hold its elements [lo, hi) into `buf`.
void read_row_chunks(const TensorMapDescription& map, Memory& shared, uint64_t row_address, const Row& row, uint8_t* buf) {
  const uint32_t elem = tensor_element_bytes(map.data_type);
  const uint64_t first = uint64_t(row.lo) * elem / 16, last = (uint64_t(row.hi) * elem + 15) / 16;
  for (uint64_t q = first; q < last; ++q) shared.read(tensor_swizzle_address(map.swizzle, row_address + 16 * q), buf + 16 * q, 16);
}

}  // namespace

BulkTensorCopy parse_bulk_tensor(std::string_view opcode) {
  const std::string op(opcode);
  BulkTensorCopy c;
  size_t pos;
  if (opcode.starts_with("cp.async.bulk.tensor.")) pos = 21;
  else if (opcode.starts_with("cp.reduce.async.bulk.tensor.")) pos = 28, c.reduce = true;
  else throw Fault("not a bulk tensor copy opcode: " + op);
  static const char* reduce_ops[] = {"add", "min", "max", "inc", "dec", "and", "or", "xor"};
  bool have_rank = false, have_op = false, mbarrier = false, bulk_group = false;
  std::string_view spaces[2];
  int space_count = 0;
  while (pos <= opcode.size()) {
    const size_t end = std::min(opcode.find('.', pos), opcode.size());
    const std::string_view q = opcode.substr(pos, end - pos);
    pos = end + 1;
    bool known = true;
    if (q.size() == 2 && q[1] == 'd' && q[0] >= '1' && q[0] <= '5') c.rank = uint32_t(q[0] - '0'), have_rank = true;
    else if (q == "shared::cta" || q == "shared::cluster" || q == "global") {
      if (space_count == 2) throw Fault(op + ": more than two state spaces");
      spaces[space_count++] = q;
    } else if (q == "tile") {
    } else if (q == "mbarrier::complete_tx::bytes") mbarrier = true;
    else if (q == "bulk_group") bulk_group = true;
    else if (q == "multicast::cluster" || q == "multicast::cluster::16b") c.multicast = true;
    else if (q == "cta_group::1") c.cta_group = 1;
    else if (q == "cta_group::2") c.cta_group = 2;
    else if (q == "L2::cache_hint") c.cache_hint = true;
    else if (q.starts_with("im2col") || q.starts_with("tile::") || q.starts_with("override") || q.starts_with("mbarrier::report") ||
             q == "multicast::cluster::32b")
      throw Fault(op + ": ." + std::string(q) + " is not modelled by the emulator");
    else {
      known = false;
      for (int i = 0; i < 8 && c.reduce; ++i)
        if (q == reduce_ops[i]) c.op = TensorReduceOp(i), have_op = known = true;
    }
    if (!known) throw Fault(op + ": unknown qualifier ." + std::string(q));
  }
  if (!have_rank || space_count != 2) throw Fault(op + ": a bulk tensor copy names its dimension (.1d-.5d) and two state spaces");
  c.to_shared = spaces[1] == "global" && spaces[0] != "global";
  c.shared_cluster = spaces[0] == "shared::cluster";
  const bool to_global = spaces[0] == "global" && spaces[1] == "shared::cta";
  if (!c.to_shared && !to_global) throw Fault(op + ": copies .global to .shared::{cta,cluster} or .shared::cta to .global only");
  if (c.to_shared ? (!mbarrier || bulk_group || c.reduce) : (!bulk_group || mbarrier || c.multicast || c.cta_group != 1))
    throw Fault(op + (c.to_shared ? ": a load completes on an mbarrier (.mbarrier::complete_tx::bytes) and cannot reduce"
                                  : ": a store completes in a bulk group (.bulk_group), without .multicast or .cta_group"));
  if (c.multicast && !c.shared_cluster) throw Fault(op + ": .multicast::cluster needs the .shared::cluster destination");
  if (c.reduce != have_op) throw Fault(op + ": cp.reduce.async.bulk.tensor names one reduction (.add .min .max .inc .dec .and .or .xor)");
  return c;
}

uint32_t tensor_box_bytes(const TensorMapDescription& map) {
  uint64_t n = tensor_element_bytes(map.data_type);
  for (uint32_t i = 0; i < map.rank; ++i) n *= box_count(map, i);
  return uint32_t(n);
}

uint32_t tensor_load(const TensorMapDescription& map, std::span<const int32_t> coords, Memory& global, Memory& shared,
                     uint64_t shared_address) {
  check_copyable(map, coords, shared_address, "cp.async.bulk.tensor (load)");
  const uint32_t elem = tensor_element_bytes(map.data_type), row_bytes = map.box_dims[0] * elem;
  uint64_t fill = 0;
  if (map.oob_fill == TensorOobFill::nan_request_zero_fma) fill = ~uint64_t(0) >> 1 >> (64 - 8 * elem);
  uint8_t filled[max_row_bytes], buf[max_row_bytes];
  for (uint32_t e = 0; e < map.box_dims[0]; ++e) std::memcpy(filled + e * elem, &fill, elem);
  for_each_row(map, coords, [&](uint64_t r, const Row& row) {
    std::memcpy(buf, filled, row_bytes);
    if (row.inside) global.read(row.address, buf + row.lo * elem, size_t(row.hi - row.lo) * elem);
    const uint64_t base = shared_address + r * row_bytes;
    if (map.swizzle == TensorSwizzle::none) return shared.write(base, buf, row_bytes);
    for (uint32_t q = 0; q < row_bytes / 16; ++q) shared.write(tensor_swizzle_address(map.swizzle, base + 16 * q), buf + 16 * q, 16);
  });
  return tensor_box_bytes(map);
}

void tensor_store(const TensorMapDescription& map, std::span<const int32_t> coords, Memory& shared, uint64_t shared_address,
                  Memory& global) {
  check_store(map, coords, shared_address, "cp.async.bulk.tensor (store)");
  const uint32_t elem = tensor_element_bytes(map.data_type), row_bytes = map.box_dims[0] * elem;
  uint8_t buf[max_row_bytes];
  for_each_row(map, coords, [&](uint64_t r, const Row& row) {
    if (!row.inside) return;
    read_row_chunks(map, shared, shared_address + r * row_bytes, row, buf);
    global.write(row.address, buf + row.lo * elem, size_t(row.hi - row.lo) * elem);
  });
}

uint64_t tensor_reduce_element(TensorReduceOp op, TensorDataType type, uint64_t old, uint64_t source) {
  using T = TensorDataType;
  using O = TensorReduceOp;
  const bool bitwise = op == O::bit_and || op == O::bit_or || op == O::bit_xor;
  switch (type) {
    case T::uint32:
    case T::int32: {
      const uint32_t a = uint32_t(old), b = uint32_t(source);
      const bool s = type == T::int32;
      switch (op) {
        case O::add: return uint32_t(a + b);
        case O::min: return s ? uint32_t(std::min(int32_t(a), int32_t(b))) : std::min(a, b);
        case O::max: return s ? uint32_t(std::max(int32_t(a), int32_t(b))) : std::max(a, b);
        case O::inc: if (!s) return a >= b ? 0u : a + 1; break;
        case O::dec: if (!s) return (a == 0 || a > b) ? b : a - 1; break;
        case O::bit_and: return a & b;
        case O::bit_or: return a | b;
        case O::bit_xor: return a ^ b;
      }
      break;
    }
    case T::uint64:
    case T::int64: {
      const bool s = type == T::int64;
      switch (op) {
        case O::add: if (!s) return old + source; break;
        case O::min: return s ? uint64_t(std::min(int64_t(old), int64_t(source))) : std::min(old, source);
        case O::max: return s ? uint64_t(std::max(int64_t(old), int64_t(source))) : std::max(old, source);
        case O::bit_and: return old & source;
        case O::bit_or: return old | source;
        case O::bit_xor: return old ^ source;
        default: break;
      }
      break;
    }
    case T::float32:
      if (op == O::add) {
        const float sum = float(double(std::bit_cast<float>(uint32_t(old))) + double(std::bit_cast<float>(uint32_t(source))));
        return std::isnan(sum) ? 0x7FFFFFFFu : std::bit_cast<uint32_t>(sum);
      }
      break;
    case T::float16:
    case T::bfloat16: {
      if (bitwise || op == O::inc || op == O::dec) break;
      const HalfFormat f = half_format(type);
      const double a = binary_value(uint32_t(old) & 0xFFFFu, f.e, f.m), b = binary_value(uint32_t(source) & 0xFFFFu, f.e, f.m);
      if (op == O::add) return binary_bits(a + b, f.e, f.m);
      if (std::isnan(a) && std::isnan(b)) return 0x7FFFu;
      if (std::isnan(a) || std::isnan(b)) return (std::isnan(a) ? source : old) & 0xFFFFu;
      const bool pick_old = a != b ? ((a < b) == (op == O::min)) : (std::signbit(a) == (op == O::min));
      return (pick_old ? old : source) & 0xFFFFu;
    }
    default: break;
  }
  static const char* names[] = {"add", "min", "max", "inc", "dec", "and", "or", "xor"};
  throw Fault(std::string("cp.reduce.async.bulk.tensor .") + names[int(op)] + " is not defined for tensor map data type " +
              str(int64_t(type)));
}

void UnsynchronizedReduce::reduce(uint64_t address, TensorReduceOp op, TensorDataType type, uint64_t source) {
  const uint32_t bytes = tensor_element_bytes(type);
  uint64_t old = 0;
  memory_.read(address, &old, bytes);
  const uint64_t result = tensor_reduce_element(op, type, old, source);
  memory_.write(address, &result, bytes);
}

void tensor_reduce(TensorReduceOp op, const TensorMapDescription& map, std::span<const int32_t> coords, Memory& shared,
                   uint64_t shared_address, ReduceMemory& global) {
  check_store(map, coords, shared_address, "cp.reduce.async.bulk.tensor");
  tensor_reduce_element(op, map.data_type, 0, 0);  // refuses an operation the type lacks before memory is touched
  const uint32_t elem = tensor_element_bytes(map.data_type), row_bytes = map.box_dims[0] * elem;
  uint8_t buf[max_row_bytes];
  for_each_row(map, coords, [&](uint64_t r, const Row& row) {
    if (!row.inside) return;
    read_row_chunks(map, shared, shared_address + r * row_bytes, row, buf);
    for (int64_t e = row.lo; e < row.hi; ++e) {
      uint64_t source = 0;
      std::memcpy(&source, buf + e * elem, elem);
      global.reduce(row.address + uint64_t(e - row.lo) * elem, op, map.data_type, source);
    }
  });
}

void bulk_copy(Memory& from, uint64_t source, Memory& to, uint64_t destination, uint32_t size) {
  if (source % 16 || destination % 16 || size % 16)
    throw Fault("cp.async.bulk of " + str(size) + " bytes from " + str(int64_t(source)) + " to " + str(int64_t(destination)) +
                ": both addresses must be 16-byte aligned and the size a multiple of 16");
  uint8_t buf[4096];
  for (uint32_t done = 0; done < size;) {
    const uint32_t n = std::min<uint32_t>(size - done, sizeof buf);
    from.read(source + done, buf, n);
    to.write(destination + done, buf, n);
    done += n;
  }
}

}  // namespace cutejit::emulator
