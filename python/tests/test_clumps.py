"""Scenes with clumps (issue 49, item 6): `n`, every state array, `radii`, `masses`,
`ids`, `active` and the setters agree on one row set, one row per body as in
`final.csv` (the particles, then the clumps in scene order); `spheres()` lists every
sphere with its body's row; setting the arrays just read changes nothing, to the bit."""

import csv

import numpy as np
import pytest

import varidem
from conftest import CONTAINER_SHORT, gpu_required

# Two free spheres and four clumps (two [[clump]]s, one turned and spinning, and a
# cloud of two) falling onto a floor at 1 m/s: the lowest spheres touch it within
# 50 steps, and the dimer's large sphere touches the free sphere beside it.
HEAD = """
[simulation]
dt = 4e-6
steps = 400
output_every = 100
gravity = [0.0, 0.0, -9.81]

[contact]
law = "hertz"
skin = 2e-4
max_contacts = 24

[[material]]
name = "glass"
young = 1e7
poisson = 0.3
density = 2500.0
restitution = 0.3
friction_static = 0.4

[[clump_type]]
name = "dimer"
spheres = [ { position = [-0.5e-3, 0.0, 0.0], radius = 1.0e-3 },
            { position = [ 0.6e-3, 0.0, 0.0], radius = 0.8e-3 } ]
material = "glass"

[[clump_type]]
name = "trimer"
spheres = [ { position = [0.0, 0.0, 0.0], radius = 0.9e-3 },
            { position = [1.1e-3, 0.0, 0.0], radius = 0.7e-3 },
            { position = [0.0, 1.0e-3, 0.3e-3], radius = 0.6e-3 } ]
material = "glass"

[[wall]]
point = [0.0, 0.0, 0.0]
normal = [0.0, 0.0, 1.0]
material = "glass"
"""

BODIES = """
[[particle]]
position = [0.0026, 0.0, 0.0011]
velocity = [-0.5, 0.0, -1.0]
radius = 1.0e-3
material = "glass"

[[particle]]
position = [-0.006, 0.0, 0.0009]
velocity = [0.0, 0.0, -1.0]
radius = 0.8e-3
material = "glass"

[[clump]]
type = "dimer"
position = [0.0, 0.0, 0.0012]
velocity = [0.0, 0.0, -1.0]
angular_velocity = [0.0, 0.0, 5.0]

[[clump]]
type = "trimer"
position = [0.0, 0.005, 0.0014]
rotation = [0.1, -0.2, 0.3]
velocity = [0.0, 0.0, -1.0]
angular_velocity = [3.0, -1.0, 2.0]

[[cloud]]
min = [-0.01, -0.01, 0.006]
max = [0.01, 0.01, 0.012]
count = 2
clump_type = "dimer"
seed = 1
"""

CLUMPS = HEAD + BODIES

# The same bodies with a sphere inserter and a clump inserter whose first events come
# at step 100: until then 3 reserved spheres and 2 reserved clumps are rows that do
# not take part.
INSERTERS = CLUMPS + """
[[inserter]]
box = { min = [-0.008, -0.008, 0.015], max = [0.008, 0.008, 0.02] }
count = 3
interval = 1e-3
start = 4e-4
stop = 4e-4
radius = 0.5e-3
material = "glass"
seed = 3

[[inserter]]
box = { min = [-0.008, -0.008, 0.022], max = [0.008, 0.008, 0.03] }
count = 2
interval = 1e-3
start = 4e-4
stop = 4e-4
clump_type = "trimer"
seed = 4
"""

ARRAYS = ["positions", "velocities", "rotations", "angular_velocities", "forces", "moments"]
ROWS = ["radii", "masses", "ids", "active"]


def state(sim):
    """Every row array of `sim`, as exact bits."""
    out = {}
    for name in ARRAYS + ROWS:
        a = getattr(sim, name)
        out[name] = a.view(np.uint64) if a.dtype == np.float64 else a
    return out


def assert_same_state(a, b):
    for name in a:
        assert np.array_equal(a[name], b[name]), name


def test_one_row_per_body():
    sim = varidem.Simulation.from_str(CLUMPS, backend="cpu")
    assert (sim.n, sim.n_clumps) == (6, 4)
    assert "2 particles and 4 clumps" in repr(sim)
    sim.step(60)
    n = sim.n
    for name in ARRAYS:
        a = getattr(sim, name)
        assert a.shape == (n, 3) and a.dtype == np.float64, name
        assert np.all(np.isfinite(a)), name
    for name, dtype in [("radii", np.float64), ("masses", np.float64), ("ids", np.int64), ("active", np.bool_)]:
        a = getattr(sim, name)
        assert a.shape == (n,) and a.dtype == dtype, name
    assert list(sim.ids) == list(range(n))
    assert sim.active.all()
    assert list(sim.radii[:2]) == [1.0e-3, 0.8e-3]
    assert np.allclose(sim.masses[:2], 2500.0 * 4.0 / 3.0 * np.pi * np.array([1.0e-3, 0.8e-3]) ** 3)
    # The dimers have one mass, the trimer another; the overlapping spheres count once.
    m = sim.masses
    assert m[2] == m[4] == m[5] and m[3] != m[2]
    dimer_spheres = 2500.0 * 4.0 / 3.0 * np.pi * (1.0e-3**3 + 0.8e-3**3)
    assert 0.5 * dimer_spheres < m[2] < dimer_spheres

    # The engine's energies and momenta are those of the rows: masses, velocities and
    # positions agree with what it integrates.
    e = sim.energy()
    x, v = sim.positions, sim.velocities
    assert e["e_kin"] == pytest.approx(0.5 * np.sum(m * np.sum(v * v, axis=1)), rel=1e-12)
    p = np.sum(m[:, None] * v, axis=0)
    assert [e["px"], e["py"], e["pz"]] == pytest.approx(list(p), rel=1e-12, abs=1e-18)
    assert e["e_field"] == pytest.approx(np.sum(m * 9.81 * x[:, 2]), rel=1e-12)


def test_spheres_belong_to_their_rows():
    sim = varidem.Simulation.from_str(CLUMPS, backend="cpu")
    sim.step(60)
    s = sim.spheres()
    assert set(s) == {"positions", "velocities", "rotations", "angular_velocities", "radii",
                      "forces", "moments", "body", "active"}
    count = 2 + 2 + 3 + 2 + 2
    for name in ["positions", "velocities", "rotations", "angular_velocities", "forces", "moments"]:
        assert s[name].shape == (count, 3), name
    assert s["body"].dtype == np.int64 and s["active"].all()
    assert list(s["body"]) == [0, 1, 2, 2, 3, 3, 3, 4, 4, 5, 5]
    x, v, w, a, r = sim.positions, sim.velocities, sim.angular_velocities, sim.rotations, sim.radii
    # A particle is its own sphere.
    for name, rows in [("positions", x), ("velocities", v), ("rotations", a), ("angular_velocities", w)]:
        assert np.array_equal(s[name][:2], rows[:2]), name
    assert np.array_equal(s["radii"][:2], r[:2])
    assert np.array_equal(s["forces"][:2], sim.forces[:2])
    for b in range(2, 6):
        mine = s["body"] == b
        lever = s["positions"][mine] - x[b]
        # The radius of a clump's row is its bounding ball's: every sphere inside, one
        # touching it.
        reach = np.linalg.norm(lever, axis=1) + s["radii"][mine]
        assert np.all(reach <= r[b] * (1 + 1e-12))
        assert reach.max() == pytest.approx(r[b], rel=1e-12)
        # The spheres move and turn with their body.
        assert np.allclose(s["velocities"][mine], v[b] + np.cross(w[b], lever), rtol=1e-12, atol=1e-15)
        assert np.array_equal(s["angular_velocities"][mine], np.tile(w[b], (mine.sum(), 1)))
        assert np.array_equal(s["rotations"][mine], np.tile(a[b], (mine.sum(), 1)))
        # The body's force is the sum of its spheres' and the field's.
        f = s["forces"][mine].sum(axis=0) + np.array([0.0, 0.0, -9.81]) * sim.masses[b]
        assert np.allclose(sim.forces[b], f, rtol=1e-9, atol=1e-12 * np.abs(f).max())
    # Clump spheres touch the floor and the free sphere: contacts number spheres.
    c = sim.contacts()
    assert len(c["i"]) > 0
    assert np.all(c["i"] < c["j"]) and np.all(c["j"] < count)
    assert np.all(s["body"][c["i"]] != s["body"][c["j"]])
    assert np.any(c["j"] >= 2), "a contact with a clump's sphere"


def test_final_csv_has_the_rows(tmp_path):
    sim = varidem.Simulation.from_str(CLUMPS, backend="cpu")
    sim.write_outputs(tmp_path, vtk=False)
    sim.step(30)
    with open(tmp_path / "final.csv") as f:
        rows = list(csv.reader(f))[1:]
    assert [int(r[0]) for r in rows] == list(sim.ids)
    table = np.array([[float(x) for x in r[1:]] for r in rows])
    assert np.array_equal(table[:, 0:3], sim.positions)
    assert np.array_equal(table[:, 3:6], sim.velocities)
    assert np.array_equal(table[:, 6:9], sim.rotations)
    assert np.array_equal(table[:, 9:12], sim.angular_velocities)


@pytest.mark.parametrize("text", [CLUMPS, CONTAINER_SHORT, INSERTERS], ids=["clumps", "spheres", "inserters"])
def test_setting_what_was_read_changes_nothing(text):
    """`set_velocities(sim.velocities)` and `set_angular_velocities(...)` leave the
    state bitwise unchanged, then and after more steps."""
    kept = varidem.Simulation.from_str(text, backend="cpu")
    touched = varidem.Simulation.from_str(text, backend="cpu")
    for sim in [kept, touched]:
        sim.step(57)
    before = state(touched)
    touched.set_velocities(touched.velocities)
    touched.set_angular_velocities(touched.angular_velocities)
    assert_same_state(state(touched), before)
    assert_same_state(state(kept), before)
    for sim in [kept, touched]:
        sim.step(100)
    assert_same_state(state(touched), state(kept))
    assert kept.energy() == touched.energy()


def test_reserved_rows_are_inactive_until_inserted(tmp_path):
    sim = varidem.Simulation.from_str(INSERTERS, backend="cpu")
    # 2 particles, 3 reserved spheres, 4 clumps, 2 reserved clumps.
    assert (sim.n, sim.n_clumps) == (11, 6)
    reserved = np.zeros(11, dtype=bool)
    reserved[[2, 3, 4, 9, 10]] = True
    assert np.array_equal(sim.active, ~reserved)
    assert len(sim.radii) == len(sim.masses) == len(sim.ids) == sim.positions.shape[0] == 11
    assert np.array_equal(sim.spheres()["active"], np.repeat(~reserved, [1, 1, 1, 1, 1, 2, 3, 2, 2, 3, 3]))
    # A reserved row can be set and read back like any other.
    v = sim.velocities
    v[9] = [0.0, 0.0, -0.25]
    sim.set_velocities(v)
    assert np.array_equal(sim.velocities, v)
    sim.write_outputs(tmp_path, vtk=False)
    with open(tmp_path / "final.csv") as f:
        ids = [int(r[0]) for r in list(csv.reader(f))[1:]]
    assert ids == list(np.flatnonzero(sim.active))
    sim.step(101)
    assert sim.active.all()
    with open(tmp_path / "final.csv") as f:
        ids = [int(r[0]) for r in list(csv.reader(f))[1:]]
    assert ids == list(range(11))


def test_setting_a_clump_motion_moves_its_body():
    sim = varidem.Simulation.from_str(CLUMPS, backend="cpu")
    sim.step(10)
    v, w = sim.velocities, sim.angular_velocities
    x0 = sim.positions
    v[4] = [0.3, -0.2, 0.1]
    w[5] = [10.0, 20.0, -30.0]
    sim.set_velocities(v)
    sim.set_angular_velocities(w)
    # A velocity reads back exactly; an Ω is kept as the body's angular momentum.
    assert np.array_equal(sim.velocities, v)
    assert np.allclose(sim.angular_velocities, w, rtol=1e-12, atol=0.0)
    s = sim.spheres()
    for b in [4, 5]:
        mine = s["body"] == b
        lever = s["positions"][mine] - x0[b]
        expected = sim.velocities[b] + np.cross(sim.angular_velocities[b], lever)
        assert np.allclose(s["velocities"][mine], expected, rtol=1e-12, atol=1e-15)
    sim.step(1)
    dx = sim.positions[4] - x0[4]
    assert np.allclose(dx, 4e-6 * np.array(v[4]), rtol=1e-3, atol=1e-12)


def test_bad_arrays_on_a_clump_scene_raise_value_error():
    sim = varidem.Simulation.from_str(CLUMPS, backend="cpu")
    good = sim.velocities
    # The particles' rows alone, or one per sphere, are not the row set.
    for array in [np.zeros((2, 3)), np.zeros((11, 3)), np.zeros((6, 2))]:
        with pytest.raises(ValueError, match=r"\(6, 3\)"):
            sim.set_velocities(array)
        with pytest.raises(ValueError, match=r"\(6, 3\)"):
            sim.set_angular_velocities(array)
    for bad in [np.nan, np.inf]:
        v = good.copy()
        v[3, 1] = bad
        with pytest.raises(ValueError, match="finite: row 3"):
            sim.set_velocities(v)
        with pytest.raises(ValueError, match="finite: row 3"):
            sim.set_angular_velocities(v)
    assert np.array_equal(sim.velocities, good), "a refused array changes nothing"


@pytest.mark.parametrize("precision", ["f64", "f32"])
def test_the_gpu_has_the_same_rows_and_round_trip(precision):
    found = [a for a in varidem.adapters() if a["meets_minimum"] and (a["f64"] or precision == "f32")]
    if not found:
        message = f"no GPU adapter for {precision}: clump rows on the GPU not checked"
        if gpu_required():
            pytest.fail(message + " (VARIDEM_REQUIRE_GPU=1)")
        pytest.skip(message)
    adapter = found[0]["name"]
    cpu = varidem.Simulation.from_str(CLUMPS, backend="cpu")
    kept = varidem.Simulation.from_str(CLUMPS, backend="gpu", precision=precision, adapter=adapter)
    touched = varidem.Simulation.from_str(CLUMPS, backend="gpu", precision=precision, adapter=adapter)
    assert touched.backend.startswith("gpu") and precision in touched.backend, touched.backend
    for sim in [cpu, kept, touched]:
        sim.step(57)
    for name in ROWS:
        assert np.array_equal(getattr(touched, name), getattr(cpu, name)), name
    tolerance = {"f64": 1e-9, "f32": 1e-3}[precision]
    for name in ["positions", "velocities"]:
        a, b = getattr(touched, name), getattr(cpu, name)
        assert np.allclose(a, b, rtol=tolerance, atol=tolerance * np.abs(b).max()), name
    assert list(touched.spheres()["body"]) == list(cpu.spheres()["body"])
    before = state(touched)
    touched.set_velocities(touched.velocities)
    touched.set_angular_velocities(touched.angular_velocities)
    assert_same_state(state(touched), before)
    for sim in [kept, touched]:
        sim.step(50)
    assert_same_state(state(touched), state(kept))
