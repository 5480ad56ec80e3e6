"""The package installed the documented ways, used from another directory:

- pip: `python3 -m venv --system-site-packages ENV` then `ENV/bin/pip install
  --no-build-isolation --no-index ./python` (Debian's numpy, setuptools and wheel; no PyPI),
  from a copy of the source tree whose build/, scenes/ and robots/ are links to this tree's (so
  that the test writes nothing into the tree it tests);
- make install PREFIX=TMP: the package beside the library, the scenes and robots in
  TMP/share/moreau.

Each run happens in an empty temporary directory, without MOREAU_LIB, MOREAU_BIN, MOREAU_DATA or
PYTHONPATH pointing into the tree: the package must find the library and the data itself. It
loads Solo-12 by name and steps it, and the result must equal this process's own run bit for bit
(the same library code, the same steps). The Python tutorial's code (docs/tutorial.md, section 4)
runs the same way."""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import textwrap
import unittest

import numpy as np

import moreau

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
PYTHON = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable
BUILD = os.path.dirname(os.path.abspath(moreau.library_path()))

# the child: loads Solo-12 through data_path, steps it, prints what it used and the state
CHILD = textwrap.dedent("""
    import moreau, numpy as np
    w = moreau.World(moreau.data_path("scenes/solo_stand.yaml"))
    s = moreau.Sim(w)
    s.joint("solo/FL_KFE").target = -1.4
    s.step(200)
    print("module", moreau.__file__)
    print("library", moreau.library_path())
    print("data", moreau.data_path("scenes/solo_stand.yaml"))
    print("q", " ".join("%.17g" % x for x in s.q))
""")


def clean_env():
    env = {k: v for k, v in os.environ.items()
           if k not in ("MOREAU_LIB", "MOREAU_BIN", "MOREAU_DATA", "PYTHONPATH")}
    return env


def run(cmd, cwd, env=None, timeout=600):
    r = subprocess.run(cmd, cwd=cwd, env=env or clean_env(), capture_output=True, text=True,
                       timeout=timeout)
    if r.returncode:
        raise AssertionError(f"{' '.join(cmd)}: status {r.returncode}\n{r.stdout}\n{r.stderr}")
    return r.stdout


def parse(out):
    lines = dict(line.split(" ", 1) for line in out.strip().splitlines())
    return lines, np.array([float(x) for x in lines["q"].split()])


def reference_q():
    w = moreau.World(os.path.join(ROOT, "scenes", "solo_stand.yaml"))
    s = moreau.Sim(w)
    s.joint("solo/FL_KFE").target = -1.4
    s.step(200)
    return s.q.copy()


def tutorial_code():
    """the Python blocks of docs/tutorial.md's section 4, one after the other"""
    with open(os.path.join(ROOT, "docs", "tutorial.md")) as f:
        text = f.read()
    section = text[text.index("## 4. The same in Python"):]
    return "".join(re.findall(r"```python\n(.*?)```", section, re.S))


class TestPackaging(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="moreau_py_")
        cls.elsewhere = os.path.join(cls.tmp, "elsewhere")
        os.mkdir(cls.elsewhere)
        cls.q = reference_q()

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def source_copy(self):
        """python/ copied, build/, scenes/, robots/ linked"""
        src = os.path.join(self.tmp, "src")
        os.makedirs(os.path.join(src, "python"))
        for f in ("pyproject.toml", "setup.py"):
            shutil.copy(os.path.join(ROOT, "python", f), os.path.join(src, "python", f))
        shutil.copytree(os.path.join(ROOT, "python", "moreau"),
                        os.path.join(src, "python", "moreau"),
                        ignore=shutil.ignore_patterns("__pycache__", "_paths.py"))
        os.symlink(BUILD, os.path.join(src, "build"))
        for d in ("scenes", "robots"):
            os.symlink(os.path.join(ROOT, d), os.path.join(src, d))
        return src

    def test_pip_install_in_a_venv(self):
        src = self.source_copy()
        env_dir = os.path.join(self.tmp, "env")
        run([PYTHON, "-m", "venv", "--system-site-packages", env_dir], self.elsewhere)
        pip = os.path.join(env_dir, "bin", "pip")
        run([pip, "install", "--no-build-isolation", "--no-index", os.path.join(src, "python")],
            self.elsewhere)
        py = os.path.join(env_dir, "bin", "python")
        info, q = parse(run([py, "-c", CHILD], self.elsewhere))
        self.assertTrue(info["module"].startswith(env_dir), info["module"])
        self.assertEqual(os.path.realpath(info["library"]),
                         os.path.realpath(os.path.join(BUILD, "libmoreau.so")))
        self.assertEqual(info["data"], os.path.join(src, "scenes", "solo_stand.yaml"))
        np.testing.assert_array_equal(q, self.q)
        # the tutorial's Python, from an empty directory: it prints the solver's figures and
        # writes the recorded run and its replay page there
        out = run([py, "-c", tutorial_code()], self.elsewhere)
        self.assertRegex(out, r"\d+ [0-9.e-]+ \d+")
        for name in ("run.csv", "run_contacts.csv", "run.html"):
            self.assertTrue(os.path.getsize(os.path.join(self.elsewhere, name)) > 0, name)

    def test_make_install(self):
        prefix = os.path.join(self.tmp, "prefix")
        out = run(["make", "-s", "--no-print-directory", f"BUILD={BUILD}", f"PREFIX={prefix}",
                   "install"], ROOT)
        version = "%d.%d" % sys.version_info[:2]
        site = os.path.join(prefix, "lib", f"python{version}", "dist-packages")
        self.assertIn(f"the Python package moreau in {site}/moreau", out)
        env = clean_env()
        env["PYTHONPATH"] = site
        info, q = parse(run([PYTHON, "-c", CHILD], self.elsewhere, env))
        self.assertEqual(info["module"], os.path.join(site, "moreau", "__init__.py"))
        self.assertEqual(info["library"], os.path.join(prefix, "lib", "libmoreau.so"))
        self.assertEqual(info["data"],
                         os.path.join(prefix, "share", "moreau", "scenes", "solo_stand.yaml"))
        np.testing.assert_array_equal(q, self.q)


if __name__ == "__main__":
    unittest.main()
