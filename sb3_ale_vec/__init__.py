"""sb3-ale-vec: a native, multi-threaded Atari backend for Stable-Baselines3."""

from importlib.metadata import version as _distribution_version

from sb3_ale_vec._version import __version__


def _check_ale_py() -> None:
    # The engine was compiled from one ale-py release; the ROMs come from the installed wheel.
    try:
        from sb3_ale_vec import _engine
    except ImportError as error:
        from importlib.machinery import EXTENSION_SUFFIXES
        from pathlib import Path

        if any((Path(__path__[0]) / f"_engine{suffix}").is_file() for suffix in EXTENSION_SUFFIXES):
            raise  # built, but it does not load: the original error says why
        raise ImportError(
            f"sb3_ale_vec's native engine is not built in {__path__[0]}. If you installed sb3-ale-vec "
            "with `pip install .`, this source folder shadows the installed package: run Python from "
            "another folder. To use the source tree itself, build the engine in it: `pip install -e .`."
        ) from error

    installed = _distribution_version("ale-py")
    if installed != _engine.ALE_VERSION:
        raise ImportError(
            f"sb3_ale_vec was built with ALE {_engine.ALE_VERSION} but ale-py {installed} is installed: "
            f"`pip install ale-py=={_engine.ALE_VERSION}`, or rebuild sb3-ale-vec (`pip install -e .`)."
        )


_check_ale_py()

from sb3_ale_vec._native import EngineBusy, EngineError  # noqa: E402
from sb3_ale_vec.gymnasium.vector import AleVectorEnv, register_envs  # noqa: E402
from sb3_ale_vec.gymnasium.ale_vector import AtariVectorEnv, VectorAtariEnv  # noqa: E402

register_envs()  # gymnasium.make_vec("sb3_ale_vec/Breakout-v5", num_envs=8)

# The SB3 front-ends import SB3 and torch (seconds, hundreds of MB): only when first asked for, so
# that Gymnasium, ale-py and JAX users and a Ray shard, which need only the engine, start light.
_LAZY = {"AleNativeVecEnv": "sb3_ale_vec.sb3.vec_env", "AleVecMonitor": "sb3_ale_vec.sb3.monitor",
         "make_ale_vec_env": "sb3_ale_vec.sb3.env_util"}


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        try:
            module = importlib.import_module(_LAZY[name])
        except ModuleNotFoundError as error:
            if error.name != "stable_baselines3":
                raise
            raise ImportError(f"sb3_ale_vec.{name} needs Stable-Baselines3: pip install \"sb3-ale-vec[sb3]\" "
                              "(with the torch build you want installed first)") from error
        value = getattr(module, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'sb3_ale_vec' has no attribute {name!r}")


__all__ = ["AleNativeVecEnv", "AleVectorEnv", "AtariVectorEnv", "VectorAtariEnv", "AleVecMonitor", "EngineBusy", "EngineError",
           "make_ale_vec_env", "__version__"]
