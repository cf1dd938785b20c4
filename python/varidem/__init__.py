"""varidem: a discrete element engine (CPU f64 reference and wgpu GPU backends).

Scenes, stepping and state as NumPy arrays::

    import varidem
    sim = varidem.Simulation.from_toml("scenes/container.toml", backend="cpu")
    sim.step(100)
    x = sim.positions          # (N, 3) float64 copy

See docs/python.md for the API, what reading state costs on a GPU, and how errors
map to exceptions.
"""

from ._varidem import (
    CheckpointError,
    FaultError,
    GpuError,
    SceneError,
    Simulation,
    VaridemError,
    __version__,
    adapters,
)

__all__ = [
    "Simulation",
    "adapters",
    "VaridemError",
    "SceneError",
    "GpuError",
    "FaultError",
    "CheckpointError",
    "__version__",
]
