"""Shared fixtures: the repository, small scenes, and the `varidem` CLI binary that the
bitwise comparisons run (built with cargo unless $VARIDEM_CLI names it)."""

import os
import pathlib
import subprocess

import pytest

import varidem

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCENES = ROOT / "scenes"

# The container scene of Campello §5.3 (230 grains falling onto three walls), cut to
# 1000 steps with an energy row every 100, under 30 g so that the lowest grains land on
# the inclined face and on each other within these steps (wall and grain contacts).
CONTAINER_SHORT = (
    (SCENES / "container.toml")
    .read_text()
    .replace("t_end = 5.0", "steps = 1000")
    .replace("output_every = 500", "output_every = 100")
    .replace("gravity = [0.0, -9.81, 0.0]", "gravity = [0.0, -300.0, 0.0]")
)


def gpu_required():
    """Whether a missing GPU (or f64 on it) is a failure, as for the Rust tests."""
    return os.environ.get("VARIDEM_REQUIRE_GPU") == "1" or os.environ.get("VARIDEM_REQUIRE_F64") == "1"


@pytest.fixture(scope="session")
def cli():
    """Path of the `varidem` command-line binary (release)."""
    given = os.environ.get("VARIDEM_CLI")
    if given:
        return pathlib.Path(given)
    subprocess.run(
        ["cargo", "build", "--release", "--quiet", "--bin", "varidem"],
        cwd=ROOT,
        check=True,
    )
    target = pathlib.Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
    if not target.is_absolute():
        target = ROOT / target
    return target / "release" / "varidem"


def run_cli(cli, *args, check=True):
    """Runs the CLI; returns the completed process."""
    env = dict(os.environ)
    env.setdefault("XDG_RUNTIME_DIR", "/tmp")
    p = subprocess.run([str(cli), *map(str, args)], capture_output=True, text=True, env=env)
    if check and p.returncode != 0:
        raise AssertionError(f"varidem {' '.join(map(str, args))} failed:\n{p.stderr}")
    return p


@pytest.fixture
def container_scene(tmp_path):
    """The short container scene as a file."""
    path = tmp_path / "container-short.toml"
    path.write_text(CONTAINER_SHORT)
    return path


@pytest.fixture(scope="session")
def f64_adapter():
    """Whether some GPU adapter has f64 kernels and meets varidem's minimum; skips
    (or fails under VARIDEM_REQUIRE_GPU=1) when none has."""
    found = [a for a in varidem.adapters() if a["f64"] and a["meets_minimum"]]
    if not found:
        message = "no GPU adapter with f64 (SHADER_F64): GPU f64 parity not checked"
        if gpu_required():
            pytest.fail(message + " (VARIDEM_REQUIRE_GPU=1)")
        pytest.skip(message)
    return found[0]["name"]
