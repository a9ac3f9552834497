"""AleVectorEnv: the native engine as a Gymnasium ``VectorEnv``, synchronous or EnvPool-style batched."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import ale_py
import numpy as np
from gymnasium.vector import AutoresetMode

from sb3_ale_vec._native import StepBatch
from sb3_ale_vec.gymnasium.base import GymVectorBase
from sb3_ale_vec.options import build_batch, check_bool, check_int, check_preset, table_options

_STEP_INFO_KEYS = ("lives", "episode_frame_number", "frame_number")


class AleVectorEnv(GymVectorBase):
    """Many Atari games on native threads, as a Gymnasium ``VectorEnv``.

    With ``preset="gymnasium"`` (the default) each env reproduces, bit for bit,
    ``FrameStackObservation(AtariPreprocessing(gym.make("ALE/<Game>-v5", frameskip=1), ...), stack_num,
    padding_type="zero")`` in a ``SyncVectorEnv`` with the same ``autoreset_mode``: gray from ALE's own
    palette before the max-pool, no fire reset, unclipped rewards, sticky actions 0.25, and
    ``episodic_life`` as ``terminal_on_life_loss``. ``preset="sb3"`` gives SB3's ``AtariWrapper`` chain,
    ``preset="ale"`` the chain of ale-py's ``AtariVectorEnv``.

    With ``batch_size < num_envs`` it works as EnvPool does: ``recv()`` returns the first
    ``batch_size`` envs to finish, ``info["env_id"]`` names them, and the next ``send()`` (or
    ``step()``) addresses exactly those.

    :param game: ROM id or gymnasium id, or one per env (multi-task batches; with different action
        sets, ``full_action_space=True`` gives every game all 18 actions)
    :param num_envs: number of envs
    :param preset: ``"gymnasium"``, ``"sb3"`` or ``"ale"``: whose chain, and the defaults of the options left as None
    :param batch_size: envs per ``recv()`` (0: all, synchronous)
    :param autoreset_mode: ``NEXT_STEP`` (gymnasium's default), ``SAME_STEP`` (``final_obs`` /
        ``final_info`` in the infos) or ``DISABLED`` (reset done envs with ``options["reset_mask"]``;
        needs ``batch_size == num_envs``)
    :param true_scores: report each game when it really ends in ``info["episode"]`` / ``info["_episode"]``
        (``RecordEpisodeStatistics``' format: ``r`` the unclipped score of the whole game, ``l`` its
        agent steps, ``t`` its seconds). None (the default): on where the chain hides the game from a
        ``RecordEpisodeStatistics`` above it, i.e. clipped rewards or SB3's episodic life (the sb3 and
        ale presets), off otherwise. ``RecordEpisodeStatistics`` refuses an env that already writes
        ``info["episode"]``: wrap only with ``true_scores=False`` (or its ``stats_key``).
    :param stack_padding: ``"zero"`` or ``"reset"`` (``FrameStackObservation``'s ``padding_type``)
    :param episodic_life: a life loss terminates the episode (gymnasium's ``terminal_on_life_loss``)
    :param life_loss_info: report a life loss as terminated, without resetting anything (ALE's option)
    :param continuous: actions are ``(radius, theta, fire)`` float32 triples, mapped as gymnasium's
        ``AtariEnv`` maps them (``continuous_action_threshold``), the radius as the paddle strength
    :param obs_type: ``None`` (the preset's frames) or ``"rgb"``, ``"grayscale"``, ``"ram"``: each env is
        then ``gym.make("ALE/<Game>-v5", obs_type=obs_type, frameskip=frameskip,
        repeat_action_probability=...)`` alone, no ``AtariPreprocessing`` (which cannot take RAM) and no
        stack; the preprocessing options must be left out (``sb3_ale_vec.obs_types``)
    :param ram_info: ``info["ram"]`` / ``info["_ram"]``, the RAM (128 uint8) at each observation's frame
        (``NEXT_STEP``: a done row's is the final RAM; ``SAME_STEP``: ``final_info["ram"]`` holds it)
    :param num_threads: worker threads (0: one per core, at most ``num_envs``)
    :param thread_affinity_offset: pin worker t to core ``offset + t`` (-1: no pinning)

    The other options are those of ``AleNativeVecEnv``.
    """

    metadata = {"render_modes": ["rgb_array"], "render_fps": ale_py.env.AtariEnv.metadata["render_fps"]}

    def __init__(
        self,
        game: str | Sequence[str],
        num_envs: int,
        *,
        preset: str = "gymnasium",
        batch_size: int = 0,
        autoreset_mode: AutoresetMode | str = AutoresetMode.NEXT_STEP,
        true_scores: bool | None = None,
        frameskip: int = 4,
        maxpool: bool = True,
        grayscale: bool = True,
        img_height: int = 84,
        img_width: int = 84,
        stack_num: int = 4,
        stack_padding: str = "zero",
        noop_max: int = 30,
        use_fire_reset: bool | None = None,
        episodic_life: bool | None = None,
        life_loss_info: bool = False,
        reward_clipping: bool | None = None,
        repeat_action_probability: float | None = None,
        full_action_space: bool = False,
        continuous: bool = False,
        continuous_action_threshold: float = 0.5,
        max_num_frames_per_episode: int = 108_000,
        mode: int | None = None,
        difficulty: int | None = None,
        obs_type: str | None = None,
        ram_info: bool = False,
        num_threads: int = 0,
        thread_affinity_offset: int = -1,
        render_mode: str | None = "rgb_array",
    ) -> None:
        check_preset(preset)
        if stack_padding not in ("zero", "reset"):
            raise ValueError(f"stack_padding must be 'zero' or 'reset', got {stack_padding!r}")
        if render_mode not in (None, "rgb_array"):
            raise ValueError(f"render_mode must be 'rgb_array' or None, got {render_mode!r}")
        mode_ = AutoresetMode(autoreset_mode)
        batch = build_batch(
            game, check_int("num_envs", num_envs, 1), preset, layout=check_preset(preset).gym_layout,
            pad_with_reset=stack_padding == "reset", next_step_autoreset=mode_ != AutoresetMode.SAME_STEP,
            continuous=continuous, **table_options(locals()))
        config = batch.configs[0]
        if true_scores is None:  # on where the chain hides the game from a RecordEpisodeStatistics above it
            true_scores = config.reward_clipping or (preset == "sb3" and config.episodic_life)
        self.preset = preset
        self.render_mode = render_mode
        self._start(batch, batch_size, mode_, continuous, continuous_action_threshold,
                    check_bool("true_scores", true_scores))

    def render(self) -> tuple[np.ndarray, ...] | None:
        """Every env's current RGB screen, ``(rows, 160, 3)`` with its ROM's rows (210 for most, up to 250),
        as ``AtariEnv.render()``: one array per env, as ``SyncVectorEnv``'s tuple."""
        if self.render_mode != "rgb_array":
            return None
        return tuple(self._native.screens())

    # -- Gymnasium's infos --------------------------------------------------------------------------

    def _translate(self, batch: StepBatch) -> tuple[np.ndarray, dict[str, Any]]:
        n = len(batch.env_ids)
        infos: dict[str, Any] = {}
        for key in _STEP_INFO_KEYS:
            infos[key], infos["_" + key] = getattr(batch, key).copy(), np.ones(n, dtype=bool)
        if batch.ram is not None:
            infos["ram"], infos["_ram"] = batch.ram, np.ones(n, dtype=bool)
        for k in np.flatnonzero(batch.reset).tolist():  # a reset row reports the reset's info
            infos = self._add_info(infos, batch.reset_info(k), k)
        if n < self.num_envs:  # a partial batch names its rows
            infos["env_id"] = batch.env_ids
        return batch.rewards.astype(np.float64), infos

    def _reset_infos(self, batch: StepBatch) -> dict[str, Any]:
        infos: dict[str, Any] = {}
        for k, i in enumerate(batch.env_ids.tolist()):
            infos = self._add_info(infos, batch.reset_info(k), k if self._batched else i)
        if self._batched:
            infos["env_id"] = batch.env_ids
        return infos

    def _partial_infos(self, batch: StepBatch) -> dict[str, Any]:
        # SyncVectorEnv: the infos of the envs reset, at their env index (rows are by env id).
        infos: dict[str, Any] = {}
        for i in np.flatnonzero(batch.reset_requested).tolist():
            infos = self._add_info(infos, batch.reset_info(i), i)
        return infos

    def _finals(self, batch: StepBatch, dones: np.ndarray, infos: dict[str, Any]) -> None:
        # SyncVectorEnv (SAME_STEP): the done rows' last observation and step info, beside the new episode's.
        final_obs = np.full(len(dones), None, dtype=object)
        final_info: dict[str, Any] = {}
        for k in np.flatnonzero(dones).tolist():
            final_obs[k] = batch.final_obs[k]
            step_info: dict[str, Any] = {key: int(getattr(batch, key)[k]) for key in _STEP_INFO_KEYS}
            if batch.ram is not None:
                step_info["ram"] = batch.final_ram[k]
            final_info = self._add_info(final_info, step_info, k)
        infos.update({"final_obs": final_obs, "_final_obs": dones.copy(), "final_info": final_info,
                      "_final_info": dones.copy()})


def register_envs() -> None:
    """Register ``sb3_ale_vec/<Game>-v5`` for every ROM, for ``gymnasium.make_vec``:
    ``gym.make_vec("sb3_ale_vec/Breakout-v5", num_envs=8, batch_size=4)`` builds an ``AleVectorEnv``."""
    from ale_py import roms
    from gymnasium.envs.registration import register, registry

    from sb3_ale_vec.games import camel_name

    for rom in roms.get_all_rom_ids():
        env_id = f"sb3_ale_vec/{camel_name(rom)}-v5"
        if env_id not in registry:
            register(env_id, vector_entry_point="sb3_ale_vec.gymnasium.vector:AleVectorEnv", kwargs={"game": rom})
