"""Installs the checkout with pip into a fresh virtual environment, offline, as docs/python.md
says a user does, and checks that the installed package (not the build tree) answers plan with
the document `shardwise plan --json` prints. Run by CTest (tests/CMakeLists.txt) with the build
directory to reuse, so pip builds nothing that is already built."""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

PLAN = {"model": "llama-3.1-8b", "cluster": "dgx-h100", "nodes": 1, "objective": "latency"}

PROBE = f"""
import json, shardwise
print(shardwise.__file__)
print(json.dumps(shardwise.plan(**{PLAN!r})))
"""


def without_timing(value):
    """Without the command's own timing; notes name keywords in Python, flags in the binary."""
    if isinstance(value, dict):
        return {k: ([re.sub(r"--([a-z][a-z0-9-]*)", lambda m: m.group(1).replace("-", "_"), n)
                     for n in v] if k == "notes" else without_timing(v))
                for k, v in value.items() if k != "elapsed_s"}
    if isinstance(value, list):
        return [without_timing(v) for v in value]
    return value


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--source", required=True, help="the checkout")
    parser.add_argument("--build-dir", required=True, help="a configured build to reuse")
    parser.add_argument("--binary", required=True, help="build/shardwise")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        env_dir = Path(tmp) / "venv"
        subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(env_dir)],
                       check=True)
        python = env_dir / "bin" / "python"
        env = dict(os.environ, SHARDWISE_BUILD_DIR=args.build_dir)
        env.pop("PYTHONPATH", None)
        subprocess.run([str(python), "-m", "pip", "install", "--quiet", "--no-index", "--no-deps",
                        "--no-build-isolation", args.source], check=True, env=env)
        probe = subprocess.run([str(python), "-c", PROBE], check=True, env=env, cwd=tmp,
                               capture_output=True, text=True)
        where, document = probe.stdout.split("\n", 1)
        if not Path(where).resolve().is_relative_to(env_dir.resolve()):
            print(f"FAIL: shardwise imported from {where}, not the virtual environment")
            return 1
        flags = [f"--{k.replace('_', '-')}={v}" for k, v in PLAN.items()]
        expected = json.loads(subprocess.run([args.binary, "plan", *flags, "--json"], check=True,
                                             capture_output=True, text=True).stdout)
        if without_timing(json.loads(document)) != without_timing(expected):
            print("FAIL: the installed package's plan differs from `shardwise plan --json`")
            return 1
        print(f"pip install: ok, shardwise imported from {where}; plan equals the binary's")
    return 0


if __name__ == "__main__":
    sys.exit(main())
