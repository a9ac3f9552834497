"""The Gymnasium front-ends: one core (``core.py``) behind ``AleVectorEnv`` (``vector.py``) and the
ale-py drop-in ``AtariVectorEnv`` (``ale_vector.py``); true scores; JAX's ``xla()`` (``xla.py``)."""
