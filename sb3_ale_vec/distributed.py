"""RayAleVecEnv: one SB3 VecEnv over native engines on many machines, each shard a Ray actor.

    ray.init(address="auto")
    env = RayAleVecEnv("breakout", num_envs=256, num_shards=16, seed=0)
    PPO("CnnPolicy", env).learn(10_000_000)

Shard k holds one ``AleNativeVecEnv`` for a contiguous block of envs, seeded so that env i gets
``seed + i`` as in one ``AleNativeVecEnv(game, num_envs, seed=seed)``: the results are the same
whatever ``num_shards`` is. A step sends each shard its slice of the actions and gets back one
object: its rows of the batch, its infos as columns, and, only for envs that ended, their terminal
observation, episode stats and reset info.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import numpy as np
from stable_baselines3.common.vec_env.base_vec_env import VecEnv, VecEnvIndices, VecEnvObs, VecEnvStepReturn

from sb3_ale_vec.options import check_actions, check_int, seed_words
from sb3_ale_vec.shard import Shard, unpack_infos
from sb3_ale_vec.vec_env import AleNativeVecEnv


def _import_ray() -> Any:
    try:
        import ray
    except ImportError as error:
        raise ImportError('RayAleVecEnv needs Ray: pip install "sb3-ale-vec[ray]"') from error
    return ray


class RayAleVecEnv(VecEnv):
    """``AleNativeVecEnv``'s envs split into shards, one Ray actor each, spread over a Ray cluster.

    :param game: as for ``AleNativeVecEnv`` (one name, or one per env)
    :param num_envs: number of emulators in all
    :param num_shards: number of actors; shard k holds a contiguous block of about num_envs / num_shards envs
    :param seed: base seed: env i gets ``seed + i`` at the first ``reset()``, whatever ``num_shards`` is
    :param num_cpus_per_shard: CPUs reserved per shard (a placement group bundle) and its worker threads
    :param address: Ray cluster to join when Ray is not initialised yet (``"auto"``; None: a local Ray)
    :param max_restarts_per_shard: a shard whose actor died is replaced this many times, then the step raises
    :param restart_timeout_s: how long a replacement actor may take to come up before the step raises
    :param options: any further ``AleNativeVecEnv`` option (``num_threads`` defaults to ``num_cpus_per_shard``)
    """

    def __init__(self, game: str | Sequence[str], num_envs: int, *, num_shards: int, seed: int | None = None,
                 num_cpus_per_shard: int = 1, address: str | None = None, max_restarts_per_shard: int = 3,
                 restart_timeout_s: float = 120.0, **options: Any) -> None:
        ray = _import_ray()
        num_envs = check_int("num_envs", num_envs, 1)
        num_shards = check_int("num_shards", num_shards, 1, num_envs)  # at least one env per shard
        num_cpus_per_shard = check_int("num_cpus_per_shard", num_cpus_per_shard, 1)
        self.max_restarts_per_shard = check_int("max_restarts_per_shard", max_restarts_per_shard, 0)
        self.restart_timeout_s = float(restart_timeout_s)
        options["num_threads"] = check_int("num_threads", options.get("num_threads", num_cpus_per_shard), 0)
        # Every check AleNativeVecEnv makes, on the driver, before any actor exists: a probe of one env
        # per distinct game (all games together, so mixed action sets are refused as they would be).
        games = [game] * num_envs if isinstance(game, str) else game
        if isinstance(games, str) or not isinstance(games, Sequence) or len(games) != num_envs:
            raise ValueError(f"game must be one name or a list of num_envs={num_envs} names, got {game!r}")
        distinct = list(dict.fromkeys(games))
        probe = AleNativeVecEnv(distinct[0] if len(distinct) == 1 else distinct, len(distinct), seed=seed,
                                **{**options, "num_threads": 1})
        probe.close()
        self.game, self.games, self.render_mode = probe.game, list(games), probe.render_mode
        self._action_meanings, self._is_wrapped = probe.get_action_meanings(), probe.env_is_wrapped
        self._probe_get_attr = probe.get_attr
        self.spec = probe.spec

        if not ray.is_initialized():
            ray.init(address=address, include_dashboard=False)
        self._ray = ray
        # A dead actor fails its calls; a dead node may also lose a result it held but had not sent.
        self._lost_errors = (ray.exceptions.RayActorError, ray.exceptions.ObjectLostError)
        # max_restarts=0: we replace a dead shard ourselves, so that its envs end as truncated episodes.
        self._actor_class = ray.remote(num_cpus=num_cpus_per_shard, max_restarts=0)(Shard)
        self._env_ids = [block.tolist() for block in np.array_split(np.arange(num_envs), num_shards)]
        self._shard_of = np.repeat(np.arange(num_shards), [len(ids) for ids in self._env_ids])
        self._shard_options, self._cpus = options, num_cpus_per_shard
        self.restarts = [0] * num_shards
        self._refs: list[Any] | None = None
        self._last_obs: list[np.ndarray | None] = [None] * num_shards
        self._closed = False
        self.steps, self.shard_busy_s = 0, 0.0  # for the transport cost: wall time minus the slowest shard's
        self._pg = ray.util.placement_group([{"CPU": num_cpus_per_shard}] * num_shards, strategy="SPREAD")
        self._actors: list[Any] = [None] * num_shards
        try:
            ray.get(self._pg.ready(), timeout=self.restart_timeout_s)
            for k in range(num_shards):
                self._actors[k] = self._spawn(k)
            self._where = ray.get([a.where.remote() for a in self._actors])
        except BaseException:
            self.close()
            raise
        super().__init__(num_envs, probe.observation_space, probe.action_space)
        self.metadata = probe.metadata  # AtariEnv's, with its fps, as AleNativeVecEnv's (VecEnv replaced it)
        self.t_start = time.time()  # Monitor's t_start: info["episode"]["t"] counts from here
        self.seed(seed)

    # -- the VecEnv contract ------------------------------------------------------------------

    def reset(self) -> VecEnvObs:
        """Reset every env with (then clear) the seeds and options set since the last reset."""
        self._check_open()
        self._refs = None  # a step in flight: each actor finishes it first, its results are dropped
        for s in self._seeds:
            seed_words(s)  # a bad seed raises here, before any shard is reset
        seeds = [([self._seeds[i] for i in ids], [self._options[i] for i in ids]) for ids in self._env_ids]
        refs = [actor.reset.remote(*args) for actor, args in zip(self._actors, seeds)]
        parts = []
        for k, ref in enumerate(refs):
            try:
                parts.append(self._ray.get(ref))
            except self._lost_errors:
                parts.append(self._replace(k, *seeds[k]))
        self.reset_infos = [info for _, infos in parts for info in infos]
        self._last_obs = [obs for obs, _ in parts]
        self._reset_seeds()
        self._reset_options()
        return np.concatenate(self._last_obs)

    def step_async(self, actions: np.ndarray) -> None:
        self._check_open()
        if self._refs is not None:
            raise RuntimeError("step_async() called twice without step_wait()")
        actions = check_actions(actions, self.num_envs, self.action_space.n, column_ok=True)
        # All shards at once; each gets its slice (Ray puts the small array inline in the task).
        self._refs = [actor.step.remote(actions[ids[0]:ids[-1] + 1]) for actor, ids in zip(self._actors, self._env_ids)]

    def step_wait(self) -> VecEnvStepReturn:
        self._check_open()
        if self._refs is None:
            raise RuntimeError("step_wait() called without step_async()")
        refs, self._refs = self._refs, None
        self._ray.wait(refs, num_returns=len(refs))
        obs, rewards, dones, infos, busy = [], [], [], [], 0.0
        now = round(time.time() - self.t_start, 6)
        for k, ref in enumerate(refs):
            try:
                o, r, d, columns, extras, resets, seconds = self._ray.get(ref)
            except self._lost_errors:
                o, r, d, shard_infos = self._lost(k)
            else:
                busy = max(busy, seconds)
                shard_infos = unpack_infos(columns, extras, len(d))
                first = self._env_ids[k][0]
                for i, info in extras.items():
                    if "terminal_observation" in info:  # Ray's arrays are read-only views: SB3 writes into them
                        shard_infos[i]["terminal_observation"] = np.array(info["terminal_observation"])
                    if "episode" in info:  # the time since this env was built, as Monitor's
                        shard_infos[i]["episode"] = {**info["episode"], "t": now}
                for i, reset_info in resets.items():
                    self.reset_infos[first + i] = reset_info
            self._last_obs[k] = o
            obs.append(o), rewards.append(r), dones.append(d), infos.extend(shard_infos)
        self.steps, self.shard_busy_s = self.steps + 1, self.shard_busy_s + busy
        return np.concatenate(obs), np.concatenate(rewards), np.concatenate(dones), infos

    def close(self) -> None:
        """Stop the actors and free the placement group; calling it again does nothing."""
        if getattr(self, "_closed", True):
            return
        self._closed, self._refs = True, None
        for actor in self._actors:
            if actor is not None:
                self._ray.kill(actor)
        self._ray.util.remove_placement_group(self._pg)

    def get_images(self) -> Sequence[np.ndarray | None]:
        return [image for part in self._broadcast("get_images", "", range(self.num_envs)) for image in part]

    def get_attr(self, attr_name: str, indices: VecEnvIndices = None) -> list[Any]:
        """The attribute of each env, asked of the shards that hold them."""
        if attr_name == "render_mode":  # the probe's: it warns when VecFrameStack stacks native stacks again
            return self._probe_get_attr(attr_name, 0) * len(self._get_indices(indices))
        return self._per_env("get_attr", attr_name, indices)

    def set_attr(self, attr_name: str, value: Any, indices: VecEnvIndices = None) -> None:
        """Set the attribute on each env (a replaced shard's envs start without it)."""
        self._per_env("set_attr", attr_name, indices, value)

    def env_method(self, method_name: str, *method_args, indices: VecEnvIndices = None, **method_kwargs) -> list[Any]:
        """Call the method of each env, on the shards that hold them."""
        return self._per_env("env_method", method_name, indices, *method_args, **method_kwargs)

    def env_is_wrapped(self, wrapper_class: type, indices: VecEnvIndices = None) -> list[bool]:
        """As ``AleNativeVecEnv``: True for the SB3 wrappers whose job the engine does."""
        # The probe had one env per distinct game, in order of first use (fire reset is per game).
        by_game = dict(zip(dict.fromkeys(self.games), self._is_wrapped(wrapper_class)))
        return [by_game[self.games[i]] for i in self._get_indices(indices)]

    def get_action_meanings(self) -> list[str]:
        return list(self._action_meanings)

    def shard_info(self) -> list[dict[str, Any]]:
        """One dict per shard: its Ray ``node_id``, worker ``pid``, ``env_ids`` and ``restarts``."""
        return [{"node_id": node, "pid": pid, "env_ids": list(ids), "restarts": restarts}
                for (node, pid), ids, restarts in zip(self._where, self._env_ids, self.restarts)]

    # -- shards ----------------------------------------------------------------------------------

    def _spawn(self, k: int) -> Any:
        """Shard k's actor, in bundle k of the placement group; seeded at the first reset."""
        from ray.util.scheduling_strategies import PlacementGroupSchedulingStrategy

        threads = self._shard_options["num_threads"]
        threads = min(threads, len(self._env_ids[k])) or threads  # 0 stays 0: one per core
        games = self.games[self._env_ids[k][0]:self._env_ids[k][-1] + 1]
        strategy = PlacementGroupSchedulingStrategy(self._pg, placement_group_bundle_index=k)
        return self._actor_class.options(scheduling_strategy=strategy).remote(
            games[0] if len(set(games)) == 1 else games, len(games), None,
            {**self._shard_options, "num_threads": threads})

    def _replace(self, k: int, seeds: list | None = None, options: list | None = None) -> tuple[np.ndarray, list]:
        """A fresh actor for shard k (in its bundle, which Ray moves off a dead node); its envs start new
        games, with ``seeds`` if given (a reset), else unseeded as a new AleNativeVecEnv's. Returns its
        reset obs and reset infos."""
        ids = self._env_ids[k]
        if self.restarts[k] >= self.max_restarts_per_shard:
            raise RuntimeError(f"shard {k} (envs {ids[0]}..{ids[-1]}) died again after {self.restarts[k]} "
                               f"restarts (max_restarts_per_shard={self.max_restarts_per_shard}): check its node")
        self.restarts[k] += 1
        self._ray.kill(self._actors[k])
        self._actors[k] = self._spawn(k)
        try:
            self._where[k] = self._ray.get(self._actors[k].where.remote(), timeout=self.restart_timeout_s)
            return self._ray.get(self._actors[k].reset.remote(seeds, options), timeout=self.restart_timeout_s)
        except self._ray.exceptions.GetTimeoutError as error:
            raise RuntimeError(f"shard {k} died and no replacement came up in {self.restart_timeout_s} s: "
                               "the cluster has no room for its placement group bundle") from error
        except self._lost_errors:
            return self._replace(k, seeds, options)

    def _lost(self, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[dict[str, Any]]]:
        """Shard k's actor died during this step: its envs end here as truncated episodes (SB3 bootstraps
        from their last observation) and start new games on the replacement."""
        last = self._last_obs[k]
        obs, reset_infos = self._replace(k)
        ids = self._env_ids[k]
        self.reset_infos[ids[0]:ids[-1] + 1] = reset_infos
        infos = [{"TimeLimit.truncated": True, "terminal_observation": np.array(last[j]) if last is not None
                  else np.zeros(self.observation_space.shape, np.uint8)} for j in range(len(ids))]
        return obs, np.zeros(len(ids), np.float32), np.ones(len(ids), bool), infos

    def _per_env(self, how: str, name: str, indices: VecEnvIndices, *args: Any, **kwargs: Any) -> list[Any]:
        indices = list(self._get_indices(indices))
        parts = {k: iter(part or ()) for k, part in self._broadcast(how, name, indices, *args, **kwargs).items()}
        return [] if how == "set_attr" else [next(parts[int(self._shard_of[i])]) for i in indices]

    def _broadcast(self, how: str, name: str, indices: Sequence[int], *args: Any, **kwargs: Any) -> Any:
        self._check_open()
        wanted: dict[int, list[int]] = {}
        for i in indices:
            wanted.setdefault(int(self._shard_of[i]), []).append(i - self._env_ids[self._shard_of[i]][0])
        refs = {k: self._actors[k].call.remote(how, name, local, args, kwargs) for k, local in wanted.items()}
        results = dict(zip(refs, self._ray.get(list(refs.values()))))
        if how == "get_images":
            return [results[k] for k in sorted(results)]
        return results

    def _check_open(self) -> None:
        if self._closed:
            raise RuntimeError("this RayAleVecEnv is closed")
