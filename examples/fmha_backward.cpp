#include "fmha_backward.hpp"

int main() { return examples::run(examples::fmha_backward_example()); }
