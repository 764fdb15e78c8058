# The two commands of the README's quick start, plus a few conveniences.
#   make run    install missing packages, build the mapper executable (Release) and map the default workload
#   make test   install missing packages, build everything (Release: tests, benchmarks), run the whole test suite
#   make fuzz   build the libFuzzer harnesses (preset asan: clang, build/asan) and run each FUZZ_SECONDS seconds
SHELL    := /bin/bash
PRESET   ?= release
BUILD    := build/$(PRESET)
WERROR   ?= OFF
JOBS     ?= $(shell nproc)
WORKLOAD ?= workloads/resnet18.yaml
ARGS     ?=
FUZZ_SECONDS ?= 60

.PHONY: all deps configure build run test bench fuzz clean

all: build

deps:
	@bash scripts/install-deps.sh

configure: deps
	@cmake --preset $(PRESET) -DNPUMAP_WERROR=$(WERROR) >/dev/null

build: configure
	@cmake --build $(BUILD) -j $(JOBS)

# Only the executable: the test and benchmark programs are `make test`'s (and `make build`'s).
run: configure
	@cmake --build $(BUILD) -j $(JOBS) --target mapper
	./$(BUILD)/mapper/mapper --workload $(WORKLOAD) --keep-pareto $(ARGS)

# No test may skip or be left out: ctest counts a skipped test as passed, so its summary is checked
# (test binaries also exit 1 when a test skipped: test/support/gtest_main.cpp).
test: build
	@set -o pipefail; ctest --test-dir $(BUILD) -j $(JOBS) --output-on-failure --no-tests=error | tee $(BUILD)/ctest.log
	@if grep -q "tests did not run" $(BUILD)/ctest.log; then \
	  echo "make test: some tests did not run (listed above); every test must run" >&2; exit 1; fi

# The nightly (docs/nightly.md) builds the baseline revision and HEAD itself, in build/nightly/.
# GNU make exits 2 whenever a recipe fails, so the script's own status (0 pass, 1 answers differ,
# 2 broken run, 3 speed regression only) is printed and kept in runs/nightly/status; a caller that
# needs it as an exit code runs `bash bench/nightly.sh` itself.
bench: deps
	@mkdir -p runs/nightly; bash bench/nightly.sh $(ARGS); s=$$?; echo $$s > runs/nightly/status; \
	case $$s in 0) ;; 1) m="answers differ";; 3) m="speed regression only";; *) m="broken run";; esac; \
	if [ $$s -ne 0 ]; then echo "make bench: bench/nightly.sh exited with status $$s ($$m); make exits 2, the status is in runs/nightly/status" >&2; fi; \
	exit $$s

fuzz: deps
	FUZZ_SECONDS=$(FUZZ_SECONDS) bash scripts/fuzz.sh $(ARGS)

clean:
	rm -rf build
