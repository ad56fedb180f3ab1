#include "export_header.hpp"

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>

#include <cutejit/core/error.hpp>

namespace cli {

namespace {

using cutejit::DType;
using cutejit::detail::ParamKind;
using cutejit::detail::TensorFacts;
using cutejit::detail::TensorMapFacts;

std::string c_type(DType t) {
  switch (t) {
    case DType::i1: return "bool";
    case DType::i8: return "int8_t";
    case DType::i16: return "int16_t";
    case DType::i32: return "int32_t";
    case DType::i64: return "int64_t";
    case DType::u8: return "uint8_t";
    case DType::u16: return "uint16_t";
    case DType::u32: return "uint32_t";
    case DType::u64: return "uint64_t";
    case DType::f32: return "float";
    case DType::f64: return "double";
    default: return std::string(cutejit::name(t));  // a storage struct the header defines
  }
}
bool is_storage_type(DType t) { return c_type(t) == cutejit::name(t); }

std::string hex(uint64_t w) {
  char text[24];
  std::snprintf(text, sizeof text, "0x%llxull", static_cast<unsigned long long>(w));
  return text;
}

/// One parameter of one specialization, read back from its words.
struct Param {
  ParamKind kind;
  DType element;
  TensorFacts facts;       // tensor
  uint64_t constant = 0;   // constant: the value's bits
  TensorMapFacts map;      // tensor map: rank, swizzle and box, as specialized
  std::string type;        // the C++ type the launch function takes
};

/// A specialization: its parameters, its binaries (one per target) and its index.
struct Spec {
  const ExportedKernel* first = nullptr;
  std::vector<Param> params;
  std::vector<const ExportedKernel*> binaries;
  int index = 0;
  std::string signature() const {
    std::string s;
    for (const Param& p : params) s += p.type + ";";
    return s;
  }
  int specificity() const {
    int n = 0;
    for (const Param& p : params)
      if (p.kind == ParamKind::tensor)
        for (int d = 0; d < p.facts.rank; ++d)
          n += p.facts.shape_log2[d] + (p.facts.unit_stride[d] ? 5 : p.facts.stride_log2[d]) + (d == 0 ? p.facts.alignment_log2 : 0);
    return n;
  }
};

std::vector<Param> read_params(const ExportedKernel& k, const std::vector<std::string>& constant_types) {
  std::vector<Param> out;
  const std::vector<uint64_t>& w = k.specialization.words;
  for (size_t i = 0; i < w.size(); i += size_t(cutejit::detail::param_words(cutejit::detail::param_kind(w[i])))) {
    Param p{cutejit::detail::param_kind(w[i]), cutejit::detail::param_dtype(w[i]), {}, 0, {}, ""};
    switch (p.kind) {
      case ParamKind::tensor:
        p.facts = TensorFacts::decode(w[i]);
        p.type = "Tensor<" + c_type(p.element) + ", " + std::to_string(p.facts.rank) + ">";
        break;
      case ParamKind::scalar: p.type = c_type(p.element); break;
      case ParamKind::constant:
        p.constant = w[i + 1];
        p.type = out.size() < constant_types.size() ? constant_types[out.size()] : "";
        if (p.type.empty())
          throw cutejit::Error("error: cannot export kernel '" + k.specialization.kernel + "': its parameter " + std::to_string(out.size()) +
                               " is a Constexpr whose value is not a number, bool or enum");
        break;
      case ParamKind::tensor_map:
        p.map = TensorMapFacts::decode(&w[i]);
        p.type = "const CUtensorMap&";
        break;
      default: throw cutejit::Error("error: cannot export kernel '" + k.specialization.kernel + "': unknown parameter kind");
    }
    out.push_back(p);
  }
  return out;
}

/// A Constexpr's value as its C++ type prints it.
std::string constant_text(const Param& p) {
  const std::string& t = p.type;
  auto bits_as = [&]<class T>(T) {
    T v;
    std::memcpy(&v, &p.constant, sizeof(T));
    return v;
  };
  char text[64];
  if (t == "bool") return p.constant ? "true" : "false";
  if (t == "float") return std::snprintf(text, sizeof text, "%.9g", double(bits_as(0.0f))), text;
  if (t == "double") return std::snprintf(text, sizeof text, "%.17g", bits_as(0.0)), text;
  if (t.starts_with("int")) {
    int bits = std::stoi(t.substr(3));
    int64_t v = bits == 64 ? int64_t(p.constant) : int64_t(p.constant << (64 - bits)) >> (64 - bits);  // sign-extend
    return std::to_string(v);
  }
  return std::to_string(p.constant);  // unsigned
}

/// When arguments may use this specialization: what its words assumed about them holds.
std::string condition(const Spec& s) {
  std::vector<std::string> terms;
  for (size_t i = 0; i < s.params.size(); ++i) {
    const Param& p = s.params[i];
    std::string a = "arg" + std::to_string(i);
    if (p.kind == ParamKind::tensor) {
      if (p.facts.alignment_log2 > 0) terms.push_back("detail::aligned(" + a + ".data, " + std::to_string(1 << p.facts.alignment_log2) + ")");
      for (int d = 0; d < p.facts.rank; ++d) {
        std::string ds = std::to_string(d);
        if (p.facts.shape_log2[d] > 0) terms.push_back(a + ".shape[" + ds + "] % " + std::to_string(1 << p.facts.shape_log2[d]) + " == 0");
        if (p.facts.unit_stride[d]) terms.push_back(a + ".stride[" + ds + "] == 1");
        else if (p.facts.stride_log2[d] > 0)
          terms.push_back(a + ".stride[" + ds + "] % " + std::to_string(1 << p.facts.stride_log2[d]) + " == 0");
      }
    } else if (p.kind == ParamKind::constant) {
      terms.push_back("detail::same_bits(" + a + ", " + hex(p.constant) + ")");
    }
  }
  if (terms.empty()) return "true";
  std::string out;
  for (size_t i = 0; i < terms.size(); ++i) out += (i ? " &&\n      " : "") + terms[i];
  return out;
}

std::string describe(const Spec& s) {
  std::string out;
  for (size_t i = 0; i < s.params.size(); ++i) {
    const Param& p = s.params[i];
    std::string a = "arg" + std::to_string(i);
    if (p.kind == ParamKind::tensor) {
      out += "//   " + a + ": data aligned to " + std::to_string(1 << p.facts.alignment_log2) + " bytes";
      for (int d = 0; d < p.facts.rank; ++d)
        out += std::string(", shape[") + std::to_string(d) + "] % " + std::to_string(1 << p.facts.shape_log2[d]) + " == 0" +
               (p.facts.unit_stride[d] ? ", stride[" + std::to_string(d) + "] == 1"
                                       : ", stride[" + std::to_string(d) + "] % " + std::to_string(1 << p.facts.stride_log2[d]) + " == 0");
      out += "\n";
    } else if (p.kind == ParamKind::constant) {
      out += "//   " + a + " == " + constant_text(p) + "\n";
    } else if (p.kind == ParamKind::tensor_map) {
      int swizzle = p.map.swizzle_bytes;
      std::string box;
      for (int d = 0; d < p.map.rank; ++d) box += (d ? " x " : "") + std::to_string(p.map.box[d]);
      out += "//   " + a + ": a tensor map encoded with box " + box + " and " +
             (swizzle ? std::to_string(swizzle) + "-byte swizzle" : std::string("no swizzle")) + " (not checked at run time)\n";
    }
  }
  return out;
}

void write_bytes(std::ostringstream& out, const std::vector<char>& bytes) {
  for (size_t i = 0; i < bytes.size(); ++i) {
    if (i % 24 == 0) out << "\n   ";
    out << ' ' << unsigned(static_cast<unsigned char>(bytes[i])) << ',';
  }
}

const char* const preamble = R"(#pragma once

#include <cuda.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace @NS@ {

/// A tensor argument: the data pointer, then extents and strides counted in elements.
template <class T, int Rank>
struct Tensor {
  T* data;
  int32_t shape[Rank];
  int32_t stride[Rank];
};

/// One launch: grid and block, cluster (1 x 1 x 1: none), dynamic shared memory and stream.
struct Launch {
  unsigned grid[3] = {1, 1, 1};
  unsigned block[3] = {1, 1, 1};
  unsigned cluster[3] = {1, 1, 1};
  unsigned shared_bytes = 0;
  CUstream stream = nullptr;
  bool programmatic_dependent_launch = false;  // for kernels that call griddepcontrol_wait()
};
@STORAGE@
namespace detail {

inline bool aligned(const void* p, size_t bytes) { return reinterpret_cast<uintptr_t>(p) % bytes == 0; }

template <class T>
bool same_bits(const T& value, uint64_t bits) {
  uint64_t mine = 0;
  std::memcpy(&mine, &value, sizeof(T));
  return mine == bits;
}

struct Binary {
  int specialization;
  int sm;              // 90 for sm_90a
  bool arch_specific;  // the "a" targets run only on that exact architecture
  const unsigned char* cubin;
};

inline CUresult launch(CUfunction f, const Launch& l, void** args) {
  if (!f) return CUDA_ERROR_NO_BINARY_FOR_GPU;  // not exported for this GPU, or Module::load not called
  if (l.shared_bytes > 48 * 1024) {
    CUresult r = cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, int(l.shared_bytes));
    if (r != CUDA_SUCCESS) return r;
  }
  CUlaunchConfig config{};
  config.gridDimX = l.grid[0], config.gridDimY = l.grid[1], config.gridDimZ = l.grid[2];
  config.blockDimX = l.block[0], config.blockDimY = l.block[1], config.blockDimZ = l.block[2];
  config.sharedMemBytes = l.shared_bytes;
  config.hStream = l.stream;
  CUlaunchAttribute attributes[2]{};
  config.attrs = attributes;
  if (l.cluster[0] * l.cluster[1] * l.cluster[2] > 1) {
    CUlaunchAttribute& cluster = attributes[config.numAttrs++];
    cluster.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    cluster.value.clusterDim.x = l.cluster[0], cluster.value.clusterDim.y = l.cluster[1], cluster.value.clusterDim.z = l.cluster[2];
  }
  if (l.programmatic_dependent_launch) {
    CUlaunchAttribute& pdl = attributes[config.numAttrs++];
    pdl.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
    pdl.value.programmaticStreamSerializationAllowed = 1;
  }
  return cuLaunchKernelEx(&config, f, args, nullptr);
}
)";

const char* const module_class = R"(
/// The exported kernels, loaded into one CUDA context.
class Module {
 public:
  Module() = default;
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;
  ~Module() { unload(); }

  /// Loads into the current context the cubin of each specialization exported for the current
  /// device: one built for exactly its architecture, else one of the same major version and a
  /// lower minor one (never an "a" target of another architecture). CUDA_ERROR_NO_BINARY_FOR_GPU
  /// when no specialization was exported for this device.
  CUresult load() {
    unload();
    CUdevice device;
    int major = 0, minor = 0;
    CUresult r = cuCtxGetDevice(&device);
    if (r == CUDA_SUCCESS) r = cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device);
    if (r == CUDA_SUCCESS) r = cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device);
    if (r != CUDA_SUCCESS) return r;
    const int sm = 10 * major + minor;
    int loaded = 0;
    for (int s = 0; s < @COUNT@; ++s) {
      const detail::Binary* best = nullptr;
      for (const detail::Binary& b : detail::binaries)
        if (b.specialization == s && (b.sm == sm || (!b.arch_specific && b.sm / 10 == major && b.sm < sm)))
          if (!best || b.sm == sm || (best->sm != sm && b.sm > best->sm)) best = &b;
      if (!best) continue;
      if ((r = cuModuleLoadData(&modules_[s], best->cubin)) != CUDA_SUCCESS) return unload(), r;
      if ((r = cuModuleGetFunction(&functions_[s], modules_[s], detail::kernel_names[s])) != CUDA_SUCCESS) return unload(), r;
      ++loaded;
    }
    return loaded ? CUDA_SUCCESS : CUDA_ERROR_NO_BINARY_FOR_GPU;
  }

  void unload() {
    for (int s = 0; s < @COUNT@; ++s) {
      if (modules_[s]) cuModuleUnload(modules_[s]);
      modules_[s] = nullptr;
      functions_[s] = nullptr;
    }
  }

  /// The function of specialization `s` (numbered in the comments below), null when none was
  /// exported for this device.
  CUfunction function(int s) const { return functions_[s]; }

 private:
  CUmodule modules_[@COUNT@] = {};
  CUfunction functions_[@COUNT@] = {};
};
)";

std::string replace_all(std::string text, const std::string& from, const std::string& to) {
  for (size_t at = 0; (at = text.find(from, at)) != std::string::npos; at += to.size()) text.replace(at, from.size(), to);
  return text;
}

}  // namespace

std::string export_header(const std::string& ns, const std::vector<ExportedKernel>& kernels) {
  // Specializations in first-seen order; each gathers its binaries (one per target).
  std::vector<Spec> specs;
  std::map<std::string, int> by_words;
  std::set<DType> storage;
  for (const ExportedKernel& k : kernels) {
    cutejit::Specialization id = k.specialization;
    id.target.clear();
    auto [it, fresh] = by_words.emplace(cutejit::manifest_line(id), int(specs.size()));
    if (fresh) {
      Spec s;
      s.first = &k;
      s.index = int(specs.size());
      s.params = read_params(k, cutejit::find_registered_kernel(k.specialization.kernel).constant_types);
      for (const Param& p : s.params)
        if (p.kind != ParamKind::constant && p.kind != ParamKind::tensor_map && is_storage_type(p.element)) storage.insert(p.element);
      specs.push_back(std::move(s));
    }
    specs[size_t(it->second)].binaries.push_back(&k);
  }

  std::ostringstream out;
  std::set<std::string> names, targets;
  for (const ExportedKernel& k : kernels) names.insert(k.specialization.kernel), targets.insert(k.kernel.target.name());
  out << "// Generated by `cutejit-cache export`: " << specs.size() << " specialization(s) of";
  for (const std::string& n : names) out << ' ' << n;
  out << ", for";
  for (const std::string& t : targets) out << ' ' << t;
  out << ".\n// Do not edit. Build with cuda.h on the include path and link libcuda (-lcuda); nothing else is needed.\n";

  std::string storage_structs;
  for (DType t : storage) {
    int bits = 8 * cutejit::size_in_bytes(t);
    storage_structs += "\n/// " + std::string(cutejit::name(t)) + " storage: its bits (reinterpret CUDA's own type's data).\n" + "struct " +
                       std::string(cutejit::name(t)) + " {\n  uint" + std::to_string(bits) + "_t bits;\n};\n";
  }
  out << replace_all(replace_all(preamble, "@NS@", ns), "@STORAGE@", storage_structs);

  int cubin_index = 0;
  std::ostringstream table;
  for (const Spec& s : specs)
    for (const ExportedKernel* b : s.binaries) {
      std::string array = "cubin_" + std::to_string(cubin_index++);
      out << "\n// specialization " << s.index << ", " << b->kernel.target.name() << " (" << b->kernel.cubin.size() << " bytes)\n";
      out << "alignas(64) inline const unsigned char " << array << "[] = {";
      write_bytes(out, b->kernel.cubin);
      out << "\n};\n";
      table << "    {" << s.index << ", " << b->kernel.target.sm << ", " << (b->kernel.target.arch_specific() ? "true" : "false") << ", "
            << array << "},\n";
    }
  out << "\ninline const Binary binaries[] = {\n" << table.str() << "};\n";
  out << "\ninline const char* const kernel_names[] = {";
  for (const Spec& s : specs) out << (s.index ? ", " : "") << '"' << s.first->specialization.kernel << '"';
  out << "};\n\n}  // namespace detail\n";
  out << replace_all(module_class, "@COUNT@", std::to_string(specs.size()));

  // One launch function per (kernel, C++ signature); among its specializations the most
  // specialized one the arguments allow is launched, as the JIT would have chosen it.
  std::map<std::pair<std::string, std::string>, std::vector<const Spec*>> groups;
  std::vector<std::pair<std::string, std::string>> order;
  for (const Spec& s : specs) {
    auto key = std::make_pair(s.first->specialization.kernel, s.signature());
    if (!groups.count(key)) order.push_back(key);
    groups[key].push_back(&s);
  }
  for (const auto& key : order) {
    std::vector<const Spec*> group = groups[key];
    // A tensor map's box and swizzle cannot be checked at run time (the map is opaque), so one
    // launch function must not choose between specializations that differ in them.
    for (const Spec* s : group)
      for (size_t i = 0; i < s->params.size(); ++i)
        if (s->params[i].kind == ParamKind::tensor_map &&
            s->params[i].map != group.front()->params[i].map)
          throw cutejit::Error("error: cannot export kernel '" + key.first + "': its specializations " +
                               std::to_string(group.front()->index) + " and " + std::to_string(s->index) + " differ in the box or swizzle of tensor map argument " +
                               std::to_string(i) + ", which a launch function cannot tell apart at run time; export them separately (--kernels, two manifests)");
    std::stable_sort(group.begin(), group.end(), [](const Spec* a, const Spec* b) { return a->specificity() > b->specificity(); });
    const Spec& any = *group.front();
    cutejit::RegisteredKernel reg = cutejit::find_registered_kernel(key.first);
    out << "\n/// " << key.first << ", defined in " << std::filesystem::path(reg.defined_at.file_name()).filename().string() << ".\n";
    for (const Spec* s : group) out << "// specialization " << s->index << ":\n" << describe(*s);
    out << "// Returns CUDA_ERROR_INVALID_VALUE when no exported specialization accepts the arguments.\n";
    out << "inline CUresult " << key.first << "(const Module& module, const Launch& launch";
    for (size_t i = 0; i < any.params.size(); ++i) out << ", " << any.params[i].type << " arg" << i;
    out << ") {\n  int s = -1;\n";
    for (size_t i = 0; i < group.size(); ++i)
      out << "  " << (i ? "else if (" : "if (") << condition(*group[i]) << ")\n    s = " << group[i]->index << ";\n";
    out << "  if (s < 0) return CUDA_ERROR_INVALID_VALUE;\n";
    out << "  void* args[] = {";
    bool first = true;
    auto arg = [&](const std::string& a) { out << (first ? "" : ", ") << a, first = false; };
    for (size_t i = 0; i < any.params.size(); ++i) {
      const Param& p = any.params[i];
      std::string a = "arg" + std::to_string(i);
      switch (p.kind) {
        case ParamKind::tensor:
          arg("&" + a + ".data");
          for (int d = 0; d < p.facts.rank; ++d) arg("&" + a + ".shape[" + std::to_string(d) + "]");
          for (int d = 0; d < p.facts.rank; ++d) arg("&" + a + ".stride[" + std::to_string(d) + "]");
          break;
        case ParamKind::scalar: arg("&" + a); break;
        case ParamKind::tensor_map: arg("const_cast<CUtensorMap*>(&" + a + ")"); break;
        default: break;  // a Constexpr is compiled into the kernel
      }
    }
    if (first) out << "nullptr";
    out << "};\n  return detail::launch(module.function(s), launch, args);\n}\n";
  }
  out << "\n}  // namespace " << ns << "\n";
  return out.str();
}

}  // namespace cli
