#!/bin/sh
# Every test: install dependencies, build, unit tests (Check, also under
# valgrind, and again built with ASan and UBSan), the libFuzzer targets
# (bounded: about a minute), the Debian package (built, installed, used,
# purged), the Prometheus rules, the test IdP's self-tests, and the fleet
# integration suite (real redis-server, memcached, httpd replicas behind a
# real balancer, responses signed by the test IdP) once, with the module
# built with ASan and UBSan; the tests that need the release build (the
# module under valgrind, the round trips) run on it too. Exit status is
# non-zero if anything fails.
set -eu
cd "$(dirname "$0")/.."
started=$(date +%s)
# each stage's header says how long the run has taken so far
stage() { echo "== $* [$(( $(date +%s) - started )) s]"; }
scripts/install-deps.sh
scripts/build.sh
stage "the module exports its record and lasso_log, nothing else"
exports=$(nm -D --defined-only mod_replay_sp/.libs/mod_replay_sp.so | awk '{print $3}' | sort | tr '\n' ' ')
[ "$exports" = "lasso_log replay_sp_module " ] || { echo "exported: $exports"; exit 1; }
# and needs none of its own from elsewhere (httpd would refuse to load it)
if nm -u mod_replay_sp/.libs/mod_replay_sp.so | grep -w 'rsp_[a-z0-9_]*'; then
    echo "the module leaves those of its own symbols undefined"; exit 1
fi
stage "the module built with ASan and UBSan, its unit tests run so built: beside the stages below"
asan_log=$(mktemp)
scripts/build-asan.sh >"$asan_log" 2>&1 &
asan_build=$!
stage "unit tests (Check), then each again under valgrind (no leaks, no invalid accesses)"
make -j"$(nproc)" check || { cat tests/unit/*.log 2>/dev/null; exit 1; }
cat tests/unit/*.log | grep -E "^[0-9]+%: Checks" || true
stage "fuzzing: every libFuzzer target on its corpus, then ~45 s of fuzzing"
sh scripts/fuzz.sh
stage "Debian package: build, contents, install with a2enmod, one sign-in, purge"
bash scripts/test-package.sh
stage "Prometheus alerting rules (promtool)"
sh scripts/test-prometheus.sh
stage "test IdP self-tests"
/usr/bin/python3 -m pytest -q -p no:cacheprovider tests/idp
stage "fleet integration tests on the release build: the module under valgrind, the round trips"
/usr/bin/python3 -m pytest -q -p no:cacheprovider tests/integration/test_leaks.py \
    tests/integration/test_round_trips.py
stage "fleet integration tests with the module built with ASan and UBSan"
wait "$asan_build" || { cat "$asan_log"; echo "the ASan build or its unit tests failed"; exit 1; }
asan_module=$(tail -n 1 "$asan_log")
rm -f "$asan_log"
# libstdc++ preloaded too: httpd is C, and mod_shib's C++ exceptions need
# ASan to have found the real __cxa_throw when it started.
# Two pytest-xdist workers (one per CPU, at most 4: each has its own port
# range), a test file at a time each: a file's fleets and fixtures stay
# with one worker, and each worker starts its own stores and fleets.
workers=$(nproc); [ "$workers" -lt 2 ] && workers=2; [ "$workers" -gt 4 ] && workers=4
RSP_MODULE="$asan_module" \
RSP_HTTPD_PRELOAD="$(gcc -print-file-name=libasan.so) $(gcc -print-file-name=libstdc++.so)" \
    /usr/bin/python3 -m pytest -q -p no:cacheprovider -n "$workers" --dist loadfile \
    tests/integration
stage "done"
