#!/bin/sh
# The demo: install what is needed, build, then start Redis, three httpd
# replicas behind a balancer and the test IdP on 127.0.0.1, sign in, replay
# the same SAML response against every replica and through the balancer,
# show what each post got and the log lines that recorded it, and stop
# everything that was started.
set -eu
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
exec /usr/bin/python3 scripts/demo.py "$@"
