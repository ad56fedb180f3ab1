// cutejit-cache export: chosen kernels as cubins plus a C++ header with typed launch functions
// that need only the CUDA driver at run time (no cutejit, no LLVM).
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <set>

#include <fmt/format.h>

#include <cutejit/core/error.hpp>

#include "export_header.hpp"
#include "core/atomic_file.hpp"
#include "work_list.hpp"

namespace cli {

namespace {

bool is_identifier(const std::string& s) {
  bool ok = !s.empty() && (std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_');
  for (char c : s) ok = ok && (std::isalnum(static_cast<unsigned char>(c)) || c == '_');
  return ok;
}

/// Why `name` cannot name a namespace or function in the generated header, or "" when it can:
/// C++ keywords, reserved identifiers, the header's own names and the CUDA/C types it uses.
std::string name_problem(const std::string& name) {
  static const std::set<std::string> keywords = {
      "alignas", "alignof", "and", "and_eq", "asm", "auto", "bitand", "bitor", "bool", "break", "case", "catch", "char",
      "char8_t", "char16_t", "char32_t", "class", "compl", "concept", "const", "consteval", "constexpr", "constinit",
      "const_cast", "continue", "co_await", "co_return", "co_yield", "decltype", "default", "delete", "do", "double",
      "dynamic_cast", "else", "enum", "explicit", "export", "extern", "false", "float", "for", "friend", "goto", "if",
      "inline", "int", "long", "mutable", "namespace", "new", "noexcept", "not", "not_eq", "nullptr", "operator", "or",
      "or_eq", "private", "protected", "public", "register", "reinterpret_cast", "requires", "return", "short", "signed",
      "sizeof", "static", "static_assert", "static_cast", "struct", "switch", "template", "this", "thread_local", "throw",
      "true", "try", "typedef", "typeid", "typename", "union", "unsigned", "using", "virtual", "void", "volatile",
      "wchar_t", "while", "xor", "xor_eq", "std", "main"};
  static const std::set<std::string> header_names = {"Tensor", "Launch", "Module", "detail", "f16", "bf16", "f8e4m3", "f8e5m2"};
  if (!is_identifier(name)) return "is not a C++ identifier";
  if (keywords.count(name)) return "is a C++ keyword or a name the standard library owns";
  if (header_names.count(name)) return "is a name the generated header defines";
  if (name.starts_with("__") || (name.size() > 1 && name[0] == '_' && std::isupper(static_cast<unsigned char>(name[1]))))
    return "is reserved to the implementation";
  if (name.starts_with("CU") || name.starts_with("cu") || name.ends_with("_t")) return "would hide a CUDA or C type the header uses";
  return "";
}

/// Writes `path` through a fresh temporary file beside it and a rename (core/atomic_file.hpp):
/// a full disk, a file-size limit or a killed export leaves the previous file whole, and a link
/// planted in a shared --out folder is replaced, never written through.
void write_file(const std::filesystem::path& path, std::string_view bytes) {
  std::string error = cutejit::detail::write_atomically(path.parent_path(), path.filename().string(), bytes, {.sync = true});
  if (!error.empty()) throw cutejit::Error("error: " + error + "; the previous file, if any, is unchanged");
}

int export_kernels(const Arguments& args, const cutejit::KernelCache& cache) {
  std::optional<std::string> plugin = args.option("--plugin"), out = args.option("--out");
  if (!plugin) throw UsageError{"--plugin LIB is required: the shared library that registers the kernels"};
  if (!out) throw UsageError{"--out DIR is required: where the header and the cubins go"};
  if (!args.option("--targets")) throw UsageError{"--targets is required: the GPUs the export must run on, e.g. sm_90a,sm_100a"};
  // Required: two exports in one program must not share a namespace, or the linker would keep
  // one of two different `detail::binaries` tables.
  std::optional<std::string> ns_option = args.option("--namespace");
  if (!ns_option) throw UsageError{"--namespace NAME is required: the C++ namespace of the generated header, unique in your program"};
  const std::string& ns = *ns_option;
  if (std::string why = name_problem(ns); !why.empty()) throw UsageError{"--namespace '" + ns + "' " + why};
  int jobs = jobs_option(args);
  load_plugin(*plugin);
  std::vector<WorkItem> items = work_list(args);
  if (items.empty()) throw cutejit::Error("error: nothing to export: the manifest lists none of the chosen kernels");
  for (const WorkItem& item : items)
    if (std::string why = name_problem(item.specialization.kernel); !why.empty())
      throw cutejit::Error("error: kernel '" + item.specialization.kernel + "' cannot be exported under its name: the name " + why +
                           "; rename the kernel");
  use_cache_directory(cache);  // reuse what warm compiled

  std::vector<WorkResult> results = compile_all(items, jobs, [](size_t, const WorkItem& item, WorkResult& r) {
    if (!r.error.empty())
      fmt::print(stderr, "failed: {} for {}: {}\n", item.specialization.kernel, item.target.name(), r.error);
  });
  std::vector<ExportedKernel> kernels;
  for (size_t i = 0; i < items.size(); ++i) {
    if (!results[i].error.empty()) throw cutejit::Error("error: nothing was exported, because a kernel failed to compile (above)");
    kernels.push_back({items[i].specialization, std::move(results[i].kernel)});
  }
  std::string header = export_header(ns, kernels);

  std::filesystem::path dir(*out);
  std::error_code ec;
  std::filesystem::create_directories(dir / "cubins", ec);
  if (ec) throw cutejit::Error("error: cannot create " + (dir / "cubins").string() + ": " + ec.message());
  // The cubins first, the header that names them last.
  for (size_t i = 0; i < kernels.size(); ++i) {
    const ExportedKernel& k = kernels[i];
    write_file(dir / "cubins" / (k.specialization.kernel + "." + std::to_string(i) + "." + k.kernel.target.name() + ".cubin"),
               std::string_view(k.kernel.cubin.data(), k.kernel.cubin.size()));
  }
  write_file(dir / (ns + ".hpp"), header);
  fmt::print("exported {} cubin(s) to {}; include {}\n", kernels.size(), (dir / "cubins").string(), (dir / (ns + ".hpp")).string());
  return exit_ok;
}

}  // namespace

const Command export_command{
    "export", "write chosen kernels as cubins plus a C++ header that launches them",
    "usage: cutejit-cache export --plugin LIB --manifest FILE --targets sm_90a,... --out DIR --namespace NAME\n"
    "                            [--kernels a,b] [-j N]\n\n"
    "Compiles (or takes from the cache) every specialization in FILE of the kernels LIB registers,\n"
    "for each target, and writes DIR/NAME.hpp and DIR/cubins/. NAME is the header's C++ namespace,\n"
    "which must be unique in the program that includes it.\n"
    "The header embeds the cubins and has one typed launch function per kernel signature:\n"
    "    NAME::Module m; m.load();                        // in a current CUDA context\n"
    "    NAME::vector_add(m, launch, a, b, c);            // Tensor<float, 1> a{ptr, {n}, {1}}, ...\n"
    "It picks the most specialized exported specialization that the arguments allow (alignment,\n"
    "divisibility, unit strides, Constexpr values) and returns CUDA_ERROR_INVALID_VALUE when none\n"
    "does. A program using it needs only cuda.h and libcuda.\n",
    {},
    {"--plugin", "--manifest", "--targets", "--kernels", "--out", "--namespace", "-j"},
    export_kernels};

}  // namespace cli
