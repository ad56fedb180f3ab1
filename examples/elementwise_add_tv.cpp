#include "elementwise_add_tv.hpp"

int main() { return examples::run(examples::elementwise_add_tv_example()); }
