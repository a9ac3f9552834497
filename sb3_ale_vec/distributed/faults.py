"""RayAleVecEnv's fault handling: which shards failed and how, their replacements, and their seeds.

Every call to the shards goes through ``ShardFaults._gather``, which sorts each shard's outcome
into one of four kinds:

- ``ok``: its result;
- ``lost``: the actor or its node died, or its result was lost (``RayActorError``,
  ``ObjectLostError`` and any other Ray system error);
- ``hung``: no answer within ``step_timeout_s``: the actor is killed and counts as lost;
- ``error``: an ordinary exception raised in the shard (the cause of a ``RayTaskError``).

Lost shards are replaced all at once (``_restart``). A replacement seeds its envs from
(``seed``, shard, restart count), so a run with the same seed and the same faults repeats exactly.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import numpy as np

from sb3_ale_vec.options import ALE_MAX_SEED

_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def strip_ansi(text: str) -> str:
    """Ray colours its error messages for a terminal: a message for the caller has no escape codes."""
    return _ANSI.sub("", text)


def replacement_seeds(seed: int, shard: int, restart: int, count: int, ale: bool) -> list[int]:
    """The seeds of a replacement's envs: a function of (seed, shard, restart) only. Below 2**31
    for the ale preset, whose seeds are C ints."""
    words = np.random.SeedSequence([seed, shard, restart]).generate_state(count, np.uint32)
    return [int(w) & ALE_MAX_SEED if ale else int(w) for w in words]


def shard_error(k: int, ids: Sequence[int], error: BaseException) -> BaseException:
    """The ordinary exception a shard raised, as its own type with a clean message that names the
    shard and its envs (Ray's wrapper carries the remote traceback, in terminal colours)."""
    cause = getattr(error, "cause", None) or error
    message = f"shard {k} (envs {ids[0]}..{ids[-1]}): {strip_ansi(str(cause))}"
    try:
        clean = type(cause)(message)
    except Exception:  # an exception type that takes other arguments
        clean = RuntimeError(f"{type(cause).__name__} in {message}")
    clean.__cause__ = None
    return clean


class ShardFaults:
    """The fault half of RayAleVecEnv: gathering shard results, and replacing lost shards."""

    _ray: Any
    _actors: list[Any]
    _env_ids: list[list[int]]
    restarts: list[int]
    max_restarts_per_shard: int
    restart_timeout_s: float
    step_timeout_s: float | None

    def _gather(self, refs: dict[int, Any], timeout: float | None) -> dict[int, tuple[str, Any]]:
        """Each shard's outcome, ``(kind, value)``: one ``ray.get`` for all when every shard answered
        well, else one per shard to tell their faults apart."""
        ray = self._ray
        keys, values = list(refs), list(refs.values())
        ready, _ = ray.wait(values, num_returns=len(values), timeout=timeout)
        if len(ready) == len(values):
            try:
                return {k: ("ok", v) for k, v in zip(keys, ray.get(values))}
            except ray.exceptions.RayError:
                pass  # some shard failed: ask them one by one
        ready_set, outcomes = set(ready), {}
        for k, ref in refs.items():
            if ref not in ready_set:
                ray.kill(self._actors[k])  # hung: it will never answer; killed, it is lost
                outcomes[k] = ("lost", f"no answer within {timeout} s")
                continue
            try:
                outcomes[k] = ("ok", ray.get(ref))
            except ray.exceptions.RayActorError as error:
                outcomes[k] = ("lost", error)
            except ray.exceptions.RayTaskError as error:
                outcomes[k] = ("error", error)
            except ray.exceptions.RayError as error:  # lost objects, a dead node or owner
                outcomes[k] = ("lost", error)
        return outcomes

    def _restart(self, shards: dict[int, list[int | None]]) -> dict[int, tuple[np.ndarray, list[dict[str, Any]]]]:
        """Replace these shards (all at once), reset each with its seeds (a None seed: one of
        ``replacement_seeds``) and replay ``set_attr``; returns each one's reset obs and infos.
        A replacement that dies too is replaced again, within ``max_restarts_per_shard``."""
        ray, results = self._ray, {}
        while shards:
            refs = {}
            for k, seeds in shards.items():
                ids = self._env_ids[k]
                if self.restarts[k] >= self.max_restarts_per_shard:
                    raise RuntimeError(
                        f"shard {k} (envs {ids[0]}..{ids[-1]}) died again after {self.restarts[k]} restarts "
                        f"(max_restarts_per_shard={self.max_restarts_per_shard}): check its node")
                self.restarts[k] += 1
                ray.kill(self._actors[k])
                self._actors[k] = actor = self._spawn(k)
                derived = replacement_seeds(self._base_seed, k, self.restarts[k], len(ids), self._ale)
                seeds = [d if s is None else s for s, d in zip(seeds, derived)]
                refs[k] = [actor.where.remote(), actor.reset.remote(seeds)]
                for name, value, envs in self._attr_log:  # set_attr, replayed in order
                    local = [i - ids[0] for i in envs if ids[0] <= i <= ids[-1]]
                    if local:
                        refs[k].append(actor.call.remote("set_attr", name, local, (value,), {}))
            flat = [ref for parts in refs.values() for ref in parts]
            ready, _ = ray.wait(flat, num_returns=len(flat), timeout=self.restart_timeout_s)
            if len(ready) < len(flat):
                late = sorted(k for k, parts in refs.items() if not set(parts) <= set(ready))
                raise RuntimeError(f"shard(s) {late} died and no replacement came up in {self.restart_timeout_s} s: "
                                   "the cluster has no room for their placement group bundles")
            again = {}
            for k, parts in refs.items():
                try:
                    where, reset, *_ = ray.get(parts)
                except ray.exceptions.RayActorError:
                    again[k] = shards[k]
                    continue
                except ray.exceptions.RayTaskError as error:
                    raise shard_error(k, self._env_ids[k], error) from None
                except ray.exceptions.RayError:
                    again[k] = shards[k]
                    continue
                self._where[k], results[k] = where, reset
            shards = again
        return results
