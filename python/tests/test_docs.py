"""help() on every public class, function, method and property of the package says something,
and the objects a user prints (World, Sim, Batch, joints, bodies, frames, geometries, poses,
recorders, environments) print what they are. docs/python.md is the reference these summarise.

Run by `make test` with MOREAU_LIB set."""
import inspect
import os
import pydoc
import unittest

import moreau
import moreau.env

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))


def public_objects():
    """(qualified name, object) of every public class and function, and of every public
    method and property of the public classes"""
    out = []
    modules = [(moreau, moreau.__all__), (moreau.env, ["Box", "VecEnv", "SoloVelocity"])]
    for module, names in modules:
        for name in names:
            obj = getattr(module, name)
            if not (inspect.isclass(obj) or inspect.isfunction(obj)):
                continue  # constants
            out.append((f"{module.__name__}.{name}", obj))
            if inspect.isclass(obj):
                for attr, member in vars(obj).items():
                    if attr.startswith("_"):
                        continue
                    if inspect.isfunction(member) or isinstance(member, (property, classmethod,
                                                                         staticmethod)):
                        out.append((f"{module.__name__}.{name}.{attr}", member))
    return out


class TestHelp(unittest.TestCase):
    def test_every_public_object_is_documented(self):
        missing = []
        for name, obj in public_objects():
            doc = obj.__doc__ if not isinstance(obj, (classmethod, staticmethod)) else \
                obj.__func__.__doc__
            if not doc or not doc.strip():
                missing.append(name)
        self.assertEqual(missing, [])
        self.assertGreater(len(public_objects()), 100)
        text = pydoc.render_doc(moreau.World)
        self.assertIn("mass_matrix", text)
        self.assertIn("local_world_aligned", text)
        self.assertIn("docs/python.md", moreau.__doc__)

    def test_reprs(self):
        world = moreau.World(os.path.join(ROOT, "scenes", "solo_stand.yaml"))
        sim = moreau.Sim(world)
        batch = moreau.Batch(world, 2)
        rec = sim.record()
        sim.step(2)
        env = moreau.env.SoloVelocity(num_envs=1)
        cases = [(world, "<moreau.World '"), (world, "solo_stand.yaml'"),
                 (world, "nq 19, nv 18, 14 bodies, robots solo"),
                 (sim, "t 0.002 s, 2 steps"), (batch, "Batch of 2"),
                 (world.joint("solo/FL_KFE"), "'solo/FL_KFE': revolute, q[9:10], v[8:9]"),
                 (world.body("solo/base_link"), "'solo/base_link': mass 1.16115 kg"),
                 (world.frame("solo/FL_FOOT"), "'solo/FL_FOOT' on body 4"),
                 (world.geom("solo/FL_foot"), "'solo/FL_foot': sphere on body 4"),
                 (sim.joint("solo/FL_KFE"), "JointView 'solo/FL_KFE' (revolute): q [-1.6"),
                 (sim.body("solo/base_link"), "BodyView 'solo/base_link': position"),
                 (world.placement("solo/FL_FOOT", sim.q), "Pose(position="),
                 (rec, "2 rows, every 1 steps"), (env, "SoloVelocity: 1 environments")]
        for obj, text in cases:
            self.assertIn(text, repr(obj))


if __name__ == "__main__":
    unittest.main()
