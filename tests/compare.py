"""Deep equality for test results (no SB3 needed: the Gymnasium and ale-py tests run without torch)."""

from __future__ import annotations

import numpy as np


def assert_equal(a, b, where):
    """Equal values, types, dtypes, shapes and memory layouts (strides), through dicts and object arrays."""
    if isinstance(a, tuple):
        assert isinstance(b, tuple) and len(a) == len(b), where
        for k, (x, y) in enumerate(zip(a, b)):
            assert_equal(x, y, f"{where}[{k}]")
    elif isinstance(a, dict):
        assert isinstance(b, dict) and a.keys() == b.keys(), (where, sorted(a), sorted(b))
        for key in a:
            assert_equal(a[key], b[key], f"{where}/{key}")
    elif isinstance(a, np.ndarray) and a.dtype == object:
        assert isinstance(b, np.ndarray) and b.dtype == object and len(a) == len(b), where
        for x, y in zip(a, b):
            assert_equal(x, y, where)
    elif isinstance(a, np.ndarray):
        assert isinstance(b, np.ndarray) and (a.dtype, a.shape) == (b.dtype, b.shape), (where, a.dtype, b.dtype)
        assert np.array_equal(a, b), (where, int((a != b).sum()))
        assert a.strides == b.strides, (where, "strides", a.strides, b.strides)
    else:
        assert type(a) is type(b) and a == b, (where, a, b)

