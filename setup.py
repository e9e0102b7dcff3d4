"""Builds the shardwise Python package from a checkout (docs/python.md), offline:

    python3 -m pip install --no-build-isolation .

The extension module, shardwise._shardwise, is built by CMake in build-python/ (or in the
configured build directory SHARDWISE_BUILD_DIR names, which then only builds what is missing),
for the interpreter running pip. It needs what scripts/install-deps.sh installs.
"""

import os
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent


def version() -> str:
    header = (ROOT / "src" / "cli" / "parse_errors.h").read_text()
    return re.search(r'kVersion = "([^"]+)"', header).group(1)


class CMakeBuild(build_ext):
    def build_extension(self, ext: Extension) -> None:
        reused = os.environ.get("SHARDWISE_BUILD_DIR")
        build_dir = Path(reused or ROOT / "build-python" / "cmake")
        if not reused:  # configured every time: a configure cut short leaves a cache behind
            subprocess.check_call([
                "cmake", "-S", str(ROOT), "-B", str(build_dir), "-DCMAKE_BUILD_TYPE=Release",
                "-DCMAKE_UNITY_BUILD=ON", "-DSHARDWISE_BUILD_TESTS=OFF", "-DSHARDWISE_BUILD_BENCH=OFF",
                f"-DPython_EXECUTABLE={sys.executable}"])
        subprocess.check_call(["cmake", "--build", str(build_dir), "--target", "_shardwise",
                               "-j", str(os.cpu_count() or 1)])
        suffix = sysconfig.get_config_var("EXT_SUFFIX")
        built = build_dir / "python" / "shardwise" / f"_shardwise{suffix}"
        if not built.exists():
            sys.exit(f"setup.py: no {built.name} in {built.parent}: is pybind11-dev installed "
                     "(scripts/install-deps.sh), and was that build made for this Python?")
        target = Path(self.get_ext_fullpath(ext.name))
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(built, target)


setup(
    name="shardwise",
    version=version(),
    description="Split a large language model across GPUs; predict memory, time and money",
    packages=["shardwise"],
    package_dir={"": "python"},
    ext_modules=[Extension("shardwise._shardwise", sources=[])],
    cmdclass={"build_ext": CMakeBuild},
    options={"build": {"build_base": str(Path("build-python") / "setuptools")}},
    python_requires=">=3.9",
    zip_safe=False,
)
