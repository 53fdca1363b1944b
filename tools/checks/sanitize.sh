#!/usr/bin/env bash
# Builds the tests with AddressSanitizer + UndefinedBehaviorSanitizer (CMake option
# DIFFLOCO_SANITIZE) in build-asan/ and runs them. Any finding aborts the test that caused it.
#   tools/checks/sanitize.sh               every test (rebuilds every LibTorch unit; not timed yet)
#   tools/checks/sanitize.sh test_sim ...  only these test binaries and their ctest entries
# Leak checking is on for the torch-free binaries (io, config, sim, ident) and off for the LibTorch ones
# (LibTorch itself is not instrumented).
set -euo pipefail
cd "$(dirname "$0")/../.."
build=build-asan
# Without the Python package: an ASan-instrumented extension module does not load into an
# uninstrumented interpreter.
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DDIFFLOCO_SANITIZE=ON \
  -DDIFFLOCO_NATIVE=ON -DDIFFLOCO_PYTHON=OFF >/dev/null
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
if [ $# -gt 0 ]; then
  cmake --build "$build" -j 2 --target "$@"
  for t in "$@"; do
    case $t in
      test_io | test_config | test_sim | test_ident) ASAN_OPTIONS=detect_leaks=1 "$build/tests/$t" ;;
      *) ASAN_OPTIONS=detect_leaks=0 "$build/tests/$t" ;;
    esac
  done
else
  cmake --build "$build" -j 2
  ASAN_OPTIONS=detect_leaks=0 ctest --test-dir "$build" -j 2 --output-on-failure
fi
