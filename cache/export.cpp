// cutejit-cache export: chosen kernels as cubins plus a C++ header with typed launch functions
// that need only the CUDA driver at run time (no cutejit, no LLVM).
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include <cutejit/jit/error.hpp>

#include "export_header.hpp"
#include "work_list.hpp"

namespace cli {

namespace {

bool is_identifier(const std::string& s) {
  bool ok = !s.empty() && (std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_');
  for (char c : s) ok = ok && (std::isalnum(static_cast<unsigned char>(c)) || c == '_');
  return ok;
}

void write_file(const std::filesystem::path& path, std::string_view bytes) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(bytes.data(), std::streamsize(bytes.size()));
  if (!f.flush()) throw cutejit::Error("error: cannot write " + path.string());
}

int export_kernels(const Arguments& args, const cutejit::KernelCache& cache) {
  std::optional<std::string> plugin = args.option("--plugin"), out = args.option("--out");
  if (!plugin) throw UsageError{"--plugin LIB is required: the shared library that registers the kernels"};
  if (!out) throw UsageError{"--out DIR is required: where the header and the cubins go"};
  if (!args.option("--targets")) throw UsageError{"--targets is required: the GPUs the export must run on, e.g. sm_90a,sm_100a"};
  std::string ns = args.option("--namespace").value_or("cutejit_kernels");
  if (!is_identifier(ns)) throw UsageError{"--namespace takes a C++ identifier, not '" + ns + "'"};
  int jobs = jobs_option(args);
  load_plugin(*plugin);
  std::vector<WorkItem> items = work_list(args);
  if (items.empty()) throw cutejit::Error("error: nothing to export: the manifest lists none of the chosen kernels");
  for (const WorkItem& item : items)
    if (item.specialization.kernel == "Tensor" || item.specialization.kernel == "Launch" || item.specialization.kernel == "Module" ||
        item.specialization.kernel == "detail")
      throw cutejit::Error("error: a kernel named '" + item.specialization.kernel + "' would clash with the exported header's own names");
  setenv("CUTEJIT_CACHE_DIR", cache.directory().c_str(), 1);  // reuse what warm compiled

  std::vector<WorkResult> results = compile_all(items, jobs, [](size_t, const WorkItem& item, WorkResult& r) {
    if (!r.error.empty())
      std::fprintf(stderr, "failed: %s for %s: %s\n", item.specialization.kernel.c_str(), item.target.name().c_str(), r.error.c_str());
  });
  std::vector<ExportedKernel> kernels;
  for (size_t i = 0; i < items.size(); ++i) {
    if (!results[i].error.empty()) throw cutejit::Error("error: nothing was exported, because a kernel failed to compile (above)");
    kernels.push_back({items[i].specialization, std::move(results[i].kernel)});
  }
  std::string header = export_header(ns, kernels);

  std::filesystem::path dir(*out);
  std::filesystem::create_directories(dir / "cubins");
  write_file(dir / (ns + ".hpp"), header);
  for (size_t i = 0; i < kernels.size(); ++i) {
    const ExportedKernel& k = kernels[i];
    write_file(dir / "cubins" / (k.specialization.kernel + "." + std::to_string(i) + "." + k.kernel.target.name() + ".cubin"),
               std::string_view(k.kernel.cubin.data(), k.kernel.cubin.size()));
  }
  std::printf("exported %zu cubin(s) to %s; include %s\n", kernels.size(), (dir / "cubins").c_str(), (dir / (ns + ".hpp")).c_str());
  return exit_ok;
}

}  // namespace

const Command export_command{
    "export", "write chosen kernels as cubins plus a C++ header that launches them",
    "usage: cutejit-cache export --plugin LIB --manifest FILE --targets sm_90a,... --out DIR\n"
    "                            [--kernels a,b] [--namespace NAME] [-j N]\n\n"
    "Compiles (or takes from the cache) every specialization in FILE of the kernels LIB registers,\n"
    "for each target, and writes DIR/NAME.hpp (default NAME: cutejit_kernels) and DIR/cubins/.\n"
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
