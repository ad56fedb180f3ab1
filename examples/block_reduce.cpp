#include "block_reduce.hpp"

int main() { return examples::run(examples::block_reduce_example()); }
