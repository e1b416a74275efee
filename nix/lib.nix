# Pure helpers for flake.nix and the NixOS modules. Nothing here touches
# nixpkgs, so the offline tests (sandbox/tests/nix_closure.rs) evaluate this
# file directly with a bare `nix-instantiate`.
let
  # One argument of a systemd ExecStart= line, double-quoted: systemd unquotes
  # C-style escapes inside "...", and expands % specifiers and $ variables
  # unless they are doubled.
  systemdQuote =
    arg:
    "\""
    + builtins.replaceStrings [ "\\" "\"" "%" "$" "\n" ] [ "\\\\" "\\\"" "%%" "$$" "\\n" ] (toString arg)
    + "\"";

  # [ "--flag" value ] when value is not null, else [ ].
  flag = name: value: if value == null then [ ] else [ name (toString value) ];
in
rec {
  inherit systemdQuote;

  # The Python packages of the official bot environment: attribute names in
  # nixpkgs' python312Packages. torch there is the CPU build.
  pythonPackages = [
    "numpy"
    "scipy"
    "pandas"
    "scikit-learn"
    "torch"
    "jax"
    "jaxlib"
    "numba"
    "networkx"
    "safetensors"
    "gymnasium"
  ];

  # The programs of the official bot environment: attribute names in nixpkgs.
  systemTools = [
    "bash"
    "coreutils"
    "findutils"
    "gnugrep"
    "gnused"
    "gawk"
    "gnutar"
    "gzip"
    "which"
    "gnumake"
    "gcc"
    "rustc"
    "cargo"
  ];

  # `arena coordinator ...` without the program. Tokens and the Redis URL are
  # better given through the environment (ARENA_WORKER_TOKEN,
  # ARENA_ADMIN_TOKEN, ARENA_REDIS_URL) so they stay out of the unit file.
  coordinatorArgs =
    {
      listen,
      redis ? null,
      metrics ? null,
      leaseTtl ? null,
      extraArgs ? [ ],
    }:
    [ "coordinator" "--listen" listen ]
    ++ flag "--redis" redis
    ++ flag "--metrics" metrics
    ++ flag "--lease-ttl" leaseTtl
    ++ extraArgs;

  # `arena worker ...` without the program. The token comes from
  # ARENA_WORKER_TOKEN in the environment.
  workerArgs =
    {
      coordinator,
      storePaths,
      metrics ? null,
      cores ? null,
      cacheDir ? null,
      cgroupParent ? null,
      extraArgs ? [ ],
    }:
    [ "worker" "--coordinator" coordinator "--store-paths" (toString storePaths) ]
    ++ flag "--metrics" metrics
    ++ flag "--cores" cores
    ++ flag "--cache-dir" cacheDir
    ++ flag "--cgroup-parent" cgroupParent
    ++ extraArgs;

  # A whole ExecStart= value.
  execStart = program: args: builtins.concatStringsSep " " (map systemdQuote ([ program ] ++ args));
}
