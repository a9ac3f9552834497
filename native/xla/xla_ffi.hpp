// JAX's view of an engine: XLA FFI handlers that reset and step it from inside jax.jit, and the
// registry that turns the 8-byte handle they take into a live engine (or a clear error).
#pragma once

#include <cstdint>
#include <memory>

#include "core/vectorizer_hold.hpp"

namespace sb3ale::xla {

/// The handle of an engine, registered on first use. Ids are never reused, so a handle kept after
/// its engine closed names nothing rather than another engine.
uint64_t handle_for(const std::shared_ptr<VectorizerHold>& hold);
/// Unregisters an engine (no-op if it never was), at its close; a target running on it finishes
/// first (the hold destroys the engine as that call leaves).
void forget(const VectorizerHold* hold);

/// Whether this build has the handlers (the XLA FFI headers were found at build time).
bool available();
/// The XLA FFI API version the handlers were compiled against (major, minor); {-1, -1} without them.
int api_major();
int api_minor();
/// XLA_FFI_Handler* of the CPU targets, for jax.ffi.register_ffi_target (nullptr without them).
void* reset_handler();
void* step_handler();
/// The CUDA targets (xla_cuda.cpp): the CPU targets staged through host memory on XLA's stream.
void* reset_cuda_handler();
void* step_cuda_handler();

}  // namespace sb3ale::xla

#ifdef SB3_ALE_VEC_XLA_FFI
#include "xla/xla_stage.hpp"

namespace sb3ale::xla {

/// The CPU targets' bodies on host buffers, in the order their bindings list them.
::xla::ffi::Error reset_on_host(const HostArgs<3>& args, const HostArgs<7>& rets);
::xla::ffi::Error step_on_host(const HostArgs<3>& args, const HostArgs<17>& rets);

}  // namespace sb3ale::xla
#endif
