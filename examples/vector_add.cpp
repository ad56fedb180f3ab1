#include "vector_add.hpp"

int main() { return examples::run(examples::vector_add_example()); }
