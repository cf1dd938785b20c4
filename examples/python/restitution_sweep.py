"""Parameter sweep: the restitution a Hertz collision gives, for several `restitution`
values of the material.

Two equal glass spheres meet head-on (no gravity); the coefficient of restitution is
measured as the ratio of the relative normal speeds after and before the collision,
and printed as a table against the value set in the scene.

    python examples/python/restitution_sweep.py [--values 0.1,0.3,0.5,0.7,0.9] [--backend cpu]
"""

import argparse

import numpy as np

import varidem

SCENE = """
[simulation]
dt = 5e-6
steps = 100000
output_every = 1000

[contact]
law = "hertz"

[[material]]
name = "glass"
young = 1e8
poisson = 0.25
density = 2500.0
restitution = {e}
friction_static = 0.3
friction_dynamic = 0.3

[[particle]]
position = [-0.0105, 0.0, 0.0]
velocity = [1.0, 0.0, 0.0]
radius = 0.01
material = "glass"

[[particle]]
position = [0.0105, 0.0, 0.0]
velocity = [-1.0, 0.0, 0.0]
radius = 0.01
material = "glass"
"""


def measure(e, backend):
    """Runs one collision; returns (measured restitution, steps in contact)."""
    sim = varidem.Simulation.from_str(SCENE.format(e=e), backend=backend)
    v = sim.velocities
    approach = v[0, 0] - v[1, 0]
    touching = 0
    for _ in range(200):
        sim.step(10)
        x = sim.positions
        gap = x[1, 0] - x[0, 0] - sim.radii.sum()
        if gap < 0.0:
            touching += 10
        elif touching > 0:
            break
    v = sim.velocities
    separation = v[1, 0] - v[0, 0]
    return separation / approach, touching


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--values", default="0.1,0.3,0.5,0.7,0.9", help="restitution values, comma-separated")
    parser.add_argument("--backend", default="cpu")
    args = parser.parse_args()
    values = [float(x) for x in args.values.split(",")]
    print(f"{'e (scene)':>10} {'e (measured)':>13} {'rel. error':>11} {'contact steps':>14}")
    for e in values:
        measured, steps = measure(e, args.backend)
        print(f"{e:>10.3f} {measured:>13.4f} {(measured - e) / e:>11.2%} {steps:>14d}")


if __name__ == "__main__":
    main()
