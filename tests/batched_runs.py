"""Each env's trajectory, however its env batches the steps (EnvPool-style or synchronous): what the
batching, scheduling and resets-ahead tests compare env by env."""

from __future__ import annotations

import numpy as np
from gymnasium.vector import AutoresetMode
from sb3_ale_vec import AleVectorEnv, AtariVectorEnv

INFO_KEYS = ("lives", "episode_frame_number", "frame_number")


def make(front_end: str, num_envs: int, mode: AutoresetMode, threads: int, batch_size: int, limit: int):
    # Episodes end often, by both termination (a life lost) and truncation (a short frame limit).
    kwargs = dict(batch_size=batch_size, autoreset_mode=mode, num_threads=threads, episodic_life=True,
                  max_num_frames_per_episode=limit)
    if front_end == "gymnasium":
        return AleVectorEnv("breakout", num_envs, **kwargs)
    return AtariVectorEnv("breakout", num_envs, **kwargs)


def record(rows: dict[int, list], ids, obs, rewards, terminated, truncated, info) -> None:
    """Append each row's result to its env's trajectory."""
    for k, i in enumerate(np.asarray(ids).tolist()):
        done = bool(terminated[k] or truncated[k])
        final = info["final_obs"][k] if done and "final_obs" in info else None
        rows[i].append((obs[k], float(rewards[k]), bool(terminated[k]), bool(truncated[k]), final,
                        tuple(int(info[key][k]) for key in INFO_KEYS)))


def trajectories(env, actions: np.ndarray, seed: int) -> dict[int, list]:
    """Every env's reset result and its len(actions[i]) step results, however the env batches them."""
    n, steps = actions.shape
    rows: dict[int, list] = {i: [] for i in range(n)}
    obs, info = env.reset(seed=seed)
    ids = info.get("env_id", np.arange(n))
    for k, i in enumerate(np.asarray(ids).tolist()):
        rows[i].append((obs[k], 0.0, False, False, None, tuple(int(info[key][k]) for key in INFO_KEYS)))
    while any(len(r) <= steps for r in rows.values()):
        # A row's count of results says which action is next: 1 (its reset) + the steps it took.
        todo = [i for i in np.asarray(ids).tolist()]
        chosen = np.array([actions[i, min(len(rows[i]) - 1, steps - 1)] for i in todo], dtype=np.int64)
        obs, rewards, terminated, truncated, info = env.step(chosen)
        ids = info.get("env_id", np.arange(n))
        fresh = [i for i in np.asarray(ids).tolist() if not rows[i]]  # a batched reset's late rows
        for i in fresh:
            k = np.asarray(ids).tolist().index(i)
            rows[i].append((obs[k], 0.0, False, False, None, tuple(int(info[key][k]) for key in INFO_KEYS)))
        keep = np.array([i not in fresh for i in np.asarray(ids).tolist()])
        record(rows, np.asarray(ids)[keep], obs[keep], rewards[keep], terminated[keep], truncated[keep],
               {key: (value[keep] if isinstance(value, np.ndarray) and len(value) == len(keep) else value)
                for key, value in info.items()})
    return {i: r[: steps + 1] for i, r in rows.items()}


def assert_same(sync: dict[int, list], batched: dict[int, list]) -> None:
    for i in sync:
        assert len(sync[i]) == len(batched[i]), i
        for t, (a, b) in enumerate(zip(sync[i], batched[i])):
            assert np.array_equal(a[0], b[0]), (i, t, "obs")
            assert a[1:4] == b[1:4], (i, t, a[1:4], b[1:4])
            assert (a[4] is None) == (b[4] is None) and (a[4] is None or np.array_equal(a[4], b[4])), (i, t, "final")
            assert a[5] == b[5], (i, t, "info", a[5], b[5])


