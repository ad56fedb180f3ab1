#include "transpose_swizzle.hpp"

int main() { return examples::run(examples::transpose_swizzle_example()); }
