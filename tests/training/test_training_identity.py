"""A network trained through this engine equals the one trained through the pipeline it replaces.

Same seed, deterministic torch on one thread, short runs with a frame cap so that every run sees
games end (truncations, bootstrapped by SB3) and life losses: the final parameters and the episode
statistics must be equal, not close. Equal frames are not enough for this: the policy's convolution
rounds differently for another memory layout (sb3/layout.py), so the layout is part of the contract.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import ale_py
import gymnasium as gym
import pytest
import torch
from stable_baselines3 import A2C, DQN, PPO
from stable_baselines3.common.env_util import make_atari_env, make_vec_env
from gymnasium.vector import SyncVectorEnv
from gymnasium.wrappers import AtariPreprocessing, FrameStackObservation
from stable_baselines3.common.vec_env import VecEnvWrapper, VecFrameStack, VecTransposeImage

from helpers import make_reference, resets_taken, swapping
from sb3_ale_vec import AleNativeVecEnv, AleVectorEnv, AtariVectorEnv, make_ale_vec_env
from sb3_ale_vec.games import camel_name

pytestmark = pytest.mark.slow

FRAMES = 400  # emulator frames per game (100 agent steps): a few hundred steps cut several games off


@pytest.fixture(autouse=True)
def deterministic_torch():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    yield
    torch.use_deterministic_algorithms(False)
    torch.set_num_threads(threads)


class Ends(VecEnvWrapper):
    """Counts what ends episodes on the way through (changes nothing)."""

    def __init__(self, venv):
        super().__init__(venv)
        self.truncations = self.dones = 0

    def reset(self):
        return self.venv.reset()

    def step_wait(self):
        obs, rewards, dones, infos = self.venv.step_wait()
        self.dones += int(dones.sum())
        self.truncations += sum(bool(info.get("TimeLimit.truncated")) for info in infos)
        return obs, rewards, dones, infos


def pair(game: str, n: int, frames: int = FRAMES, seed: int = 0):
    """SB3's pipeline and ours, alike: VecTransposeImage(VecFrameStack(make_atari_env)) vs AleNativeVecEnv."""
    ref = make_reference(game, n, seed, env_kwargs={"max_num_frames_per_episode": frames})
    return Ends(ref), Ends(swapping(AleNativeVecEnv(game, n, seed=seed, max_num_frames_per_episode=frames)))


def train(algo, env, timesteps: int, lives: bool = True, **kwargs):
    """Train with seed 0; the run must cut games off (SB3 bootstraps those) and, in games with
    lives, lose lives (EpisodicLifeEnv's dones), or the comparison would not test them."""
    policy = kwargs.pop("policy", "CnnPolicy")
    model = algo(policy, env, seed=0, device="cpu", **kwargs)
    initial = {k: v.clone() for k, v in model.policy.state_dict().items()}
    model.learn(timesteps)
    assert env.truncations > 0, "no game was cut off: a weak test"
    assert env.dones > env.truncations or not lives, "no life was lost: a weak test"
    assert any(not torch.equal(initial[k], v) for k, v in model.policy.state_dict().items()), "nothing was learned"
    ours = env.unwrapped if hasattr(env.unwrapped, "_native") else None
    assert ours is None or resets_taken(ours) > 0, "no reset computed ahead was swapped in: a weak test"
    env.close()
    return model


def assert_same_training(ref_model, our_model) -> None:
    a, b = ref_model.policy.state_dict(), our_model.policy.state_dict()
    assert a.keys() == b.keys()
    differ = [k for k in a if not torch.equal(a[k], b[k])]
    assert not differ, f"parameters differ: {differ}"
    ref_eps = [(e["r"], e["l"]) for e in ref_model.ep_info_buffer]
    assert ref_eps and ref_eps == [(e["r"], e["l"]) for e in our_model.ep_info_buffer]


def _contrib(name: str):
    import sb3_contrib  # in the test extra: a missing package fails, never skips

    return getattr(sb3_contrib, name)


DQN_KWARGS = {"buffer_size": 1000, "learning_starts": 100, "train_freq": 4, "target_update_interval": 100}
# name: (algorithm, game, envs, timesteps, frame cap, lives, algorithm's settings)
RUNS = {
    "ppo": (lambda: PPO, "breakout", 4, 512, FRAMES, True, {"n_steps": 32, "batch_size": 64, "n_epochs": 2}),
    "a2c": (lambda: A2C, "pong", 4, 600, FRAMES, False, {"n_steps": 5}),
    "dqn": (lambda: DQN, "space_invaders", 2, 800, 800, True, DQN_KWARGS),  # 2+ real resets an env: swaps
    "qrdqn": (lambda: _contrib("QRDQN"), "breakout", 2, 500, FRAMES, True, DQN_KWARGS),
    "recurrent_ppo": (lambda: _contrib("RecurrentPPO"), "breakout", 4, 512, FRAMES, True,
                      {"policy": "CnnLstmPolicy", "n_steps": 32, "batch_size": 64, "n_epochs": 1}),
}


@pytest.mark.parametrize("name", RUNS)
def test_sb3_and_sb3_contrib_algorithms_train_identically(name):
    algo, game, n, timesteps, frames, lives, kwargs = RUNS[name]
    ref, ours = pair(game, n, frames)
    reference = train(algo(), ref, timesteps, lives, **dict(kwargs))
    assert_same_training(reference, train(algo(), ours, timesteps, lives, **dict(kwargs)))
    if name == "ppo":  # the same reference run serves the one-line switch (a run of its own repeated it)
        users_stack_trains_identically(reference, timesteps, frames, kwargs)


def users_stack_trains_identically(reference, timesteps: int, frames: int, kwargs: dict) -> None:
    """make_ale_vec_env under the user's own VecFrameStack (PPO adds VecTransposeImage, as it does over
    make_atari_env) trains as the reference: SB3's VecTransposeImage(VecFrameStack(make_atari_env))."""
    env_kwargs = {"max_num_frames_per_episode": frames}
    ours = Ends(VecFrameStack(swapping(make_ale_vec_env("BreakoutNoFrameskip-v4", n_envs=4, seed=0,
                                                        env_kwargs=env_kwargs)), 4))
    assert_same_training(reference, train(PPO, ours, timesteps, **dict(kwargs)))


def test_ppo_mlp_policy_on_ram_trains_identically_to_make_vec_env():
    """SB3's RAM workflow, make_vec_env(id, env_kwargs={"obs_type": "ram"}) + MlpPolicy, against the
    one-line switch to make_ale_vec_env (a frame cap of 100 frames: games cut off every 100 steps)."""
    env_kwargs = {"obs_type": "ram", "max_num_frames_per_episode": 100}
    ref = Ends(make_vec_env("BreakoutNoFrameskip-v4", n_envs=4, seed=0, env_kwargs=env_kwargs))
    ours = Ends(swapping(make_ale_vec_env("BreakoutNoFrameskip-v4", n_envs=4, seed=0, env_kwargs=env_kwargs)))
    kwargs = {"policy": "MlpPolicy", "n_steps": 64, "batch_size": 64, "n_epochs": 2}
    assert_same_training(train(PPO, ref, 1024, False, **kwargs), train(PPO, ours, 1024, False, **kwargs))


@pytest.mark.parametrize("channels_last", [False, True])
@pytest.mark.parametrize("stack_num", [1, 4])
def test_observation_strides_equal_sb3s_pipeline(channels_last, stack_num):
    """reset, step and terminal_observation: the same strides as the pipeline, in every layout."""
    game = camel_name("breakout")
    ref = VecFrameStack(make_atari_env(f"{game}NoFrameskip-v4", n_envs=2, seed=0,
                                       env_kwargs={"max_num_frames_per_episode": 120}), stack_num)
    if not channels_last:
        ref = VecTransposeImage(ref)
    ours = AleNativeVecEnv("breakout", 2, seed=0, stack_num=stack_num, channels_last=channels_last,
                           max_num_frames_per_episode=120)
    assert ref.reset().strides == ours.reset().strides
    finals = 0
    for _ in range(40):
        actions = [1, 3]
        (o1, _, d1, i1), (o2, _, d2, i2) = ref.step(actions), ours.step(actions)
        assert o1.strides == o2.strides and (d1 == d2).all()
        for i in d1.nonzero()[0]:
            assert i1[i]["terminal_observation"].strides == i2[i]["terminal_observation"].strides
            finals += 1
    assert finals > 0
    ref.close()
    ours.close()


def cleanrl_ppo():
    """examples/ppo_atari_torch.py, the CleanRL-style loop in plain torch."""
    path = Path(__file__).resolve().parents[2] / "examples" / "ppo_atari_torch.py"
    spec = importlib.util.spec_from_file_location("ppo_atari_torch", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def assert_same_gym_training(make_ref, make_ours) -> None:
    ppo, runs = cleanrl_ppo(), []
    for make in (make_ref, make_ours):
        envs = make()
        agent, episodes = ppo.train(envs, 512, seed=0)
        ours = getattr(envs, "_native", None)
        assert ours is None or resets_taken(envs) > 0, "no reset computed ahead was swapped in: a weak test"
        envs.close()
        runs.append((agent.state_dict(), episodes))
    (a, ref_episodes), (b, our_episodes) = runs
    assert any(truncated for _, truncated in ref_episodes) and any(not t for _, t in ref_episodes), ref_episodes
    assert ref_episodes == our_episodes
    differ = [k for k in a if not torch.equal(a[k], b[k])]
    assert not differ, f"parameters differ: {differ}"


def test_cleanrl_style_ppo_trains_identically_over_ale_vector_env():
    gym.register_envs(ale_py)

    def one():
        env = gym.make("ALE/Breakout-v5", frameskip=1, max_num_frames_per_episode=FRAMES)
        return FrameStackObservation(AtariPreprocessing(env, terminal_on_life_loss=True), 4, padding_type="zero")

    assert_same_gym_training(lambda: SyncVectorEnv([one] * 4),
                             lambda: swapping(AleVectorEnv("breakout", 4, episodic_life=True,
                                                           max_num_frames_per_episode=FRAMES)))


def test_cleanrl_style_ppo_trains_identically_over_the_ale_py_drop_in():
    from ale_py.vector_env import AtariVectorEnv as AlePyVectorEnv

    options = {"episodic_life": True, "max_num_frames_per_episode": 200}  # 50 steps: some lives outlast it
    assert_same_gym_training(lambda: AlePyVectorEnv("breakout", 4, **options),
                             lambda: swapping(AtariVectorEnv("breakout", 4, **options)))
