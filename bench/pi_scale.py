"""A CPU factor from this machine to a Raspberry Pi 4, for CPU time measured here.

Method: the n-body benchmark of the Computer Language Benchmarks Game (the Sun and the
four outer planets, advanced in steps of 0.01, pure Python floats: the same kind of work
CPython does for the table, interpreter-bound and single-threaded) is timed here, and
compared with a published run of its Python program on a Raspberry Pi 4 Model B
(Cortex-A72 at 1.5 GHz, performance governor): 158.3 s for 5,000,000 steps
(C. Mehta, "Performance Analysis of Languages on Raspberry Pi",
chaitanyamehta.github.io). The work is linear in the steps, so fewer are run here and
scaled. The factor is that time divided by the time here.

Caveats, stated with the figure: the Pi run's Python version is not given (an older
CPython is slower than 3.11 on this loop, so the factor may overstate a Pi on 3.11), and
this implementation is written for this project from the benchmark's description, not
the Game's file.

Usage: python -m bench.pi_scale [--steps 500000] [--repeat 3] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import time
from pathlib import Path

from bench.machine import machine

PI4_SECONDS = 158.3
PI4_STEPS = 5_000_000
DAYS_PER_YEAR = 365.24
SOLAR_MASS = 4 * math.pi * math.pi

# x, y, z, vx, vy, vz (per day), mass: Jupiter, Saturn, Uranus, Neptune (the Sun is added).
PLANETS = (
    (
        4.84143144246472090e00,
        -1.16032004402742839e00,
        -1.03622044471123109e-01,
        1.66007664274403694e-03,
        7.69901118419740425e-03,
        -6.90460016972063023e-05,
        9.54791938424326609e-04,
    ),
    (
        8.34336671824457987e00,
        4.12479856412430479e00,
        -4.03523417114321381e-01,
        -2.76742510726862411e-03,
        4.99852801234917238e-03,
        2.30417297573763929e-05,
        2.85885980666130812e-04,
    ),
    (
        1.28943695621391310e01,
        -1.51111514016986312e01,
        -2.23307578892655734e-01,
        2.96460137564761618e-03,
        2.37847173959480950e-03,
        -2.96589568540237556e-05,
        4.36624404335156298e-05,
    ),
    (
        1.53796971148509165e01,
        -2.59193146099879641e01,
        1.79258772950371181e-01,
        2.68067772490389322e-03,
        1.62824170038242295e-03,
        -9.51592254519715870e-05,
        5.15138902046611451e-05,
    ),
)


def bodies() -> list[list[float]]:
    """[x, y, z, vx, vy, vz, mass] per body, the Sun first, its momentum offset."""
    out = [[0.0, 0.0, 0.0, 0.0, 0.0, 0.0, SOLAR_MASS]]
    for x, y, z, vx, vy, vz, m in PLANETS:
        days = DAYS_PER_YEAR
        out.append([x, y, z, vx * days, vy * days, vz * days, m * SOLAR_MASS])
    for i in range(3):
        out[0][3 + i] = -sum(b[3 + i] * b[6] for b in out[1:]) / SOLAR_MASS
    return out


def energy(system: list[list[float]]) -> float:
    """The system's total energy (the benchmark's check)."""
    e = 0.0
    for i, a in enumerate(system):
        e += 0.5 * a[6] * (a[3] ** 2 + a[4] ** 2 + a[5] ** 2)
        for b in system[i + 1 :]:
            e -= a[6] * b[6] / math.dist(a[:3], b[:3])
    return e


def advance(system: list[list[float]], steps: int, dt: float = 0.01) -> None:
    """Move the bodies `steps` times by `dt`."""
    pairs = [(a, b) for i, a in enumerate(system) for b in system[i + 1 :]]
    for _ in range(steps):
        for a, b in pairs:
            dx, dy, dz = a[0] - b[0], a[1] - b[1], a[2] - b[2]
            d2 = dx * dx + dy * dy + dz * dz
            mag = dt / (d2 * math.sqrt(d2))
            ma, mb = a[6] * mag, b[6] * mag
            a[3] -= dx * mb
            a[4] -= dy * mb
            a[5] -= dz * mb
            b[3] += dx * ma
            b[4] += dy * ma
            b[5] += dz * ma
        for body in system:
            body[0] += dt * body[3]
            body[1] += dt * body[4]
            body[2] += dt * body[5]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--steps", type=int, default=500_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    check = bodies()
    advance(check, 1000)  # the benchmark's published check: the same computation
    assert f"{energy(bodies()):.9f}" == "-0.169075164", energy(bodies())
    assert f"{energy(check):.9f}" == "-0.169087605", energy(check)
    times = []
    for _ in range(args.repeat):
        system = bodies()
        start = time.process_time()
        advance(system, args.steps)
        times.append(time.process_time() - start)
    here = statistics.median(times) * PI4_STEPS / args.steps
    result = {
        "machine": machine(),
        "steps": args.steps,
        "cpu_s": [round(t, 3) for t in times],
        "here_s_for_5M_steps": round(here, 2),
        "pi4_s_for_5M_steps": PI4_SECONDS,
        "pi4_factor": round(PI4_SECONDS / here, 2),
    }
    print(json.dumps(result, indent=2))
    if args.json is not None:
        args.json.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
