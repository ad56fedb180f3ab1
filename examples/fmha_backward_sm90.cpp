#include "fmha_backward_sm90.hpp"

int main() { return examples::run(examples::fmha_backward_sm90_example()); }
