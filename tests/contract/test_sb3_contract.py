"""The SB3 contract (sb3/contract.py) that AleNativeVecEnv and RayAleVecEnv share: its seed policy
against SB3's own ``VecEnv.seed``, and both front-ends answering alike (values, errors, warnings),
the Ray driver with no native engine of its own."""

import inspect
import types
import warnings

import numpy as np
import pytest
from stable_baselines3.common import atari_wrappers
from stable_baselines3.common.monitor import Monitor
from stable_baselines3.common.vec_env import VecEnv, VecFrameStack, VecMonitor

import sb3_ale_vec
from helpers import compare_rollouts
from sb3_ale_vec import AleNativeVecEnv
from sb3_ale_vec.options import ALE_MAX_SEED
from sb3_ale_vec.sb3.contract import ENGINE_OPTIONS, PER_ENV_ATTRS, SB3_OPTIONS, SHARED_ATTRS

OPTIONS = {"max_num_frames_per_episode": 600}  # short games: episodes and truncations in 150 steps
WRAPPERS = (Monitor, atari_wrappers.AtariWrapper, atari_wrappers.NoopResetEnv, atari_wrappers.MaxAndSkipEnv,
            atari_wrappers.EpisodicLifeEnv, atari_wrappers.FireResetEnv, atari_wrappers.WarpFrame,
            atari_wrappers.ClipRewardEnv, atari_wrappers.StickyActionEnv, VecFrameStack)


def test_the_sb3_options_are_alenativevecenvs_keywords():
    params = set(inspect.signature(AleNativeVecEnv.__init__).parameters) - {"self", "game", "num_envs", "seed"}
    assert params == SB3_OPTIONS


def test_no_seed_draws_as_sb3s_vec_env_seed():
    env = AleNativeVecEnv("pong", 3)
    for state in range(5):
        np.random.seed(state)
        expected = VecEnv.seed(types.SimpleNamespace(num_envs=3), None)  # SB3's own draw
        np.random.seed(state)
        assert env.seed() == expected == env._seeds
    env.close()


def test_the_ale_preset_draws_every_base_seed_that_fits_and_no_other(monkeypatch):
    env = AleNativeVecEnv("pong", 4, preset="ale")
    for drawn in ("low", "high"):  # the ends of the draw's range
        monkeypatch.setattr(np.random, "randint", lambda low, high: low if drawn == "low" else high - 1)
        seeds = env.seed()
        assert seeds[0] == 0 if drawn == "low" else seeds[-1] == ALE_MAX_SEED
        env.seed(seeds[0])  # the check takes what the draw gives
    with pytest.raises(ValueError, match=r"the ale preset takes seeds in \[0, 2147483647\]: seed \+ num_envs - 1 "
                                         r"= 2147483648 is too large"):
        env.seed(ALE_MAX_SEED - 2)
    env.close()


# -- the two front-ends, on the Ray test cluster ------------------------------------------------


def _outcome(call, class_name):
    """A call's value, or its error's type and message with the front-end's class name taken out."""
    try:
        return "ok", call()
    except Exception as error:  # noqa: BLE001 - any error must match the other front-end's
        return type(error), str(error).replace(class_name, "<VecEnv>")


def _same(local, ray_env, call):
    mine, theirs = _outcome(lambda: call(local), "AleNativeVecEnv"), _outcome(lambda: call(ray_env), "RayAleVecEnv")
    assert mine == theirs, (mine, theirs)
    return mine


def _answer_alike(local, ours):
    """Every contract answer of the two front-ends, checked equal; both must be fresh (not stepped)."""
    n = local.num_envs
    for name in ("observation_space", "action_space", "metadata", "spec", "game", "games", "render_mode", "preset"):
        assert getattr(local, name) == getattr(ours, name), name
    some = [n - 1, 0]
    for name in (*PER_ENV_ATTRS, *SHARED_ATTRS, "no_such_attribute"):
        for indices in (None, some, 1):
            _same(local, ours, lambda env: env.get_attr(name, indices))
    for name in sorted(ENGINE_OPTIONS):
        assert _same(local, ours, lambda env: env.set_attr(name, 1))[0] is AttributeError
    _same(local, ours, lambda env: env.set_attr("note", "x", indices=some))
    for indices in (some, None):  # found on some envs, not on others
        _same(local, ours, lambda env: env.get_attr("note", indices))
    assert _same(local, ours, lambda env: env.has_attr("spec")) == ("ok", True)
    for name in ("get_action_meanings", "no_such_method"):
        for indices in (None, some):
            _same(local, ours, lambda env: env.env_method(name, indices=indices))
    assert local.get_action_meanings() == ours.get_action_meanings()
    for wrapper in WRAPPERS:
        for indices in (None, some):
            _same(local, ours, lambda env: env.env_is_wrapped(wrapper, indices))
    for seed in (1.5, -1, "7", np.int64(3), ALE_MAX_SEED - n + 1, ALE_MAX_SEED - n + 2):
        _same(local, ours, lambda env: env.seed(seed))
    for env in (local, ours):
        name = type(env).__name__
        if env.config.stack_num > 1:
            with pytest.warns(UserWarning, match=f"VecFrameStack over an {name} that already stacks"):
                VecFrameStack(env, 2)
        with pytest.warns(UserWarning, match=f"VecMonitor over {name} replaces the true full-game scores"), \
                warnings.catch_warnings():
            warnings.filterwarnings("ignore", "The environment is already wrapped")  # SB3's own, as for any Monitor
            VecMonitor(env)


def _same_images(local, ours):
    for call in (lambda env: env.get_images(), lambda env: env.env_method("render", indices=[1, 0])):
        mine, theirs = call(local), call(ours)
        assert len(mine) == len(theirs)
        assert all(a is None and b is None or np.array_equal(a, b) for a, b in zip(mine, theirs))


@pytest.mark.slow
@pytest.mark.parametrize("game, kwargs", [
    ("breakout", {"seed": 5}),
    (["breakout", "pong", "breakout"], {"seed": 5, "preset": "ale", "full_action_space": True, "render_mode": None}),
    ("pong", {"preset": "gymnasium", "stack_num": 1, "channels_last": True}),
])
def test_local_and_ray_front_ends_answer_alike(cluster, game, kwargs):
    from sb3_ale_vec.distributed import RayAleVecEnv

    local = AleNativeVecEnv(game, 3, **OPTIONS, **kwargs)
    ours = RayAleVecEnv(game, 3, num_shards=2, **OPTIONS, **kwargs)
    _answer_alike(local, ours)
    local.seed(5), ours.seed(5)
    assert np.array_equal(local.reset(), ours.reset())
    if kwargs.get("render_mode", "rgb_array") is None:
        with pytest.warns(UserWarning, match="render mode is None"):
            _same_images(local, ours)
    else:
        _same_images(local, ours)
    local.close(), ours.close()


@pytest.mark.slow
def test_the_ray_driver_builds_no_engine(cluster, monkeypatch):
    """Constructing a native engine on the driver raises; the shards' (other processes) are unaffected."""
    from sb3_ale_vec.distributed import RayAleVecEnv

    local = AleNativeVecEnv("breakout", 4, seed=3, **OPTIONS)  # built before engines are refused

    def refused(*args, **kwargs):
        raise AssertionError("the Ray driver built a native engine")

    monkeypatch.setattr(sb3_ale_vec._engine, "Vectorizer", refused)
    with pytest.raises(AssertionError, match="built a native engine"):
        AleNativeVecEnv("breakout", 1)
    # Bad options raise the local front-end's errors (which come before its engine) on the driver.
    for bad in ({"frameskip": 0}, {"preset": "dopamine"}, {"episodic_life": "yes"}, {"no_such_option": 1},
                {"render_mode": "human"}, {"channels_last": 1}, {"game": "brekout"},
                {"game": ["breakout", "pong"]}, {"game": ["breakout", "pong", "pong", "pong"]},
                {"game": "ms_pacman", "use_fire_reset": True}, {"preset": "ale", "mode": 1},
                {"pad_with_reset": True}, {"layout": "chw"}):
        args = {"game": "breakout", **bad}
        game = args.pop("game")
        mine = _outcome(lambda: AleNativeVecEnv(game, 4, **args), "AleNativeVecEnv")
        theirs = _outcome(lambda: RayAleVecEnv(game, 4, num_shards=2, **args), "RayAleVecEnv")
        assert issubclass(mine[0], (TypeError, ValueError)) and mine == theirs, (bad, mine, theirs)
    ours = RayAleVecEnv("breakout", 4, num_shards=2, seed=3, **OPTIONS)
    _answer_alike(local, ours)
    local.seed(3), ours.seed(3)
    stats = compare_rollouts(local, ours, 160, reset_every=150)  # obs, rewards, dones, infos, reset_infos
    assert stats.episodes and stats.truncations and stats.resets_mid_run
    _same_images(local, ours)
    local.close(), ours.close()
