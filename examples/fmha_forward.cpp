#include "fmha_sm80.hpp"

int main() { return examples::run(examples::fmha_forward_example()); }
