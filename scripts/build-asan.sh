#!/bin/sh
# Build a second copy of the module with ASan and UBSan in build/asan/
# (a copy of the source tree, so the regular in-tree build is untouched).
# Prints the path of the sanitizer-built module on its last line.
set -eu
cd "$(dirname "$0")/.."
dest=build/asan
rm -rf "$dest"
mkdir -p "$dest"
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    git ls-files -co --exclude-standard -z | xargs -0 tar cf - | tar xf - -C "$dest"
else
    tar cf - --exclude=./build --exclude=.git . | tar xf - -C "$dest"
fi
cd "$dest"
./autogen.sh >/dev/null 2>&1
./configure -q --enable-sanitizers
make -j"$(nproc)" >/dev/null
make -j"$(nproc)" check >/dev/null || { cat tests/unit/*.log; exit 1; }
echo "$(pwd)/mod_replay_sp/.libs/mod_replay_sp.so"
