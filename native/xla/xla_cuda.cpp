// The CUDA targets of sb3_ale_vec.xla: the CPU targets staged through host memory on XLA's stream
// (xla_stage.hpp). The copies use the CUDA driver API, found at run time in libcuda.so.1 (nvcuda.dll
// on Windows), which a CUDA jax has loaded already: the build needs no CUDA toolkit and the wheel
// depends on nothing of CUDA. The stream XLA hands a target is a cudaStream_t, which is the
// driver's CUstream.
#include "xla/xla_ffi.hpp"

#ifdef SB3_ALE_VEC_XLA_FFI

#if defined(_WIN32)
#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN
#endif
#ifndef NOMINMAX
#define NOMINMAX
#endif
#include <windows.h>
#else
#include <dlfcn.h>
#endif

#include <mutex>
#include <string>

namespace sb3ale::xla {

namespace ffi = ::xla::ffi;

namespace {

using CUresult = int;
using CUdeviceptr = unsigned long long;  // NOLINT: the driver API's own type

struct Driver {
  CUresult (*to_host)(void*, CUdeviceptr, size_t, void*) = nullptr;        // cuMemcpyDtoHAsync_v2
  CUresult (*to_device)(CUdeviceptr, const void*, size_t, void*) = nullptr;  // cuMemcpyHtoDAsync_v2
  CUresult (*sync)(void*) = nullptr;                                       // cuStreamSynchronize
  CUresult (*name)(CUresult, const char**) = nullptr;                      // cuGetErrorString
  std::string error;  // why the driver could not be loaded
};

// The driver's library: libcuda.so.1 (Linux), nvcuda.dll (Windows); nullptr, and `error` set, where
// it cannot be loaded.
#if defined(_WIN32)
constexpr const char* kDriverLibrary = "nvcuda.dll";
void* open_driver(std::string& error) {
  const HMODULE library = LoadLibraryA(kDriverLibrary);
  if (library == nullptr) error = "error " + std::to_string(GetLastError());
  return reinterpret_cast<void*>(library);
}
void* driver_symbol(void* library, const char* symbol) {
  return reinterpret_cast<void*>(GetProcAddress(static_cast<HMODULE>(library), symbol));
}
#else
constexpr const char* kDriverLibrary = "libcuda.so.1";
void* open_driver(std::string& error) {
  void* library = dlopen(kDriverLibrary, RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    const char* why = dlerror();
    error = why != nullptr ? why : "unknown error";
  }
  return library;
}
void* driver_symbol(void* library, const char* symbol) { return dlsym(library, symbol); }
#endif

template <typename F>
void find(void* library, const char* symbol, F& out, std::string& error) {
  out = reinterpret_cast<F>(driver_symbol(library, symbol));
  if (out == nullptr && error.empty()) error = std::string(kDriverLibrary) + " has no " + symbol;
}

const Driver& driver() {
  static Driver d;
  static std::once_flag once;
  std::call_once(once, [] {
    std::string why;
    void* library = open_driver(why);
    if (library == nullptr) {
      d.error = std::string("the CUDA driver (") + kDriverLibrary + ") could not be loaded: " + why;
      return;
    }
    find(library, "cuMemcpyDtoHAsync_v2", d.to_host, d.error);
    find(library, "cuMemcpyHtoDAsync_v2", d.to_device, d.error);
    find(library, "cuStreamSynchronize", d.sync, d.error);
    find(library, "cuGetErrorString", d.name, d.error);
  });
  return d;
}

std::string check(CUresult result) {
  if (result == 0) return "";
  const char* name = nullptr;
  driver().name(result, &name);
  return "CUDA error " + std::to_string(result) + (name ? std::string(": ") + name : std::string());
}

const DeviceCopy kCuda{
    [](void* host, const void* device, size_t bytes, void* stream) {
      return check(driver().to_host(host, reinterpret_cast<CUdeviceptr>(device), bytes, stream));
    },
    [](void* device, const void* host, size_t bytes, void* stream) {
      return check(driver().to_device(reinterpret_cast<CUdeviceptr>(device), host, bytes, stream));
    },
    [](void* stream) { return check(driver().sync(stream)); }};

constexpr std::array<ffi::DataType, 3> kResetArgs{ffi::U8, ffi::S32, ffi::S32};
constexpr std::array<ffi::DataType, 7> kResetRets{ffi::U8, ffi::U8, ffi::S32, ffi::S32, ffi::S32, ffi::S32, ffi::U8};
constexpr std::array<ffi::DataType, 3> kStepArgs{ffi::U8, ffi::S32, ffi::F32};
constexpr std::array<ffi::DataType, 17> kStepRets{ffi::U8,  ffi::U8,   ffi::F32, ffi::PRED, ffi::PRED, ffi::S32,
                                                  ffi::S32,  ffi::S32,  ffi::S32, ffi::PRED, ffi::F32,  ffi::S32,
                                                  ffi::PRED, ffi::S32,  ffi::U8,  ffi::U8,   ffi::U8};

ffi::Error no_driver() {
  return ffi::Error(ffi::ErrorCode::kFailedPrecondition, "sb3_ale_vec: " + driver().error);
}

ffi::Error ResetCuda(void* stream, ffi::RemainingArgs args, ffi::RemainingRets rets) {
  if (!driver().error.empty()) return no_driver();
  return run_staged(stream, args, rets, kCuda, kResetArgs, kResetRets, reset_on_host);
}

ffi::Error StepCuda(void* stream, ffi::RemainingArgs args, ffi::RemainingRets rets) {
  if (!driver().error.empty()) return no_driver();
  return run_staged(stream, args, rets, kCuda, kStepArgs, kStepRets, step_on_host);
}

}  // namespace

XLA_FFI_DEFINE_HANDLER_SYMBOL(sb3_ale_vec_xla_reset_cuda, ResetCuda,
                              ffi::Ffi::Bind().Ctx<ffi::PlatformStream<void*>>().RemainingArgs().RemainingRets());
XLA_FFI_DEFINE_HANDLER_SYMBOL(sb3_ale_vec_xla_step_cuda, StepCuda,
                              ffi::Ffi::Bind().Ctx<ffi::PlatformStream<void*>>().RemainingArgs().RemainingRets());

void* reset_cuda_handler() { return reinterpret_cast<void*>(&sb3_ale_vec_xla_reset_cuda); }
void* step_cuda_handler() { return reinterpret_cast<void*>(&sb3_ale_vec_xla_step_cuda); }

}  // namespace sb3ale::xla

#else  // built without the XLA FFI headers

namespace sb3ale::xla {
void* reset_cuda_handler() { return nullptr; }
void* step_cuda_handler() { return nullptr; }
}  // namespace sb3ale::xla

#endif
