# Sonde: the two commands of the README, and a few conveniences.
#   make demo            build, then run the demo firmware on the virtual Cortex-M
#   make test            build, then run every test (CTest)
#   make test-sanitize   the same tests built with ASan+UBSan (CI runs both)
# Both install missing Debian packages first (scripts/install-deps).
BUILD ?= build
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE_FLAGS ?=

.PHONY: all build deps demo test test-sanitize bench fuzz clean

all: build

deps:
	@scripts/install-deps --check >/dev/null 2>&1 || scripts/install-deps

$(BUILD)/CMakeCache.txt:
	cmake -S . -B $(BUILD) $(CMAKE_FLAGS)

build: deps $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(JOBS)

demo: build
	@scripts/demo $(BUILD)

test: build
	@rc=0; ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS) || rc=$$?; \
	  scripts/show-skips $(BUILD); exit $$rc

test-sanitize: deps
	cmake -S . -B $(BUILD)-asan -DSONDE_SANITIZE=ON -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=Debug $(CMAKE_FLAGS)
	cmake --build $(BUILD)-asan -j $(JOBS)
	@rc=0; ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
	  ctest --test-dir $(BUILD)-asan --output-on-failure -j $(JOBS) -LE nosanitize || rc=$$?; \
	  scripts/show-skips $(BUILD)-asan; exit $$rc

bench: build
	cmake --build $(BUILD) --target bench -j $(JOBS)

clean:
	rm -rf $(BUILD) $(BUILD)-asan
