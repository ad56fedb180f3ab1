#include "allreduce.hpp"

int main() { return examples::run(examples::allreduce_example()); }
