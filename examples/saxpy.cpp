#include "saxpy.hpp"

int main() { return examples::run(examples::saxpy_example()); }
