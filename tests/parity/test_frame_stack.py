"""Native stacking equals SB3's VecFrameStack over single frames, terminal observations included."""

import numpy as np
import pytest
from stable_baselines3.common.vec_env import VecFrameStack

from sb3_ale_vec import AleNativeVecEnv

pytestmark = pytest.mark.slow  # every test here (the quick tier does not collect the file: tests/conftest.py)


@pytest.mark.parametrize("channels_last, order", [(False, "first"), (True, "last"), (False, None), (True, None)])
@pytest.mark.parametrize("grayscale", [True, False])
@pytest.mark.slow  # moved out of the quick tier (over 2.5 s there)
def test_native_stack_equals_vec_frame_stack(channels_last, order, grayscale):
    kwargs = {"num_envs": 3, "seed": 5, "channels_last": channels_last, "grayscale": grayscale}
    stacked = AleNativeVecEnv("breakout", stack_num=4, **kwargs)
    wrapped = VecFrameStack(AleNativeVecEnv("breakout", stack_num=1, **kwargs), 4, channels_order=order)
    assert stacked.observation_space == wrapped.observation_space
    assert np.array_equal(stacked.reset(), wrapped.reset())
    rng = np.random.default_rng(0)
    dones = 0
    for _ in range(600):
        actions = rng.integers(0, 4, 3)
        (o1, r1, d1, i1), (o2, r2, d2, i2) = stacked.step(actions), wrapped.step(actions)
        assert np.array_equal(o1, o2) and np.array_equal(r1, r2) and np.array_equal(d1, d2)
        for x, y in zip(i1, i2):
            assert ("terminal_observation" in x) == ("terminal_observation" in y)
            if "terminal_observation" in x:
                assert np.array_equal(x["terminal_observation"], y["terminal_observation"])
        dones += int(d1.sum())
    assert dones > 0
    stacked.close()
    wrapped.close()
