"""Ray itself for RayAleVecEnv: importing it, starting or joining a cluster, and letting go of the
actors and placement group (from close(), or a finalizer when an env is never closed)."""

from __future__ import annotations

from typing import Any


def import_ray() -> Any:
    try:
        import ray
    except ImportError as error:
        raise ImportError('RayAleVecEnv needs Ray: pip install "sb3-ale-vec[ray]"') from error
    return ray


def join_ray(ray: Any, address: str | None) -> None:
    """Start or join Ray; an ``address`` other than the Ray this process already runs raises."""
    if not ray.is_initialized():
        ray.init(address=address, include_dashboard=False)
        return
    if address is None:
        return
    current = ray.get_runtime_context().gcs_address
    try:  # "auto" and "host:port" as ray.init() reads them
        from ray._private.services import canonicalize_bootstrap_address

        wanted = canonicalize_bootstrap_address(address)
    except Exception:
        wanted = address
    if wanted != current:
        raise ValueError(f"address={address!r} names {wanted or 'no running cluster'}, but Ray is already "
                         f"initialised in this process with {current}: pass address=None to use it, or "
                         "ray.shutdown() first")


def release(ray: Any, placement_group: Any, actors: list[Any]) -> None:
    """Kill the actors and free the placement group: once, from close() or when the env is collected."""
    if not ray.is_initialized():  # after ray.shutdown() they are gone with the job
        return
    for actor in actors:
        try:
            ray.kill(actor)
        except Exception:
            pass
    try:
        ray.util.remove_placement_group(placement_group)
    except Exception:
        pass
