#!/bin/sh
# Every test: install dependencies, build, unit tests (Check), the test
# IdP's self-tests, then the fleet integration suite (real redis-server,
# real httpd replicas behind a real balancer, responses signed by the
# test IdP). Exit status is non-zero if anything fails.
set -eu
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
echo "== unit tests (Check)"
make -j"$(nproc)" check || { cat tests/unit/*.log 2>/dev/null; exit 1; }
cat tests/unit/*.log | grep -E "^[0-9]+%: Checks" || true
echo "== unit tests under valgrind (no leaks, no invalid accesses)"
for t in tests/unit/test_rsp_*; do
    case "$t" in *.c|*.o|*.log|*.trs) continue ;; esac
    CK_FORK=no valgrind -q --leak-check=full --errors-for-leak-kinds=definite \
        --error-exitcode=9 "$t" >/dev/null || { echo "valgrind: $t failed"; exit 1; }
done
echo "== test IdP self-tests"
/usr/bin/python3 -m pytest -q -p no:cacheprovider tests/idp
echo "== fleet integration tests"
/usr/bin/python3 -m pytest -q -p no:cacheprovider tests/integration
