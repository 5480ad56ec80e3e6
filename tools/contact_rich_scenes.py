#!/usr/bin/python3
"""Write the contact-rich scenes docs/solvers.md ("The budget") measures the default solver on:
scenes of many bodies in contact that bench/scale_scenes.c does not build, each a YAML file for
`moreau run`. Δt = 1 ms, μ = 0.5, no margin; boxes are given by their full sizes.

  wall      a running-bond wall: 6 rows of 20 x 10 x 10 cm bricks (1 kg) laid end to end, 8 and
            7 a row, every other row shifted half a brick (its ends overhang);
  stair8    a stair of 8 rows of the same bricks (8, 7, ..., 1), 1 mm apart within a row, each
            brick on the halves of two below;
  jenga     12 layers of 3 bricks of 30 x 10 x 6 cm (0.5 kg), every other layer turned 90°;
  ballpit   216 spheres (r 5 cm, 1 kg) in layers of 6 x 6, jittered by up to 5 mm, dropped into
            a bin of 66 cm;
  capsules  120 capsules (r 4 cm, 12 cm between the caps' centres, 1 kg) tilted at random,
            dropped in 8 layers into a bin of 80 cm;
  dominoes  30 dominoes (1 x 5 x 20 cm, 0.1 kg) 6 cm apart, the first tipped by 0.2 rad.

The random jitter and tilts come from Python's random.seed(1), so the files are the same on
every run.

Usage: tools/contact_rich_scenes.py DIR   (writes DIR/NAME.yaml for each scene)
"""
import itertools
import math
import os
import random
import sys

HEAD = """timestep: 0.001
duration: 2.0
solver: {max_iter: 10000, eps_abs: 1.0e-6, warm_start: true}
contact: {margin: 0.0}
bodies:
  - name: ground
    fixed: true
    geoms:
      - {type: halfspace, normal: [0, 0, 1], friction: 0.5}
"""


def vec(v):
    return "[" + ", ".join("%.6f" % x for x in v) + "]"


def body(name, pos, geom, mass=1.0, quat=None, fixed=False):
    s = "  - name: %s\n" % name
    s += "    fixed: true\n" if fixed else "    mass: %r\n" % mass
    s += "    position: %s\n" % vec(pos)
    if quat:
        s += "    orientation: %s\n" % vec(quat)
    return s + "    geoms:\n      - %s\n" % geom


def box(name, pos, size, mass=1.0, quat=None, fixed=False):
    geom = "{type: box, size: [%g, %g, %g], friction: 0.5}" % size
    return body(name, pos, geom, mass, quat, fixed)


def bin_walls(half, height=0.4, t=0.05):
    walls = [(half + t / 2, 0, t, 2 * half + 2 * t), (-half - t / 2, 0, t, 2 * half + 2 * t),
             (0, half + t / 2, 2 * half, t), (0, -half - t / 2, 2 * half, t)]
    return "".join(box("wall%d" % k, (x, y, height / 2), (sx, sy, height), fixed=True)
                   for k, (x, y, sx, sy) in enumerate(walls))


L, W, H = 0.2, 0.1, 0.1  # a brick


def wall():
    s = ""
    for r in range(6):
        x0 = -0.8 + (0 if r % 2 == 0 else L / 2)
        for i in range(8 if r % 2 == 0 else 7):
            s += box("b%d_%d" % (r, i), (x0 + L / 2 + i * L, 0, H / 2 + r * H), (L, W, H))
    return s


def stair8(rows=8, gap=0.001):
    s = ""
    for r in range(rows):
        n = rows - r
        x0 = -n * (L + gap) / 2
        for i in range(n):
            s += box("b%d_%d" % (r, i), (x0 + L / 2 + i * (L + gap), 0, H / 2 + r * H), (L, W, H))
    return s


def jenga():
    s = ""
    for layer in range(12):
        for i in range(3):
            off, z = (i - 1) * 0.1, 0.03 + layer * 0.06
            if layer % 2 == 0:
                s += box("j%d_%d" % (layer, i), (off, 0, z), (0.1, 0.3, 0.06), mass=0.5)
            else:
                s += box("j%d_%d" % (layer, i), (0, off, z), (0.3, 0.1, 0.06), mass=0.5)
    return s


def grid(layers, nx, ny):
    """(k, (layer, i, j)) over the bodies of a drop, layer by layer"""
    return enumerate(itertools.product(range(layers), range(nx), range(ny)))


def ballpit(rnd):
    s = bin_walls(0.33)
    for k, (layer, i, j) in grid(6, 6, 6):
        x = -0.25 + i * 0.1 + rnd.uniform(-0.005, 0.005)
        y = -0.25 + j * 0.1 + rnd.uniform(-0.005, 0.005)
        s += body("s%d" % k, (x, y, 0.05 + layer * 0.105),
                  "{type: sphere, radius: 0.05, friction: 0.5}")
    return s


def capsules(rnd):
    s = bin_walls(0.4)
    for k, (layer, i, j) in grid(8, 5, 3):
        a, b = rnd.uniform(0, math.pi), rnd.uniform(0.3, 1.2)
        q = (math.cos(b / 2), math.sin(b / 2) * math.cos(a), math.sin(b / 2) * math.sin(a), 0)
        s += body("c%d" % k, (-0.3 + i * 0.15, -0.2 + j * 0.2, 0.1 + layer * 0.16),
                  "{type: capsule, radius: 0.04, length: 0.12, friction: 0.5}", quat=q)
    return s


def dominoes():
    s = ""
    for i in range(30):
        q = (math.cos(0.1), 0, math.sin(0.1), 0) if i == 0 else None
        s += box("d%d" % i, (i * 0.06, 0, 0.1), (0.01, 0.05, 0.2), mass=0.1, quat=q)
    return s


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: tools/contact_rich_scenes.py DIR")
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    rnd = random.Random(1)
    scenes = [("wall", wall()), ("stair8", stair8()), ("jenga", jenga()),
              ("ballpit", ballpit(rnd)), ("capsules", capsules(rnd)), ("dominoes", dominoes())]
    for name, text in scenes:
        with open(os.path.join(out, name + ".yaml"), "w") as f:
            f.write(HEAD + text)


if __name__ == "__main__":
    main()
