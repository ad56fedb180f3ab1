#include "cutejit/core/target.hpp"

#include "cutejit/core/error.hpp"

namespace cutejit {

std::vector<Target> Target::all() {
  return {{80, false}, {86, false}, {89, false}, {90, true}, {100, true}, {120, true}};
}

std::string Target::name() const { return "sm_" + std::to_string(sm) + (arch_specific ? "a" : ""); }

Target Target::parse(std::string_view text) {
  for (int sm : {80, 86, 89, 90, 100, 120})
    for (bool a : {false, true})
      if (Target t{sm, a}; t.name() == text) return t;
  throw Error("error: unknown target '" + std::string(text) +
              "'; valid targets: sm_80, sm_86, sm_89, sm_90, sm_90a, sm_100, sm_100a, sm_120, sm_120a");
}

}  // namespace cutejit
