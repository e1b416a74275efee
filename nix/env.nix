# The official bot environment: one closure holding Python 3.12 with the
# scientific stack, a C compiler, a Rust toolchain and the usual shell tools.
# Bots and their build.sh see exactly this closure (plus /bot, /tmp, /dev and
# /proc) when a worker runs with `--store-paths`.
{ pkgs }:
let
  arenaLib = import ./lib.nix;
  python = pkgs.python312.withPackages (ps: map (name: ps.${name}) arenaLib.pythonPackages);
  tools = map (name: pkgs.${name}) arenaLib.systemTools;
in
pkgs.buildEnv {
  name = "arena-sandbox-env";
  paths = [ python ] ++ tools;
  # Only bin/ is merged: every program refers to its own store paths for
  # libraries and headers, and those are in the closure anyway.
  pathsToLink = [ "/bin" ];
  ignoreCollisions = false;
  postBuild = ''
    # build.sh and run.sh are started as `sh SCRIPT` when not executable.
    if [ ! -e $out/bin/sh ]; then ln -s ${pkgs.bash}/bin/bash $out/bin/sh; fi
  '';
}
