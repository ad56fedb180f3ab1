// The exported header included in a second file of the same program: everything in it is
// inline, so the program links with one copy of the cubins.
#include "exported.hpp"

int exported_in_another_file() { return int(sizeof(exported::detail::kernel_names) / sizeof(exported::detail::kernel_names[0])); }
