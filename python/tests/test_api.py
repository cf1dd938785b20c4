"""The API: construction, stepping, state arrays (shapes, dtypes), energy, contacts,
outputs, adapters."""

import csv

import numpy as np
import pytest

import varidem
from conftest import CONTAINER_SHORT, SCENES


def test_from_toml_and_properties():
    sim = varidem.Simulation.from_toml(str(SCENES / "three-spheres.toml"), backend="cpu", precision=None, adapter=None)
    assert sim.backend == "cpu"
    assert sim.steps_done == 0 and sim.time == 0.0
    assert sim.dt == 1e-4
    assert sim.total_steps == 20000
    sim.step()
    assert sim.steps_done == 1
    sim.step(n=9)
    assert sim.steps_done == 10
    assert sim.time == pytest.approx(10 * 1e-4)
    assert isinstance(sim.time, float) and isinstance(sim.steps_done, int)
    assert "3 particles" in repr(sim)


def test_state_arrays_shapes_and_dtypes():
    sim = varidem.Simulation.from_str(CONTAINER_SHORT, backend="cpu")
    sim.step(50)
    n = sim.n
    assert n == 230
    for name in ["positions", "velocities", "rotations", "angular_velocities", "forces", "moments"]:
        a = getattr(sim, name)
        assert isinstance(a, np.ndarray), name
        assert a.shape == (n, 3), name
        assert a.dtype == np.float64, name
        assert np.all(np.isfinite(a)), name
    for name, dtype in [("radii", np.float64), ("masses", np.float64), ("ids", np.int64), ("active", np.bool_)]:
        a = getattr(sim, name)
        assert a.shape == (n,), name
        assert a.dtype == dtype, name
    assert np.all(sim.radii == 0.1)
    assert np.allclose(sim.masses, 2500.0 * 4.0 / 3.0 * np.pi * 0.1**3)
    assert list(sim.ids) == list(range(n))
    assert sim.active.all()
    # The grains fall: gravity is the force on a free grain (plus drag).
    assert np.all(sim.velocities[:, 1] < 0.0)
    assert np.all(sim.positions[:, 2] == 0.0)


def test_state_arrays_are_copies():
    sim = varidem.Simulation.from_str(CONTAINER_SHORT, backend="cpu")
    x = sim.positions
    x[:] = 0.0
    assert not np.all(sim.positions == 0.0)
    sim.step(5)
    assert not np.array_equal(sim.positions, x)


def test_energy_matches_the_energy_csv_columns(tmp_path):
    sim = varidem.Simulation.from_str(CONTAINER_SHORT, backend="cpu")
    sim.write_outputs(tmp_path, vtk=False)
    sim.step(100)
    e = sim.energy()
    with open(tmp_path / "energy.csv") as f:
        rows = list(csv.reader(f))
    header, last = rows[0], rows[-1]
    assert list(e.keys()) == header
    assert e["step"] == 100 and int(last[0]) == 100
    for name, value in zip(header, last):
        assert e[name] == float(value), name
    assert e["e_kin"] > 0.0


def test_contacts_of_a_resting_pair():
    text = """
[simulation]
dt = 1e-5
steps = 100
output_every = 100
gravity = [0.0, -9.81, 0.0]
[contact]
law = "hertz"
[[material]]
name = "m"
young = 1e8
poisson = 0.25
density = 2500.0
restitution = 0.5
friction_static = 0.5
friction_dynamic = 0.5
[[particle]]
position = [0.0, 0.0, 0.0]
radius = 0.01
[[particle]]
position = [0.0199, 0.0, 0.0]
velocity = [-0.01, 0.0, 0.0]
radius = 0.01
[[particle]]
position = [0.5, 0.0, 0.0]
radius = 0.01
"""
    sim = varidem.Simulation.from_str(text, backend="cpu")
    sim.step(3)
    c = sim.contacts()
    assert set(c) == {"i", "j", "normal", "overlap", "normal_force", "tangential_force"}
    assert list(c["i"]) == [0] and list(c["j"]) == [1]
    assert c["i"].dtype == np.int64
    assert c["normal"].shape == (1, 3) and c["normal_force"].shape == (1, 3)
    assert c["tangential_force"].shape == (1, 3)
    assert c["overlap"][0] > 0.0
    # Particle 0 is pushed away from 1 (−x), along the normal.
    assert c["normal_force"][0, 0] < 0.0
    assert np.allclose(c["normal"][0], [1.0, 0.0, 0.0])
    # Particle 2 touches nothing; the pair's forces are the particles' net contact forces
    # up to gravity and the step's damping.
    f = sim.forces
    assert f[0, 0] < 0.0 < f[1, 0]


def test_contacts_without_the_hertz_law_raise():
    text = (SCENES / "torus-free.toml").read_text()
    sim = varidem.Simulation.from_str(text, backend="cpu")
    if "hertz" in text:
        pytest.skip("torus-free has the Hertz law")
    with pytest.raises(varidem.VaridemError, match="no granular"):
        sim.contacts()


def test_run_until_and_to_the_end():
    sim = varidem.Simulation.from_str(CONTAINER_SHORT, backend="cpu")
    sim.run(until=0.0125)
    assert sim.steps_done == 125
    sim.run()
    assert sim.steps_done == 1000
    with pytest.raises(ValueError):
        sim.run(until=-1.0)


def test_write_outputs_writes_the_cli_files(tmp_path):
    sim = varidem.Simulation.from_str(CONTAINER_SHORT, backend="cpu")
    sim.write_outputs(tmp_path)
    sim.run(until=0.02)
    for name in ["run.toml", "energy.csv", "final.csv", "walls.csv", "particles.pvd"]:
        assert (tmp_path / name).is_file(), name
    frames = sorted(p.name for p in (tmp_path / "vtk").iterdir())
    assert frames == ["particles_00000000.vtp", "particles_00000100.vtp", "particles_00000200.vtp"]
    with open(tmp_path / "final.csv") as f:
        rows = list(csv.reader(f))
    assert len(rows) == 231
    assert float(rows[1][1]) == sim.positions[0, 0]


def test_adapters_lists_dicts():
    found = varidem.adapters()
    assert isinstance(found, list)
    for a in found:
        for key in ["name", "backend", "device_type", "driver", "f64", "meets_minimum", "shortfalls",
                    "max_storage_binding", "max_storage_buffers_per_stage"]:
            assert key in a, key
        assert isinstance(a["name"], str) and isinstance(a["f64"], bool)
