# TensorFlux entry points. Every target that needs packages runs scripts/setup first (a no-op
# when everything is installed).
BUILD_DIR ?= build
ASAN_DIR  ?= build-asan
JOBS      ?= $(shell nproc)
PYTHON    ?= /usr/bin/python3
CMAKE_FLAGS ?=
FUZZ_SECONDS ?= 600
# The sanitizer build uses clang when present, so the same objects also serve libFuzzer (make fuzz).
ASAN_CXX  ?= $(shell command -v clang++ 2>/dev/null)
ASAN_FLAGS = $(if $(ASAN_CXX),-DCMAKE_CXX_COMPILER=$(ASAN_CXX) -DCMAKE_C_COMPILER=$(subst clang++,clang,$(ASAN_CXX)) -DTX_FUZZ=ON)

.PHONY: all build test test-cc test-py demo bench bench-peer oracle test-asan asan-setup asan-configure fuzz setup clean

all: build

setup:
	@scripts/setup

# The pinned CUDA toolkit's marker (scripts/setup installs it): a build folder configured before
# the toolkit was there is configured again once it is, so the CUDA part gets built.
CUDA_MARKER := $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/tensorflux/$(shell sed -n 's/^\# folder: //p' scripts/cuda-wheels.txt)/.tensorflux-complete

$(BUILD_DIR)/build.ninja: $(wildcard $(CUDA_MARKER))
	@scripts/setup
	cmake -S . -B $(BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=Release $(CMAKE_FLAGS)

# build: the library, CLI, Python extension, C++ API and examples. Tests and benchmarks are
# built by the targets that run them.
build: setup $(BUILD_DIR)/build.ninja
	cmake --build $(BUILD_DIR) -j $(JOBS)

test: build
	cmake --build $(BUILD_DIR) -j $(JOBS) --target tensorflux_tests
	@scripts/run-tests $(BUILD_DIR)

demo: build
	@scripts/demo $(BUILD_DIR)

# The benchmarks also need python3-torch (bench/peer), installed by setup's extras, and the
# PyPI peers' virtualenvs (scripts/peers: PyTorch 2.x, TensorFlow 2.15).
bench: build
	@TENSORFLUX_SETUP_EXTRAS=1 scripts/setup
	@scripts/peers
	cmake --build $(BUILD_DIR) -j $(JOBS) --target tx_benches
	@scripts/run-bench $(BUILD_DIR)

# bench-peer: only bench/peer/peer.py (TensorFlux against its peers, MLP and CNN, one epoch each).
bench-peer: build
	@TENSORFLUX_SETUP_EXTRAS=1 scripts/setup
	@scripts/peers
	@scripts/run-bench $(BUILD_DIR) --peer

# oracle: TensorFlow 2.15 (PyPI) in a virtualenv and the reference data under tests/data/oracle
# regenerated from it (scripts/oracle). make test never needs it.
oracle: build
	@scripts/oracle

asan-setup:
	@TENSORFLUX_SETUP_SANITIZE=1 scripts/setup

asan-configure: asan-setup
	cmake -S . -B $(ASAN_DIR) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTX_SANITIZE=ON \
	  -DTX_BUILD_BENCH=OFF -DTX_BUILD_PYTHON=OFF $(ASAN_FLAGS) $(CMAKE_FLAGS)

test-asan: asan-configure
	cmake --build $(ASAN_DIR) -j $(JOBS) --target tensorflux_tests tensorflux_cli
	cd $(ASAN_DIR) && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
	  ctest --output-on-failure -j $(JOBS)

# The one-op kernel fuzzer under ASan+UBSan for FUZZ_SECONDS; findings go to $(ASAN_DIR)/fuzz/.
# One tensor above 1 GiB is refused (RESOURCE_EXHAUSTED): valid graphs can ask for 8 GiB.
fuzz: asan-configure
	@test -n "$(ASAN_CXX)" || { echo "make fuzz needs clang++ (libFuzzer)"; exit 1; }
	cmake --build $(ASAN_DIR) -j $(JOBS) --target op_fuzz
	mkdir -p $(ASAN_DIR)/fuzz/corpus
	cd $(ASAN_DIR)/fuzz && ASAN_OPTIONS=allocator_may_return_null=1:detect_leaks=1 \
	  TX_CPU_ALLOCATION_LIMIT_MB=1024 ../bin/op_fuzz -max_total_time=$(FUZZ_SECONDS) -timeout=20 \
	  -rss_limit_mb=4096 -malloc_limit_mb=2048 -max_len=512 corpus

clean:
	rm -rf $(BUILD_DIR) $(ASAN_DIR)
