#!/bin/sh
# Configure and build the module, the library and the unit tests.
# Usage: scripts/build.sh [configure options...]
set -eu
cd "$(dirname "$0")/.."
if [ ! -x configure ] || [ configure.ac -nt configure ] || [ Makefile.am -nt configure ]; then
    ./autogen.sh
fi
if [ ! -f Makefile ] || [ configure -nt Makefile ] || [ "$#" -gt 0 ]; then
    ./configure -q "$@"
fi
make -j"$(nproc)"
