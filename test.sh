#!/usr/bin/env bash
# The README's test command: installs the Debian packages the test suite
# needs that are missing, then runs the whole suite. Arguments are passed on
# to `cargo test` (e.g. `./test.sh -p arena-engine`, `./test.sh -- --nocapture`).
#
# When everything is present it installs nothing and needs no network; a
# missing package needs apt-get and root (or sudo). `.ci/run` calls exactly
# this script after the format and lint checks.
set -euo pipefail
cd "$(dirname "$0")"

# Each check looks where the tests look. Bots run in the sandbox, which binds
# the host's system directories only, so Python must be the system's
# /usr/bin/python3 (a pyenv or venv shim on PATH is invisible inside).
missing=""
# The test bots and the Python starter are Python 3 scripts (standard library only).
[ -x /usr/bin/python3 ] || missing="$missing python3"
# The store's and the end-to-end tests start their own redis-server.
command -v redis-server >/dev/null 2>&1 || missing="$missing redis-server"
# The hostile-bot sandbox suite compiles its C programs with /usr/bin/gcc.
[ -x /usr/bin/gcc ] || missing="$missing gcc libc6-dev"
# The Nix tests build a closure offline with a static busybox as the builder.
command -v nix-instantiate >/dev/null 2>&1 || missing="$missing nix-bin"
[ -x /bin/busybox ] || missing="$missing busybox-static"
# The deploy tests render the manifests and run a real Prometheus.
command -v kubectl >/dev/null 2>&1 || missing="$missing kubernetes-client"
command -v promtool >/dev/null 2>&1 || missing="$missing prometheus"
# The WebAssembly bots (bots/grid-royale-c, bots/test/wasm-probe) are built
# with clang --target=wasm32-wasi: clang itself, wasm-ld, wasi-libc's sysroot
# and the wasm32 compiler-rt builtins (under clang's versioned resource dir).
[ -x /usr/bin/clang ] || missing="$missing clang"
[ -x /usr/bin/wasm-ld ] || missing="$missing lld"
[ -f /usr/lib/wasm32-wasi/libc.a ] || missing="$missing wasi-libc"
compgen -G '/usr/lib/llvm-*/lib/clang/*/lib/wasi/libclang_rt.builtins-wasm32.a' >/dev/null || missing="$missing libclang-rt-dev-wasm32"
# The web pages are tested in a real headless Chromium.
command -v chromium >/dev/null 2>&1 || missing="$missing chromium"

if [ -n "$missing" ]; then
    echo "test.sh: installing missing Debian packages:$missing" >&2
    if ! command -v apt-get >/dev/null 2>&1; then
        echo "test.sh: no apt-get here; install these by hand:$missing" >&2
        exit 1
    fi
    as_root=()
    if [ "$(id -u)" -ne 0 ]; then
        if ! command -v sudo >/dev/null 2>&1; then
            echo "test.sh: installing needs root (or sudo); install these by hand:$missing" >&2
            exit 1
        fi
        as_root=(sudo)
    fi
    export DEBIAN_FRONTEND=noninteractive
    "${as_root[@]}" apt-get update -qq
    # shellcheck disable=SC2086
    "${as_root[@]}" apt-get install -y -qq $missing
fi

# The Ants models are rebuilt by bots/ants-models/build.py in a test, which
# needs the `onnx` package of PyPI for whichever python3 is first on PATH
# (the test runs it outside the sandbox). Pinned: the bytes it writes are
# compared with the committed models.
if ! python3 -c 'import onnx' >/dev/null 2>&1; then
    echo "test.sh: installing the onnx Python package" >&2
    pip=(python3 -m pip install --quiet --disable-pip-version-check onnx==1.23.2)
    # A Debian python3 refuses packages outside apt unless told otherwise.
    "${pip[@]}" || "${pip[@]}" --break-system-packages
fi

# The blob store's S3 backend is tested against moto's S3 server on
# loopback (python3 -m moto.server), from PyPI; pinned like onnx.
if ! python3 -c 'import moto.server' >/dev/null 2>&1; then
    echo "test.sh: installing the moto[server] Python package" >&2
    pip=(python3 -m pip install --quiet --disable-pip-version-check 'moto[server]==5.2.1')
    "${pip[@]}" || "${pip[@]}" --break-system-packages
fi

exec cargo test --workspace --locked "$@"
