#include "transpose.hpp"

int main() { return examples::run(examples::transpose_example()); }
