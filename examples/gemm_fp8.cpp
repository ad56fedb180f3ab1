#include "gemm_fp8.hpp"

int main() { return examples::run(examples::gemm_fp8_example()); }
