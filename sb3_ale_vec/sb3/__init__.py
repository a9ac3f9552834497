"""The Stable-Baselines3 front-end: ``AleNativeVecEnv`` (a ``VecEnv``), ``make_ale_vec_env``,
``AleVecMonitor`` and the rl-zoo3 hook. The only part of the package that imports SB3 and torch."""
