// The [gpu] check of examples: each one's error within its tolerance, the example named when
// it is not.
#pragma once

#include <catch2/catch.hpp>

#include <initializer_list>

#include "example.hpp"

namespace test {

inline void check_examples(const cutejit::Device& gpu, std::initializer_list<examples::Example> list) {
  for (const examples::Example& e : list) {
    double err = e.check(gpu);
    INFO(e.name << ": relative error " << err << ", tolerance " << e.tolerance);
    CHECK(err <= e.tolerance);
  }
}

}  // namespace test
