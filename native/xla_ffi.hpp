// JAX's view of an engine: XLA FFI handlers that reset and step it from inside jax.jit, and the
// registry that turns the 8-byte handle they take into a live engine (or a clear error).
#pragma once

#include <cstdint>

#include "engine.hpp"

namespace sb3ale::xla {

/// The handle of `engine`, registered on first use. Ids are never reused, so a handle kept after
/// its engine closed names nothing rather than another engine.
uint64_t handle_for(Engine& engine);
/// Unregisters `engine` (no-op if it never was); waits for a handler that is using it. Call before
/// destroying the engine.
void forget(const Engine* engine);

/// Whether this build has the handlers (the XLA FFI headers were found at build time).
bool available();
/// The XLA FFI API version the handlers were compiled against (major, minor); {-1, -1} without them.
int api_major();
int api_minor();
/// XLA_FFI_Handler* of the CPU targets, for jax.ffi.register_ffi_target (nullptr without them).
void* reset_handler();
void* step_handler();

}  // namespace sb3ale::xla
