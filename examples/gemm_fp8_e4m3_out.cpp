#include "gemm_fp8_e4m3_out.hpp"

int main() { return examples::run(examples::gemm_fp8_e4m3_out_example()); }
