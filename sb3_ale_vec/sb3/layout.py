"""The memory layout of observations behind SB3's VecEnv API: the one SB3's own pipeline hands out.

SB3's Atari pipeline stacks channels-last (``VecFrameStack`` over ``WarpFrame``'s ``(h, w, 1)``) and
``VecTransposeImage`` returns ``np.transpose`` views of that memory, so a ``CnnPolicy`` gets
``(n, stack, h, w)`` arrays with strides ``(h*w*stack, 1, w*stack, stack)``. torch keeps those strides
(``as_tensor``, ``float()``) and its CPU convolution takes another path for another layout, rounding
its sums differently: equal values in other memory train a different network. So the engine writes
what ``VecFrameStack`` writes and the front-ends hand out the same views.
"""

from __future__ import annotations

import numpy as np

from sb3_ale_vec.options import PRESETS, check_bool


def sb3_layout(preset: str, channels_last: bool) -> tuple[str, bool]:
    """The engine layout behind SB3's API, and whether the front-end hands out its channels-first view.

    ``"chw"`` presets are ``VecTransposeImage(VecFrameStack(...))``: channels-last memory, transposed.
    Other presets are a ``DummyVecEnv`` of a pipeline that stacks frames first: C-contiguous copies.
    """
    if check_bool("channels_last", channels_last):
        return "hwc", False  # VecFrameStack alone: C-contiguous (n, h, w, stack)
    layout = PRESETS[preset].sb3_layout
    return ("hwc", True) if layout == "chw" else (layout, False)


def channels_first(obs: np.ndarray) -> np.ndarray:
    """``VecTransposeImage.transpose_image``: a view of a batch ``(n, h, w, c)`` or of one ``(h, w, c)``."""
    return np.moveaxis(obs, -1, -3)
