#!/bin/bash
# Test the Debian package libapache2-mod-replay-sp, as root on Debian 12:
#
#  (a) build it with "dpkg-buildpackage -us -uc -b" from a copy of the
#      working tree: the files "git ls-files --cached --others
#      --exclude-standard" lists, so uncommitted work is packaged. The tree
#      itself is not touched (no configure run in it, no build files left in
#      its debian/);
#  (b) check the package's file list (dpkg -c), control fields, conffiles
#      and maintainer scripts, and that "apt-get install ./the.deb" on a
#      Debian 12 without Apache brings apache2 (a2enmod, apache2ctl,
#      apache2.conf) with it: its Recommends, and apt-get --simulate against
#      a copy of dpkg's status without apache2 and what depends on it;
#  (c) install it (apt-get install ./the.deb), then, in a private copy of
#      the Debian Apache layout (APACHE_CONFDIR with its own envvars, ports,
#      run, log and lock directories and a2enmod state directory):
#      a2enmod replay_sp (and its dependencies), apache2ctl configtest, a
#      site with an SP, a real redis-server on a free 127.0.0.1 port,
#      apache2 started from that layout, one response signed by the test
#      IdP posted to the ACS (303 + Set-Cookie), the same response again
#      (403);
#  (d) purge it and check that nothing of it is left (no file it installed,
#      nothing naming replay_sp in /etc/apache2 or /var/lib/apache2), that
#      /etc/apache2 is as it was before, and /var/lib/apache2 (a2enmod's
#      state) too, but for empty state folders of Apache's own (such as
#      module/disabled_by_maint, which the purge's dismod creates on a
#      machine where no package had disabled a module before).
#
# It refuses to run if the package, or a "make install" of the module, is
# already on the machine. Installing the package does what Debian's Apache
# module packages do: its postinst enables the module in /etc/apache2 and
# restarts the apache2 service through invoke-rc.d (where policy-rc.d and
# the init system allow it); the purge disables it again. Nothing else in /etc/apache2 is changed. Everything
# started here (redis-server, apache2 from the private layout) is stopped
# by PID; on failure or interruption a trap stops it and purges the package.
# Usage: bash scripts/test-package.sh   (the last line is "N passed, M failed")
#        RSP_PACKAGE_OUT=DIR bash scripts/test-package.sh   keeps a copy of
#        the built .deb files in DIR
set -eu
cd "$(dirname "$0")/.."
REPO=$(pwd)

PKG=libapache2-mod-replay-sp
PY=/usr/bin/python3
MODULE=/usr/lib/apache2/modules/mod_replay_sp.so
TOOL=/usr/bin/replay-sp
DOC=usr/share/doc/$PKG
AVAIL=/etc/apache2/mods-available
ENABLED=/etc/apache2/mods-enabled

# Nothing of the caller's Apache environment may leak into the package's
# maintainer scripts: a2enmod and apache2ctl read APACHE_CONFDIR and others.
for v in $(env | sed -n 's/^\(APACHE[A-Za-z0-9_]*\)=.*/\1/p'); do
    unset "$v"
done
export LC_ALL=C

passed=0
failed=0
tmp=""
installed_by_us=0
apache_pid=""
redis_pid=""

ok() { passed=$((passed + 1)); echo "ok   - $*"; }
bad() { failed=$((failed + 1)); echo "FAIL - $*"; }
# check DESCRIPTION COMMAND [ARGS...]: one check, counted.
check() {
    local desc=$1
    shift
    if "$@"; then ok "$desc"; else bad "$desc"; fi
}
# die MESSAGE: a failure after which the test cannot go on (the trap
# cleans up and prints the count).
die() {
    bad "$*"
    exit 1
}
log() { echo "== $*"; }

# --- small predicates the checks use -------------------------------------
pid_alive() {
    [ -n "$1" ] && [ -e "/proc/$1" ] && kill -0 "$1" 2>/dev/null &&
        ! grep -q '^State:[[:space:]]*Z' "/proc/$1/status" 2>/dev/null
}
pid_gone() { ! pid_alive "$1"; }
# wait_gone PID SECONDS
wait_gone() {
    local i=0 n=$(($2 * 10))
    while pid_alive "$1" && [ "$i" -lt "$n" ]; do
        sleep 0.1
        i=$((i + 1))
    done
    pid_gone "$1"
}
# stop_pid PID NAME: SIGTERM, a bounded wait, then SIGKILL.
stop_pid() {
    local pid=$1
    pid_alive "$pid" || return 0
    kill -TERM "$pid" 2>/dev/null || true
    if ! wait_gone "$pid" 20; then
        echo "$2 (pid $pid) did not stop within 20 s: SIGKILL"
        kill -KILL "$pid" 2>/dev/null || true
        wait_gone "$pid" 10 || true
    fi
}
port_open() {
    timeout 5 "$PY" - "$1" <<'EOF'
import socket, sys
s = socket.socket()
s.settimeout(0.5)
try:
    s.connect(("127.0.0.1", int(sys.argv[1])))
except OSError:
    sys.exit(1)
EOF
}
port_closed() { ! port_open "$1"; }
free_port() {
    timeout 5 "$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
pkg_state() { dpkg-query -W -f='${db:Status-Abbrev}' "$PKG" 2>/dev/null || true; }
pkg_present() {
    case "$(pkg_state)" in
        "" | un*) return 1 ;;
        *) return 0 ;;
    esac
}
pkg_installed_version() { [ "$(dpkg-query -W -f='${db:Status-Abbrev}${Version}' "$PKG" 2>/dev/null)" = "ii $1" ]; }
pkg_unknown() { ! dpkg -L "$PKG" >/dev/null 2>&1; }
dpkg_lists() {
    local f l
    l=$(dpkg -L "$PKG") || return 1
    for f; do echo "$l" | grep -qxF -- "$f" || return 1; done
}
all_files() {
    local f
    for f; do [ -f "$f" ] || return 1; done
}
# links_to DIR NAME...: DIR/NAME is a symlink to ../mods-available/NAME
links_to() {
    local d=$1 n
    shift
    for n; do [ "$(readlink "$d/$n")" = "../mods-available/$n" ] || return 1; done
}
not_there() {
    local f
    for f; do if [ -e "$f" ] || [ -L "$f" ]; then return 1; fi; done
}
contains() { grep -qE -- "$2" "$1"; }
lacks() { ! grep -qE -- "$2" "$1"; }
has_line() { grep -qxF -- "$2" "$1"; }
string_matches() { echo "$1" | grep -qE -- "$2"; }
only_comments() { ! grep -vqE '^[[:space:]]*(#|$)' "$1"; }
empty_file() { [ ! -s "$1" ]; }
# quiet LOG COMMAND...: run it with its output in LOG (shown if it fails)
quiet() {
    local out=$1
    shift
    if "$@" >"$out" 2>&1; then return 0; fi
    cat "$out"
    return 1
}
stripped_module() {
    file -L "$1" | grep -q ', stripped' &&
        readelf --dyn-syms -W "$1" | grep -qE ' replay_sp_module$'
}
# A listing of a directory tree: type, mode, owner, link target, SHA-256.
snapshot() {
    [ -d "$1" ] || return 0
    (
        cd "$1"
        find . -printf '%y %m %u:%g %p -> %l\n' | sort
        find . -type f -print0 | sort -z | xargs -0 -r sha256sum
    )
}
purge_pkg() {
    DEBIAN_FRONTEND=noninteractive timeout 900 apt-get purge -y -q \
        -o DPkg::Lock::Timeout=300 "$PKG"
}
# The apache2 started from the private layout: its PidFile's pid, and only
# if that process runs with the private configuration directory.
our_apache_pid() {
    local pid
    [ -n "$tmp" ] && [ -s "$tmp/run/apache2.pid" ] || return 1
    pid=$(cat "$tmp/run/apache2.pid")
    pid_alive "$pid" || return 1
    tr '\0' ' ' <"/proc/$pid/cmdline" | grep -qF -- "-d $tmp/apache2 " || return 1
    echo "$pid"
}

cleanup() {
    local rc=$? pid
    set +e
    trap - EXIT INT TERM
    if pid=$(our_apache_pid); then apache_pid=$pid; fi
    if [ -n "$apache_pid" ] && pid_alive "$apache_pid"; then
        echo "cleanup: stopping apache2 (pid $apache_pid)"
        stop_pid "$apache_pid" apache2
    fi
    if [ -n "$redis_pid" ] && pid_alive "$redis_pid"; then
        echo "cleanup: stopping redis-server (pid $redis_pid)"
        stop_pid "$redis_pid" redis-server
    fi
    if [ "$installed_by_us" = 1 ] && pkg_present; then
        echo "cleanup: purging $PKG"
        if ! purge_pkg >"$tmp/cleanup-purge.log" 2>&1; then
            cat "$tmp/cleanup-purge.log"
            failed=$((failed + 1))
        fi
    fi
    if [ -n "$tmp" ] && [ -d "$tmp" ]; then
        if [ "$failed" -gt 0 ] || [ "$rc" -ne 0 ]; then
            echo "logs and files kept in $tmp"
        else
            rm -rf "$tmp"
        fi
    fi
    if [ "$rc" -ne 0 ] && [ "$failed" -eq 0 ]; then failed=1; fi
    echo "$passed passed, $failed failed"
    [ "$failed" -eq 0 ] || exit 1
    exit 0
}
trap cleanup EXIT
trap 'exit 130' INT TERM

start_time=$(date +%s)

# ------------------------------------------------------------------------
log "preconditions"
[ "$(id -u)" = 0 ] || die "must run as root (it installs and purges $PKG)"
if pkg_present; then
    die "$PKG is already on this machine (dpkg state '$(pkg_state)'): this test installs and purges it, and would not leave the machine as it found it. Remove it first: apt-get purge -y $PKG"
fi
for f in "$MODULE" "$TOOL" "$AVAIL/replay_sp.load" "$AVAIL/replay_sp.conf" \
    "$ENABLED/replay_sp.load" "$ENABLED/replay_sp.conf"; do
    if ! not_there "$f"; then
        die "$f exists but belongs to no package (a \"make install\"?): the package would overwrite it and its purge would delete it. Remove it first"
    fi
done
scripts/install-deps.sh
missing=""
for c in dpkg-buildpackage:dpkg-dev dh:debhelper dh_apache2:apache2-dev \
    gcc:build-essential g++:build-essential file:file readelf:binutils \
    apache2:apache2 apache2ctl:apache2 a2enmod:apache2 \
    redis-server:redis-server redis-cli:redis-tools openssl:openssl \
    xmlsec1:xmlsec1 git:git; do
    command -v "${c%%:*}" >/dev/null 2>&1 || missing="$missing ${c#*:}"
done
[ -x "$PY" ] || missing="$missing python3"
"$PY" -c 'import lasso' 2>/dev/null || missing="$missing python3-lasso"
[ -z "$missing" ] || die "missing Debian packages:$missing (apt-get install$missing)"
ok "running as root, $PKG not installed, build and test tools present"

tmp=$(mktemp -d /tmp/rsp-test-package.XXXXXXXX)
# www-data (the private apache2's children) and _apt (apt-get reading the
# .deb) must be able to traverse it.
chmod 755 "$tmp"
mkdir -p "$tmp/build/src" "$tmp/run" "$tmp/lock" "$tmp/log" "$tmp/htdocs"

snapshot /etc/apache2 >"$tmp/etc-apache2.before"
snapshot /var/lib/apache2 >"$tmp/var-lib-apache2.before"
live_configtest_before=0
timeout 60 apache2ctl configtest >"$tmp/live-configtest.before" 2>&1 || live_configtest_before=$?
ok "recorded /etc/apache2 ($(wc -l <"$tmp/etc-apache2.before") lines) and /var/lib/apache2"

# ------------------------------------------------------------------------
log "(a) build from a copy of the working tree"
src="$tmp/build/src"
git -C "$REPO" ls-files -z --cached --others --exclude-standard |
    while IFS= read -r -d '' f; do
        # skip files deleted in the working tree but still in the index
        if [ -e "$REPO/$f" ] || [ -L "$REPO/$f" ]; then printf '%s\0' "$f"; fi
    done | tar -C "$REPO" --null -T - -cf - | tar -C "$src" -xf -
[ -f "$src/debian/control" ] || die "debian/control was not copied"
ok "copied $(find "$src" -type f | wc -l) files of the working tree to $src"
version=$(dpkg-parsechangelog -l "$src/debian/changelog" -S Version)
deb="$tmp/build/${PKG}_${version}_$(dpkg --print-architecture).deb"
build_start=$(date +%s)
if ! (cd "$src" && DEB_BUILD_OPTIONS="parallel=$(nproc)" timeout 1200 \
    dpkg-buildpackage -us -uc -b) >"$tmp/build.log" 2>&1; then
    tail -n 60 "$tmp/build.log"
    die "dpkg-buildpackage failed (log: $tmp/build.log)"
fi
[ -f "$deb" ] || die "dpkg-buildpackage made no $deb"
ok "dpkg-buildpackage -us -uc -b built $(basename "$deb") in $(($(date +%s) - build_start)) s"
if [ -n "${RSP_PACKAGE_OUT:-}" ]; then
    mkdir -p "$RSP_PACKAGE_OUT"
    cp "$tmp"/build/*.deb "$RSP_PACKAGE_OUT"/
    echo "copied $(cd "$tmp/build" && echo *.deb) to $RSP_PACKAGE_OUT"
fi
junk=""
for f in tmp .debhelper files debhelper-build-stamp "$PKG" "$PKG.substvars" \
    "$PKG.debhelper.log" autoreconf.before autoreconf.after; do
    if [ -e "$REPO/debian/$f" ]; then junk="$junk debian/$f"; fi
done
check "the working tree has no build files in debian/ (${junk:-none})" [ -z "$junk" ]

# ------------------------------------------------------------------------
log "(b) contents of the package"
dpkg -c "$deb" >"$tmp/contents.txt"
# The path of each entry ("./..."; directories end in "/"; no link targets).
awk '{ p = $6; for (i = 7; i <= NF; i++) p = p " " $i; sub(/ -> .*/, "", p); print p }' \
    "$tmp/contents.txt" >"$tmp/paths.txt"
has() { grep -qxF -- "./$1" "$tmp/paths.txt"; }
has_doc() { has "$1" || has "$1.gz"; }
check "./${MODULE#/}" has "${MODULE#/}"
check ".$AVAIL/replay_sp.load" has "${AVAIL#/}/replay_sp.load"
check ".$AVAIL/replay_sp.conf" has "${AVAIL#/}/replay_sp.conf"
check "./$DOC/copyright" has "$DOC/copyright"
check "./$DOC/changelog.Debian.gz" has "$DOC/changelog.Debian.gz"
check "./$DOC/README.md(.gz)" has_doc "$DOC/README.md"
for f in "$src"/docs/*.md; do
    check "./$DOC/docs/$(basename "$f")(.gz)" has_doc "$DOC/docs/$(basename "$f")"
done
(cd "$src/conf" && find . -type f | sed 's|^\./||' | sort) >"$tmp/conf-files.txt"
while IFS= read -r f; do
    check "./$DOC/examples/$f(.gz) (conf/$f)" has_doc "$DOC/examples/$f"
done <"$tmp/conf-files.txt"
if [ -f "$src/conf/prometheus/replay-sp-rules.yml" ]; then
    check "the Prometheus rules: ./$DOC/examples/prometheus/replay-sp-rules.yml" \
        has_doc "$DOC/examples/prometheus/replay-sp-rules.yml"
fi
ships_tool=0
if grep -qx "${TOOL#/}" "$src/debian/$PKG.install"; then
    ships_tool=1
    check ".$TOOL" has "${TOOL#/}"
    check "./usr/share/man/man1/replay-sp.1.gz" has usr/share/man/man1/replay-sp.1.gz
fi
# Every file must be one of these.
grep -v '/$' "$tmp/paths.txt" |
    grep -vE "^\./(etc/apache2/mods-available/replay_sp\.(load|conf)|usr/lib/apache2/modules/mod_replay_sp\.so|$DOC/(README\.md(\.gz)?|copyright|changelog\.Debian\.gz|docs/[^/]+\.md(\.gz)?|examples/.+)|usr/share/man/man[1-8]/[^/]+\.[1-8]\.gz|usr/bin/[^/]+)$" \
        >"$tmp/unexpected.txt" || true
check "no other file (module, mods-available, docs, examples, man pages, usr/bin only): $(tr '\n' ' ' <"$tmp/unexpected.txt")" \
    empty_file "$tmp/unexpected.txt"
grep -E '\.(la|a|o|lo|trs|log)$|/\.libs/|/\.deps/|autom4te|/build-aux/|/config\.(status|h|log)$|/Makefile(\.in|\.am)?$|/tests?/|/debian/' \
    "$tmp/paths.txt" >"$tmp/junk.txt" || true
check "no .la or build junk: $(tr '\n' ' ' <"$tmp/junk.txt")" empty_file "$tmp/junk.txt"

mkdir -p "$tmp/deb/x" "$tmp/deb/control"
dpkg-deb -x "$deb" "$tmp/deb/x"
dpkg-deb -e "$deb" "$tmp/deb/control"
load="$tmp/deb/x$AVAIL/replay_sp.load"
modconf="$tmp/deb/x$AVAIL/replay_sp.conf"
depends=$(dpkg-deb -f "$deb" Depends)
check "Depends has the Apache ABI from dh_apache2 (apache2-api-NNNNNNNN): $depends" \
    string_matches "$depends" '(^|, )apache2-api-[0-9]{8}(,|$)'
check "Depends has the shared libraries (liblasso3, libhiredis, libssl3)" \
    string_matches "$depends" 'liblasso3.*libssl3|libssl3.*liblasso3'
# The README's steps after "apt-get install ./the.deb" (a2enmod replay_sp,
# apache2ctl configtest, /etc/apache2/apache2.conf) need Debian's apache2
# package; the Depends (apache2-api, through it apache2-bin) do not bring it.
recommends=$(dpkg-deb -f "$deb" Recommends)
check "Recommends has apache2 (a2enmod, apache2ctl, apache2.conf): ${recommends:-none}" \
    string_matches "$recommends" '(^|,) *apache2 *(\([^)]*\))? *([,|]|$)'
check "a2enmod, apache2ctl and /etc/apache2/apache2.conf are apache2's (dpkg -S)" \
    sh -c '[ "$(dpkg -S /usr/sbin/a2enmod /usr/sbin/apache2ctl /etc/apache2/apache2.conf 2>/dev/null |
        sed "s/: .*//" | sort -u)" = apache2 ]'
# dpkg's status as on this machine, less apache2, apache2-bin, apache2-data,
# apache2-utils and every package that depends (Depends, Pre-Depends) on
# one of them, or on a package so left out, or on what only they provide.
cat >"$tmp/status_without.py" <<'PYEOF'
# status_without.py STATUS PACKAGE...: STATUS without PACKAGE... and the
# installed packages that need them (the names left out on stderr).
import re, sys
path, removed = sys.argv[1], set(sys.argv[2:])
with open(path, encoding="utf-8", errors="surrogateescape") as f:
    stanzas = [s for s in f.read().split("\n\n") if s.strip()]
def fields(stanza):
    d = {}
    for line in stanza.split("\n"):
        if line[:1] not in (" ", "\t"):
            key, _, value = line.partition(":")
            d[key] = value.strip()
    return d
def groups(value):
    """A relationship field as [[name, ...], ...] (alternatives)."""
    return [[re.split(r"[\s(:]", a.strip(), maxsplit=1)[0] for a in g.split("|")]
            for g in value.split(",") if g.strip()]
pkgs = [(s, fields(s)) for s in stanzas]
installed = [f for _, f in pkgs if f.get("Status", "").endswith(" installed")]
changed = True
while changed:
    changed = False
    present = [f for f in installed if f["Package"] not in removed]
    there = {f["Package"] for f in present}
    for f in present:
        there.update(g[0] for g in groups(f.get("Provides", "")))
    for f in present:
        for g in groups(f.get("Depends", "")) + groups(f.get("Pre-Depends", "")):
            if not any(a in there for a in g):
                removed.add(f["Package"])
                changed = True
                break
sys.stdout.write("\n\n".join(s for s, f in pkgs if f.get("Package") not in removed) + "\n")
sys.stderr.write(" ".join(sorted(removed)) + "\n")
PYEOF
"$PY" "$tmp/status_without.py" /var/lib/dpkg/status apache2 apache2-bin apache2-data apache2-utils \
    >"$tmp/status-without-apache2" 2>"$tmp/status-without-apache2.left-out" ||
    die "making a dpkg status without apache2 failed"
check "a dpkg status without apache2 and the $(wc -w <"$tmp/status-without-apache2.left-out") installed packages that need it" \
    sh -c '! grep -qE "^Package: apache2(-bin)?\$" "$1" && grep -qx "Package: dpkg" "$1"' _ "$tmp/status-without-apache2"
# "apt-get install ./the.deb" as the README has it, simulated (nothing is
# installed, no lock taken), with that status as the machine's.
if ! timeout 300 apt-get install -s -o Dir::State::status="$tmp/status-without-apache2" \
    "$deb" >"$tmp/simulate.txt" 2>&1; then
    cat "$tmp/simulate.txt"
    bad "apt-get install --simulate ./$(basename "$deb") without apache2 failed"
else
    sed -n 's/^Inst \([^ ]*\) .*/\1/p' "$tmp/simulate.txt" >"$tmp/simulate-inst.txt"
    check "apt-get install --simulate ./the.deb without apache2 installs $PKG, apache2-bin and apache2 (of $(wc -l <"$tmp/simulate-inst.txt"))" \
        sh -c 'for p in "$2" apache2-bin apache2; do grep -qxF "$p" "$1" || exit 1; done' _ \
        "$tmp/simulate-inst.txt" "$PKG"
fi
check "replay_sp.load: LoadModule replay_sp_module $MODULE" \
    has_line "$load" "LoadModule replay_sp_module $MODULE"
check "replay_sp.load: # Depends: authn_core authz_core" \
    has_line "$load" "# Depends: authn_core authz_core"
check "replay_sp.conf enables nothing (every line is blank or a comment)" only_comments "$modconf"
check "replay_sp.conf shows the store URL, commented (#ReplaySPStore)" contains "$modconf" '^#ReplaySPStore '
check "replay_sp.conf shows the store timeout, commented (#ReplaySPStoreTimeout)" contains "$modconf" '^#ReplaySPStoreTimeout '
check "replay_sp.load and replay_sp.conf are conffiles" \
    sh -c 'grep -qx "$2/replay_sp.load" "$1" && grep -qx "$2/replay_sp.conf" "$1"' _ "$tmp/deb/control/conffiles" "$AVAIL"
check "postinst enables the module (apache2-maintscript-helper: enmod replay_sp)" \
    contains "$tmp/deb/control/postinst" 'apache2_invoke enmod'
check "prerm disables it on remove (dismod)" contains "$tmp/deb/control/prerm" 'apache2_invoke dismod'
check "postrm forgets it on purge (dismod)" contains "$tmp/deb/control/postrm" 'apache2_invoke dismod'
check "the module is stripped and exports replay_sp_module" stripped_module "$tmp/deb/x$MODULE"

# ------------------------------------------------------------------------
log "(c) install"
installed_by_us=1
if ! DEBIAN_FRONTEND=noninteractive timeout 900 apt-get install -y -q \
    -o DPkg::Lock::Timeout=300 "$deb" >"$tmp/install.log" 2>&1; then
    cat "$tmp/install.log"
    die "apt-get install $deb failed"
fi
check "dpkg: $PKG $version installed" pkg_installed_version "$version"
check "dpkg -L lists the module, replay_sp.load and replay_sp.conf" \
    dpkg_lists "$MODULE" "$AVAIL/replay_sp.load" "$AVAIL/replay_sp.conf"
# What it installed (files and links, not the directories it shares), for
# the check after the purge.
dpkg -L "$PKG" | while IFS= read -r f; do
    if [ -L "$f" ] || { [ -e "$f" ] && [ ! -d "$f" ]; }; then echo "$f"; fi
done >"$tmp/installed-files.txt"
check "the module, replay_sp.load and replay_sp.conf are installed" \
    all_files "$MODULE" "$AVAIL/replay_sp.load" "$AVAIL/replay_sp.conf"
check "the postinst enabled replay_sp in /etc/apache2 (as Debian's module packages do)" \
    links_to "$ENABLED" replay_sp.load replay_sp.conf
if [ "$live_configtest_before" = 0 ]; then
    check "the system configuration still passes apache2ctl configtest" \
        quiet "$tmp/live-configtest.after" timeout 60 apache2ctl configtest
fi
if [ "$ships_tool" = 1 ]; then
    check "$TOOL --help runs" sh -c '"$1" --help >/dev/null' _ "$TOOL"
    check "man page: /usr/share/man/man1/replay-sp.1.gz" all_files /usr/share/man/man1/replay-sp.1.gz
fi

log "(c) a private copy of the Debian Apache layout"
conf="$tmp/apache2"
state="$tmp/state"
cp -a /etc/apache2 "$conf"
cp -a /var/lib/apache2 "$state"
http_port=$(free_port)
cat >"$conf/envvars" <<EOF
# Private layout of scripts/test-package.sh
unset HOME
export APACHE_RUN_USER=www-data
export APACHE_RUN_GROUP=www-data
export APACHE_PID_FILE=$tmp/run/apache2.pid
export APACHE_RUN_DIR=$tmp/run
export APACHE_LOCK_DIR=$tmp/lock
export APACHE_LOG_DIR=$tmp/log
export APACHE_STATE_DIRECTORY=$state
export LANG=C
EOF
printf 'Listen 127.0.0.1:%s\n' "$http_port" >"$conf/ports.conf"
# a2enmod, a2dismod, a2ensite and apache2ctl read APACHE_CONFDIR and the
# envvars file in it; a2enmod keeps its state in APACHE_STATE_DIRECTORY
# (a2query does not honour APACHE_CONFDIR and is not used here).
penv() {
    env APACHE_CONFDIR="$conf" APACHE_ENVVARS="$conf/envvars" \
        APACHE_STATE_DIRECTORY="$state" timeout 120 "$@"
}
# penv_ok LOG COMMAND...: run it in the private layout, its output in LOG
penv_ok() {
    local out=$1
    shift
    if penv "$@" >"$out" 2>&1; then return 0; fi
    cat "$out"
    return 1
}
ok "private layout in $conf: Listen 127.0.0.1:$http_port, a2enmod state in $state, run/log/lock in $tmp"

# The copy has replay_sp enabled (the postinst did it): disable it, and one
# of its dependencies, then a2enmod must bring both back.
penv_ok "$tmp/a2dismod.log" a2dismod -q replay_sp || die "a2dismod replay_sp (private layout) failed"
penv_ok "$tmp/a2dismod-2.log" a2dismod -q -f authn_core || die "a2dismod -f authn_core (private layout) failed"
check "private layout: replay_sp and authn_core disabled" \
    not_there "$conf/mods-enabled/replay_sp.load" "$conf/mods-enabled/authn_core.load"
penv_ok "$tmp/a2enmod.log" a2enmod replay_sp || die "a2enmod replay_sp (private layout) failed"
ok "a2enmod replay_sp: $(tr '\n' ' ' <"$tmp/a2enmod.log")"
check "a2enmod linked mods-enabled/replay_sp.load and replay_sp.conf" \
    links_to "$conf/mods-enabled" replay_sp.load replay_sp.conf
check "a2enmod enabled its dependency authn_core (# Depends:)" \
    links_to "$conf/mods-enabled" authn_core.load
check "a2enmod wrote its state in the private state directory" \
    all_files "$state/module/enabled_by_admin/replay_sp"
check "apache2ctl configtest passes with replay_sp enabled and nothing else configured" \
    penv_ok "$tmp/configtest-1.log" apache2ctl configtest
penv apache2ctl -M >"$tmp/modules.txt" 2>&1 || true
check "apache2ctl -M lists replay_sp_module (shared)" contains "$tmp/modules.txt" 'replay_sp_module \(shared\)'

log "(c) redis-server, SP key pair, test IdP, site"
redis_port=$(free_port)
mkdir -p "$tmp/redis"
redis-server --port "$redis_port" --bind 127.0.0.1 --save "" --appendonly yes \
    --maxmemory 256mb --maxmemory-policy noeviction --dir "$tmp/redis" \
    --logfile "$tmp/redis/redis.log" --daemonize no --protected-mode yes \
    </dev/null >"$tmp/redis/redis.stdout" 2>&1 &
redis_pid=$!
rcli() { timeout 5 redis-cli -h 127.0.0.1 -p "$redis_port" "$@"; }
i=0
until [ "$(rcli ping 2>/dev/null)" = PONG ]; do
    i=$((i + 1))
    pid_alive "$redis_pid" || { cat "$tmp/redis/redis.log"; die "redis-server exited"; }
    [ "$i" -lt 100 ] || die "redis-server did not answer PING within 20 s"
    sleep 0.2
done
store="redis://127.0.0.1:$redis_port/0"
ok "redis-server (pid $redis_pid) on 127.0.0.1:$redis_port, maxmemory 256mb, noeviction, appendonly"

# The packaged replay_sp.conf with its store lines uncommented: the site
# below inherits the main server's store.
sed -i -e "s|^#ReplaySPStore redis://127.0.0.1:6379/0\$|ReplaySPStore $store|" \
    -e 's|^#ReplaySPStoreTimeout 1000$|ReplaySPStoreTimeout 1000|' "$conf/mods-available/replay_sp.conf"
check "private replay_sp.conf: ReplaySPStore and ReplaySPStoreTimeout uncommented" \
    sh -c 'grep -qx "ReplaySPStore $2" "$1" && grep -qx "ReplaySPStoreTimeout 1000" "$1"' _ \
    "$conf/mods-available/replay_sp.conf" "$store"
check "apache2ctl configtest passes with a ReplaySPStore and no SP" \
    penv_ok "$tmp/configtest-2.log" apache2ctl configtest
if [ "$ships_tool" = 1 ]; then
    check "replay-sp check $store" sh -c '"$1" check "$2" >"$3" 2>&1' _ "$TOOL" "$store" "$tmp/tool-check.txt"
fi

public="http://127.0.0.1:$http_port"
sp_entity="$public/saml"
acs="$public/saml/acs"
idp_tool="$REPO/tests/idp/rsp_testidp.py"
timeout 60 "$PY" "$idp_tool" keypair --dir "$tmp/saml" --name sp --cn 127.0.0.1 >/dev/null ||
    die "making the SP key pair failed"
idp_md=$(timeout 60 "$PY" "$idp_tool" metadata --workdir "$tmp/idp") ||
    die "making the test IdP's metadata failed"
check "SP key pair and IdP metadata ($idp_md)" all_files "$tmp/saml/sp.key" "$tmp/saml/sp.crt" "$idp_md"

cat >"$conf/sites-available/replay-sp-test.conf" <<EOF
<VirtualHost 127.0.0.1:$http_port>
    ServerName $public
    UseCanonicalName On
    DocumentRoot $tmp/htdocs
    <Directory $tmp/htdocs>
        Require all granted
    </Directory>
    <Location />
        AuthType ReplaySP
        Require valid-user
        ReplaySPEntityID $sp_entity
        ReplaySPKeyFile $tmp/saml/sp.key
        ReplaySPCertFile $tmp/saml/sp.crt
        ReplaySPIdPMetadataFile $idp_md
        ReplaySPAllowUnsolicited On
    </Location>
</VirtualHost>
EOF
echo "signed in" >"$tmp/htdocs/index.html"
for s in "$conf"/sites-enabled/*.conf; do
    if [ -e "$s" ] || [ -L "$s" ]; then
        penv_ok "$tmp/a2dissite.log" a2dissite -q "$(basename "$s" .conf)" ||
            die "a2dissite $(basename "$s" .conf) (private layout) failed"
    fi
done
penv_ok "$tmp/a2ensite.log" a2ensite -q replay-sp-test || die "a2ensite replay-sp-test (private layout) failed"
check "a2ensite: sites-enabled/replay-sp-test.conf is the only site" \
    [ "$(ls "$conf/sites-enabled")" = replay-sp-test.conf ]
penv_ok "$tmp/configtest-3.log" apache2ctl configtest || die "apache2ctl configtest with the SP site failed"
ok "apache2ctl configtest passes with the SP site"

log "(c) apache2 from the private layout"
# "-k start", not "start": under systemd, apache2ctl start hands over to
# "systemctl start apache2@...", which knows nothing of this layout.
if ! penv_ok "$tmp/start.log" apache2ctl -k start; then
    cat "$tmp/log/error.log" 2>/dev/null || true
    die "apache2ctl -k start (private layout) failed"
fi
i=0
until apache_pid=$(our_apache_pid) && port_open "$http_port"; do
    i=$((i + 1))
    if [ "$i" -ge 100 ]; then
        cat "$tmp/log/error.log" 2>/dev/null || true
        die "apache2 did not listen on 127.0.0.1:$http_port within 20 s"
    fi
    sleep 0.2
done
ok "apache2 (pid $apache_pid) listens on 127.0.0.1:$http_port"

cat >"$tmp/http_request.py" <<'EOF'
# http_request.py METHOD PORT PATH [FILE-WITH-SAMLRESPONSE]: the status, Set-Cookie,
# Location and the first 300 bytes of the body, one per line. No redirects.
import http.client, sys, urllib.parse
method, port, path = sys.argv[1], int(sys.argv[2]), sys.argv[3]
body, headers = None, {}
if len(sys.argv) > 4:
    with open(sys.argv[4]) as f:
        body = urllib.parse.urlencode({"SAMLResponse": f.read().strip()})
    headers["Content-Type"] = "application/x-www-form-urlencoded"
c = http.client.HTTPConnection("127.0.0.1", port, timeout=20)
c.request(method, path, body=body, headers=headers)
r = c.getresponse()
data = r.read()
print("status:", r.status)
print("set-cookie:", r.getheader("Set-Cookie") or "")
print("location:", r.getheader("Location") or "")
print("body:", data[:300].decode("utf-8", "replace").replace("\n", " "))
EOF
http() { timeout 30 "$PY" "$tmp/http_request.py" "$@"; }

http GET "$http_port" /saml/metadata >"$tmp/metadata.txt" || die "GET /saml/metadata failed"
check "GET /saml/metadata: 200 and the SP's EntityDescriptor" \
    sh -c 'grep -qx "status: 200" "$1" && grep -qF "entityID=\"$2\"" "$1"' _ "$tmp/metadata.txt" "$sp_entity"
assertion_id="_pkgtest$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"
timeout 60 "$PY" "$idp_tool" mint --workdir "$tmp/idp" --sp-entity-id "$sp_entity" \
    --acs-url "$acs" --name-id alice --assertion-id "$assertion_id" >"$tmp/response.b64" ||
    die "minting a signed response failed"
check "the test IdP minted a signed SAMLResponse" all_files "$tmp/response.b64"
http POST "$http_port" /saml/acs "$tmp/response.b64" >"$tmp/acs-1.txt" || die "POST /saml/acs failed"
check "POST /saml/acs: 303 ($(head -n 1 "$tmp/acs-1.txt"))" has_line "$tmp/acs-1.txt" "status: 303"
check "POST /saml/acs: Set-Cookie replay_sp_session=..." contains "$tmp/acs-1.txt" '^set-cookie: replay_sp_session=.'
check "the claim is in redis (one rsp:a: key)" \
    [ "$(rcli --scan --pattern 'rsp:a:*' | wc -l)" = 1 ]
if [ "$ships_tool" = 1 ]; then
    check "replay-sp lookup finds the claim" \
        sh -c '"$1" lookup "$2" --issuer "$3" --assertion-id "$4" >"$5" 2>&1' _ \
        "$TOOL" "$store" https://idp.test.example/idp "$assertion_id" "$tmp/tool-lookup.txt"
fi
http POST "$http_port" /saml/acs "$tmp/response.b64" >"$tmp/acs-2.txt" || die "second POST /saml/acs failed"
check "the same response again: 403 ($(head -n 1 "$tmp/acs-2.txt"))" has_line "$tmp/acs-2.txt" "status: 403"
check "the same response again: no cookie" has_line "$tmp/acs-2.txt" "set-cookie: "
check "error log: sign-in accepted (RSP01002), replay refused (RSP01001)" \
    sh -c 'grep -q RSP01002 "$1" && grep -q RSP01001 "$1"' _ "$tmp/log/error.log"
check "error log: no child crashed" lacks "$tmp/log/error.log" 'AH00052|exit signal|seems to have exited'

log "(c) stop apache2 and redis-server"
stop_pid "$apache_pid" apache2
check "apache2 (pid $apache_pid) stopped" pid_gone "$apache_pid"
i=0
while port_open "$http_port" && [ "$i" -lt 50 ]; do
    sleep 0.2
    i=$((i + 1))
done
check "nothing listens on 127.0.0.1:$http_port" port_closed "$http_port"
stop_pid "$redis_pid" redis-server
check "redis-server (pid $redis_pid) stopped" pid_gone "$redis_pid"

# ------------------------------------------------------------------------
log "(d) purge"
if ! purge_pkg >"$tmp/purge.log" 2>&1; then
    cat "$tmp/purge.log"
    die "apt-get purge $PKG failed"
fi
installed_by_us=0
check "dpkg no longer knows $PKG (dpkg -L fails)" pkg_unknown
check "nothing of it is left: module, tool, mods-available, mods-enabled links, docs, a2enmod state" \
    not_there "$MODULE" "$TOOL" /usr/share/man/man1/replay-sp.1.gz \
    "$AVAIL/replay_sp.load" "$AVAIL/replay_sp.conf" \
    "$ENABLED/replay_sp.load" "$ENABLED/replay_sp.conf" "/$DOC" \
    /var/lib/apache2/module/enabled_by_maint/replay_sp /var/lib/apache2/module/enabled_by_admin/replay_sp \
    /var/lib/apache2/module/disabled_by_maint/replay_sp /var/lib/apache2/module/disabled_by_admin/replay_sp
snapshot /etc/apache2 >"$tmp/etc-apache2.after"
if diff -u "$tmp/etc-apache2.before" "$tmp/etc-apache2.after" >"$tmp/etc-apache2.diff"; then
    ok "/etc/apache2 is exactly as it was before the test"
else
    cat "$tmp/etc-apache2.diff"
    bad "/etc/apache2 differs from before the test"
fi
check "none of the $(wc -l <"$tmp/installed-files.txt") files and links it installed (dpkg -L) is left" \
    sh -c 'while IFS= read -r f; do [ -e "$f" ] || [ -L "$f" ] && { echo "left: $f"; exit 1; }; done <"$1"; exit 0' _ \
    "$tmp/installed-files.txt"
find /etc/apache2 /var/lib/apache2 -name '*replay_sp*' >"$tmp/named-after.txt" 2>/dev/null || true
check "nothing in /etc/apache2 or /var/lib/apache2 names replay_sp: $(tr '\n' ' ' <"$tmp/named-after.txt")" \
    empty_file "$tmp/named-after.txt"
# /var/lib/apache2 is a2enmod's and apache2-maintscript-helper's: a marker
# file per module, site or conf in {module,site,conf}/{en,dis}abled_by_
# {maint,admin}/, each folder made when first needed. The purge's dismod
# makes module/disabled_by_maint (and leaves it, empty) on a machine where
# no package had disabled a module before. Such a folder of Apache's own
# appearing empty is not something the package left; any other difference
# (a marker, a file, a folder of another name, one gone or changed) is.
snapshot /var/lib/apache2 >"$tmp/var-lib-apache2.after"
sort "$tmp/var-lib-apache2.before" >"$tmp/var-lib-apache2.before.sorted"
sort "$tmp/var-lib-apache2.after" >"$tmp/var-lib-apache2.after.sorted"
comm -13 "$tmp/var-lib-apache2.before.sorted" "$tmp/var-lib-apache2.after.sorted" >"$tmp/var-lib-apache2.added"
comm -23 "$tmp/var-lib-apache2.before.sorted" "$tmp/var-lib-apache2.after.sorted" >"$tmp/var-lib-apache2.gone"
state_folders='^d [0-7]+ root:root \.(/(module|site|conf)(/(en|dis)abled_by_(maint|admin))?)? -> $'
grep -E "$state_folders" "$tmp/var-lib-apache2.added" >"$tmp/var-lib-apache2.new-folders" || true
grep -vE "$state_folders" "$tmp/var-lib-apache2.added" >"$tmp/var-lib-apache2.other" || true
cat "$tmp/var-lib-apache2.gone" >>"$tmp/var-lib-apache2.other"
new_folders=$(sed -E 's|^d [0-7]+ root:root \.(.*) -> $|/var/lib/apache2\1|' "$tmp/var-lib-apache2.new-folders" | tr '\n' ' ')
if [ -s "$tmp/var-lib-apache2.other" ]; then
    diff -u "$tmp/var-lib-apache2.before" "$tmp/var-lib-apache2.after" || true
    bad "/var/lib/apache2 differs from before the test beyond Apache's own empty state folders: $(tr '\n' ' ' <"$tmp/var-lib-apache2.other")"
elif [ -n "$new_folders" ]; then
    # Only folders were added (a file in one would be a line of its own
    # above): they are empty of files.
    ok "/var/lib/apache2 (a2enmod state) is as it was before the test, but for Apache's own state folders, new and empty: $new_folders"
else
    ok "/var/lib/apache2 (a2enmod state) is exactly as it was before the test"
fi

echo "package $(basename "$deb"), run time $(($(date +%s) - start_time)) s"
