"""Every example runs as a user would run it, with tiny settings."""

import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


@pytest.mark.parametrize("script, args", [
    ("ppo_atari.py", ["--timesteps", "256", "--num-envs", "2", "--eval-episodes", "1"]),
])
def test_example_runs(script, args):
    result = subprocess.run([sys.executable, str(EXAMPLES / script), *args], capture_output=True, text=True,
                            timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "steps/s" in result.stdout and "evaluation over" in result.stdout


def test_benchmark_runs():
    result = subprocess.run([sys.executable, "-m", "sb3_ale_vec.bench", "--steps", "20", "--warmup", "5",
                             "--repeats", "1", "--num-envs", "2"], capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    for peer in ("sb3_ale_vec", "AtariVectorEnv", "SubprocVecEnv"):
        assert peer in result.stdout
