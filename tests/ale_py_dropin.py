"""A pytest plugin (``-p ale_py_dropin``) that runs ale-py's own test suites against sb3_ale_vec's
drop-in: every ``ALE/...`` id's vector entry point and ``ale_py.AtariVectorEnv`` become ours before
the suite is collected. Nothing of the suite itself is changed. The summary counts the vector envs
each class built, so a run can show it tested ours and never ale-py's."""

import functools

import ale_py
import ale_py.vector_env
import gymnasium as gym

import sb3_ale_vec

DROP_IN = "sb3_ale_vec:AtariVectorEnv"
BUILT = {"sb3_ale_vec": 0, "ale_py": 0}


def count_constructions(cls, key):
    init = cls.__init__

    @functools.wraps(init)
    def counted(self, *args, **kwargs):
        BUILT[key] += 1
        init(self, *args, **kwargs)

    cls.__init__ = counted


def pytest_configure(config):
    gym.register_envs(ale_py)
    count_constructions(ale_py.vector_env.AtariVectorEnv, "ale_py")
    count_constructions(sb3_ale_vec.AtariVectorEnv, "sb3_ale_vec")
    for spec in gym.registry.values():
        if spec.vector_entry_point == "ale_py.vector_env:AtariVectorEnv":
            spec.vector_entry_point = DROP_IN
    ale_py.AtariVectorEnv = sb3_ale_vec.AtariVectorEnv
    ale_py.vector_env.AtariVectorEnv = sb3_ale_vec.AtariVectorEnv


def pytest_report_header(config):
    return f"ale-py's suite against {DROP_IN} (sb3_ale_vec {sb3_ale_vec.__version__})"


def pytest_terminal_summary(terminalreporter):
    terminalreporter.write_line(f"vector envs built: sb3_ale_vec {BUILT['sb3_ale_vec']}, ale_py {BUILT['ale_py']}")
