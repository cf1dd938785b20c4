"""Errors: VaridemError subclasses with the CLI's message; ValueError for bad arrays
and arguments."""

import numpy as np
import pytest

import varidem
from conftest import CONTAINER_SHORT, SCENES, run_cli

BAD_SCENE = """
[simulation]
dt = -1.0
steps = 10
[[particle]]
position = [0.0, 0.0, 0.0]
mass = 1.0
radius = 0.1
"""

# One sphere spinning so fast that the exact rotation update of map (23) has no
# solution at this time step: a named fault at step 1.
FAULT_SCENE = """
[simulation]
dt = 0.1
steps = 10
output_every = 10
integrator = "variational-exact"
[[particle]]
position = [0.0, 0.0, 0.0]
angular_velocity = [0.0, 0.0, 100.0]
mass = 1.0
radius = 0.1
"""


def cli_error(cli, *args):
    p = run_cli(cli, *args, check=False)
    assert p.returncode == 1
    line = [l for l in p.stderr.splitlines() if l.startswith("error: ")]
    assert line, p.stderr
    return line[-1][len("error: "):]


def test_hierarchy():
    for cls in [varidem.SceneError, varidem.GpuError, varidem.FaultError, varidem.CheckpointError]:
        assert issubclass(cls, varidem.VaridemError)
    assert issubclass(varidem.VaridemError, Exception)


def test_scene_error_carries_the_cli_message(cli, tmp_path):
    path = tmp_path / "bad.toml"
    path.write_text(BAD_SCENE)
    with pytest.raises(varidem.SceneError) as err:
        varidem.Simulation.from_toml(path, backend="cpu")
    assert str(err.value) == cli_error(cli, "check", path)
    assert str(err.value).startswith("scene: ")
    with pytest.raises(varidem.SceneError):
        varidem.Simulation.from_str("this is not toml [", backend="cpu")


def test_missing_file(cli, tmp_path):
    path = tmp_path / "missing.toml"
    with pytest.raises(varidem.VaridemError) as err:
        varidem.Simulation.from_toml(path)
    assert str(err.value) == cli_error(cli, "check", path)


def test_fault_error_carries_the_cli_message(cli, tmp_path):
    sim = varidem.Simulation.from_str(FAULT_SCENE, backend="cpu")
    with pytest.raises(varidem.FaultError) as err:
        sim.step(5)
    message = str(err.value)
    assert "step 1" in message and "reduce dt" in message
    assert sim.steps_done == 0, "the state is that of the last completed step"
    path = tmp_path / "fault.toml"
    path.write_text(FAULT_SCENE)
    # The CLI adds where it saved the last good state.
    assert cli_error(cli, "run", path, "--out", tmp_path / "out", "--backend", "cpu", "--quiet").startswith(message)


def test_bad_arrays_raise_value_error():
    sim = varidem.Simulation.from_str(CONTAINER_SHORT, backend="cpu")
    n = sim.n
    good = sim.velocities
    bad = [
        np.zeros((n, 2)),
        np.zeros((n + 1, 3)),
        np.zeros(3 * n),
        np.zeros((n, 3), dtype=np.float32),
        np.zeros((n, 3), dtype=np.int64),
        good.tolist(),
        "velocities",
    ]
    for array in bad:
        with pytest.raises(ValueError, match=rf"\({n}, 3\)"):
            sim.set_velocities(array)
        with pytest.raises(ValueError, match=rf"\({n}, 3\)"):
            sim.set_angular_velocities(array)
    assert np.array_equal(sim.velocities, good), "a refused array changes nothing"
    # A non-contiguous float64 view of the right shape is fine.
    wide = np.zeros((n, 6))
    wide[:, ::2] = good
    sim.set_velocities(wide[:, ::2])
    assert np.array_equal(sim.velocities, good)


def test_bad_arguments_raise_value_error():
    with pytest.raises(ValueError, match="backend"):
        varidem.Simulation.from_str(CONTAINER_SHORT, backend="tpu")
    with pytest.raises(ValueError, match="precision"):
        varidem.Simulation.from_str(CONTAINER_SHORT, backend="cpu", precision="f16")


def test_corrupt_checkpoint(tmp_path):
    path = tmp_path / "bad.vdc"
    path.write_bytes(b"not a checkpoint")
    with pytest.raises(varidem.CheckpointError):
        varidem.Simulation.resume(path)
