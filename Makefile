# The two commands of the README's quick start, plus a few conveniences.
#   make run    install missing packages, build Release, map the default workload
#   make test   install missing packages, build Release, run the whole test suite
#   make fuzz   build the libFuzzer harnesses (preset asan: clang, build/asan) and run each FUZZ_SECONDS seconds
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

run: build
	./$(BUILD)/mapper/mapper --workload $(WORKLOAD) --keep-pareto $(ARGS)

test: build
	ctest --test-dir $(BUILD) -j $(JOBS) --output-on-failure

bench: build
	bash bench/nightly.sh $(ARGS)

fuzz: deps
	FUZZ_SECONDS=$(FUZZ_SECONDS) bash scripts/fuzz.sh $(ARGS)

clean:
	rm -rf build
