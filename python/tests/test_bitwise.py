"""Same results as the CLI: final.csv (and energy.csv, walls.csv) written from Python
equal, byte for byte, those `varidem run` writes for the same scene and backend, for
one run, for many step() calls of odd sizes, and with set_velocities of the arrays
just read between them."""

import random

import numpy as np

import varidem
from conftest import CONTAINER_SHORT, run_cli

COMPARED = ["final.csv", "energy.csv", "walls.csv"]


def cli_run(cli, scene, out, *device):
    run_cli(cli, "run", scene, "--out", out, "--no-vtk", "--quiet", *device)
    return {name: (out / name).read_bytes() for name in COMPARED}


def python_files(out):
    return {name: (out / name).read_bytes() for name in COMPARED}


def assert_same(ours, theirs):
    for name in COMPARED:
        assert ours[name] == theirs[name], f"{name} differs from the CLI's"


def test_one_run_equals_the_cli(cli, container_scene, tmp_path):
    expected = cli_run(cli, container_scene, tmp_path / "cli", "--backend", "cpu")
    sim = varidem.Simulation.from_toml(container_scene, backend="cpu")
    sim.write_outputs(tmp_path / "py", vtk=False)
    sim.run()
    assert sim.steps_done == 1000
    assert_same(python_files(tmp_path / "py"), expected)
    # The grains did collide: the comparison covers contacts.
    assert len(sim.contacts()["i"]) > 0


def test_split_stepping_and_set_velocities_equal_the_cli(cli, container_scene, tmp_path):
    expected = cli_run(cli, container_scene, tmp_path / "cli", "--backend", "cpu")
    sim = varidem.Simulation.from_toml(container_scene, backend="cpu")
    sim.write_outputs(tmp_path / "py", vtk=False)
    rng = random.Random(7)
    calls = 0
    while sim.steps_done < 1000:
        sim.step(min(rng.randint(1, 37), 1000 - sim.steps_done))
        calls += 1
        if calls % 5 == 0:
            sim.set_velocities(sim.velocities)
            sim.set_angular_velocities(sim.angular_velocities)
    assert calls > 20
    assert_same(python_files(tmp_path / "py"), expected)


def test_split_stepping_without_outputs_gives_the_same_state(container_scene):
    one = varidem.Simulation.from_toml(container_scene, backend="cpu")
    one.run()
    split = varidem.Simulation.from_toml(container_scene, backend="cpu")
    for n in [1, 2, 3, 94, 100, 200, 199, 1, 400]:
        split.step(n)
    assert split.steps_done == 1000
    for name in ["positions", "velocities", "rotations", "angular_velocities"]:
        assert np.array_equal(getattr(one, name), getattr(split, name)), name


def test_setting_other_velocities_changes_the_run(container_scene):
    a = varidem.Simulation.from_toml(container_scene, backend="cpu")
    b = varidem.Simulation.from_toml(container_scene, backend="cpu")
    a.step(100)
    b.step(100)
    v = b.velocities
    v[:, 0] += 0.5
    b.set_velocities(v)
    assert np.array_equal(b.velocities, v)
    a.step(100)
    b.step(100)
    assert not np.array_equal(a.positions, b.positions)
    assert np.all(b.positions[:, 0] > a.positions[:, 0] - 1e-12)


def test_gpu_f64_equals_the_cli(cli, container_scene, tmp_path, f64_adapter):
    device = ["--backend", "gpu", "--precision", "f64", "--adapter", f64_adapter]
    expected = cli_run(cli, container_scene, tmp_path / "cli", *device)
    sim = varidem.Simulation.from_toml(container_scene, backend="gpu", precision="f64", adapter=f64_adapter)
    assert sim.backend.startswith("gpu"), sim.backend
    assert "f64" in sim.backend
    sim.write_outputs(tmp_path / "py", vtk=False)
    # Split stepping, reading state in between, and one set_velocities of the array read.
    sim.step(1)
    sim.step(150)
    _ = sim.positions, sim.forces, sim.energy()
    sim.set_velocities(sim.velocities)
    sim.step(49)
    sim.run()
    assert sim.steps_done == 1000
    final = (tmp_path / "py" / "final.csv").read_bytes()
    assert final == expected["final.csv"], "final.csv differs from the CLI's (GPU f64)"
    assert (tmp_path / "py" / "energy.csv").read_bytes() == expected["energy.csv"]
