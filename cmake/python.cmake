# The Python package (python/shardwise, docs/python.md): a pybind11 extension module,
# shardwise._shardwise, over the command layer, so `shardwise.plan(nodes=2)` and
# `shardwise plan --nodes 2 --json` are parsed, checked and answered by the same code. Built when
# Debian's pybind11-dev is present (scripts/install-deps.sh installs it); not under sanitizers,
# whose runtime a Python interpreter does not load first.
option(SHARDWISE_PYTHON "Build the Python package's extension module (needs pybind11-dev)" ON)
if(SHARDWISE_PYTHON AND (SHARDWISE_FUZZ OR SHARDWISE_SANITIZE))
  message(STATUS "shardwise: the Python module is not built under sanitizers")
  set(SHARDWISE_PYTHON OFF)
endif()
if(SHARDWISE_PYTHON)
  # Debian's interpreter by default: it has the modules install-deps.sh installs (pytest, yaml,
  # matplotlib), which an interpreter earlier on PATH (pyenv) may lack. pip passes its own.
  if(NOT Python_EXECUTABLE AND EXISTS /usr/bin/python3)
    set(Python_EXECUTABLE /usr/bin/python3)
  endif()
  set(PYBIND11_FINDPYTHON ON)
  find_package(pybind11 CONFIG QUIET)
  if(pybind11_FOUND)
    message(STATUS "shardwise: Python module enabled (${Python_EXECUTABLE})")
    # The module is a shared object that links the static libraries.
    set(CMAKE_POSITION_INDEPENDENT_CODE ON)
  else()
    message(STATUS "shardwise: pybind11 not found; the Python module is skipped (install pybind11-dev)")
    set(SHARDWISE_PYTHON OFF)
  endif()
endif()
