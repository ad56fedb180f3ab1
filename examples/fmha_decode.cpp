#include "fmha_decode.hpp"

int main() { return examples::run(examples::fmha_decode_example()); }
