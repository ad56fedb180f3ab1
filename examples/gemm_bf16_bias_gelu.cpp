#include "gemm_bf16_bias_gelu.hpp"

int main() { return examples::run(examples::gemm_bf16_bias_gelu_example()); }
