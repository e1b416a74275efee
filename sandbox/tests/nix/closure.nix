# A tiny bot environment built by Nix with no nixpkgs at all: every builder
# is a static busybox that the test copies into the store (`busyboxDir` holds
# `busybox` and a `nonce` file, so each test run gets store paths of its own
# and can delete them afterwards without racing another run).
#
#   greeting   share/greeting, a data file
#   env        bin/sh -> busybox, bin/bot (a script run by that sh) which
#              refers to greeting: the closure is env, greeting, busybox
#   paths      the closure's store-paths file, made the way nixpkgs'
#              closureInfo makes it (exportReferencesGraph), one path a line
#
# Every builder first checks that it runs in Nix's build sandbox: no /usr.
{ busyboxDir, nonce }:
let
  system = builtins.currentSystem;
  busyboxStore = builtins.path {
    path = busyboxDir;
    name = "arena-test-busybox-${nonce}";
  };
  busybox = "${busyboxStore}/busybox";
  # Runs `script` with busybox's sh, its applets on PATH.
  run =
    name: attrs: script:
    derivation (
      {
        inherit name system busybox;
        builder = busybox;
        args = [
          "sh"
          "-euc"
          ''
            $busybox mkdir -p "$NIX_BUILD_TOP/applets"
            $busybox --install -s "$NIX_BUILD_TOP/applets"
            export PATH="$NIX_BUILD_TOP/applets"
            if [ -e /usr ]; then echo "not in the Nix build sandbox: /usr exists" >&2; exit 1; fi
            ${script}
          ''
        ];
      }
      // attrs
    );
  greeting = run "arena-test-greeting-${nonce}" { } ''
    mkdir -p "$out/share"
    echo "hello from nix" > "$out/share/greeting"
  '';
  env = run "arena-test-env-${nonce}" { inherit greeting; } ''
    mkdir -p "$out/bin"
    ln -s "$busybox" "$out/bin/sh"
    {
      echo "#!$out/bin/sh"
      echo "read line < $greeting/share/greeting"
      echo 'echo "$line"'
    } > "$out/bin/bot"
    chmod 555 "$out/bin/bot"
  '';
  paths = run "arena-test-env-paths-${nonce}" { exportReferencesGraph = [ "graph" env ]; } ''
    # The graph lists, per path: the path, its deriver, a count, and that
    # many references. Keep the paths.
    awk 'state == 0 { print; state = 1; next }
         state == 1 { state = 2; next }
         state == 2 { left = $1; state = (left > 0) ? 3 : 0; next }
         state == 3 { left--; if (left == 0) state = 0 }' graph | sort -u > "$out"
  '';
in
{
  inherit
    busyboxStore
    greeting
    env
    paths
    ;
}
