#!/bin/sh
# make check: every unit suite again under valgrind (no invalid access, no
# definite leak), one after the other. Skipped on a build with sanitizers
# (ASan and valgrind do not mix) and where valgrind is missing.
set -u
if [ -n "${SAN_CFLAGS:-}" ]; then
    echo "built with sanitizers: not run under valgrind"
    exit 77
fi
if ! command -v valgrind >/dev/null 2>&1; then
    echo "valgrind is not installed: skipped"
    exit 77
fi
rc=0
for t in ${RSP_UNIT_SUITES:?}; do
    if CK_FORK=no valgrind -q --leak-check=full --errors-for-leak-kinds=definite \
        --error-exitcode=9 "./$t" >/dev/null; then
        echo "valgrind: $t clean"
    else
        echo "valgrind: $t failed"
        rc=1
    fi
done
exit $rc
