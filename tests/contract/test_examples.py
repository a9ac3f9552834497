"""Every example runs as a user would run it, with tiny settings."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from stable_baselines3.common.monitor import load_results

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

pytestmark = [pytest.mark.slow, pytest.mark.deep]  # every example: the deep tier (`bash .ci/deep`)


def _run(cmd, cwd=None):
    result = subprocess.run(cmd, capture_output=True, text=True, timeout=900, cwd=cwd)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-3000:]
    return result.stdout


@pytest.mark.parametrize("script, args, expected", [
    ("ppo_atari.py", ["--timesteps", "256", "--num-envs", "2", "--eval-episodes", "1"], "evaluation over"),
    ("switch_from_make_atari_env.py", ["--timesteps", "200", "--n-envs", "2"], "make_ale_vec_env:"),
    ("switch_from_make_atari_env.py", ["--timesteps", "200", "--n-envs", "2", "--reference"], "make_atari_env:"),
    ("dqn_atari.py", ["--timesteps", "300", "--num-envs", "2", "--buffer-size", "1000"], "replay buffer"),
    ("gymnasium_pipelined.py", ["--num-envs", "4", "--steps", "200", "--warmup", "100"], "batched (batch_size=2)"),
    ("ppo_atari_torch.py", ["--envs", "2", "--steps", "256", "--num-steps", "64"], "episodes (lives)"),
])
def test_example_runs(script, args, expected):
    out = _run([sys.executable, str(EXAMPLES / script), *args])
    assert expected in out and "steps/s" in out


def test_record_video_example(tmp_path):
    out = _run([sys.executable, str(EXAMPLES / "record_video.py"), "--length", "30", "--folder", str(tmp_path)])
    videos = list(tmp_path.glob("breakout*.mp4"))
    assert videos and videos[0].stat().st_size > 1000 and "wrote" in out


def test_rl_zoo_example_trains_enjoys_and_records(tmp_path):
    """rl-zoo3's own train/enjoy/record_video, through sb3_ale_vec.zoo, with a tiny budget."""
    _run(["bash", str(EXAMPLES / "rl_zoo_ppo.sh"), "BreakoutNoFrameskip-v4", "-n", "512", "--eval-freq", "256",
          "--eval-episodes", "1", "--seed", "0", "-params", "n_envs:2", "n_steps:64", "batch_size:64", "n_epochs:1"],
         cwd=tmp_path)
    run = tmp_path / "logs" / "ppo" / "BreakoutNoFrameskip-v4_1"
    config = (run / "BreakoutNoFrameskip-v4" / "config.yml").read_text()
    assert "sb3_ale_vec.zoo.AtariNative" in config and "frame_stack" in config
    monitor = load_results(str(run))  # rl-zoo's <rank>.monitor.csv, written from true game scores
    assert len(monitor) > 0 and (monitor["l"] > 100).all()
    assert (run / "evaluations.npz").exists() and list((run / "videos").glob("*.mp4"))


def test_benchmark_runs_every_peer_and_writes_json_and_plot(tmp_path):
    peers = ["sb3_ale_vec", "ale_py", "act() this build", "act() ale-py", "sb3_ale_vec sb3", "sb3_ale_vec sb3 no_life",
             "sb3 subproc", "sb3 dummy", "gymnasium async"]
    out = _run([sys.executable, "-m", "sb3_ale_vec.bench", "--repeats", "2", "--steps", "40", "--seconds", "0.2", "--num-envs", "2,3",
                "--threads", "1", "--peers", ",".join(peers), "--out", str(tmp_path / "bench")])
    for peer in peers:
        assert peer in out
    # Equal work for real: given the same seed and actions, both engines emulate the very same frames.
    assert out.count("sb3_ale_vec and ale_py emulated the same frames") == 2, out
    report = json.loads((tmp_path / "bench.json").read_text())
    for n in (2, 3):
        ours = report["runs"][f"breakout|{n}|sb3_ale_vec|1"]
        assert len(ours) == 2 and all(r["frames_per_s"] > 4 * r["steps_per_s"] * 0.5 for r in ours)
    assert report["runs"]["breakout|2|act() this build|1"][0]["frames_per_s"] > 0
    assert (tmp_path / "bench.png").stat().st_size > 1000


def test_benchmark_asynchronous_batches(tmp_path):
    """EnvPool-style batches: each engine returns the first envs to finish, frames counted per env id."""
    out = _run([sys.executable, "-m", "sb3_ale_vec.bench", "--repeats", "1", "--steps", "40", "--seconds", "0.2",
                "--num-envs", "4", "--batch-size", "2", "--threads", "1,2", "--peers", "sb3_ale_vec,ale_py",
                "--out", str(tmp_path / "bench")])
    assert "num_envs=4, asynchronous batches of 2" in out and "emulated the same frames" not in out
    report = json.loads((tmp_path / "bench.json").read_text())
    for threads in (1, 2):
        for peer in ("sb3_ale_vec", "ale_py"):
            run = report["runs"][f"breakout|4|{peer}|{threads}"][0]
            # 40 steps of 2 envs, about 4 frames each (a reset's no-ops add some, a reset step with
            # none fewer): counted by env id, or the differences would be off by whole episodes.
            assert run["steps_per_s"] > 0 and 40 * 2 * 4 * 0.9 <= run["frames"] <= 40 * 2 * 40
    with pytest.raises(AssertionError, match="--batch-size must be in"):
        _run([sys.executable, "-m", "sb3_ale_vec.bench", "--num-envs", "4", "--batch-size", "5"])


def test_benchmark_interleaves_the_resets_ahead_ab_and_another_trees_build(tmp_path):
    """Before/after in one run: the same build with resets made at the episode's end, and the
    package as built in another tree (here this tree again, through PYTHONPATH): all three emulate
    ale_py's very frames, so the table compares equal work."""
    root = Path(__file__).resolve().parents[2]
    out = _run([sys.executable, "-m", "sb3_ale_vec.bench", "--repeats", "2", "--steps", "60", "--num-envs", "3",
                "--threads", "2", "--peers", "sb3_ale_vec,sb3_ale_vec inline,ale_py", "--old", str(root),
                "--out", str(tmp_path / "bench")], cwd=tmp_path)
    assert "sb3_ale_vec and ale_py emulated the same frames" in out, out
    runs = json.loads((tmp_path / "bench.json").read_text())["runs"]
    frames = {peer: sum(r["frames"] for r in runs[f"breakout|3|{peer}|2"])
              for peer in ("sb3_ale_vec", "sb3_ale_vec inline", "sb3_ale_vec old", "ale_py")}
    assert len(set(frames.values())) == 1, frames


def test_startup_tool_times_both_peers_in_fresh_processes():
    out = _run([sys.executable, str(Path(__file__).resolve().parents[2] / "tools" / "startup.py"), "--num-envs", "2,3",
                "--repeats", "1"])
    rows = [line.split() for line in out.splitlines() if line.startswith(("sb3_ale_vec ", "ale_py "))]
    assert sorted((r[0], r[1]) for r in rows) == [("ale_py", "2"), ("ale_py", "3"), ("sb3_ale_vec", "2"),
                                                  ("sb3_ale_vec", "3")]
    assert all(float(x) > 0 for r in rows for x in r[2:])
    assert out.count("MiB per env") == 2


def test_benchmark_ppo_mode(tmp_path):
    out = _run([sys.executable, "-m", "sb3_ale_vec.bench", "--ppo", "256", "--num-envs", "2", "--rounds", "1",
                "--out", str(tmp_path / "ppo")])
    assert "ours / subproc" in out and "ahead / inline" in out and "rollout steps/s" in out
    # A paired round: four fresh processes, their ratios, then the rounds' medians, min and max.
    results = json.loads((tmp_path / "ppo.json").read_text())
    assert {b: len(r) for b, r in results["ppo"].items()} == dict.fromkeys(
        ("sb3_ale_vec", "sb3_ale_vec inline", "sb3 subproc", "policy alone"), 1)
    assert [r["order"] for r in results["ratios"]] == ["sb3_ale_vec"]
    assert all(len(r) == 9 and all(v > 0 for k, v in r.items() if k != "order") for r in results["ratios"])
    assert [line.split()[0] for line in out.splitlines() if line.split()[:1] in (["median"], ["min"], ["max"])] == \
        ["median", "min", "max"]
    # The policy alone: no env to speak of.
    alone = results["ppo"]["policy alone"]
    assert all(r["ms_env"] < 0.1 * r["ms_forward"] and "resets" not in r for r in alone)
    # Where a rollout step's time goes: every part measured, none negative, the env a real share.
    header = next(line for line in out.splitlines() if line.startswith("backend") and "forward" in line).split()
    ours = next(line for line in out.splitlines()[::-1]
                if line.split()[:1] == ["sb3_ale_vec"] and line.split()[1] != "inline").split()
    ms = dict(zip(header[1:], map(float, ours[1:])))
    assert set(ms) == {"env", "obs_to_tensor", "forward", "buffer", "other", "total"}
    assert all(v >= 0 for v in ms.values()) and ms["env"] > 0 and ms["forward"] > 0
    assert abs(sum(v for k, v in ms.items() if k != "total") - ms["total"]) < 0.05
    # Resets ahead on and off: the engine's own counts of game resets and of those swapped in.
    lines = out.splitlines()
    first = next(k for k, line in enumerate(lines) if "game resets" in line) + 1
    rows = {line[:18].strip(): line[18:].split()[-2:] for line in lines[first:first + 2]}
    (games, swapped), (games_off, swapped_off) = (list(map(int, rows[k])) for k in ("sb3_ale_vec", "sb3_ale_vec inline"))
    assert 0 <= swapped <= games and swapped_off == 0


def test_loops_benchmark_counts_every_reset_as_swapped_or_inline():
    out = _run([sys.executable, "-m", "sb3_ale_vec.bench.loops", "--loops", "idle:1", "--num-envs", "2",
                "--threads", "2", "--rounds", "1", "--frames", "1600", "--peers", "sb3_ale_vec,sb3_ale_vec inline"])
    rows = {line[:22].strip(): line[22:].split() for line in out.splitlines() if line.startswith("sb3_ale_vec")}
    resets, swapped, replayed, inline = map(int, rows["sb3_ale_vec"][-4:])
    assert resets > 0 and swapped + inline == resets and replayed <= swapped
    assert swapped > 0  # 800 steps with a 1 ms idle gap each: the prepares had the time
    resets_off, swapped_off, _, inline_off = map(int, rows["sb3_ale_vec inline"][-4:])
    assert swapped_off == 0 and inline_off == resets_off > 0


def test_latency_benchmark_runs_each_variant_under_a_real_cgroup_quota():
    # A fifth of a CPU for a tight loop on 2 threads (throttled even on a loaded machine): the kernel
    # throttles each child's group, and the table says how often; no cgroup of the benchmark's is left.
    controllers = [Path("/sys/fs/cgroup/cgroup.controllers"), Path("/sys/fs/cgroup/cpu/cpu.cfs_quota_us")]
    if not any(c.is_file() and os.access(c.parent, os.W_OK) for c in controllers):
        pytest.skip("a writable cgroup cpu controller (root): a file this machine lacks")
    out = _run([sys.executable, "-m", "sb3_ale_vec.bench.latency", "--loop", "tight", "--quota", "0.2",
                "--num-envs", "4", "--rounds", "2", "--steps", "400"])
    rows = {line.split()[0]: [float(x) for x in line.split()[1:]] for line in out.splitlines()
            if line.split()[:1] in (["ahead"], ["inline"]) and len(line.split()) == 7}
    assert set(rows) == {"ahead", "inline"}, out
    for values in rows.values():
        steps_per_s, p50, p99, p999, longest, throttled = values
        assert steps_per_s > 0 and p50 <= p99 <= p999 <= longest and throttled > 0, out
    assert "ahead / inline, p99.9: median" in out
    left = [*Path("/sys/fs/cgroup").glob("sb3ale-latency-*"), *Path("/sys/fs/cgroup/cpu").glob("sb3ale-latency-*")]
    assert not left


def test_benchmark_learn_mode_writes_identical_curves_and_a_plot(tmp_path):
    out = _run([sys.executable, "-m", "sb3_ale_vec.bench", "--learn", "3072", "--with-sb3",
                "--out", str(tmp_path / "learn")])
    assert "breakout: the two curves against steps are identical" in out, out
    results = json.loads((tmp_path / "learn.json").read_text())
    assert [r["backend"] for r in results["runs"]] == ["sb3_ale_vec", "sb3 make_atari_env"]
    assert all(r["curve"] and r["timesteps"] >= 3072 for r in results["runs"])  # episodes ended: points to compare
    assert (tmp_path / "learn.png").stat().st_size > 10_000
