# Makefile: the two entry points (make run, make test) over CMake, plus helpers. Each target installs
# what is missing first, so both work on a fresh Debian 12 machine as root.
BUILD ?= build
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE_FLAGS ?=

.PHONY: all deps configure build run test bench clean

all: build

deps:
	@scripts/install-deps.sh

configure: deps
	@mkdir -p $(BUILD)
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release $(CMAKE_FLAGS) >$(BUILD)/configure.log 2>&1 \
	  || { cat $(BUILD)/configure.log; exit 1; }

build: configure
	@cmake --build $(BUILD) -j $(JOBS)

# The KATO-compatible HTTP service on the embedded store (./tandem-data); it prints how to talk to it.
run: build
	@$(BUILD)/tandem serve

test: build
	@cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

bench: build
	@bench/run-seq.sh

clean:
	rm -rf $(BUILD)
