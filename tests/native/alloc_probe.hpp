// The test binary's own operator new and delete (alloc_probe.cpp): each block remembers whether an
// idle thread (named "sb3ale-idle") allocated it, so that a test can count the blocks that cross
// between the idle threads and everyone else (a free of another thread's block may take its arena's
// lock). Off under ASan and TSan, whose allocators stand in for malloc.
#pragma once

#include <cstdint>

namespace alloc_probe {

/// Whether the probe is built in (not under ASan or TSan).
bool available();

struct Crossings {
  std::int64_t idle_allocations = 0;  // blocks allocated on idle threads
  std::int64_t idle_to_others = 0;    // blocks an idle thread allocated, freed by any other thread
  std::int64_t others_to_idle = 0;    // blocks another thread allocated, freed by an idle thread
};
/// Counts from now (cleared) until stop().
void start();
Crossings stop();

}  // namespace alloc_probe
