"""Ctrl-C during a long step(n), and resume from a checkpoint."""

import _thread
import signal
import threading
import time

import numpy as np
import pytest

import varidem
from conftest import CONTAINER_SHORT, SCENES, run_cli


def long_sim():
    # The container pour under its own gravity: CONTAINER_SHORT's 30 g drives grains
    # half a radius into each other within 2400 steps, a fault (contact.max_overlap).
    text = (SCENES / "container.toml").read_text().replace("t_end = 5.0", "steps = 100000000")
    return varidem.Simulation.from_str(text, backend="cpu")


@pytest.mark.parametrize("how", ["interrupt_main", "raise_signal"])
def test_keyboard_interrupt_stops_a_long_step(how):
    sim = long_sim()
    fire = _thread.interrupt_main if how == "interrupt_main" else (lambda: signal.raise_signal(signal.SIGINT))
    timer = threading.Timer(0.5, fire)
    started = time.monotonic()
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            sim.step(10**8)
    finally:
        timer.cancel()
    elapsed = time.monotonic() - started
    assert elapsed < 10.0, f"the interrupt took {elapsed:.1f} s to stop the stepping"
    done = sim.steps_done
    assert 0 < done < 10**8
    # The simulation is usable afterwards, at a completed step.
    sim.step(3)
    assert sim.steps_done == done + 3
    assert np.all(np.isfinite(sim.positions))


def test_other_threads_run_while_stepping():
    sim = long_sim()
    # One call must last long enough to tell a released lock from a held one: 230 discs
    # take a few milliseconds per thousand steps, so size the call from a timed one
    # (about a second), whatever the machine's speed.
    started = time.monotonic()
    sim.step(500)
    per_step = max((time.monotonic() - started) / 500, 1e-7)
    n = int(min(max(1.0 / per_step, 2000), 10**7))
    ticks = []
    stop = threading.Event()

    def tick():
        while not stop.is_set():
            ticks.append(time.monotonic())
            time.sleep(0.01)

    t = threading.Thread(target=tick)
    t.start()
    started = time.monotonic()
    try:
        sim.step(n)
    finally:
        elapsed = time.monotonic() - started
        stop.set()
        t.join()
    # A held lock lets the ticker in only before and after the call (a couple of ticks);
    # a released one ticks every 10 ms of it. A fifth of that allows a loaded machine's
    # oversleeping.
    expected = elapsed / 0.01
    assert len(ticks) > max(3, expected / 5), (
        f"the interpreter lock was held during the steps: {len(ticks)} ticks in {elapsed:.2f} s"
    )


def test_resume_continues_bit_for_bit(tmp_path):
    sim = varidem.Simulation.from_str(CONTAINER_SHORT, backend="cpu")
    sim.step(250)
    path = tmp_path / "c.vdc"
    sim.checkpoint(path)
    sim.run()
    resumed = varidem.Simulation.resume(path, backend=None)
    assert resumed.steps_done == 250
    assert resumed.backend == "cpu"
    resumed.run()
    for name in ["positions", "velocities", "rotations", "angular_velocities"]:
        assert np.array_equal(getattr(sim, name), getattr(resumed, name)), name


def test_resume_of_a_cli_checkpoint_writes_the_cli_final_csv(cli, container_scene, tmp_path):
    run_cli(cli, "run", container_scene, "--out", tmp_path / "cli", "--no-vtk", "--quiet",
            "--backend", "cpu", "--checkpoint-every", "300")
    resumed = varidem.Simulation.resume(tmp_path / "cli" / "checkpoints" / "checkpoint_00000300.vdc", backend="cpu")
    assert resumed.steps_done == 300
    resumed.write_outputs(tmp_path / "py", vtk=False)
    resumed.run()
    assert (tmp_path / "py" / "final.csv").read_bytes() == (tmp_path / "cli" / "final.csv").read_bytes()


def test_resume_never_mixes_two_runs_of_one_scene(tmp_path):
    # Issue 49: a Python run has its own identity, in run.toml and in its checkpoints,
    # so a resume tells its directory from another run's of the same scene.
    a = varidem.Simulation.from_str(CONTAINER_SHORT, backend="cpu")
    a.write_outputs(tmp_path / "a", vtk=False)
    a.step(200)
    a.checkpoint(tmp_path / "a.vdc")
    b = varidem.Simulation.from_str(CONTAINER_SHORT, backend="cpu")
    b.step(100)
    b.checkpoint(tmp_path / "b.vdc")
    before = {p.name: p.read_bytes() for p in (tmp_path / "a").iterdir()}
    other = varidem.Simulation.resume(tmp_path / "b.vdc")
    with pytest.raises(varidem.SceneError, match="another run"):
        other.write_outputs(tmp_path / "a", vtk=False)
    assert {p.name: p.read_bytes() for p in (tmp_path / "a").iterdir()} == before
    # The run's own checkpoint continues its own directory.
    own = varidem.Simulation.resume(tmp_path / "a.vdc")
    own.write_outputs(tmp_path / "a", vtk=False)
    own.run()


def test_a_python_checkpoint_keeps_the_runs_identity_and_no_vtk(cli, container_scene, tmp_path):
    # Issue 49: a CLI --no-vtk run resumed in Python and checkpointed there (no
    # write_outputs) still belongs to the CLI run: resumed in its directory, it goes on
    # there without writing VTK frames.
    out = tmp_path / "cli"
    run_cli(cli, "run", container_scene, "--out", out, "--no-vtk", "--quiet",
            "--backend", "cpu", "--checkpoint-every", "300")
    sim = varidem.Simulation.resume(out / "checkpoints" / "checkpoint_00000300.vdc", backend="cpu")
    sim.step(100)
    sim.checkpoint(tmp_path / "c.vdc")
    run_cli(cli, "resume", tmp_path / "c.vdc", "--out", out, "--quiet", "--backend", "cpu")
    assert not (out / "vtk").exists() and not (out / "particles.pvd").exists()
    assert (out / "final.csv").exists()
