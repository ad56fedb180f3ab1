#include "gemm_bf16.hpp"

int main() { return examples::run(examples::gemm_bf16_cluster_example()); }
