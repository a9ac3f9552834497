// The module's hooks for tests and the benchmark: the engine's pure parts, to compare with cv2 and
// numpy, and the bare emulator loop that is the benchmark's limit.
#pragma once

#include <pybind11/pybind11.h>

namespace sb3ale {

void add_hooks(pybind11::module_& m);

}  // namespace sb3ale
