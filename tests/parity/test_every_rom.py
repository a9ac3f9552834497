"""Every ROM ALE runs (104 of the 108 ale-py ships; the other four are refused by name, as neither
reference can run them) on the SB3 and Gymnasium presets against their references, frame for frame.
(The drop-in against ale-py's own AtariVectorEnv on every ROM: test_reset_ahead.py.)"""

from __future__ import annotations

import pytest
from all_roms import ROMS
from gymnasium.vector import AutoresetMode
from helpers import compare_rollouts, make_pair
from gymnasium_runs import run as run_gymnasium

from sb3_ale_vec import AleNativeVecEnv, _engine
from sb3_ale_vec.games import rom_path

pytestmark = pytest.mark.slow  # every test here (the quick tier does not collect the file: tests/conftest.py)


def _noop_max(game: str) -> int:
    """NoopResetEnv and AtariPreprocessing play action 0 as their no-op: without NOOP there, none. Read
    from our build's ALE (a reference's would cost a ROM load, 0.3-0.4 s, per ROM); the test holds our
    action names to the reference's."""
    return 30 if _engine.action_set(str(rom_path(game)), False)[0] == 0 else 0  # ALE's action 0: NOOP


# Breakout and Pong in every run (the core tier), the other games in the deep tier (`bash .ci/deep`).
CORE_GAMES = ("breakout", "pong")


@pytest.mark.slow  # every ROM, both presets, one env each through a reset: about 1 s each
@pytest.mark.parametrize("game", [g if g in CORE_GAMES else pytest.param(g, marks=pytest.mark.deep) for g in ROMS])
def test_every_rom_on_the_sb3_and_gymnasium_presets(game):
    noop_max = _noop_max(game)
    try:
        ref, ours = make_pair(game, n_envs=1, seed=1, max_frames=160, noop_max=noop_max)
    except AssertionError:  # AtariWrapper's FireResetEnv: FIRE not action 1 (Video Checkers): ours refuses too
        with pytest.raises(ValueError, match="use_fire_reset=True needs FIRE as action 1"):
            AleNativeVecEnv(game, 1, noop_max=noop_max)
    else:
        try:
            names = [env.env_method("get_action_meanings", indices=[0]) for env in (ref, ours)]
            assert names[0] == names[1], names
            assert compare_rollouts(ref, ours, 50).dones > 0  # 160 frames: it resets
        finally:
            ref.close()
            ours.close()
    assert run_gymnasium([game], AutoresetMode.NEXT_STEP, 50, noop_max=noop_max,
                         max_num_frames_per_episode=160) > 0
