"""pytest plugin (``-p ale_py_xla_dropin``): ale-py's own XLA suite runs unchanged against the drop-in.

The suite does ``from ale_py import AtariVectorEnv``; loaded before collection, this makes that name
sb3_ale_vec's class."""

import ale_py

import sb3_ale_vec

ale_py.AtariVectorEnv = sb3_ale_vec.AtariVectorEnv
