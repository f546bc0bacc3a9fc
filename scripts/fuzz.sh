#!/bin/sh
# Build the libFuzzer targets of tests/fuzz/ with clang 14 (ASan, UBSan,
# libFuzzer) and run them.
#
#   scripts/fuzz.sh [--seconds N] [target...]   fuzz each target N seconds
#                                               (default: 45 s shared by
#                                               the targets run)
#   scripts/fuzz.sh --regress [target...]       run the committed corpus once
#   scripts/fuzz.sh --crashes [target...]       run tests/fuzz/crashes/<target>/
#   scripts/fuzz.sh --build-only [target...]
#
# Each target fuzzes a copy of tests/fuzz/corpus/<target>/ (the committed
# corpus is never written to). Exits non-zero when a target crashes, leaks,
# times out, runs out of memory or prints a sanitizer report, after naming
# the target and the input that did it.
set -eu
cd "$(dirname "$0")/.."
top=$(pwd)
fz=tests/fuzz
build=$fz/build

ALL="fuzz_form fuzz_pct fuzz_url fuzz_redirect fuzz_records \
fuzz_record_codec fuzz_monitor fuzz_redirect_sig fuzz_saml_response \
fuzz_memcache fuzz_md_verify fuzz_discovery fuzz_decrypt fuzz_decrypt_id fuzz_xenc"
TOTAL_SECONDS=45

usage() {
    sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
}

mode=fuzz
seconds=
targets=
while [ $# -gt 0 ]; do
    case $1 in
    --seconds) [ $# -ge 2 ] || usage; seconds=$2; shift 2 ;;
    --seconds=*) seconds=${1#--seconds=}; shift ;;
    --regress) mode=regress; shift ;;
    --crashes) mode=crashes; shift ;;
    --build-only) mode=build; shift ;;
    -h|--help) usage ;;
    -*) echo "fuzz.sh: unknown option $1" >&2; usage ;;
    *)
        case " $ALL " in
        *" $1 "*) targets="$targets $1" ;;
        *) echo "fuzz.sh: unknown target $1 (targets: $ALL)" >&2; exit 2 ;;
        esac
        shift ;;
    esac
done
targets=${targets:-$ALL}
ntargets=$(echo $targets | wc -w)
if [ -n "$seconds" ]; then
    case $seconds in
    ''|*[!0-9]*|0) echo "fuzz.sh: --seconds takes a positive number" >&2; exit 2 ;;
    esac
else
    seconds=$((TOTAL_SECONDS / ntargets))
    [ "$seconds" -ge 1 ] || seconds=1
fi

# ---- toolchain ----

CC=${CC:-}
if [ -z "$CC" ]; then
    for c in clang-14 clang; do
        if command -v "$c" >/dev/null 2>&1; then CC=$c; break; fi
    done
fi
if [ -z "$CC" ] || ! "$CC" --version 2>/dev/null | grep -q 'clang version 14\.'; then
    echo "fuzz.sh: clang 14 is needed (Debian: apt-get install clang-14" \
         "libclang-rt-14-dev)" >&2
    exit 1
fi
rtdir=$("$CC" -print-runtime-dir 2>/dev/null || true)
if [ ! -f "$rtdir/libclang_rt.fuzzer-x86_64.a" ] \
   && [ ! -f "$rtdir/libclang_rt.fuzzer-$(uname -m).a" ]; then
    echo "fuzz.sh: libFuzzer for $CC is missing in $rtdir (Debian:" \
         "apt-get install libclang-rt-14-dev)" >&2
    exit 1
fi
PKGS="apr-1 apr-util-1 lasso libxml-2.0 glib-2.0 gobject-2.0 xmlsec1 hiredis openssl zlib libcurl"
if ! pkg_cflags=$(pkg-config --cflags $PKGS) || ! pkg_libs=$(pkg-config --libs $PKGS); then
    echo "fuzz.sh: pkg-config cannot find $PKGS (see scripts/install-deps.sh)" >&2
    exit 1
fi

SAN="-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -g -O1"
CFLAGS="$SAN -fno-omit-frame-pointer -Wall -Wextra -Wno-unused-parameter \
-Wno-missing-field-initializers -Wno-sign-compare"
CPPFLAGS="$pkg_cflags -I$top/mod_replay_sp -I$top/$fz"
LIBS="$pkg_libs -ldl -lpthread"
# libapr must call the targets' apr_palloc (fuzz_common.c: redzones).
LDFLAGS="$SAN -Wl,--export-dynamic-symbol=apr_palloc"

# ---- build ----

mkdir -p "$build/obj"
flags="$CC $CFLAGS $CPPFLAGS $LDFLAGS $LIBS"
if [ ! -f "$build/flags" ] || [ "$(cat "$build/flags")" != "$flags" ]; then
    rm -rf "$build/obj"
    mkdir -p "$build/obj"
    printf '%s\n' "$flags" >"$build/flags"
fi

# Whether $1 (an object) is older than its source or any header it read.
stale() {
    [ -f "$1" ] && [ -f "$1.d" ] || return 0
    for dep in $(sed -e 's/^[^:]*://' -e 's/\\$//' "$1.d"); do
        [ "$dep" -nt "$1" ] && return 0
    done
    return 1
}

# compile SRC OBJ [extra flags]
compile() {
    src=$1 obj=$2
    shift 2
    if stale "$obj"; then
        echo "  CC   $src"
        # shellcheck disable=SC2086
        $CC $CFLAGS $CPPFLAGS "$@" -MMD -MF "$obj.d" -c "$src" -o "$obj"
    fi
}

echo "fuzz.sh: building with $CC into $build/"
libobjs=
for src in mod_replay_sp/rsp_*.c; do
    obj=$build/obj/$(basename "$src" .c).o
    compile "$src" "$obj"
    libobjs="$libobjs $obj"
done
lib=$build/librsp-fuzz.a
rebuild_lib=0
[ -f "$lib" ] || rebuild_lib=1
for o in $libobjs; do [ "$o" -nt "$lib" ] && rebuild_lib=1; done
if [ $rebuild_lib = 1 ]; then
    rm -f "$lib"
    ar rcs "$lib" $libobjs
fi
compile $fz/fuzz_common.c "$build/obj/fuzz_common.o" -Werror
compile $fz/fuzz_saml.c "$build/obj/fuzz_saml.o" -Werror \
    "-DFUZZ_SAML_DIR=\"$top/$fz/saml\""
for t in $targets; do
    compile "$fz/$t.c" "$build/obj/$t.o" -Werror "-DFUZZ_SAML_DIR=\"$top/$fz/saml\""
    extra=
    case $t in
    fuzz_redirect_sig|fuzz_saml_response|fuzz_decrypt|fuzz_decrypt_id|fuzz_md_verify) extra=$build/obj/fuzz_saml.o ;;
    esac
    bin=$build/$t
    relink=0
    for o in "$build/obj/$t.o" "$build/obj/fuzz_common.o" $extra "$lib"; do
        [ -f "$bin" ] && [ ! "$o" -nt "$bin" ] || relink=1
    done
    if [ $relink = 1 ]; then
        echo "  LD   $bin"
        # shellcheck disable=SC2086
        $CC $LDFLAGS "$build/obj/$t.o" "$build/obj/fuzz_common.o" $extra "$lib" \
            $LIBS -o "$bin"
    fi
done
[ $mode = build ] && exit 0

# ---- run ----

max_len() {
    case $1 in
    fuzz_url) echo 1024 ;;
    fuzz_redirect) echo 4096 ;;
    fuzz_records) echo 4096 ;;
    fuzz_pct) echo 4096 ;;
    fuzz_record_codec) echo 4096 ;;
    fuzz_form) echo 16384 ;;
    fuzz_monitor) echo 16384 ;;
    fuzz_redirect_sig) echo 8192 ;;
    fuzz_saml_response) echo 24576 ;;
    fuzz_decrypt) echo 24576 ;;
    fuzz_decrypt_id) echo 8192 ;;
    fuzz_xenc) echo 4096 ;;
    fuzz_memcache) echo 8192 ;;
    fuzz_md_verify) echo 16384 ;;
    fuzz_discovery) echo 4096 ;;
    esac
}

export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:strict_string_checks=1:detect_stack_use_after_return=1:check_initialization_order=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
# GLib's slice allocator would hide Lasso's objects from ASan.
export G_SLICE=always-malloc

status=0
failed=
report() { # target log artifacts-dir
    echo "fuzz.sh: FAIL $1" >&2
    grep -E 'ERROR: (Address|Leak|Undefined)Sanitizer|runtime error:|==ERROR: libFuzzer|invariant broken|Test unit written to|SUMMARY:' "$2" | head -n 12 >&2 || true
    found=0
    for a in "$3"/crash-* "$3"/leak-* "$3"/timeout-* "$3"/oom-*; do
        [ -f "$a" ] || continue
        echo "fuzz.sh: $1: reproducer $a (run: $build/$1 $a)" >&2
        found=1
    done
    [ $found = 1 ] || echo "fuzz.sh: $1: see $2" >&2
    status=1
    failed="$failed $1"
}

sanitizer_report() { # log
    grep -qE 'ERROR: (Address|Leak)Sanitizer|runtime error:|invariant broken' "$1"
}

start=$(date +%s)
for t in $targets; do
    bin=$top/$build/$t
    run=$top/$build/run/$t
    corpus=$top/$fz/corpus/$t
    rm -rf "$run"
    mkdir -p "$run/corpus"
    dict=
    [ -f "$top/$fz/$t.dict" ] && dict=-dict=$top/$fz/$t.dict
    log=$run/log
    common="-max_len=$(max_len "$t") -timeout=10 -rss_limit_mb=2048 -artifact_prefix=$run/"
    case $mode in
    fuzz)
        [ -d "$corpus" ] && cp -R "$corpus/." "$run/corpus/"
        echo "fuzz.sh: $t: fuzzing ${seconds}s"
        rc=0
        # shellcheck disable=SC2086
        (cd "$run" && "$bin" $common $dict -max_total_time="$seconds" \
            -print_final_stats=1 "$run/corpus") >"$log" 2>&1 || rc=$?
        if [ $rc != 0 ] || sanitizer_report "$log"; then
            report "$t" "$log" "$run"
        else
            execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
            persec=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log")
            cov=$(grep -E '^#[0-9]+' "$log" | tail -n 1 | sed -n 's/.*cov: \([0-9]*\) ft: \([0-9]*\).*corp: \([0-9]*\).*/cov \1, features \2, corpus \3/p')
            echo "fuzz.sh: $t: ok, $execs runs, $persec/s, $cov"
        fi
        ;;
    regress|crashes)
        if [ $mode = crashes ]; then
            src=$top/$fz/crashes/$t
        else
            src=$corpus
        fi
        if [ ! -d "$src" ] || [ -z "$(ls -A "$src")" ]; then
            echo "fuzz.sh: $t: nothing in ${src#$top/}"
            continue
        fi
        rc=0
        if [ $mode = crashes ]; then
            # each reproducer on its own: name every one that still fails
            for f in "$src"/*; do
                rc=0
                # shellcheck disable=SC2086
                (cd "$run" && "$bin" $common "$f") >"$log" 2>&1 || rc=$?
                if [ $rc != 0 ] || sanitizer_report "$log"; then
                    echo "fuzz.sh: $t: still fails: ${f#$top/}" >&2
                    grep -E 'runtime error:|ERROR: (Address|Leak)Sanitizer|invariant broken|deadly signal' "$log" | head -n 3 >&2 || true
                    status=1
                    case " $failed " in *" $t "*) ;; *) failed="$failed $t" ;; esac
                else
                    echo "fuzz.sh: $t: passes now: ${f#$top/}"
                fi
            done
            continue
        fi
        # shellcheck disable=SC2086
        (cd "$run" && "$bin" $common -runs=0 "$src") >"$log" 2>&1 || rc=$?
        if [ $rc != 0 ] || sanitizer_report "$log"; then
            report "$t" "$log" "$run"
        else
            echo "fuzz.sh: $t: corpus ok ($(ls "$src" | wc -l) inputs)"
        fi
        ;;
    esac
done
end=$(date +%s)
if [ $status != 0 ]; then
    echo "fuzz.sh: failed:$failed ($((end - start)) s)" >&2
else
    echo "fuzz.sh: all passed ($((end - start)) s)"
fi
exit $status
