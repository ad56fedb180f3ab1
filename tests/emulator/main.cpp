// The emulated device's own tests: its instruction semantics and its machine, checked against
// the PTX ISA's rules and host references; no GPU and no JIT involved.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
