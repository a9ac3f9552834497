"""RayAleVecEnv: one SB3 VecEnv over native engines on many machines, each shard a Ray actor.

    ray.init(address="auto")
    env = RayAleVecEnv("breakout", num_envs=256, num_shards=16, seed=0)
    PPO("CnnPolicy", env).learn(10_000_000)

Shard k holds a native engine (``shard.Shard``: no SB3, no torch) for a contiguous block of envs,
seeded so that env i gets ``seed + i`` as in one ``AleNativeVecEnv(game, num_envs, seed=seed)``:
the results are the same whatever ``num_shards`` is. A step sends each shard its slice of the
actions and gets every shard's object back in one ``ray.get``: its rows of the batch, its infos as
columns, and, only for envs that ended, their terminal observation and reset info. The driver
builds SB3's list of info dicts. Faults: see ``faults.py`` and docs/ray.md; Ray itself: ``cluster.py``.
"""

from __future__ import annotations

import re
import weakref
from collections.abc import Sequence
from typing import Any

import numpy as np
from stable_baselines3.common.vec_env.base_vec_env import VecEnv, VecEnvIndices, VecEnvObs, VecEnvStepReturn

from sb3_ale_vec import _engine
from sb3_ale_vec._native import EngineError
from sb3_ale_vec.options import check_actions, check_int, seed_words
from sb3_ale_vec.distributed.cluster import import_ray, join_ray, release
from sb3_ale_vec.distributed.faults import ShardFaults, shard_error, strip_ansi
from sb3_ale_vec.distributed.shard import Shard
from sb3_ale_vec.sb3.contract import SB3Contract, check_option_names


class RayAleVecEnv(ShardFaults, SB3Contract, VecEnv):
    """``AleNativeVecEnv``'s envs split into shards, one Ray actor each, spread over a Ray cluster.

    :param game: as for ``AleNativeVecEnv`` (one name, or one per env)
    :param num_envs: number of emulators in all
    :param num_shards: number of actors; shard k holds a contiguous block of about num_envs / num_shards envs
    :param seed: base seed: env i gets ``seed + i`` at the first ``reset()``, whatever ``num_shards`` is
    :param num_cpus_per_shard: CPUs reserved per shard (a placement group bundle) and its worker threads
    :param address: Ray cluster to join; when Ray is already initialised, one that names another
        cluster raises ``ValueError`` (None: the Ray already running, else a local one)
    :param max_restarts_per_shard: a lost shard is replaced this many times, then the step raises
    :param restart_timeout_s: how long replacements may take to come up before the call raises
    :param step_timeout_s: a shard that has not answered a call in this long is killed and replaced
        (None: wait forever)
    :param options: any further ``AleNativeVecEnv`` option (``num_threads``: per shard, 0 or
        unset means ``num_cpus_per_shard``; ``thread_affinity_offset`` is refused: Ray places shards)
    """

    def __init__(self, game: str | Sequence[str], num_envs: int, *, num_shards: int, seed: int | None = None,
                 num_cpus_per_shard: int = 1, address: str | None = None, max_restarts_per_shard: int = 3,
                 restart_timeout_s: float = 120.0, step_timeout_s: float | None = 120.0, **options: Any) -> None:
        ray = import_ray()
        num_envs = check_int("num_envs", num_envs, 1)
        num_shards = check_int("num_shards", num_shards, 1, num_envs)  # at least one env per shard
        self._cpus = check_int("num_cpus_per_shard", num_cpus_per_shard, 1)
        self.max_restarts_per_shard = check_int("max_restarts_per_shard", max_restarts_per_shard, 0)
        self.restart_timeout_s = float(restart_timeout_s)
        self.step_timeout_s = None if step_timeout_s is None else float(step_timeout_s)
        if options.get("thread_affinity_offset", -1) != -1:
            raise ValueError("thread_affinity_offset is not allowed with RayAleVecEnv: Ray may put several shards "
                             "on one node, and each would pin its threads to the same cores. Leave it at -1; each "
                             "engine sizes its threads from the CPUs its process may use.")
        options["num_threads"] = check_int("num_threads", options.get("num_threads", 0), 0) or self._cpus
        # Every check AleNativeVecEnv makes, in its order, before any actor exists and with no
        # engine here (sb3/contract.py): only the shards build one.
        check_option_names(type(self).__name__, options)
        preset = options.pop("preset", "sb3")
        batch, layout = self._describe(game, num_envs, preset, options.pop("channels_last", False),
                                   options.pop("render_mode", "rgb_array"), options)
        self._ale = preset == "ale"
        self._layout = (preset, layout, options)

        join_ray(ray, address)
        self._ray = ray
        # max_restarts=0: we replace a lost shard ourselves, so that its envs end as truncated episodes.
        self._actor_class = ray.remote(num_cpus=self._cpus, max_restarts=0)(Shard)
        self._env_ids = [block.tolist() for block in np.array_split(np.arange(num_envs), num_shards)]
        self._shard_of = np.repeat(np.arange(num_shards), [len(ids) for ids in self._env_ids])
        self.restarts = [0] * num_shards
        self._refs: dict[int, Any] | None = None
        self._attr_log: list[tuple[str, Any, list[int]]] = []  # set_attr calls, replayed on replacements
        self._pending: dict[int, tuple[np.ndarray, list]] = {}  # replaced outside a step: told at the next
        self._failed: list[int] = []  # envs an EngineError reported: steps refused until reset()
        self._closed = False
        self.steps, self.shard_busy_s, self.bytes_moved = 0, 0.0, 0  # for bench_ray
        self._pg = ray.util.placement_group([{"CPU": self._cpus}] * num_shards, strategy="SPREAD")
        self._actors: list[Any] = [None] * num_shards
        # Frees the CPUs of an env that is never closed; close() runs it at once.
        self._finalizer = weakref.finalize(self, release, ray, self._pg, self._actors)
        try:
            ray.get(self._pg.ready(), timeout=self.restart_timeout_s)
            for k in range(num_shards):
                self._actors[k] = self._spawn(k)
            self._where = ray.get([a.where.remote() for a in self._actors], timeout=self.restart_timeout_s)
        except BaseException:
            self.close()
            raise
        obs_shape = _engine.obs_shape(batch.configs[0])  # the engines' layout, from a config: no engine here
        self._obs = np.zeros((num_envs, *obs_shape), np.uint8)
        self._start(obs_shape, seed)

    # -- the VecEnv contract (the rest is SB3Contract's, sb3/contract.py) ------------------------

    def seed(self, seed: int | None = None) -> Sequence[None | int]:
        """As ``AleNativeVecEnv.seed`` (SB3Contract's); replacements derive their seeds from the base seed."""
        seeds = super().seed(seed)
        self._base_seed = int(seeds[0])
        return seeds

    def reset(self) -> VecEnvObs:
        """Reset every env with (then clear) the seeds and options set since the last reset. A lost
        shard, or one whose reset raises, is replaced and reset with the same seeds."""
        self._check_open()
        self._refs, self._pending = None, {}  # a step in flight: each actor finishes it first, its results dropped
        for s in self._seeds:
            seed_words(s)  # a bad seed raises here, before any shard is reset
        seeds = {k: [self._seeds[i] for i in ids] for k, ids in enumerate(self._env_ids)}
        outcomes = self._gather({k: self._actors[k].reset.remote(s) for k, s in seeds.items()}, self.step_timeout_s)
        redo = {k: seeds[k] for k, (kind, _) in outcomes.items() if kind != "ok"}
        results = {**{k: value for k, (kind, value) in outcomes.items() if kind == "ok"}, **self._restart(redo)}
        self.reset_infos = [info for k in range(len(self._env_ids)) for info in results[k][1]]
        self._obs = np.concatenate([results[k][0] for k in range(len(self._env_ids))])
        self._failed = []
        self._reset_seeds()
        self._reset_options()
        return self._view(self._obs)

    def step_async(self, actions: np.ndarray) -> None:
        self._check_open()
        if self._refs is not None:
            raise RuntimeError("step_async() called twice without step_wait()")
        if self._failed:
            raise RuntimeError(f"envs {self._failed} failed in an earlier step: reset() rebuilds them")
        actions = check_actions(actions, self.num_envs, self.action_space.n, column_ok=True)
        self.bytes_moved += actions.nbytes
        # All shards at once, each its slice; a shard replaced since the last step sits this one out.
        self._refs = {k: actor.step.remote(actions[ids[0]:ids[-1] + 1])
                      for k, (actor, ids) in enumerate(zip(self._actors, self._env_ids)) if k not in self._pending}

    def step_wait(self) -> VecEnvStepReturn:
        self._check_open()
        if self._refs is None:
            raise RuntimeError("step_wait() called without step_async()")
        refs, self._refs = self._refs, None
        # A shard replaced since step_async (get_attr, env_method, ... found it lost) has its reset
        # waiting in _pending: its old actor's step is void, and must not be replaced again.
        outcomes = self._gather({k: ref for k, ref in refs.items() if k not in self._pending}, self.step_timeout_s)
        lost = {k: [None] * len(self._env_ids[k]) for k, (kind, _) in outcomes.items() if kind == "lost"}
        restarted = {**self._restart(lost), **self._pending}
        self._pending = {}
        n, now, last = self.num_envs, self._episode_time(), self._obs
        obs = np.zeros_like(last)
        rewards, dones = np.zeros(n, np.float32), np.zeros(n, bool)
        infos: list[dict[str, Any]] = [{} for _ in range(n)]
        failed, errors, busy = [], [], 0.0
        for k, ids in enumerate(self._env_ids):
            rows = slice(ids[0], ids[-1] + 1)
            if k in restarted:  # its envs end as truncated episodes (SB3 bootstraps from their last obs)
                obs[rows], self.reset_infos[rows] = restarted[k]
                dones[rows] = True
                for i in ids:
                    infos[i] = {"TimeLimit.truncated": True, "terminal_observation": self._view(np.array(last[i]))}
                continue
            kind, value = outcomes[k]
            if kind == "error":  # an ordinary exception: all its envs failed, the others' results stand
                failed += ids
                errors.append(str(shard_error(k, ids, value)))
                continue
            o, r, d, columns, finals, resets, bad, error, seconds = value
            busy = max(busy, seconds)
            self.bytes_moved += o.nbytes + r.nbytes + d.nbytes + sum(f.nbytes for f in finals.values()) + sum(
                sum(v.nbytes for v in c.values()) if isinstance(c, dict) else c.nbytes for c in columns.values())
            obs[rows], rewards[rows], dones[rows] = o, r, d
            # Ray's arrays are read-only views: SB3 writes into the terminal observations.
            infos[rows] = self._step_infos(columns, {j: np.array(f) for j, f in finals.items()}, bad, now)
            for j, reset_info in resets.items():
                self.reset_infos[ids[0] + j] = reset_info
            if bad:  # the engine's message names local env ids: make them global
                failed += [ids[0] + j for j in bad]
                errors.append(re.sub(r"\benv (\d+)", lambda m: f"env {ids[0] + int(m.group(1))}", strip_ansi(error)))
        self._obs = obs
        self.steps, self.shard_busy_s = self.steps + 1, self.shard_busy_s + busy
        if failed:
            self._failed = sorted(failed)
            dones[failed] = False
            raise EngineError("; ".join(errors) + " (the other envs stepped normally: see this error's obs, rewards, "
                              "dones and infos; reset() rebuilds the failed envs)", self._failed, self._view(obs),
                              rewards, dones, infos)
        return self._view(obs), rewards, dones, infos

    def close(self) -> None:
        """Stop the actors and free the placement group; idempotent, before or after ``ray.shutdown()``."""
        self._closed, self._refs = True, None
        finalizer = getattr(self, "_finalizer", None)
        if finalizer is not None:
            finalizer()

    # -- SB3Contract's hooks (sb3/contract.py): set_attr's values and the screens live on the shards

    def _stored(self, name: str, indices: list[int]) -> list[tuple[bool, Any]]:
        return self._per_env("get_attr", name, indices) if self._attr_log else [(False, None)] * len(indices)

    def _store(self, name: str, value: Any, indices: list[int]) -> None:
        self._per_env("set_attr", name, indices, value)
        self._attr_log.append((name, value, indices))  # a replacement shard gets it again

    def _screens(self) -> Sequence[np.ndarray]:
        parts = self._call("get_images", "", list(range(self.num_envs)))
        return [image for k in sorted(parts) for image in parts[k]]

    def env_method(self, method_name: str, *method_args, indices: VecEnvIndices = None, **method_kwargs) -> list[Any]:
        """SB3Contract's; get_action_meanings is asked of the shards that hold the envs, as every call
        to an env is (one that finds its shard lost replaces it)."""
        if method_name != "get_action_meanings":
            return super().env_method(method_name, *method_args, indices=indices, **method_kwargs)
        return self._per_env("env_method", method_name, list(self._get_indices(indices)), *method_args,
                             **method_kwargs)

    def shard_info(self) -> list[dict[str, Any]]:
        """One dict per shard: its Ray ``node_id``, worker ``pid``, ``env_ids`` and ``restarts``."""
        return [{"node_id": node, "pid": pid, "env_ids": list(ids), "restarts": restarts}
                for (node, pid), ids, restarts in zip(self._where, self._env_ids, self.restarts)]

    # -- shards ----------------------------------------------------------------------------------

    def _spawn(self, k: int) -> Any:
        """Shard k's actor, in bundle k of the placement group (Ray moves a bundle off a dead node)."""
        from ray.util.scheduling_strategies import PlacementGroupSchedulingStrategy

        preset, layout, options = self._layout
        ids = self._env_ids[k]
        threads = min(options["num_threads"], len(ids))  # this shard's CPUs, never its node's
        strategy = PlacementGroupSchedulingStrategy(self._pg, placement_group_bundle_index=k)
        return self._actor_class.options(scheduling_strategy=strategy).remote(
            self.games[ids[0]:ids[-1] + 1], preset, layout, {**options, "num_threads": threads})

    def _per_env(self, how: str, name: str, indices: list[int], *args: Any, **kwargs: Any) -> list[Any]:
        parts = {k: iter(part) for k, part in self._call(how, name, indices, *args, **kwargs).items()}
        return [] if how == "set_attr" else [next(parts[int(self._shard_of[i])]) for i in indices]

    def _call(self, how: str, name: str, indices: Sequence[int], *args: Any, **kwargs: Any) -> dict[int, Any]:
        """Ask the shards that hold ``indices``; a lost one is replaced (its envs end as truncated
        episodes at the next step) and asked again; an exception raised in one is raised here."""
        self._check_open()
        wanted: dict[int, list[int]] = {}
        for i in indices:
            k = int(self._shard_of[i])
            wanted.setdefault(k, []).append(i - self._env_ids[k][0])
        results: dict[int, Any] = {}
        while wanted:
            refs = {k: self._actors[k].call.remote(how, name, local, args, kwargs) for k, local in wanted.items()}
            outcomes = self._gather(refs, self.step_timeout_s)
            for k, (kind, value) in outcomes.items():
                if kind == "error":
                    raise shard_error(k, self._env_ids[k], value) from None
            lost = {k: [None] * len(self._env_ids[k]) for k, (kind, _) in outcomes.items() if kind == "lost"}
            self._pending.update(self._restart(lost))
            results.update({k: value for k, (kind, value) in outcomes.items() if kind == "ok"})
            wanted = {k: wanted[k] for k in lost}
        return results

    def _check_open(self) -> None:
        if self._closed:
            raise RuntimeError("this RayAleVecEnv is closed")
