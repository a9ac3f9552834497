// sb3_ale_vec._testing's XLA target that tests xla_stage.hpp where there is no GPU: the staging of
// the CUDA targets, with host memory as the "device" and memcpy as the copies. Its host body:
// (u8 x, s32 y, f32 z) -> (x + 1, 2 * y, -z, x odd, an empty u8 buffer).
#include <pybind11/pybind11.h>

#include <cstring>

#ifdef SB3_ALE_VEC_XLA_FFI
#include "xla/xla_stage.hpp"

namespace sb3ale::xla {

namespace ffi = ::xla::ffi;

namespace {

size_t staged_bytes = 0;  // bytes copied either way since the last reset of the count

std::string copy_bytes(void* to, const void* from, size_t bytes, void*) {
  std::memcpy(to, from, bytes);
  staged_bytes += bytes;
  return "";
}

const DeviceCopy kMemcpy{copy_bytes, copy_bytes, [](void*) { return std::string(); }};

ffi::Error body(const HostArgs<3>& a, const HostArgs<5>& r) {
  const ffi::Buffer<ffi::U8> x(a[0]), x1(r[0]);
  const ffi::Buffer<ffi::S32> y(a[1]), y2(r[1]);
  const ffi::Buffer<ffi::F32> z(a[2]), minus_z(r[2]);
  const ffi::Buffer<ffi::PRED> odd(r[3]);
  if (x1.element_count() != x.element_count() || y2.element_count() != y.element_count()) {
    return ffi::Error::InvalidArgument("shapes differ");
  }
  for (size_t k = 0; k < x.element_count(); ++k) {
    x1.typed_data()[k] = static_cast<uint8_t>(x.typed_data()[k] + 1);
    odd.typed_data()[k] = x.typed_data()[k] % 2 == 1;
  }
  for (size_t k = 0; k < y.element_count(); ++k) y2.typed_data()[k] = 2 * y.typed_data()[k];
  for (size_t k = 0; k < z.element_count(); ++k) minus_z.typed_data()[k] = -z.typed_data()[k];
  return ffi::Error::Success();
}

ffi::Error Staged(ffi::RemainingArgs args, ffi::RemainingRets rets) {
  return run_staged(nullptr, args, rets, kMemcpy, std::array<ffi::DataType, 3>{ffi::U8, ffi::S32, ffi::F32},
                    std::array<ffi::DataType, 5>{ffi::U8, ffi::S32, ffi::F32, ffi::PRED, ffi::U8}, body);
}

}  // namespace

XLA_FFI_DEFINE_HANDLER_SYMBOL(sb3_ale_vec_test_staged, Staged, ffi::Ffi::Bind().RemainingArgs().RemainingRets());

}  // namespace sb3ale::xla
#endif

namespace sb3ale {

void add_xla_stage_hook(pybind11::module_& m) {
#ifdef SB3_ALE_VEC_XLA_FFI
  m.def("_xla_staged_target", [] { return pybind11::capsule(reinterpret_cast<void*>(&xla::sb3_ale_vec_test_staged)); },
        "Tests: an XLA FFI target staged as the CUDA ones are, through memcpy (see xla_stage_test.cpp).");
  m.def("_xla_staged_bytes", [](bool clear) {
    const size_t bytes = xla::staged_bytes;
    if (clear) xla::staged_bytes = 0;
    return bytes;
  }, pybind11::arg("clear") = false, "Tests: bytes the staged target copied either way.");
#else
  (void)m;
#endif
}

}  // namespace sb3ale
