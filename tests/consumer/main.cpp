// The same consumer compiled as C++: pyhost.h is usable from C++ as it is (extern "C",
// no C-only constructs), tested with the installed package.
#include "main.c"
