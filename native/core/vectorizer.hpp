// The vectorizer: the one API that the Python module (py_vectorizer.hpp) and the XLA targets
// (xla_ffi.cpp) both call, as ALE's EnvVectorizer is for ale-py. Written once here: which envs a
// call addresses (EnvPool-style, the next step goes to the envs the last batch returned), partial
// resets (the envs left alone report their own current stack and info), where a batch's
// observations go (a batch of every env is written by the workers straight into the caller's rows),
// and the rows of a batch (results, infos, final observations, failed envs).
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/engine.hpp"

namespace sb3ale {

/// ALE's info of one row.
struct RowInfo {
  int lives = 0;
  int frame_number = 0;
  int episode_frame_number = 0;
};

/// One row of a batch: env `env_id`'s results.
struct Row {
  int env_id = 0;
  bool failed = false;  ///< its task threw: every value is zero, its observation row too
  bool staged = false;  ///< a partial reset left it alone: its current stack and info, no step
  StepResult step;      ///< the step's results (a reset's: reset and requested_reset set); zero when staged
  ResetInfo reset;      ///< the reset's own info, where step.reset (empty: SB3's FireResetEnv returns {})
  RowInfo now;          ///< the info of the state the observation shows: the reset's after one, else the step's
  const std::vector<uint8_t>* final_obs = nullptr;  ///< the stack at the episode's end, on done rows
  const uint8_t* ram = nullptr;        ///< ram_info: the RAM at the observation's frame (kRamSize bytes)
  const uint8_t* final_ram = nullptr;  ///< ram_info: the RAM at final_obs's frame, on done rows
};

/// Writes `ram` (a Row's ram or final_ram) to `out`, kRamSize bytes: zeros where the row has none (a
/// failed row's RAM is zeros, as its observation row).
inline void write_ram_row(const uint8_t* ram, uint8_t* out) {
  if (ram != nullptr) {
    std::copy_n(ram, kRamSize, out);
  } else {
    std::fill_n(out, kRamSize, uint8_t{0});
  }
}

/// Gives the caller's array for a batch of `rows` observations (rows x obs_size bytes), which must
/// stay alive until recv.
using RowsFor = std::function<uint8_t*(size_t rows)>;

class Vectorizer {
 public:
  /// See Engine; `batch_size` 0 means every env.
  Vectorizer(const std::vector<EnvConfig>& configs, int num_threads, int thread_affinity_offset, int batch_size)
      : engine_(configs, num_threads, thread_affinity_offset, batch_size) {}

  Engine& engine() { return engine_; }
  const Engine& engine() const { return engine_; }
  int num_envs() const { return engine_.num_envs(); }
  int batch_size() const { return engine_.batch_size(); }
  size_t obs_size() const { return static_cast<size_t>(engine_.config(0).obs_size()); }

  /// Starts resetting envs `ids`, seeds[k] for ids[k]; steps in flight finish first and are
  /// dropped. Fewer than every env (a partial reset, none included) needs batch_size == num_envs
  /// and a first reset of every env; the next recv then returns every env, by env id, the envs left
  /// alone staged.
  void send_reset(const std::vector<int>& ids, const std::vector<Seed>& seeds, const RowsFor& rows);
  /// Starts a step of envs `ids`, or, when empty, of the envs the last recv returned (batched mode)
  /// or every env. Refused before the first reset.
  void send(std::vector<int> ids, const std::vector<int64_t>& actions, const std::vector<float>& strengths,
            const RowsFor& rows);
  /// How many rows the next recv returns; 0 with nothing sent.
  int expected() const;
  /// Whether the next recv's observations are already in the caller's rows (given at send).
  bool in_place() const { return in_place_ != nullptr; }
  /// Waits for the next batch: its rows, in the order the envs finished (by env id when in place);
  /// observations not in place are copied to `gather` (row k for rows[k]). `error` names the envs
  /// that failed (empty if none).
  std::vector<Row> recv(uint8_t* gather, std::string& error);

 private:
  void staged_rows(std::vector<Row>& rows, uint8_t* obs);

  Engine engine_;
  bool started_ = false;              // every env has been reset once
  std::vector<int> next_ids_;         // the envs the last recv returned, in its order
  std::vector<char> staged_;          // per env, for the pending partial reset: left alone
  bool staging_ = false;              // a partial reset is pending
  bool sent_ = false;                 // the last send gave the engine work (a partial reset of none gives none)
  uint8_t* in_place_ = nullptr;       // the caller's rows of the batch in flight, by env id
};

}  // namespace sb3ale
