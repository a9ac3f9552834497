"""Build helpers for setup.py (not installed): ALE's verified sources and the per-user build cache."""
