#include "alloc_probe.hpp"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <new>

#if defined(__linux__)
#include <sys/prctl.h>
#endif

#if defined(__linux__) && !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
#define ALLOC_PROBE 1
#else
#define ALLOC_PROBE 0
#endif

namespace alloc_probe {

namespace {

std::atomic<bool> counting{false};
std::atomic<std::int64_t> idle_allocations{0}, idle_to_others{0}, others_to_idle{0};

#if ALLOC_PROBE
constexpr std::uint32_t kMagic = 0x5b3a1e00;
struct alignas(16) Header {  // before each block: keeps new's 16-byte alignment
  std::uint32_t magic;
  std::uint32_t idle;
};

bool named(const char* name) {
  char now[17] = {};
  return prctl(PR_GET_NAME, now, 0, 0, 0) == 0 && std::strcmp(now, name) == 0;
}

void* allocate(std::size_t size) {
  auto* h = static_cast<Header*>(std::malloc(sizeof(Header) + (size == 0 ? 1 : size)));
  if (h == nullptr) throw std::bad_alloc();
  h->magic = kMagic;
  h->idle = named("sb3ale-idle") ? 1 : 0;
  if (h->idle && counting.load(std::memory_order_relaxed)) idle_allocations.fetch_add(1);
  return h + 1;
}

void release(void* p) noexcept {
  if (p == nullptr) return;
  Header* h = static_cast<Header*>(p) - 1;
  if (counting.load(std::memory_order_relaxed)) {
    const bool idle = named("sb3ale-idle");
    if (h->idle && !idle) idle_to_others.fetch_add(1);
    if (!h->idle && idle) others_to_idle.fetch_add(1);
  }
  h->magic = 0;
  std::free(h);
}
#endif

}  // namespace

bool available() { return ALLOC_PROBE; }

void start() {
  idle_allocations = idle_to_others = others_to_idle = 0;
  counting.store(true);
}

Crossings stop() {
  counting.store(false);
  return {idle_allocations.load(), idle_to_others.load(), others_to_idle.load()};
}

}  // namespace alloc_probe

#if ALLOC_PROBE
void* operator new(std::size_t size) { return alloc_probe::allocate(size); }
void* operator new[](std::size_t size) { return alloc_probe::allocate(size); }
void operator delete(void* p) noexcept { alloc_probe::release(p); }
void operator delete[](void* p) noexcept { alloc_probe::release(p); }
void operator delete(void* p, std::size_t) noexcept { alloc_probe::release(p); }
void operator delete[](void* p, std::size_t) noexcept { alloc_probe::release(p); }
#endif
