# TensorFlux entry points. Every target that needs packages runs scripts/setup first (a no-op
# when everything is installed).
BUILD_DIR ?= build
ASAN_DIR  ?= build-asan
JOBS      ?= $(shell nproc)
PYTHON    ?= /usr/bin/python3
CMAKE_FLAGS ?=

.PHONY: all build test test-cc test-py demo bench test-asan setup clean

all: build

setup:
	@scripts/setup

$(BUILD_DIR)/build.ninja:
	@scripts/setup
	cmake -S . -B $(BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=Release $(CMAKE_FLAGS)

build: setup $(BUILD_DIR)/build.ninja
	cmake --build $(BUILD_DIR) -j $(JOBS)

test: build
	@scripts/run-tests $(BUILD_DIR)

demo: build
	@scripts/demo $(BUILD_DIR)

bench: build
	@scripts/run-bench $(BUILD_DIR)

test-asan: setup
	cmake -S . -B $(ASAN_DIR) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTX_SANITIZE=ON \
	  -DTX_BUILD_BENCH=OFF -DTX_BUILD_PYTHON=OFF $(CMAKE_FLAGS)
	cmake --build $(ASAN_DIR) -j $(JOBS) --target tensorflux_tests tensorflux_cli
	cd $(ASAN_DIR) && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
	  ctest --output-on-failure -j $(JOBS)

clean:
	rm -rf $(BUILD_DIR) $(ASAN_DIR)
