#!/bin/sh
# The benchmark: prints figures (instructions per request under callgrind,
# fleet throughput, wall and CPU time per sign-in), asserts nothing.
# Everything on 127.0.0.1, stopped afterwards. Needs a built module
# (scripts/build.sh) and the packages of scripts/install-deps.sh.
#   scripts/bench.sh [--only instructions|--only decryption|...] [--quick]
#   scripts/bench.sh --only federation [--sizes 500,5000,20000]
set -eu
cd "$(dirname "$0")/.."
exec /usr/bin/python3 tests/bench/bench.py "$@"
