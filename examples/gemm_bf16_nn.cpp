#include "gemm_bf16_nn.hpp"

int main() { return examples::run(examples::gemm_bf16_nn_example()); }
