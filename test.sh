#!/usr/bin/env bash
# The README's test command: installs the Debian packages the test suite
# needs that are missing, then runs the whole suite: `cargo test` over the
# workspace, then the cgroup v2 leg (tests/guest/leg.sh: the real-cgroup
# tests, the hostile-bot suite and a match of every game on pure cgroup v2,
# in a QEMU guest unless this host is pure v2; see tests/guest/README.md),
# then the Python package `arena_rl` (python/) built as a wheel, installed
# with pip and tested with pytest. Arguments are passed on to `cargo test`
# (e.g. `./test.sh -p arena-engine`, `./test.sh -- --nocapture`), and then
# only the Rust tests run.
#
# When everything is present it installs nothing and needs no network; a
# missing package needs apt-get and root (or sudo), and so does the guest's
# kernel the first time (cached in target/guest/ afterwards). `.ci/run`
# calls exactly this script after the format and lint checks.
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
# The cgroup v2 leg (tests/guest/leg.sh) boots a QEMU guest with pure cgroup
# v2 unless this host already is pure v2. Installed without its recommends
# (the guest needs no display, audio or firmware beyond qemu's own). The
# guest's kernel is Debian's generic one, fetched by tests/guest/kernel.sh
# with `apt-get download` on the leg's first run and cached (vmlinuz and a
# few modules, ~10 MB) in target/guest/, or $ARENA_GUEST_CACHE.
missing_no_recommends=""
if [ "$(stat -fc %T /sys/fs/cgroup 2>/dev/null)" != cgroup2fs ]; then
    command -v qemu-system-x86_64 >/dev/null 2>&1 ||
        missing_no_recommends="$missing_no_recommends qemu-system-x86"
fi

if [ -n "$missing$missing_no_recommends" ]; then
    echo "test.sh: installing missing Debian packages:$missing$missing_no_recommends" >&2
    if ! command -v apt-get >/dev/null 2>&1; then
        echo "test.sh: no apt-get here; install these by hand:$missing$missing_no_recommends" >&2
        exit 1
    fi
    as_root=()
    if [ "$(id -u)" -ne 0 ]; then
        if ! command -v sudo >/dev/null 2>&1; then
            echo "test.sh: installing needs root (or sudo); install these by hand:$missing$missing_no_recommends" >&2
            exit 1
        fi
        as_root=(sudo)
    fi
    export DEBIAN_FRONTEND=noninteractive
    "${as_root[@]}" apt-get update -qq
    if [ -n "$missing" ]; then
        # shellcheck disable=SC2086
        "${as_root[@]}" apt-get install -y -qq $missing
    fi
    if [ -n "$missing_no_recommends" ]; then
        # shellcheck disable=SC2086
        "${as_root[@]}" apt-get install -y -qq --no-install-recommends $missing_no_recommends
    fi
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

# pip for whichever python3 is first on PATH; a Debian python3 refuses
# packages outside apt unless told otherwise.
pip_install() {
    local pip=(python3 -m pip install --quiet --disable-pip-version-check)
    "${pip[@]}" "$@" || "${pip[@]}" --break-system-packages "$@"
}

cargo test --workspace --locked "$@"
if [ "$#" -gt 0 ]; then
    exit 0
fi

# The cgroup v2 leg: the real-cgroup tests, the hostile-bot suite and one
# sandboxed match of every game, on a pure cgroup v2 hierarchy (in a QEMU
# guest unless this host is pure v2), with the binaries just built.
tests/guest/leg.sh

# The Python package: the tools it is built and tested with, pinned like
# onnx and moto above. Only the missing or differently versioned ones are
# installed.
python_pins=(maturin==1.16.0 numpy==2.4.6 pytest==9.2.0 gymnasium==1.4.0 pettingzoo==1.27.0)
missing_pins=$(python3 - "${python_pins[@]}" <<'PY'
import sys
from importlib.metadata import PackageNotFoundError, version
for pin in sys.argv[1:]:
    name, wanted = pin.split("==")
    try:
        ok = version(name) == wanted
    except PackageNotFoundError:
        ok = False
    if not ok:
        print(pin)
PY
)
if [ -n "$missing_pins" ]; then
    echo "test.sh: installing Python packages:" $missing_pins >&2
    # shellcheck disable=SC2086
    pip_install $missing_pins
fi

# The wheel, exactly as a participant gets it (`pip install ./python` builds
# the same), built into a fresh folder so no stale wheel is picked up. The
# release profile reuses the engine that the quick-start test already built.
wheels=$(mktemp -d)
trap 'rm -rf "$wheels"' EXIT
python3 -m maturin build --release --locked --quiet -m python/Cargo.toml -o "$wheels"
pip_install --force-reinstall --no-deps "$wheels"/arena_rl-*.whl

# The Python tests check replays with the same `arena` the Rust tests built.
cargo build --locked --quiet -p arena-cli --bin arena
export ARENA_BIN="$PWD/target/debug/arena"
# Run from the repository root, so `import arena_rl` finds the installed
# wheel and not the source folder. Exit 5 is pytest's "no tests collected":
# a failure here, never a pass.
status=0
python3 -m pytest -q -p no:cacheprovider python/tests || status=$?
if [ "$status" -eq 5 ]; then
    echo "test.sh: pytest collected no tests" >&2
    exit 1
fi
exit "$status"
