"""The benchmark's peers. Each runs in a child process of its own that builds its env once, then
measures on request, so that bench.py can take turns between peers run by run.

    python -m sb3_ale_vec.bench.peers PEER GAME NUM_ENVS THREADS [BATCH_SIZE]

reads lines "STEPS SECONDS" (STEPS batched steps, or SECONDS of a bare loop) and answers each with
a line "RESULT {json}": steps/s, emulated frames/s where the envs count them, and memory.

Emulated frames are counted from the envs' own counters: ALE's frame number (every act(), no-op
and FIRE resets included) plus, for each game reset, the frames ALE's reset_game() emulates without
counting them (_testing._reset_frames: 60 no-ops, two soft resets, the game's starting actions).
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from typing import Any, Callable

import numpy as np

FRAMESKIP = 4
# Equal work: what every equal-work peer is configured to do, so that all emulate the same frames.
EQUAL_WORK = "frameskip 4 + max-pool, gray 84x84, stack 4, up to 30 no-ops, FIRE reset, no episodic life, no sticky actions"
PEERS = {  # name: (table, what it is)
    "sb3_ale_vec": ("equal", "this engine: sb3_ale_vec.AtariVectorEnv (ale preset)"),
    "sb3_ale_vec inline": ("equal", "the A/B: this engine with each reset made when its episode ends (no resets ahead)"),
    "sb3_ale_vec ram_info": ("equal", "the cost of info[\"ram\"]: this engine with ram_info=True"),
    "sb3_ale_vec old": ("equal", "before/after: the same peer from another tree's build (--old PATH)"),
    "ale_py": ("equal", "ale_py.vector_env.AtariVectorEnv, the same options"),
    "envpool": ("equal", "envpool's Atari, the same options (if installed)"),
    "act() this build": ("equal", "the limit: this build's emulator alone, ALEInterface.act() in a C++ loop"),
    "act() ale-py": ("equal", "the limit: ale-py's ALEInterface.act() in a Python loop"),
    "sb3_ale_vec sb3": ("sb3", "this engine with SB3's defaults: AleNativeVecEnv"),
    "sb3_ale_vec sb3 ram_info": ("sb3", "the same with ram_info=True (info[\"ram\"] in every info dict)"),
    "sb3_ale_vec sb3 no_life": ("sb3", "SB3's front-end on the equal work's frames: AleNativeVecEnv(episodic_life=False) "
                                       "(its FIRE reset: SB3's two agent steps, 8 frames)"),
    "sb3 subproc": ("sb3", "SB3 make_atari_env + VecFrameStack, SubprocVecEnv"),
    "sb3 dummy": ("sb3", "SB3 make_atari_env + VecFrameStack, DummyVecEnv"),
    "gymnasium async": ("sb3", "gymnasium AsyncVectorEnv of AtariPreprocessing + FrameStackObservation"),
}
# The peers of ale-py's AtariVectorEnv API, whose frames are counted from info["frame_number"].
ALE_API = ("sb3_ale_vec", "ale_py", "sb3_ale_vec inline", "sb3_ale_vec ram_info")
NEEDS = {"envpool": "envpool", "sb3 subproc": "cv2", "sb3 dummy": "cv2", "gymnasium async": "cv2"}


def rom(game: str) -> str:
    from ale_py import roms

    return str(roms.get_rom_path(game))


def _status_kib(pid: int, key: str) -> int:
    try:
        with open(f"/proc/{pid}/status") as status:
            return next(int(line.split()[1]) for line in status if line.startswith(key))
    except (OSError, StopIteration):
        return 0


def peak_rss_mib() -> float:
    """Peak resident memory of this process and its children (subprocess peers)."""
    try:
        children = [int(p) for p in open(f"/proc/{os.getpid()}/task/{os.getpid()}/children").read().split()]
    except OSError:
        children = []
    return sum(_status_kib(pid, "VmHWM") for pid in [os.getpid(), *children]) / 1024


# -- vector peers: built once, then stepped with one shared stream of random actions ---------------

def _make(peer: str, game: str, n: int, threads: int, batch: int) -> tuple[Any, Callable, int]:
    """(env, step function, number of actions), after the env's reset with seed 0. With `batch` <
    `n` (the equal-work peers only), EnvPool-style: a step sends the last batch's envs their actions
    and returns the first `batch` envs to finish."""
    from sb3_ale_vec.games import camel_name

    if peer in ALE_API:
        if peer == "ale_py":
            from ale_py.vector_env import AtariVectorEnv
        else:
            from sb3_ale_vec import AtariVectorEnv
        ram = {"ram_info": True} if peer == "sb3_ale_vec ram_info" else {}
        env = AtariVectorEnv(game, n, num_threads=threads, batch_size=batch, **ram)  # both default to equal work
        if peer == "sb3_ale_vec inline":
            env._native._vec._reset_ahead = False
        env.reset(seed=0)
        return env, env.step, int(env.single_action_space.n)
    if peer == "envpool":
        import envpool

        env = envpool.make(f"{camel_name(game)}-v5", env_type="gymnasium", num_envs=n, batch_size=batch,
                           num_threads=threads, seed=0, episodic_life=False, reward_clip=True,
                           repeat_action_probability=0.0, noop_max=30, use_fire_reset=True, stack_num=4,
                           img_height=84, img_width=84, gray_scale=True, frame_skip=FRAMESKIP,
                           max_episode_steps=108000 // FRAMESKIP)
        if batch == n:
            env.reset()
            return env, env.step, int(env.action_space.n)
        env.async_reset()
        ids = [env.recv()[-1]["env_id"]]

        def step(actions: np.ndarray) -> Any:
            out = env.step(actions, ids[0])
            ids[0] = out[-1]["env_id"]
            return out

        return env, step, int(env.action_space.n)
    if batch != n:
        raise ValueError(f"{peer} has no asynchronous batches")
    if peer in ("sb3_ale_vec sb3", "sb3_ale_vec sb3 ram_info", "sb3_ale_vec sb3 no_life"):
        from sb3_ale_vec import AleNativeVecEnv

        env = AleNativeVecEnv(game, n, seed=0, num_threads=threads, ram_info=peer.endswith("ram_info"),
                              episodic_life=False if peer.endswith("no_life") else None)
        env.reset()
        return env, env.step, int(env.action_space.n)
    import ale_py
    import gymnasium as gym

    gym.register_envs(ale_py)
    gym_id = f"{camel_name(game)}NoFrameskip-v4"
    if peer in ("sb3 subproc", "sb3 dummy"):
        from stable_baselines3.common.env_util import make_atari_env
        from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv, VecFrameStack

        cls, kwargs = (SubprocVecEnv, {"start_method": "fork"}) if peer == "sb3 subproc" else (DummyVecEnv, {})
        env = VecFrameStack(make_atari_env(gym_id, n_envs=n, seed=0, vec_env_cls=cls, vec_env_kwargs=kwargs), 4)
        env.reset()
        return env, env.step, int(env.action_space.n)
    if peer == "gymnasium async":
        from gymnasium.wrappers import AtariPreprocessing, FrameStackObservation

        env = gym.make_vec(gym_id, n, vectorization_mode="async", vector_kwargs={"context": "fork"},
                           wrappers=[lambda e: FrameStackObservation(AtariPreprocessing(e), 4, padding_type="zero")])
        env.reset(seed=0)
        return env, env.step, int(env.single_action_space.n)
    raise ValueError(f"unknown peer {peer!r}")


class VectorPeer:
    def __init__(self, peer: str, game: str, n: int, threads: int, batch: int) -> None:
        self.batch = batch
        self.env, self.step, n_actions = _make(peer, game, n, threads, batch)
        self.actions = np.random.default_rng(0).integers(0, n_actions, (1 << 14, batch))
        self.cursor = 0
        self.reset_frames = None
        if peer in ALE_API:
            from sb3_ale_vec import _testing

            self.reset_frames = _testing._reset_frames(rom(game))
        self.last_frames = np.full(n, -1, dtype=np.int64)  # per env: its frame number when it last returned
        if batch < n:  # the resets still in flight (a seeded one reloads the ROM) finish before any timing
            self.run(2 * (n // batch + 1), 0.0)

    def run(self, steps: int, seconds: float) -> dict[str, float]:
        frames = resets = 0
        start = time.perf_counter()
        for _ in range(steps):
            out = self.step(self.actions[self.cursor])
            self.cursor = (self.cursor + 1) % len(self.actions)
            if self.reset_frames is not None:
                obs, reward, terminated, truncated, info = out
                ids = info["env_id"] if self.batch < len(self.last_frames) else slice(None)
                counted, last = info["frame_number"].astype(np.int64), self.last_frames[ids]
                frames += int((counted - last)[last >= 0].sum())
                self.last_frames[ids] = counted
                resets += int(np.count_nonzero(terminated | truncated))
        elapsed = time.perf_counter() - start
        result = {"steps_per_s": steps * self.batch / elapsed}
        if self.reset_frames is not None:
            result["frames"] = frames + resets * self.reset_frames
            result["frames_per_s"] = result["frames"] / elapsed
        return result

    def close(self) -> None:
        self.env.close()


# -- the limits: the emulator alone, in one thread (or process) per core at once ------------------

def _ale_py_loop(game: str, seconds: float) -> tuple[int, float]:
    """ale-py's ALEInterface.act() in a Python loop: (frames emulated, seconds)."""
    import ale_py

    from sb3_ale_vec import _testing

    ale = ale_py.ALEInterface()
    ale.setLoggerMode(ale_py.LoggerMode.Error)
    ale.setFloat("repeat_action_probability", 0.0)
    ale.loadROM(rom(game))
    actions = ale.getMinimalActionSet()
    choices = np.random.default_rng(0).integers(0, len(actions), 1 << 16).tolist()
    act, game_over, resets, k = ale.act, ale.game_over, 0, 0
    first, start = ale.getFrameNumber(), time.perf_counter()
    while time.perf_counter() - start < seconds:
        for _ in range(1000):
            act(actions[choices[k & 0xFFFF]])
            k += 1
            if game_over():
                ale.reset_game()
                resets += 1
    elapsed = time.perf_counter() - start
    return ale.getFrameNumber() - first + resets * _testing._reset_frames(rom(game)), elapsed


class LimitPeer:
    def __init__(self, peer: str, game: str, threads: int) -> None:
        self.peer, self.game, self.threads = peer, game, threads
        self.pool = None
        if peer == "act() ale-py":  # ale-py's act() holds the GIL: one process each
            import multiprocessing

            self.pool = multiprocessing.get_context("fork").Pool(threads)

    def run(self, steps: int, seconds: float) -> dict[str, float]:
        if self.pool is not None:
            runs = self.pool.starmap(_ale_py_loop, [(self.game, seconds)] * self.threads)
        else:  # this build's loop releases the GIL: one thread each
            from sb3_ale_vec import _testing

            runs = [(0, 0.0)] * self.threads

            def one(t: int) -> None:
                r = _testing._bare_act(rom(self.game), seconds, t)
                runs[t] = (r["act_frames"] + r["resets"] * r["reset_frames"], r["seconds"])

            workers = [threading.Thread(target=one, args=(t,)) for t in range(self.threads)]
            for w in workers:
                w.start()
            for w in workers:
                w.join()
        fps = sum(frames / elapsed for frames, elapsed in runs)
        return {"frames_per_s": fps, "steps_per_s": fps / FRAMESKIP}

    def close(self) -> None:
        if self.pool is not None:
            self.pool.terminate()


def serve(peer: str, game: str, n: int, threads: int, batch: int) -> None:
    import sb3_ale_vec  # noqa: F401  (with SB3, torch, ale-py and gymnasium)

    if peer in NEEDS:
        __import__(NEEDS[peer])
    baseline = _status_kib(os.getpid(), "VmRSS") / 1024  # imports done: what the envs add comes next
    limit = peer.startswith("act()")
    runner = LimitPeer(peer, game, threads) if limit else VectorPeer(peer, game, n, threads, batch or n)
    print("READY", flush=True)
    try:
        for line in sys.stdin:
            if line.strip() == "QUIT":
                break
            steps, seconds = line.split()
            result = runner.run(int(steps), float(seconds))
            if not limit:
                result["env_rss_mib"] = peak_rss_mib() - baseline
            print("RESULT", json.dumps(result), flush=True)
    finally:
        runner.close()


if __name__ == "__main__":
    serve(sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]) if len(sys.argv) > 5 else 0)
