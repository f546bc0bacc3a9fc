#!/bin/sh
# The Prometheus alerting rules: check conf/prometheus/replay-sp-rules.yml
# with promtool and run its unit tests (tests/prometheus/). Needs promtool
# (Debian package prometheus). Exit status is non-zero if anything fails;
# the last line is "N passed, M failed", counting promtool test groups.
set -eu
cd "$(dirname "$0")/.."

rules=conf/prometheus/replay-sp-rules.yml
tests=tests/prometheus/replay-sp-rules.test.yml

# Test groups: the "  - name:" entries of the test file's tests list.
total=$(grep -c '^  - name:' "$tests" || true)
total=${total:-0}

summary() {
    echo "$1 passed, $2 failed"
}

if [ "$total" -eq 0 ]; then
    echo "test-prometheus: no test groups in $tests"
    summary 0 1
    exit 1
fi
if ! command -v promtool >/dev/null 2>&1; then
    echo "test-prometheus: promtool not found (apt-get install prometheus)"
    summary 0 "$total"
    exit 1
fi

echo "== promtool check rules $rules"
if ! timeout 120 promtool check rules "$rules" 2>&1; then
    summary 0 "$total"
    exit 1
fi

echo "== promtool test rules $tests"
out=$(mktemp)
trap 'rm -f "$out"' EXIT
rc=0
timeout 120 promtool test rules "$tests" >"$out" 2>&1 || rc=$?
cat "$out"
if [ "$rc" -eq 0 ]; then
    summary "$total" 0
    exit 0
fi
# promtool names each failing group ("    name: GROUP,") once per failed
# expectation; a file it cannot load (or a timeout) fails every group.
failed=$(sed -n 's/^    name: \(.*\),$/\1/p' "$out" | sort -u | wc -l)
failed=$((failed + 0))
if [ "$failed" -eq 0 ] || [ "$failed" -gt "$total" ]; then
    failed=$total
fi
if [ "$rc" -eq 124 ]; then
    echo "test-prometheus: promtool timed out"
fi
summary $((total - failed)) "$failed"
exit 1
