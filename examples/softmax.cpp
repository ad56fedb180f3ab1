#include "softmax.hpp"

int main() { return examples::run(examples::softmax_example()); }
