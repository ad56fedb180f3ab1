#include "gemm_sm80.hpp"

int main() { return examples::run(examples::gemm_tensorop_bf16_example()); }
