"""rl-zoo3's entry point, at the path users write: ``-conf sb3_ale_vec.zoo`` and, in saved
``config.yml`` files, ``sb3_ale_vec.zoo.AtariNative``. The code is ``sb3_ale_vec/sb3/zoo.py``."""

from sb3_ale_vec.sb3.zoo import PPO_CONFIG, AtariNative, hyperparams

__all__ = ["AtariNative", "PPO_CONFIG", "hyperparams"]
