# Two entry points, both usable on a fresh machine:
#   make run   install dependencies, build, run the main job on its built-in defaults
#   make test  install dependencies, build, run every test
#   make fuzz  build the libFuzzer harnesses (clang) and fuzz each for FUZZ_SECONDS
BUILD_DIR ?= build
BUILD_TYPE ?= Release
JOBS ?= $(shell nproc)

FUZZ_SECONDS ?= 60

.PHONY: run test deps build fuzz

deps:
	scripts/install-deps.sh

# A unity build: each target's sources compile in batches of 8, so nlohmann::json, fmt, CLI11 and
# GoogleTest are parsed and instantiated once per batch instead of once per file (the cold build
# on 2 cores: 1213 -> 539 s of CPU). Configure without it for quick rebuilds of single files.
build: deps
	cmake -S . -B $(BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) -DCMAKE_UNITY_BUILD=ON
	cmake --build $(BUILD_DIR) -j $(JOBS)

run: build
	$(BUILD_DIR)/shardwise plan --model llama-3.1-70b --cluster dgx-h100 --nodes 2 --objective latency

test: build
	cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS)

fuzz: deps
	scripts/fuzz.sh $(FUZZ_SECONDS)
