#!/bin/sh
# Install what mod_replay_sp needs to build, test and run its demo, from
# Debian's archive, and the npm packages of the samlify test IdP
# (tests/signers/node, pinned by its package-lock.json) from the npm
# registry. Idempotent: installs only what is missing.
set -eu
cd "$(dirname "$0")/.."

PKGS="gcc make autoconf automake libtool pkg-config
apache2 apache2-dev liblasso3-dev libhiredis-dev libmemcached-dev libssl-dev zlib1g-dev
libcurl4-openssl-dev
check valgrind strace redis-server memcached clang-14 libclang-rt-14-dev
python3 python3-lasso python3-pytest python3-pytest-xdist python3-requests python3-pysaml2
python3-xmlschema python3-cryptography libxml2-utils xmlsec1 openssl prometheus
build-essential git debhelper dpkg-dev libapache2-mod-auth-mellon
libapache2-mod-shib chromium chromium-driver python3-selenium libnss3-tools
openjdk-17-jdk-headless
python3-onelogin-saml2 python3-flask gunicorn uwsgi-core uwsgi-plugin-python3
ruby-saml ruby-rack puma simplesamlphp libapache2-mod-php8.2 php-memcached php-xml php-mbstring"
# The samlify test IdP runs on node: Debian's nodejs and npm where the
# machine has none (a node of another origin, with its own npm, is used
# as it is: Debian's npm package would conflict with it).
command -v node >/dev/null 2>&1 || PKGS="$PKGS nodejs"
command -v npm >/dev/null 2>&1 || PKGS="$PKGS npm"

# npm packages: the versions in the lockfile, exactly (npm ci), no
# install scripts; again whenever the lockfile changed.
npm_deps() {
    d=tests/signers/node
    if [ -f "$d/node_modules/.package-lock.json" ] && \
        [ ! "$d/package-lock.json" -nt "$d/node_modules/.package-lock.json" ]; then
        return 0
    fi
    echo "install-deps: npm ci in $d"
    (cd "$d" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error)
}

missing=""
for p in $PKGS; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed"; then
        missing="$missing $p"
    fi
done
if [ -z "$missing" ]; then
    echo "install-deps: all packages present"
    npm_deps
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
# The peer SPs the guard's tests run (mod_auth_mellon, Shibboleth SP,
# SimpleSAMLphp under mod_php) are started by the tests with
# configurations of their own: the packages' own enabling of them in the
# system's Apache (mod_php also switches it to the prefork MPM), and
# shibd's service, are undone when this script installed them.
for p in $missing; do
    case "$p" in
    libapache2-mod-auth-mellon) $SUDO a2dismod -q auth_mellon >/dev/null 2>&1 || true ;;
    libapache2-mod-shib)
        $SUDO a2dismod -q shib >/dev/null 2>&1 || true
        $SUDO a2disconf -q shib >/dev/null 2>&1 || true
        if [ -d /run/systemd/system ]; then
            $SUDO systemctl disable --now shibd >/dev/null 2>&1 || true
        fi ;;
    libapache2-mod-php8.2)
        $SUDO a2dismod -q php8.2 >/dev/null 2>&1 || true
        if [ -e /etc/apache2/mods-enabled/mpm_prefork.load ]; then
            $SUDO a2dismod -q mpm_prefork >/dev/null 2>&1 || true
            $SUDO a2enmod -q mpm_event >/dev/null 2>&1 || true
        fi ;;
    esac
done
npm_deps
