"""A pour: glass beads fall from an inserter into a box (scenes/pour.toml); the
kinetic energy is sampled every so many steps and plotted with Matplotlib when it is
installed (else printed as a table).

    python examples/python/pour.py [--steps 20000] [--every 500] [--png pour_kinetic.png] [--backend auto]
"""

import argparse
import pathlib

import varidem

ROOT = pathlib.Path(__file__).resolve().parents[2]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scene", default=str(ROOT / "scenes" / "pour.toml"))
    parser.add_argument("--steps", type=int, default=20000, help="steps to run (the scene has 86667)")
    parser.add_argument("--every", type=int, default=500, help="steps between samples")
    parser.add_argument("--png", default="pour_kinetic.png", help="where to save the plot")
    parser.add_argument("--backend", default="auto")
    args = parser.parse_args()

    sim = varidem.Simulation.from_toml(args.scene, backend=args.backend)
    print(f"backend: {sim.backend}, {sim.n} particles (reserved by the inserter included), dt = {sim.dt} s")
    times, kinetic, active = [], [], []
    while True:
        e = sim.energy()  # one read-back per sample on a GPU: sample every few hundred steps
        times.append(sim.time)
        kinetic.append(e["e_kin"])
        active.append(int(sim.active.sum()))
        if sim.steps_done >= args.steps:
            break
        sim.step(min(args.every, args.steps - sim.steps_done))

    try:
        import matplotlib.pyplot as plt
    except ImportError:
        plt = None
    if plt is None:
        print("matplotlib is not installed: the kinetic energy as a table")
        print(f"{'t (s)':>10} {'kinetic (J)':>14} {'particles':>10}")
        for t, k, n in zip(times, kinetic, active):
            print(f"{t:>10.5f} {k:>14.6e} {n:>10d}")
        return
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.plot(times, kinetic)
    ax.set_xlabel("t (s)")
    ax.set_ylabel("kinetic energy (J)")
    ax.set_title("pour: kinetic energy")
    fig.tight_layout()
    fig.savefig(args.png, dpi=100)
    print(f"kinetic energy of {len(times)} samples plotted to {args.png}")


if __name__ == "__main__":
    main()
