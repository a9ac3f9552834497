// The XLA FFI targets behind sb3_ale_vec.xla: reset and step of one engine's vectorizer, called by
// XLA on its own thread with no Python and no GIL. Results go straight into XLA's buffers (a batch of
// every env is written there by the workers themselves).
#include "xla/xla_ffi.hpp"

#include <algorithm>
#include <cstring>
#include <exception>
#include <iterator>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/platform.hpp"

#ifdef SB3_ALE_VEC_XLA_FFI
#include "xla/ffi/api/ffi.h"
#endif

namespace sb3ale::xla {

namespace {

// Weak: a handle keeps no engine alive; a closed one is found closed, a destroyed one not at all.
std::mutex registry_mutex;
std::unordered_map<uint64_t, std::weak_ptr<VectorizerHold>> holds;
uint64_t next_handle = 1;  // 0 is never a handle: an all-zero buffer is an obvious mistake

// The registry's lock is consistent in a forked child: held across fork() by the forking thread (only
// ordinary threads take it, briefly), so no other thread's hold is copied into the child locked.
const int registry_at_fork = platform::at_fork([] { registry_mutex.lock(); }, [] { registry_mutex.unlock(); },
                                              [] { registry_mutex.unlock(); });

std::shared_ptr<VectorizerHold> find(uint64_t handle) {
  std::lock_guard<std::mutex> lock(registry_mutex);
  const auto it = holds.find(handle);
  return it == holds.end() ? nullptr : it->second.lock();
}

}  // namespace

uint64_t handle_for(const std::shared_ptr<VectorizerHold>& hold) {
  std::lock_guard<std::mutex> lock(registry_mutex);
  for (const auto& [handle, known] : holds) {
    if (known.lock() == hold) return handle;
  }
  const uint64_t handle = next_handle++;
  holds.emplace(handle, hold);
  return handle;
}

void forget(const VectorizerHold* hold) {
  std::lock_guard<std::mutex> lock(registry_mutex);
  for (auto it = holds.begin(); it != holds.end();) {
    const std::shared_ptr<VectorizerHold> known = it->second.lock();
    it = (!known || known.get() == hold) ? holds.erase(it) : std::next(it);
  }
}

#ifdef SB3_ALE_VEC_XLA_FFI

namespace ffi = ::xla::ffi;

namespace {

constexpr size_t kHandleBytes = sizeof(uint64_t);

/// Runs `body` on the engine that `handle` names, as its one caller from the send to the recv
/// (VectorizerHold::use: a Python call meanwhile is refused, a close() waits for the end); errors
/// become FFI errors.
template <typename Body>
ffi::Error with_engine(const ffi::Buffer<ffi::U8>& handle, ffi::Result<ffi::Buffer<ffi::U8>>& new_handle,
                       Body body) {
  if (handle.element_count() != kHandleBytes || new_handle->element_count() != kHandleBytes) {
    return ffi::Error::InvalidArgument(
        "sb3_ale_vec: the handle must be one (8,) uint8 array; the xla functions cannot be vmapped "
        "(got " + std::to_string(handle.element_count()) + " bytes)");
  }
  uint64_t id = 0;
  std::memcpy(&id, handle.typed_data(), kHandleBytes);
  std::memcpy(new_handle->typed_data(), handle.typed_data(), kHandleBytes);  // same env, a new value
  const std::shared_ptr<VectorizerHold> hold = find(id);
  if (!hold) {
    return ffi::Error(ffi::ErrorCode::kFailedPrecondition,
                      "sb3_ale_vec: this handle names no open env (the env was closed, or the handle is not one "
                      "that xla() returned)");
  }
  if (hold->closed()) return ffi::Error(ffi::ErrorCode::kFailedPrecondition, "sb3_ale_vec: the env is closed");
  try {
    return hold->use(body);
  } catch (const std::exception& e) {
    return ffi::Error::InvalidArgument(std::string("sb3_ale_vec: ") + e.what());
  } catch (...) {
    return ffi::Error::Internal("sb3_ale_vec: unknown error");
  }
}

ffi::Error size_error(const char* what, size_t got, size_t expected) {
  return ffi::Error::InvalidArgument("sb3_ale_vec: " + std::string(what) + " has " + std::to_string(got) +
                                     " elements, expected " + std::to_string(expected));
}

/// The vectorizer's next batch, whose observations are in `out` (every env, by id, or gathered).
std::vector<Row> receive(Vectorizer& vec, uint8_t* out) {
  std::string error;
  std::vector<Row> rows = vec.recv(out, error);
  if (!error.empty()) throw std::runtime_error(error + " (reset rebuilds the failed envs)");
  return rows;
}

/// A RAM buffer the call may pass: empty (it asked for no RAM) or one row per env of the batch.
bool ram_fits(ffi::Result<ffi::Buffer<ffi::U8>>& out, size_t batch) {
  return out->element_count() == 0 || out->element_count() == batch * kRamSize;
}

/// ram_info's column, each row's `field` (ram or final_ram), where the call asked for it.
void write_ram(const std::vector<Row>& rows, const uint8_t* Row::*field, ffi::Result<ffi::Buffer<ffi::U8>>& out) {
  if (out->element_count() == 0) return;
  for (size_t k = 0; k < rows.size(); ++k) write_ram_row(rows[k].*field, out->typed_data() + k * kRamSize);
}

void write_info(const Row& row, size_t k, ffi::Result<ffi::Buffer<ffi::S32>>& out_ids,
                ffi::Result<ffi::Buffer<ffi::S32>>& lives, ffi::Result<ffi::Buffer<ffi::S32>>& frame_number,
                ffi::Result<ffi::Buffer<ffi::S32>>& episode_frame_number) {
  out_ids->typed_data()[k] = row.env_id;
  lives->typed_data()[k] = row.now.lives;
  frame_number->typed_data()[k] = row.now.frame_number;
  episode_frame_number->typed_data()[k] = row.now.episode_frame_number;
}

ffi::Error Reset(ffi::Buffer<ffi::U8> handle, ffi::Buffer<ffi::S32> env_ids, ffi::Buffer<ffi::S32> seeds,
                 ffi::Result<ffi::Buffer<ffi::U8>> new_handle, ffi::Result<ffi::Buffer<ffi::U8>> obs,
                 ffi::Result<ffi::Buffer<ffi::S32>> out_ids, ffi::Result<ffi::Buffer<ffi::S32>> lives,
                 ffi::Result<ffi::Buffer<ffi::S32>> frame_number,
                 ffi::Result<ffi::Buffer<ffi::S32>> episode_frame_number, ffi::Result<ffi::Buffer<ffi::U8>> ram) {
  return with_engine(handle, new_handle, [&](Vectorizer& vec) {
    const auto batch = static_cast<size_t>(vec.batch_size());
    const size_t count = env_ids.element_count();
    if (seeds.element_count() != count) return size_error("seed", seeds.element_count(), count);
    if (obs->element_count() != batch * vec.obs_size()) {
      return size_error("obs", obs->element_count(), batch * vec.obs_size());
    }
    if (out_ids->element_count() != batch) return size_error("env_id", out_ids->element_count(), batch);
    if (!ram_fits(ram, batch)) return size_error("ram", ram->element_count(), batch * kRamSize);
    std::vector<int> ids(env_ids.typed_data(), env_ids.typed_data() + count);
    std::vector<Seed> seed_words(count);
    for (size_t k = 0; k < count; ++k) {
      const int32_t s = seeds.typed_data()[k];
      if (s >= 0) seed_words[k] = std::vector<uint32_t>{static_cast<uint32_t>(s)};  // ALE: negative is unseeded
    }
    uint8_t* out = obs->typed_data();
    vec.send_reset(ids, seed_words, [out](size_t) { return out; });
    const std::vector<Row> rows = receive(vec, out);
    for (size_t k = 0; k < rows.size(); ++k) write_info(rows[k], k, out_ids, lives, frame_number, episode_frame_number);
    write_ram(rows, &Row::ram, ram);
    return ffi::Error::Success();
  });
}

ffi::Error Step(ffi::Buffer<ffi::U8> handle, ffi::Buffer<ffi::S32> actions, ffi::Buffer<ffi::F32> strengths,
                ffi::Result<ffi::Buffer<ffi::U8>> new_handle, ffi::Result<ffi::Buffer<ffi::U8>> obs,
                ffi::Result<ffi::Buffer<ffi::F32>> reward, ffi::Result<ffi::Buffer<ffi::PRED>> terminated,
                ffi::Result<ffi::Buffer<ffi::PRED>> truncated, ffi::Result<ffi::Buffer<ffi::S32>> out_ids,
                ffi::Result<ffi::Buffer<ffi::S32>> lives, ffi::Result<ffi::Buffer<ffi::S32>> frame_number,
                ffi::Result<ffi::Buffer<ffi::S32>> episode_frame_number, ffi::Result<ffi::Buffer<ffi::PRED>> game_end,
                ffi::Result<ffi::Buffer<ffi::F32>> episode_return, ffi::Result<ffi::Buffer<ffi::S32>> episode_steps,
                ffi::Result<ffi::Buffer<ffi::PRED>> reset, ffi::Result<ffi::Buffer<ffi::S32>> step_info,
                ffi::Result<ffi::Buffer<ffi::U8>> final_obs, ffi::Result<ffi::Buffer<ffi::U8>> ram,
                ffi::Result<ffi::Buffer<ffi::U8>> final_ram) {
  return with_engine(handle, new_handle, [&](Vectorizer& vec) {
    const auto batch = static_cast<size_t>(vec.batch_size());
    const size_t obs_size = vec.obs_size();
    if (actions.element_count() != batch) return size_error("actions", actions.element_count(), batch);
    if (strengths.element_count() != batch) return size_error("paddle strengths", strengths.element_count(), batch);
    if (obs->element_count() != batch * obs_size) return size_error("obs", obs->element_count(), batch * obs_size);
    if (out_ids->element_count() != batch) return size_error("env_id", out_ids->element_count(), batch);
    if (step_info->element_count() != 3 * batch) return size_error("step info", step_info->element_count(), 3 * batch);
    // SAME_STEP functions ask for the final observations; NEXT_STEP ones pass an empty buffer.
    const bool finals = final_obs->element_count() != 0;
    if (finals && final_obs->element_count() != batch * obs_size) {
      return size_error("final_obs", final_obs->element_count(), batch * obs_size);
    }
    if (!ram_fits(ram, batch)) return size_error("ram", ram->element_count(), batch * kRamSize);
    if (!ram_fits(final_ram, batch)) return size_error("final_ram", final_ram->element_count(), batch * kRamSize);
    const std::vector<int64_t> action_ids(actions.typed_data(), actions.typed_data() + batch);
    const std::vector<float> strength(strengths.typed_data(), strengths.typed_data() + batch);
    uint8_t* out = obs->typed_data();
    vec.send({}, action_ids, strength, [out](size_t) { return out; });  // the vectorizer's envs
    const std::vector<Row> rows = receive(vec, out);
    for (size_t k = 0; k < rows.size(); ++k) {
      const Row& row = rows[k];
      const StepResult& r = row.step;
      write_info(row, k, out_ids, lives, frame_number, episode_frame_number);
      reward->typed_data()[k] = r.reward;
      terminated->typed_data()[k] = r.terminated;
      truncated->typed_data()[k] = r.truncated;
      game_end->typed_data()[k] = r.game_end;
      episode_return->typed_data()[k] = static_cast<float>(r.episode_return);
      episode_steps->typed_data()[k] = static_cast<int32_t>(r.episode_steps);
      reset->typed_data()[k] = r.reset;
      int32_t* raw = step_info->typed_data() + 3 * k;  // the step's own info, before any auto-reset
      raw[0] = r.lives;
      raw[1] = r.frame_number;
      raw[2] = r.episode_frame_number;
      if (finals) {
        uint8_t* row_out = final_obs->typed_data() + k * obs_size;
        if (row.final_obs != nullptr) {
          std::copy(row.final_obs->begin(), row.final_obs->end(), row_out);
        } else {
          std::fill_n(row_out, obs_size, uint8_t{0});
        }
      }
    }
    write_ram(rows, &Row::ram, ram);
    write_ram(rows, &Row::final_ram, final_ram);
    return ffi::Error::Success();
  });
}

}  // namespace

XLA_FFI_DEFINE_HANDLER_SYMBOL(sb3_ale_vec_xla_reset, Reset,
                              ffi::Ffi::Bind()
                                  .Arg<ffi::Buffer<ffi::U8>>()    // handle
                                  .Arg<ffi::Buffer<ffi::S32>>()   // env ids to reset
                                  .Arg<ffi::Buffer<ffi::S32>>()   // their seeds (negative: unseeded)
                                  .Ret<ffi::Buffer<ffi::U8>>()    // new handle
                                  .Ret<ffi::Buffer<ffi::U8>>()    // obs
                                  .Ret<ffi::Buffer<ffi::S32>>()   // env_id
                                  .Ret<ffi::Buffer<ffi::S32>>()   // lives
                                  .Ret<ffi::Buffer<ffi::S32>>()   // frame_number
                                  .Ret<ffi::Buffer<ffi::S32>>()   // episode_frame_number
                                  .Ret<ffi::Buffer<ffi::U8>>());  // ram (ram_info; empty otherwise)

XLA_FFI_DEFINE_HANDLER_SYMBOL(sb3_ale_vec_xla_step, Step,
                              ffi::Ffi::Bind()
                                  .Arg<ffi::Buffer<ffi::U8>>()     // handle
                                  .Arg<ffi::Buffer<ffi::S32>>()    // action indices
                                  .Arg<ffi::Buffer<ffi::F32>>()    // paddle strengths
                                  .Ret<ffi::Buffer<ffi::U8>>()     // new handle
                                  .Ret<ffi::Buffer<ffi::U8>>()     // obs
                                  .Ret<ffi::Buffer<ffi::F32>>()    // reward
                                  .Ret<ffi::Buffer<ffi::PRED>>()   // terminated
                                  .Ret<ffi::Buffer<ffi::PRED>>()   // truncated
                                  .Ret<ffi::Buffer<ffi::S32>>()    // env_id
                                  .Ret<ffi::Buffer<ffi::S32>>()    // lives
                                  .Ret<ffi::Buffer<ffi::S32>>()    // frame_number
                                  .Ret<ffi::Buffer<ffi::S32>>()    // episode_frame_number
                                  .Ret<ffi::Buffer<ffi::PRED>>()   // game_end
                                  .Ret<ffi::Buffer<ffi::F32>>()    // episode_return (unclipped, at game_end)
                                  .Ret<ffi::Buffer<ffi::S32>>()    // episode_steps (at game_end)
                                  .Ret<ffi::Buffer<ffi::PRED>>()   // reset (the obs starts a new episode)
                                  .Ret<ffi::Buffer<ffi::S32>>()    // the step's lives, frame_number, episode_frame_number
                                  .Ret<ffi::Buffer<ffi::U8>>()     // final obs (SAME_STEP; empty otherwise)
                                  .Ret<ffi::Buffer<ffi::U8>>()     // ram (ram_info; empty otherwise)
                                  .Ret<ffi::Buffer<ffi::U8>>());   // final ram (SAME_STEP and ram_info)

// The targets' bodies on host buffers (xla_stage.hpp): the CUDA targets stage through these.
ffi::Error reset_on_host(const HostArgs<3>& a, const HostArgs<7>& r) {
  using B8 = ffi::Buffer<ffi::U8>;
  using B32 = ffi::Buffer<ffi::S32>;
  return Reset(B8(a[0]), B32(a[1]), B32(a[2]), B8(r[0]), B8(r[1]), B32(r[2]), B32(r[3]), B32(r[4]), B32(r[5]),
               B8(r[6]));
}

ffi::Error step_on_host(const HostArgs<3>& a, const HostArgs<17>& r) {
  using B8 = ffi::Buffer<ffi::U8>;
  using B32 = ffi::Buffer<ffi::S32>;
  using BF = ffi::Buffer<ffi::F32>;
  using BP = ffi::Buffer<ffi::PRED>;
  return Step(B8(a[0]), B32(a[1]), BF(a[2]), B8(r[0]), B8(r[1]), BF(r[2]), BP(r[3]), BP(r[4]), B32(r[5]), B32(r[6]),
              B32(r[7]), B32(r[8]), BP(r[9]), BF(r[10]), B32(r[11]), BP(r[12]), B32(r[13]), B8(r[14]),
              B8(r[15]), B8(r[16]));
}

bool available() { return true; }
int api_major() { return XLA_FFI_API_MAJOR; }
int api_minor() { return XLA_FFI_API_MINOR; }
void* reset_handler() { return reinterpret_cast<void*>(&sb3_ale_vec_xla_reset); }
void* step_handler() { return reinterpret_cast<void*>(&sb3_ale_vec_xla_step); }

#else  // built without the XLA FFI headers

bool available() { return false; }
int api_major() { return -1; }
int api_minor() { return -1; }
void* reset_handler() { return nullptr; }
void* step_handler() { return nullptr; }

#endif

}  // namespace sb3ale::xla
