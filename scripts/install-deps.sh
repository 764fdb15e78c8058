#!/usr/bin/env bash
# Installs the Debian packages npu-mapper builds with, only those that are missing.
# As root it runs apt-get; otherwise it prints the exact command to run and exits 1.
# clang and libclang-rt-dev (libFuzzer, sanitizer runtimes) build only the fuzz harnesses (the
# `asan` preset, `make fuzz`, the last two stages of .ci/run); the product builds with g++. python3 runs
# the nightly benchmark regression (bench/nightly.sh) and its tests, and (with python3-yaml) reads the
# files the CLI tests write back strictly (test/cli/check_written.py).
set -euo pipefail
packages=(g++ cmake ninja-build make git libtbb-dev libboost-graph-dev libspdlog-dev libfmt-dev
          libyaml-cpp-dev libcli11-dev nlohmann-json3-dev libflatbuffers-dev libgtest-dev libgmock-dev libbenchmark-dev
          libopenmpi-dev openmpi-bin clang libclang-rt-dev python3 python3-yaml)
missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "npu-mapper needs these Debian packages: ${missing[*]}" >&2
  echo "run: sudo apt-get update && sudo apt-get install -y ${missing[*]}" >&2
  exit 1
fi
echo "installing: ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
