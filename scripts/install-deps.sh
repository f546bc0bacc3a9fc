#!/bin/sh
# Install what mod_replay_sp needs to build, test and run its demo, from
# Debian's archive only. Idempotent: installs only what is missing.
set -eu

PKGS="gcc make autoconf automake libtool pkg-config
apache2 apache2-dev liblasso3-dev libhiredis-dev libmemcached-dev libssl-dev zlib1g-dev
check valgrind strace redis-server memcached clang-14 libclang-rt-14-dev
python3 python3-lasso python3-pytest python3-pytest-xdist python3-requests python3-pysaml2
python3-xmlschema python3-cryptography libxml2-utils xmlsec1 openssl prometheus
build-essential git debhelper dpkg-dev libapache2-mod-auth-mellon
libapache2-mod-shib chromium chromium-driver python3-selenium libnss3-tools"

missing=""
for p in $PKGS; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed"; then
        missing="$missing $p"
    fi
done
if [ -z "$missing" ]; then
    echo "install-deps: all packages present"
    exit 0
fi
SUDO=""
if [ "$(id -u)" != 0 ]; then
    SUDO=sudo
fi
echo "install-deps: installing$missing"
# apt-get waits for dpkg's lock (DPkg::Lock::Timeout) but "apt-get update"
# gives up at once when another apt holds the lists' lock: try it again.
i=0
until err=$($SUDO apt-get update -qq 2>&1); do
    i=$((i + 1))
    case "$err" in
    *"Could not get lock"*) [ "$i" -lt 60 ] && { sleep 10; continue; } ;;
    esac
    echo "$err"
    echo "install-deps: apt-get update failed"
    exit 1
done
[ -z "$err" ] || echo "$err"
# The tests and the demo start their own servers on loopback ports; the
# packaged system services are not needed (and need not start).
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends \
    -o DPkg::Lock::Timeout=600 $missing
# The peer SPs the guard's tests run (mod_auth_mellon, Shibboleth SP) are
# started by the tests with configurations of their own: the packages'
# own enabling of them in the system's Apache, and shibd's service, are
# undone when this script installed them.
for p in $missing; do
    case "$p" in
    libapache2-mod-auth-mellon) $SUDO a2dismod -q auth_mellon >/dev/null 2>&1 || true ;;
    libapache2-mod-shib)
        $SUDO a2dismod -q shib >/dev/null 2>&1 || true
        $SUDO a2disconf -q shib >/dev/null 2>&1 || true
        if [ -d /run/systemd/system ]; then
            $SUDO systemctl disable --now shibd >/dev/null 2>&1 || true
        fi ;;
    esac
done
