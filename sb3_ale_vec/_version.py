"""The one place the version is written: the build reads it (pyproject.toml's dynamic version)."""

__version__ = "0.2.0"
