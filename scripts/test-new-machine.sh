#!/bin/bash
# Run the whole suite (.ci/run) as on a new Debian 12 machine: in a root
# made with debootstrap (--variant=minbase bookworm), chrooted into, with
# nothing in it but minbase and what a clone needs. Everything the tests
# need beyond that must come from scripts/install-deps.sh, which .ci/run
# (scripts/test.sh) calls first.
#
# Usage (as root, on Debian 12 with debootstrap installed):
#   bash scripts/test-new-machine.sh [options] [REPO] [-- COMMAND...]
#
#   REPO        the repository to clone into the root: a URL, or a local
#               checkout whose committed branch (default main) is cloned
#               from a git bundle. Default: this checkout.
#   --branch B  the branch to clone (default main)
#   --root DIR  the root (default /var/tmp/rsp-newmachine, or $RSP_NEWMACHINE)
#   --fresh     delete DIR first and make a new root (otherwise an existing
#               root is reused, with whatever install-deps.sh already put in
#               it: only the clone is new)
#   --no-clone  keep the clone already in the root (/root/mod_replay_sp)
#   -- COMMAND  run COMMAND (with bash -c, in the clone) instead of
#               "bash .ci/run"; e.g. -- scripts/install-deps.sh
#
# What the root has beyond debootstrap's minbase, and why:
#   git, ca-certificates  the README's first step is a clone (https needs
#                         the CA certificates); installed without
#                         Recommends.
#   /etc/apt/sources.list.d/debian.sources
#                         bookworm, bookworm-updates, bookworm-security on
#                         deb.debian.org: the sources of a Debian 12 install
#                         (and of the machine this was written on).
#   /etc/hosts            127.0.0.1 localhost, ::1 localhost.
#   /etc/resolv.conf      this machine's, for apt.
#   /usr/sbin/policy-rc.d exit 101: packages' services (apache2,
#                         redis-server, memcached, prometheus, shibd) are not
#                         started in the root. It has no init system, and a
#                         service started there would listen on this
#                         machine's ports and outlive the run; the tests
#                         start their own servers on 127.0.0.1.
# No sudo: the commands run as root, as the README allows. /proc, /sys,
# /dev, /dev/pts and /dev/shm are mounted while the command runs and
# unmounted on exit (a trap); processes still running in the root then are
# listed and stopped (by PID) first.
# The commands run with a clean environment: CI=true, HOME=/root, LANG=C.UTF-8,
# PATH as on Debian. The wall time of each part is printed.
set -eu

DIR=${RSP_NEWMACHINE:-/var/tmp/rsp-newmachine}
BRANCH=main
FRESH=0
CLONE=1
REPO=""
CMD="bash .ci/run"
while [ "$#" -gt 0 ]; do
    case "$1" in
    --root) DIR=$2; shift 2 ;;
    --branch) BRANCH=$2; shift 2 ;;
    --fresh) FRESH=1; shift ;;
    --no-clone) CLONE=0; shift ;;
    --) shift; CMD="$*"; break ;;
    -h | --help) sed -n '2,/^set -eu/p' "$0" | sed '$d'; exit 0 ;;
    -*) echo "test-new-machine: unknown option $1" >&2; exit 2 ;;
    *) REPO=$1; shift ;;
    esac
done
[ -n "$REPO" ] || REPO=$(cd "$(dirname "$0")/.." && pwd)
[ -n "$CMD" ] || { echo "test-new-machine: empty command after --" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "test-new-machine: must run as root (debootstrap, chroot, mount)" >&2; exit 2; }
command -v debootstrap >/dev/null || { echo "test-new-machine: apt-get install debootstrap" >&2; exit 2; }
DIR=$(realpath -m "$DIR")
case "$DIR" in
/) echo "test-new-machine: refusing root $DIR" >&2; exit 2 ;;
esac
SRC=/root/mod_replay_sp
MIRROR=http://deb.debian.org/debian
MOUNTS="proc sys dev dev/pts dev/shm"

t0=$(date +%s)
elapsed() { echo "$(($(date +%s) - $1)) s"; }

mounted() { mountpoint -q "$DIR/$1"; }
# Processes whose root is the throwaway root (e.g. a server a test left).
root_pids() {
    local p r
    for p in /proc/[0-9]*; do
        r=$(readlink "$p/root" 2>/dev/null) || continue
        [ "$r" = "$DIR" ] && echo "${p#/proc/}"
    done
}
cleanup() {
    local rc=$? pids m i
    set +e
    trap - EXIT INT TERM
    pids=$(root_pids)
    if [ -n "$pids" ]; then
        echo "test-new-machine: still running in $DIR, stopped:"
        for p in $pids; do ps -o pid=,args= -p "$p"; done
        kill -TERM $pids 2>/dev/null
        for i in $(seq 50); do
            [ -n "$(root_pids)" ] || break
            sleep 0.2
        done
        pids=$(root_pids)
        [ -z "$pids" ] || kill -KILL $pids 2>/dev/null
        sleep 0.5
    fi
    for m in $(echo "$MOUNTS" | tr ' ' '\n' | tac); do
        if mounted "$m"; then
            umount "$DIR/$m" || { sleep 1; umount -l "$DIR/$m"; } ||
                echo "test-new-machine: could not unmount $DIR/$m"
        fi
    done
    echo "test-new-machine: exit status $rc, wall time $(elapsed "$t0")"
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Nothing may be mounted in an old root before it is reused or deleted.
for m in $MOUNTS; do
    if [ -d "$DIR/$m" ] && mounted "$m"; then
        echo "test-new-machine: $DIR/$m is mounted (another run?)" >&2
        trap - EXIT
        exit 2
    fi
done
if [ "$FRESH" = 1 ] && [ -e "$DIR" ]; then
    echo "== deleting $DIR"
    rm -rf --one-file-system "$DIR"
fi

if [ ! -f "$DIR/.rsp-newmachine-base" ]; then
    t=$(date +%s)
    echo "== debootstrap --variant=minbase bookworm $DIR $MIRROR"
    rm -rf --one-file-system "$DIR"
    mkdir -p "$DIR"
    debootstrap --variant=minbase bookworm "$DIR" "$MIRROR" >"$DIR.debootstrap.log" 2>&1 || {
        tail -n 30 "$DIR.debootstrap.log"
        echo "test-new-machine: debootstrap failed (log: $DIR.debootstrap.log)"
        exit 1
    }
    rm -f "$DIR/etc/apt/sources.list"
    cat >"$DIR/etc/apt/sources.list.d/debian.sources" <<EOF
Types: deb
URIs: $MIRROR
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: http://deb.debian.org/debian-security
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
    printf '127.0.0.1\tlocalhost\n::1\tlocalhost\n' >"$DIR/etc/hosts"
    printf '#!/bin/sh\n# test-new-machine.sh: no services start in this root\nexit 101\n' \
        >"$DIR/usr/sbin/policy-rc.d"
    chmod 755 "$DIR/usr/sbin/policy-rc.d"
    echo "debootstrap done in $(elapsed "$t")"
fi
cp -L /etc/resolv.conf "$DIR/etc/resolv.conf"

mount -t proc proc "$DIR/proc"
mount -t sysfs sysfs "$DIR/sys"
mount --bind /dev "$DIR/dev"
mount --bind /dev/pts "$DIR/dev/pts"
mount -t tmpfs -o mode=1777,nosuid,nodev shm "$DIR/dev/shm"

# in_root COMMAND: bash -c COMMAND in the root, with a clean environment.
in_root() {
    chroot "$DIR" /usr/bin/env -i HOME=/root LANG=C.UTF-8 TERM="${TERM:-dumb}" CI=true \
        PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
        /bin/bash -c "$1"
}

if [ ! -f "$DIR/.rsp-newmachine-base" ]; then
    t=$(date +%s)
    echo "== apt-get install git ca-certificates (the clone)"
    in_root 'apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends git ca-certificates >/dev/null'
    date -u +%FT%TZ >"$DIR/.rsp-newmachine-base"
    echo "done in $(elapsed "$t")"
fi

if [ "$CLONE" = 1 ]; then
    t=$(date +%s)
    rm -rf --one-file-system "$DIR$SRC" "$DIR/tmp/rsp-repo.bundle"
    if [ -d "$REPO" ]; then
        echo "== git clone -b $BRANCH $REPO (committed $BRANCH: $(git -C "$REPO" rev-parse --short "$BRANCH"), through a bundle)"
        git -C "$REPO" bundle create "$DIR/tmp/rsp-repo.bundle" "$BRANCH" 2>/dev/null
        in_root "git clone -q -b $BRANCH /tmp/rsp-repo.bundle $SRC"
        rm -f "$DIR/tmp/rsp-repo.bundle"
    else
        echo "== git clone -b $BRANCH $REPO"
        in_root "git clone -q -b $BRANCH '$REPO' $SRC"
    fi
    echo "clone done in $(elapsed "$t"): $(in_root "git -C $SRC log -1 --format='%h %s'")"
fi

t=$(date +%s)
echo "== in $DIR:$SRC: $CMD"
rc=0
in_root "cd $SRC && $CMD" || rc=$?
echo "== $CMD: exit status $rc, wall time $(elapsed "$t")"
exit "$rc"
