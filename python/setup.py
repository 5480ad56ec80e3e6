"""Builds the moreau package (pyproject.toml holds its metadata) with one generated module,
moreau/_paths.py, that records where the library and the data are:

  LIBDIR      MOREAU_PREFIX/lib when MOREAU_PREFIX is set at install time, else /usr/local/lib
              (make install's default prefix)
  DATADIR     the scenes and robots of that prefix (PREFIX/share/moreau)
  BUILD_DIR   the build/ directory of the source tree this package was installed from
  SOURCE_DIR  that source tree (its scenes/ and robots/)

moreau.library_path() tries MOREAU_LIB, then LIBDIR, then the build trees; docs/python.md."""
import os

from setuptools import setup
from setuptools.command.build_py import build_py

SOURCE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class BuildWithPaths(build_py):
    """build_py, plus moreau/_paths.py in the built package (never in the source tree)"""

    def run(self):
        super().run()
        prefix = os.environ.get("MOREAU_PREFIX", "/usr/local")
        text = ('"""Where the library and the data are (written by setup.py)."""\n'
                f"LIBDIR = {os.path.join(prefix, 'lib')!r}\n"
                f"DATADIR = {os.path.join(prefix, 'share', 'moreau')!r}\n"
                f"BUILD_DIR = {os.path.join(SOURCE, 'build')!r}\n"
                f"SOURCE_DIR = {SOURCE!r}\n")
        target = os.path.join(self.build_lib, "moreau", "_paths.py")
        with open(target, "w") as f:
            f.write(text)


setup(cmdclass={"build_py": BuildWithPaths})
