#include "core/engine.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <new>
#include <stdexcept>
#include <string>
#include <thread>
#include <tuple>

namespace sb3ale {

namespace {

int thread_count(int requested, int num_envs) {
  if (requested < 0) throw std::invalid_argument("num_threads must be >= 0 (0 = one per core)");
  const int cores = static_cast<int>(allowed_cpus().size());  // the process's CPUs, not the machine's
  return std::max(1, std::min(requested == 0 ? cores : requested, num_envs));
}

/// `configs`, each checked (check_config) and all of one observation shape, before anything reads
/// them: a config built directly skipped options.py's checks, and its sizes may not even fit an int.
const std::vector<EnvConfig>& checked(const std::vector<EnvConfig>& configs) {
  if (configs.empty()) throw std::invalid_argument("num_envs must be >= 1");
  const EnvConfig& c0 = configs.front();
  for (const EnvConfig& c : configs) {
    check_config(c);
    if (c.img_height != c0.img_height || c.img_width != c0.img_width || c.grayscale != c0.grayscale ||
        c.stack_num != c0.stack_num || c.layout != c0.layout || c.obs_size() != c0.obs_size()) {
      throw std::invalid_argument("every env of an engine needs the same observation shape");
    }
    // ALE's loadROM() exits the process on a ROM it does not know: check once, up front.
    check_supported_rom(c.rom_path);
  }
  return configs;
}

std::string key_name(const EnvConfig& c) {
  const std::string rom = c.rom_path.substr(c.rom_path.find_last_of("/\\") + 1);
  return rom + " (mode " + std::to_string(c.mode) + ", difficulty " + std::to_string(c.difficulty) +
         (c.repeat_action_probability > 0 ? ", sticky actions)" : ", no sticky actions)");
}

}  // namespace

Engine::Engine(const std::vector<EnvConfig>& configs, int num_threads, int thread_affinity_offset,
               int batch_size)
    : configs_(checked(configs)),
      batch_size_(batch_size == 0 ? static_cast<int>(configs.size()) : batch_size),
      affinity_offset_(thread_affinity_offset),
      obs_size_(static_cast<size_t>(configs_.front().obs_size())),
      resizes_(configs_.front().img_height, configs_.front().img_width, configs_.front().channels()),
      pool_(thread_count(num_threads, static_cast<int>(configs.size())), thread_affinity_offset,
            [this](int i) { run_env(i); },
            [this](const std::function<bool()>& queued) { return lending_(queued); }),
      caller_load_(static_cast<int>(allowed_cpus().size()), pool_.cpu_clocks()) {
  const int n = static_cast<int>(configs_.size());
  if (batch_size_ < 1 || batch_size_ > n) {
    throw std::invalid_argument("batch_size must be in [0, num_envs] (0 = num_envs), got " + std::to_string(batch_size));
  }
  reset_ahead_ = pool_.size() > 1;
  if (reset_ahead_) start_background();
  quiet_ale_logs();  // before any ALEInterface exists: its constructor logs a banner
  const auto size = static_cast<size_t>(n);
  // One run-time verdict per key (ROM, mode, difficulty, sticky) among the envs: a swap that a real
  // reset did not reproduce refuses the key for each env of it.
  std::map<std::tuple<std::string, int, int, bool>, std::shared_ptr<RuntimeVerdict>> keys;
  for (const EnvConfig& c : configs_) {
    auto& verdict = keys[std::make_tuple(c.rom_path, c.mode, c.difficulty, c.repeat_action_probability > 0)];
    if (!verdict) keys_.push_back(verdict = std::make_shared<RuntimeVerdict>(key_name(c)));
    verdicts_.push_back(verdict);
  }
  envs_.resize(size);
  ops_.resize(size);
  results_.resize(size);
  errors_.resize(size);
  failed_.assign(size, 0);
  busy_.assign(size, 0);
  inject_fault_.assign(size, 0);
  // Loading a ROM takes a while: do it on the workers.
  std::vector<int> all(size);
  for (int i = 0; i < n; ++i) all[static_cast<size_t>(i)] = i;
  pool_.submit(all);
  pool_.wait(n);
  pool_.take(n);
  const std::string error = describe_errors(all);
  if (error.empty()) return;
  for (const auto& e : errors_) {
    if (!e) continue;
    try {
      std::rethrow_exception(e);
    } catch (const std::invalid_argument&) {
      throw std::invalid_argument(error);
    } catch (...) {
      throw std::runtime_error(error);
    }
  }
}

Engine::~Engine() {
  // The workers first, whatever the members' order: queued tasks dropped, running ones finished (a
  // reset may be rebuilding its env right now), a prepare lent to a worker left at its next phase or frame (the pool's predicate),
  // and the workers joined. Then every prepare is abandoned (a job an idle thread still runs is kept
  // alive by that thread, ResetJob::self) and the idle threads are told to stop (nothing waits for them).
  lending_.lend(nullptr);
  pool_.shutdown();
  for (const auto& env : envs_) {
    if (env) env->abandon_prepare();
  }
}

Engine::Driver::Driver(const Engine& engine) : owner_(engine.driver_) {
  const std::thread::id me = std::this_thread::get_id();
  std::thread::id none{};
  if (owner_.compare_exchange_strong(none, me, std::memory_order_acq_rel)) return;
  if (none == me) {  // this thread already drives it: a call inside a longer one
    nested_ = true;
    return;
  }
  // VectorizerHold, the one guard of both front doors, lets no second caller in: this is a bug.
  std::fputs("sb3_ale_vec: internal error: two threads drive one engine at once (VectorizerHold lets one in)\n",
             stderr);
  std::abort();
}

Engine::Driver::~Driver() {
  if (!nested_) owner_.store(std::thread::id{}, std::memory_order_release);
}


void Engine::dispatch(const std::vector<int>& ids, uint8_t* rows) {
  // The caller's gap ends: its workers lend between batches only if it left a CPU free (caller_load.hpp).
  if (background_ && in_flight() == 0) pool_.lend_between(caller_load_.gap_ended());
  if (rows == nullptr && staging_.empty()) staging_.assign(obs_size_ * envs_.size(), 0);
  uint8_t* base = rows != nullptr ? rows : staging_.data();
  const int64_t sent = profile_.on() ? profile_.now_ns() : 0;
  for (int i : ids) {
    ops_[static_cast<size_t>(i)].out = base + static_cast<size_t>(i) * obs_size_;
    busy_[static_cast<size_t>(i)] = 1;
    if (profile_.on()) profile_.slot(i).sent_ns = sent;
  }
  in_flight_.fetch_add(static_cast<int>(ids.size()), std::memory_order_acq_rel);
  pool_.submit(ids);
}

void Engine::send_reset(const std::vector<int>& ids, const std::vector<Seed>& seeds, uint8_t* rows) {
  const Driver driver(*this);
  // Checked before anything is drained: a refused reset leaves the steps in flight to their recv.
  if (!ids.empty() || !seeds.empty()) check_ids(ids, seeds.size(), true);
  if (in_flight() > 0 || interrupted_) drain();  // a reset drops the results of steps in flight
  if (ids.empty() && seeds.empty()) return;       // a partial reset of none: only that
  if (static_cast<int>(ids.size()) == num_envs()) interrupted_ = false;
  for (size_t k = 0; k < ids.size(); ++k) {
    Op& op = ops_[static_cast<size_t>(ids[k])];
    op.kind = Op::kReset;
    op.seed = seeds[k];
  }
  dispatch(ids, rows);
}

void Engine::send(const std::vector<int>& ids, const std::vector<int64_t>& actions,
                  const std::vector<float>& strengths, uint8_t* rows) {
  const Driver driver(*this);
  if (interrupted_) throw std::runtime_error("the last step or reset was interrupted part-way: reset() first");
  check_ids(ids, actions.size());
  if (strengths.size() != ids.size()) throw std::invalid_argument("send needs one paddle strength per action");
  for (size_t k = 0; k < ids.size(); ++k) {
    const auto i = static_cast<size_t>(ids[k]);
    if (failed_[i]) {
      throw std::runtime_error("env " + std::to_string(ids[k]) + " failed in an earlier step: reset() rebuilds it");
    }
    const auto n = static_cast<int64_t>(envs_[i]->action_set().size());
    if (actions[k] < 0 || actions[k] >= n) {
      throw std::out_of_range("env " + std::to_string(ids[k]) + ": action " + std::to_string(actions[k]) +
                              " is out of range [0, " + std::to_string(n) + ")");
    }
    if (!(strengths[k] >= 0.0f && strengths[k] <= 1.0f)) {
      throw std::out_of_range("env " + std::to_string(ids[k]) + ": paddle strength " +
                              std::to_string(strengths[k]) + " is outside [0, 1]");
    }
  }
  for (size_t k = 0; k < ids.size(); ++k) {
    Op& op = ops_[static_cast<size_t>(ids[k])];
    op.kind = Op::kStep;
    op.action = static_cast<int>(actions[k]);
    op.strength = strengths[k];
  }
  // A reset costs ~25 steps: queued last, it leaves the other threads idle behind it. Longest job
  // first: a full batch's resets go ahead. Only there: its rows are by env id whatever the finish
  // order, while a partial batch returns the first envs to finish (1 thread: FIFO, as ale-py).
  if (resets_first_ && rows != nullptr && static_cast<int>(ids.size()) == batch_size_ && batch_size_ == num_envs()) {
    std::vector<int> order(ids);
    std::stable_partition(order.begin(), order.end(),
                          [this](int i) { return envs_[static_cast<size_t>(i)]->resets_next(); });
    dispatch(order, rows);
    return;
  }
  dispatch(ids, rows);
}

void Engine::run_env(int i) {
  if (!profile_.on()) {
    run_op(i);
  } else {
    const int64_t start = profile_.now_ns();
    run_op(i);
    TaskRecord& r = profile_.slot(i);
    r.thread = ThreadPool::current_thread();
    r.reset = results_[static_cast<size_t>(i)].reset;
    r.start_ns = start;
    r.end_ns = profile_.now_ns();
  }
  // An env that has just reset has its next reset to prepare: a worker with nothing queued does it, or
  // an idle thread, in time no thread of ours wants.
  const auto e = static_cast<size_t>(i);
  if (reset_ahead_ && errors_[e] == nullptr) {
    try {
      if (std::shared_ptr<ResetJob> job = envs_[e]->claim_prepare()) background_->submit(i, std::move(job));
    } catch (const std::bad_alloc&) {
      // Out of memory for the prepare: nothing is prepared, and the episode's end resets for real.
    }
  }
}

void Engine::profile(bool on) {
  const Driver driver(*this);
  if (in_flight() > 0) throw std::logic_error("profile() needs no env in flight: recv() them first");
  if (on) {
    profile_.start(num_envs());
  } else {
    profile_.stop();
  }
}

void Engine::run_op(int i) {
  // A failing env still finishes its task, so the caller gets an error, never a hang.
  const auto e = static_cast<size_t>(i);
  Op& op = ops_[e];
  errors_[e] = nullptr;
  try {
    switch (op.kind) {
      case Op::kBuild:
        envs_[e] = std::make_unique<AtariEnv>(configs_[e], resizes_, palettes_);
        apply_reset_ahead(e);
        break;
      case Op::kReset:
        if (failed_[e]) {  // a fresh emulator (the old one's prepare, if any, is abandoned with it)
          envs_[e] = std::make_unique<AtariEnv>(configs_[e], resizes_, palettes_);
          apply_reset_ahead(e);
        }
        envs_[e]->reset(op.seed ? &*op.seed : nullptr, op.out);
        results_[e] = StepResult{};
        results_[e].reset = true;
        results_[e].requested_reset = true;
        break;
      case Op::kStep:
        if (inject_fault_[e]) {
          inject_fault_[e] = 0;
          throw std::runtime_error("injected fault");
        }
        envs_[e]->step(op.action, op.strength, results_[e], op.out);
        break;
    }
  } catch (...) {
    errors_[e] = std::current_exception();
  }
}

bool Engine::wait_for(std::chrono::milliseconds timeout) {
  const Driver driver(*this);
  return expected() == 0 || pool_.wait_for(expected(), timeout);
}

std::vector<int> Engine::recv(uint8_t* gather, std::string& error) {
  const Driver driver(*this);
  if (interrupted_) throw std::runtime_error("the work in flight was cancelled (Ctrl-C): reset() first");
  const int count = expected();
  if (count == 0) throw std::logic_error("recv() called with no env in flight: send() first");
  pool_.wait(count);
  const int64_t woke = profile_.on() ? profile_.now_ns() : 0;
  std::vector<int> ids = pool_.take(count);
  in_flight_.fetch_sub(count, std::memory_order_acq_rel);
  for (size_t k = 0; k < ids.size(); ++k) {
    const auto i = static_cast<size_t>(ids[k]);
    busy_[i] = 0;
    failed_[i] = errors_[i] != nullptr;
    uint8_t* staged = staging_.empty() ? nullptr : staging_.data() + i * obs_size_;
    if (failed_[i]) {
      std::fill_n(ops_[i].out, obs_size_, 0);  // never a half-written row
    }
    if (ops_[i].out == staged && gather != nullptr) {
      std::memcpy(gather + k * obs_size_, staged, obs_size_);
    }
  }
  if (profile_.on()) profile_.collect(ids, woke);
  error = describe_errors(ids);
  if (background_ && in_flight() == 0) caller_load_.gap_began();  // the caller's program runs now
  return ids;
}

void Engine::cancel() {
  const Driver driver(*this);
  if (in_flight() == 0) return;
  for (int i : pool_.cancel()) {  // never started: not in flight any more
    busy_[static_cast<size_t>(i)] = 0;
    in_flight_.fetch_sub(1, std::memory_order_acq_rel);
  }
  interrupted_ = true;
}

void Engine::drain() {
  const int count = in_flight();
  pool_.wait(count);
  for (int i : pool_.take(count)) {
    const auto e = static_cast<size_t>(i);
    busy_[e] = 0;
    failed_[e] = errors_[e] != nullptr;
  }
  in_flight_.store(0, std::memory_order_release);
}

}  // namespace sb3ale
