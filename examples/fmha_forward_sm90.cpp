#include "fmha_sm90.hpp"

int main() { return examples::run(examples::fmha_forward_sm90_example()); }
