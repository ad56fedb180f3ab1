#include "sgemm.hpp"

int main() { return examples::run(examples::sgemm_example()); }
