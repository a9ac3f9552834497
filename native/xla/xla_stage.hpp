// Runs an XLA FFI target written for host memory on buffers that live on a device: every argument
// is copied to the host, the host target runs on those copies, every result is copied back. The
// emulators run on the CPU whatever jax's device, so a GPU caller pays these copies and nothing
// else (ale-py's CUDA target does the same). Header-only: the engine's CUDA targets use it, and
// sb3_ale_vec._testing instantiates it with plain memcpy to test it where there is no GPU.
#pragma once

#ifdef SB3_ALE_VEC_XLA_FFI

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "xla/ffi/api/ffi.h"

namespace sb3ale::xla {

/// Copies between the device and the host on one stream; each returns "" or what went wrong.
struct DeviceCopy {
  std::string (*to_host)(void* host, const void* device, size_t bytes, void* stream);
  std::string (*to_device)(void* device, const void* host, size_t bytes, void* stream);
  std::string (*sync)(void* stream);
};

/// Host copies of a call's buffers, as the XLA_FFI_Buffer structs a host target decodes.
class HostBuffers {
 public:
  explicit HostBuffers(size_t count) { buffers_.reserve(count); }  // no reallocation: we hand out pointers
  XLA_FFI_Buffer* add(const ::xla::ffi::AnyBuffer& device) {
    const auto dims = device.dimensions();
    data_.emplace_back(device.size_bytes());
    dims_.emplace_back(dims.begin(), dims.end());
    buffers_.push_back(XLA_FFI_Buffer{XLA_FFI_Buffer_STRUCT_SIZE, nullptr,
                                      static_cast<XLA_FFI_DataType>(device.element_type()),
                                      data_.back().data(), static_cast<int64_t>(dims.size()), dims_.back().data()});
    return &buffers_.back();
  }

 private:
  std::vector<std::vector<uint8_t>> data_;  // moved on growth: the bytes stay where they are
  std::vector<std::vector<int64_t>> dims_;
  std::vector<XLA_FFI_Buffer> buffers_;
};

template <size_t N>
using HostArgs = std::array<XLA_FFI_Buffer*, N>;

/// Stages `host(args, rets)` through host memory. `arg_types` and `ret_types` are the dtypes the
/// host target binds, checked here as XLA checks the host target's own binding.
template <size_t NArgs, size_t NRets, typename Host>
::xla::ffi::Error run_staged(void* stream, const ::xla::ffi::RemainingArgs& args,
                             const ::xla::ffi::RemainingRets& rets, const DeviceCopy& copy,
                             const std::array<::xla::ffi::DataType, NArgs>& arg_types,
                             const std::array<::xla::ffi::DataType, NRets>& ret_types, Host host) {
  namespace ffi = ::xla::ffi;
  if (args.size() != NArgs || rets.size() != NRets) {
    return ffi::Error::InvalidArgument("sb3_ale_vec: expected " + std::to_string(NArgs) + " arguments and " +
                                       std::to_string(NRets) + " results, got " + std::to_string(args.size()) +
                                       " and " + std::to_string(rets.size()));
  }
  HostBuffers in(NArgs), out(NRets);
  HostArgs<NArgs> host_args{};
  HostArgs<NRets> host_rets{};
  std::array<void*, NRets> device_rets{};
  std::string failed;
  for (size_t k = 0; k < NArgs && failed.empty(); ++k) {
    const auto arg = args.get<ffi::AnyBuffer>(k);
    if (!arg.has_value()) return arg.error();
    if (arg->element_type() != arg_types[k]) {
      return ffi::Error::InvalidArgument("sb3_ale_vec: argument " + std::to_string(k) + " has the wrong dtype");
    }
    host_args[k] = in.add(*arg);
    if (arg->size_bytes() > 0) failed = copy.to_host(host_args[k]->data, arg->untyped_data(), arg->size_bytes(), stream);
  }
  for (size_t k = 0; k < NRets && failed.empty(); ++k) {
    auto ret = rets.get<ffi::AnyBuffer>(k);
    if (!ret.has_value()) return ret.error();
    ffi::Result<ffi::AnyBuffer> result = ret.value();
    if (result->element_type() != ret_types[k]) {
      return ffi::Error::InvalidArgument("sb3_ale_vec: result " + std::to_string(k) + " has the wrong dtype");
    }
    host_rets[k] = out.add(*result);
    device_rets[k] = result->untyped_data();
  }
  if (failed.empty()) failed = copy.sync(stream);  // the arguments are on the host now
  if (!failed.empty()) return ffi::Error::Internal("sb3_ale_vec: copying to the host: " + failed);
  ffi::Error error = host(host_args, host_rets);
  if (error.failure()) return error;
  for (size_t k = 0; k < NRets && failed.empty(); ++k) {
    const size_t bytes = ffi::AnyBuffer(host_rets[k]).size_bytes();
    if (bytes > 0) failed = copy.to_device(device_rets[k], host_rets[k]->data, bytes, stream);
  }
  if (failed.empty()) failed = copy.sync(stream);  // before the host copies are freed
  if (!failed.empty()) return ffi::Error::Internal("sb3_ale_vec: copying to the device: " + failed);
  return ffi::Error::Success();
}

}  // namespace sb3ale::xla

#endif  // SB3_ALE_VEC_XLA_FFI
