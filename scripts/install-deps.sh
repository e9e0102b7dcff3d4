#!/usr/bin/env bash
# Installs the Debian packages shardwise needs to build and test. Idempotent: packages that are
# already present are skipped, and apt-get runs only when something is missing.
# Usage: scripts/install-deps.sh   (as root, or with sudo available)
set -euo pipefail

packages=(
  cmake ninja-build g++ make pkg-config   # build
  libgtest-dev libgmock-dev               # tests (GoogleTest via CTest)
  libbenchmark-dev                        # bench/ (Google Benchmark)
  nlohmann-json3-dev                      # config.json, catalog files, --json output
  libcli11-dev                            # command line
  libopenmpi-dev openmpi-bin              # the MPI communicator backend and mpirun
  libfmt-dev                              # formatting
  python3-numpy                           # tests/reference: the independent float64 forward pass
  clang libclang-rt-dev                   # scripts/fuzz.sh: libFuzzer, ASan, UBSan
  chromium                                # headless browser for the HTML report's test
  python3                                 # tools/score_serving.py (serving validation test)
  pybind11-dev python3-dev                # the Python package's extension module (cmake/python.cmake)
  python3-pytest python3-venv python3-setuptools python3-wheel  # its tests; pip install offline
  python3-matplotlib                      # docs/examples/sweep_concurrency.py
  python3-yaml                            # tests/python/test_manifests.py parses --emit dynamo-k8s, llm-d
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if ((${#missing[@]} == 0)); then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
