"""rl-zoo3 entry: a ``vec_env_wrapper`` hook that swaps rl-zoo's Atari envs for the native engine.

    python -m rl_zoo3.train --algo ppo --env PongNoFrameskip-v4 -conf sb3_ale_vec.zoo

rl-zoo3 builds its envs with ``make_vec_env`` (``--vec-env`` and ``vec_env_kwargs`` are fixed),
then calls the ``vec_env_wrapper`` of the hyperparameters, which may return any VecEnv. The hook
reads what rl-zoo asked for (the id and its ``--env-kwargs``, the seeds, the monitor files), closes
those envs and returns an ``AleNativeVecEnv`` that does the same. The saved ``config.yml`` keeps
the hook, so ``rl_zoo3.enjoy`` and ``rl_zoo3.record_video`` rebuild the native env.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Any

import yaml
from stable_baselines3.common.vec_env import VecEnv

from sb3_ale_vec.sb3.env_util import _WRAPPER_KWARGS, make_ale_vec_env
from sb3_ale_vec.sb3.monitor import AleVecMonitor
from sb3_ale_vec.sb3.vec_env import AleNativeVecEnv

PPO_CONFIG = Path(__file__).with_name("zoo_ppo.yml")
hyperparams: dict[str, Any] = yaml.safe_load(PPO_CONFIG.read_text())  # what `-conf sb3_ale_vec.zoo` loads


def AtariNative(venv: VecEnv, frame_stack: int = 4, num_shards: int | None = None, ray_address: str | None = None,
                **options: Any) -> VecEnv:  # noqa: N802 (a wrapper "class")
    """Replace rl-zoo's ``make_vec_env`` Atari envs by the native engine.

    :param venv: what rl-zoo built (``Monitor``-wrapped gymnasium Atari envs, Dummy or Subproc)
    :param frame_stack: frames stacked natively, channel-first (leave rl-zoo's ``frame_stack`` unset)
    :param num_shards: spread the envs over this many Ray actors (``RayAleVecEnv``), at most one per
        env; None: one process
    :param ray_address: the Ray cluster to join (``"auto"``); given alone, ``num_shards`` is 1
    :param options: ``AtariWrapper``'s options (``noop_max``, ``terminal_on_life_loss``, ...) and
        further ``AleNativeVecEnv`` options (``num_threads``, ...)
    """
    spec = venv.get_attr("spec", 0)[0]
    try:  # rl-zoo's <save_path>/<rank>.monitor.csv; None for its evaluation env
        writers = venv.get_attr("results_writer")
        paths = [w.file_handler.name if w is not None else None for w in writers]
    except AttributeError:
        paths = [None] * venv.num_envs
    seeds, n_envs = list(venv._seeds), venv.num_envs  # set by make_vec_env(seed=...), used at reset
    render_mode = venv.render_mode
    venv.close()  # also closes the Monitor files that AleVecMonitor rewrites below
    wrapper_kwargs = {key: options.pop(key) for key in list(options) if key in (*_WRAPPER_KWARGS, "screen_size")}
    vec_env_class: Any = AleNativeVecEnv
    if num_shards is not None or ray_address is not None:
        from sb3_ale_vec.distributed import RayAleVecEnv

        # At most one shard per env: rl-zoo builds its evaluation env (1 env by default) with this hook too.
        vec_env_class = partial(RayAleVecEnv, num_shards=min(num_shards or 1, n_envs), address=ray_address)
    env = make_ale_vec_env(spec.id, n_envs, wrapper_kwargs=wrapper_kwargs, env_kwargs=spec.kwargs,
                           vec_env_class=vec_env_class,
                           stack_num=frame_stack, channels_last=False,
                           render_mode="rgb_array" if render_mode in ("human", "rgb_array") else None, **options)
    env._seeds = seeds
    return AleVecMonitor(env, filenames=paths) if any(paths) else env
