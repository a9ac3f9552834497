"""ram_info=True: info["ram"] on every front-end equals the reference's ``env.unwrapped.ale.getRAM()`` at
the same step, on real emulators; the final RAM sits beside the final observation.

References carry their RAM through ``RamInfo``, an outermost wrapper that copies ``getRAM()`` into
the info of every reset and step: under SB3's DummyVecEnv a done env's step info holds the RAM at
``terminal_observation`` (ours: ``terminal_ram``) and its reset info the new episode's (ours:
``ram``); under SyncVectorEnv the infos are batched as ours are.
"""

from __future__ import annotations

import ale_py
import gymnasium as gym
import numpy as np
import pytest
from ale_py import roms
from ale_py.vector_env import AtariVectorEnv as AleReference
from gymnasium.vector import AutoresetMode, SyncVectorEnv
from gymnasium.wrappers import AtariPreprocessing, FrameStackObservation
from stable_baselines3.common.atari_wrappers import AtariWrapper
from stable_baselines3.common.env_util import make_vec_env
from stable_baselines3.common.vec_env import VecFrameStack, VecTransposeImage

from compare import assert_equal
from helpers import assert_same_infos, resets_replayed, swapping
from sb3_ale_vec import AleNativeVecEnv, AleVectorEnv, AtariVectorEnv
from sb3_ale_vec.games import camel_name

gym.register_envs(ale_py)

NEXT, SAME = AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP


class RamInfo(gym.Wrapper):
    """The reference's RAM beside its info: a copy of ``env.unwrapped.ale.getRAM()`` at every reset and step."""

    def ram(self) -> np.ndarray:
        return self.env.unwrapped.ale.getRAM().copy()  # a copy: ale-py's array may change with the emulator

    def reset(self, **kwargs):
        obs, info = self.env.reset(**kwargs)
        return obs, {**info, "ram": self.ram()}

    def step(self, action):
        *result, info = self.env.step(action)
        return (*result, {**info, "ram": self.ram()})


def sb3_reference(game, n, seed, frames):
    """make_atari_env's construction (make_vec_env with AtariWrapper) with RamInfo outermost, + VecFrameStack."""
    env = make_vec_env(f"{camel_name(game)}NoFrameskip-v4", n_envs=n, seed=seed,
                       env_kwargs={"max_num_frames_per_episode": frames}, wrapper_class=lambda e: RamInfo(AtariWrapper(e)))
    return VecTransposeImage(VecFrameStack(env, 4))


@pytest.mark.slow
@pytest.mark.parametrize("game", ["breakout", "pong"])
def test_sb3_ram_and_terminal_ram_equal_the_references(game):
    n, steps = 3, 500
    ref = sb3_reference(game, n, 5, 600)
    ours = swapping(AleNativeVecEnv(game, n, seed=5, max_num_frames_per_episode=600, ram_info=True))
    assert np.array_equal(ref.reset(), ours.reset())
    assert_same_infos(ref.unwrapped.reset_infos, ours.reset_infos, "reset")
    rng, dones = np.random.default_rng(2), 0
    for t in range(steps):
        actions = rng.integers(0, ours.action_space.n, n)
        (o1, r1, d1, i1), (o2, r2, d2, i2) = ref.step(actions), ours.step(actions)
        assert np.array_equal(o1, o2) and np.array_equal(r1, r2) and np.array_equal(d1, d2), t
        expected = [dict(info) for info in i1]
        for i in np.flatnonzero(d1):  # the step's RAM is the terminal one; the obs is the reset's
            expected[i]["terminal_ram"] = expected[i]["ram"]
            expected[i]["ram"] = ref.unwrapped.reset_infos[i]["ram"]
        assert_same_infos(expected, i2, t)
        assert_same_infos(ref.unwrapped.reset_infos, ours.reset_infos, ("reset_infos", t))
        dones += int(d1.sum())
    assert dones > 0
    assert resets_replayed(ours) > 0, "no reset replayed from a spare emulator: its RAM path went untested"
    ref.close()
    ours.close()


def gym_reference(games, mode):
    def make(game):
        env = AtariPreprocessing(gym.make(f"ALE/{camel_name(game)}-v5", frameskip=1, max_num_frames_per_episode=500,
                                                full_action_space=True))
        return RamInfo(FrameStackObservation(env, 4, padding_type="zero"))
    return SyncVectorEnv([lambda g=g: make(g) for g in games], autoreset_mode=mode)


@pytest.mark.slow
@pytest.mark.parametrize("mode", [NEXT, SAME])
def test_gymnasium_ram_equals_sync_vector_envs_in_both_autoreset_modes(mode):
    """NEXT_STEP: a done row's ram is the final RAM, the next step's the reset's; SAME_STEP:
    final_info["ram"] beside final_obs. A multi-game batch, each env its own game, and masked resets."""
    games = ["breakout", "pong", "space_invaders"]
    ref = gym_reference(games, mode)
    ours = swapping(AleVectorEnv(games, 3, autoreset_mode=mode, full_action_space=True,
                                 max_num_frames_per_episode=500, ram_info=True))
    assert_equal(ref.reset(seed=9), ours.reset(seed=9), "reset")
    rng, ends = np.random.default_rng(9), 0
    for t in range(400):
        if t % 97 == 96:  # a masked reset: the reset envs' infos carry their RAM
            mask = np.array([t % 2 == 0, True, False])
            assert_equal(ref.reset(seed=[t, t + 1, None], options={"reset_mask": mask}),
                         ours.reset(seed=[t, t + 1, None], options={"reset_mask": mask.copy()}), f"mask t={t}")
        actions = rng.integers(0, 18, 3)
        expected = ref.step(actions)
        assert_equal(expected, ours.step(actions), f"t={t}")
        ends += int((expected[2] | expected[3]).sum())
    assert ends > 0
    ref.close()
    ours.close()


class AleReplica:
    """ale-py's PreprocessedEnv's emulator frames on a plain ALEInterface, for its RAM: reset_game, FIRE
    where the game has it, then `frameskip` frames per step up to a game over (noop_max=1: no no-ops;
    no sticky actions, so ALE's seed changes nothing)."""

    def __init__(self, game, frameskip):
        self.ale = ale_py.ALEInterface()
        self.ale.setLoggerMode(ale_py.LoggerMode.Error)
        self.ale.setFloat("repeat_action_probability", 0.0)
        self.ale.loadROM(roms.get_rom_path(game))
        self.actions, self.frameskip = self.ale.getMinimalActionSet(), frameskip

    def reset(self):
        self.ale.reset_game()
        if ale_py.Action.FIRE in self.actions:
            self.ale.act(ale_py.Action.FIRE)
        return self.ale.getRAM().copy()

    def step(self, action):
        for _ in range(self.frameskip):
            self.ale.act(self.actions[action])
            if self.ale.game_over():
                break
        return self.ale.getRAM().copy()


@pytest.mark.slow
@pytest.mark.parametrize("mode", [NEXT, SAME])
def test_ale_drop_in_ram_equals_the_emulators_behind_ale_pys_frames(mode):
    """ale-py's AtariVectorEnv has no RAM: its results must equal ours (RAM aside), and our RAM must
    equal a plain ALE emulator's that plays the frames ALE's vector env plays."""
    n, kwargs = 2, {"noop_max": 1, "autoreset_mode": mode}
    ref, ours = AleReference("breakout", n, **kwargs), AtariVectorEnv("breakout", n, ram_info=True, **kwargs)
    replicas = [AleReplica("breakout", 4) for _ in range(n)]
    obs, info = ours.reset(seed=3)
    assert_equal(ref.reset(seed=3), (obs, {k: v for k, v in info.items() if k != "ram"}), "reset")
    assert np.array_equal(info["ram"], [r.reset() for r in replicas])
    rng, ended, ends = np.random.default_rng(3), np.zeros(n, bool), 0
    for t in range(500):
        actions = rng.integers(0, 4, n)
        expected, got = ref.step(actions), ours.step(actions)
        rams = [r.reset() if e and mode == NEXT else r.step(a) for r, e, a in zip(replicas, ended, actions)]
        dones = expected[2] | expected[3]
        if mode == SAME and dones.any():  # the final RAM beside final_obs, zeros where not done; then the reset's
            expected[4]["final_obs"][~dones] = 0
            assert np.array_equal(got[4].pop("final_ram"), np.where(dones[:, None], rams, 0)), t
            rams = [r.reset() if d else ram for r, d, ram in zip(replicas, dones, rams)]
        assert np.array_equal(got[4].pop("ram"), rams), t
        assert_equal(expected, got, f"t={t}")
        ended, ends = dones, ends + int(dones.sum())
    assert ends > 0
    ref.close()
    ours.close()


@pytest.mark.parametrize("batch_size", [4, 2])
def test_ram_info_is_the_ram_observation_and_a_fresh_copy_every_step(batch_size):
    """With obs_type="ram", info["ram"] is the observation itself: rows follow env_id in batched mode,
    and final_info's ram is final_obs. Arrays kept from a step never change (ale-py issue #534)."""
    env = AleVectorEnv("breakout", 4, batch_size=batch_size, obs_type="ram", ram_info=True,
                       autoreset_mode=SAME, max_num_frames_per_episode=200)
    obs, info = env.reset(seed=1)
    assert np.array_equal(info["ram"][:batch_size], obs)  # reset infos have num_envs rows, as gymnasium's _add_info
    kept = []
    for t in range(60):
        obs, _, term, trunc, info = env.step(np.ones(batch_size, dtype=np.int64))
        assert np.array_equal(info["ram"], obs) and info["ram"].dtype == np.uint8, t
        for k in np.flatnonzero(term | trunc):
            assert np.array_equal(info["final_info"]["ram"][k], info["final_obs"][k])
        kept.append((info["ram"], info["ram"].copy()))
    assert all(np.array_equal(a, b) for a, b in kept)
    assert not np.array_equal(kept[0][1], kept[-1][1])
    assert not any(np.shares_memory(kept[i][0], kept[i + 1][0]) for i in range(len(kept) - 1))
    env.close()


def test_ram_info_off_adds_nothing():
    env = AleNativeVecEnv("breakout", 2, seed=0, max_num_frames_per_episode=40)
    env.reset()
    assert all("ram" not in info for info in env.reset_infos)
    dones = 0
    for _ in range(12):
        _, _, done, infos = env.step(np.ones(2, dtype=np.int64))
        assert all("ram" not in i and "terminal_ram" not in i for i in infos)
        dones += int(done.sum())
    assert dones > 0 and all("ram" not in info for info in env.reset_infos)
    env.close()


@pytest.mark.parametrize("front_end", [AleNativeVecEnv, AleVectorEnv, AtariVectorEnv])
def test_ram_info_must_be_a_bool(front_end):
    with pytest.raises(TypeError, match="ram_info must be a bool, got str"):
        front_end("breakout", 1, ram_info="yes")


def test_a_failed_envs_ram_is_zeros_and_the_others_stand():
    """As its observation row: an EngineError's infos hold the other envs' RAM, zeros for the failed one."""
    from sb3_ale_vec import EngineError, _testing

    env = AleVectorEnv("breakout", 3, obs_type="ram", ram_info=True)
    env.reset(seed=1)
    for _ in range(5):
        env.step(np.array([1, 2, 3]))
    _testing._inject_fault(env._native._vec, 1)
    with pytest.raises(EngineError, match="env 1: injected fault") as caught:
        env.step(np.array([1, 2, 3]))
    error = caught.value
    assert np.array_equal(error.infos["ram"], error.obs) and not error.infos["ram"][1].any()
    assert error.infos["ram"][[0, 2]].any(axis=1).all()  # real RAM in the others' rows
    env.close()
