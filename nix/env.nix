# The official bot environment: one closure holding Python 3.12 with the
# scientific stack, a C compiler, a Rust toolchain and the usual shell tools.
# Bots and their build.sh see exactly this closure (plus /bot, /tmp, /dev and
# /proc) when a worker runs with `--store-paths`.
{ pkgs }:
let
  arenaLib = import ./lib.nix;
  python = pkgs.python312.withPackages (ps: map (name: ps.${name}) arenaLib.pythonPackages);
  tools = map (name: pkgs.${name}) arenaLib.systemTools;
  # The WebAssembly bots' compiler (bots/grid-royale-c builds bot.wasm with
  # `clang --target=wasm32-wasi`): nixpkgs' wasi32 cross toolchain, clang
  # wrapped with lld (wasm-ld), wasi-libc as its libc and compiler-rt's
  # wasm32 builtins, which is what Debian's clang, lld, wasi-libc and
  # libclang-rt-dev-wasm32 give test.sh. Its programs are prefixed
  # (wasm32-unknown-wasi-clang); postBuild adds the plain `clang` build.sh
  # calls. That clang only targets wasm32-wasi: native C is gcc's.
  wasmCc = pkgs.pkgsCross.wasi32.stdenv.cc;
in
pkgs.buildEnv {
  name = "arena-sandbox-env";
  paths = [ python wasmCc ] ++ tools;
  # Only bin/ is merged: every program refers to its own store paths for
  # libraries and headers, and those are in the closure anyway.
  pathsToLink = [ "/bin" ];
  ignoreCollisions = false;
  postBuild = ''
    # build.sh and run.sh are started as `sh SCRIPT` when not executable.
    if [ ! -e $out/bin/sh ]; then ln -s ${pkgs.bash}/bin/bash $out/bin/sh; fi
    # build.sh calls `clang --target=wasm32-wasi`; the wrapper's own
    # `-target wasm32-unknown-wasi` names the same target.
    if [ ! -e $out/bin/clang ]; then ln -s ${wasmCc}/bin/${wasmCc.targetPrefix}clang $out/bin/clang; fi
  '';
}
