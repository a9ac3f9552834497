"""A pytest plugin (``-p ale_py_dropin``) that runs ale-py's own test suites against sb3_ale_vec's
drop-in: every ``ALE/...`` id's vector entry point and ``ale_py.AtariVectorEnv`` become ours before
the suite is collected. Nothing of the suite itself is changed."""

import ale_py
import ale_py.vector_env
import gymnasium as gym

import sb3_ale_vec

DROP_IN = "sb3_ale_vec:AtariVectorEnv"


def pytest_configure(config):
    gym.register_envs(ale_py)
    for spec in gym.registry.values():
        if spec.vector_entry_point == "ale_py.vector_env:AtariVectorEnv":
            spec.vector_entry_point = DROP_IN
    ale_py.AtariVectorEnv = sb3_ale_vec.AtariVectorEnv
    ale_py.vector_env.AtariVectorEnv = sb3_ale_vec.AtariVectorEnv


def pytest_report_header(config):
    return f"ale-py's suite against {DROP_IN} (sb3_ale_vec {sb3_ale_vec.__version__})"
