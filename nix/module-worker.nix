# NixOS module: a match worker as a systemd service. The worker confines
# every bot itself (namespaces, cgroups, seccomp), so it runs as root with a
# delegated cgroup subtree, and it binds exactly the closure listed in
# `storePaths` into each sandbox.
#
#   services.arena-worker = {
#     enable = true;
#     coordinator = "https://coordinator.example:50051";
#     cores = "2-15";
#     environmentFile = "/run/secrets/arena-worker.env";   # ARENA_WORKER_TOKEN=...
#   };
{
  config,
  lib,
  pkgs,
  ...
}:
let
  cfg = config.services.arena-worker;
  arenaLib = import ./lib.nix;
in
{
  options.services.arena-worker = {
    enable = lib.mkEnableOption "an Arena match worker";
    package = lib.mkOption {
      type = lib.types.package;
      description = "The package providing bin/arena.";
    };
    coordinator = lib.mkOption {
      type = lib.types.str;
      example = "http://10.0.0.1:50051";
      description = "The coordinator's URL (--coordinator).";
    };
    storePaths = lib.mkOption {
      type = lib.types.str;
      description = ''
        A store-paths file (one /nix/store path per line) naming the closure
        bots run in (--store-paths); the flake sets it to its sandbox-env-paths.
      '';
    };
    cores = lib.mkOption {
      type = lib.types.nullOr lib.types.str;
      default = null;
      example = "2-15";
      description = "Cores for bots and builds (--cores); null uses every core of the unit.";
    };
    metrics = lib.mkOption {
      type = lib.types.nullOr lib.types.str;
      default = null;
      example = "127.0.0.1:9102";
      description = "Address serving Prometheus metrics at /metrics (--metrics).";
    };
    cacheDir = lib.mkOption {
      type = lib.types.str;
      default = "/var/cache/arena-worker/builds";
      description = "Build cache (--cache-dir).";
    };
    cgroupParent = lib.mkOption {
      type = lib.types.str;
      default = "arena";
      description = "Cgroup under which every bot's cgroup is made (--cgroup-parent).";
    };
    environmentFile = lib.mkOption {
      type = lib.types.str;
      example = "/run/secrets/arena-worker.env";
      description = "File with ARENA_WORKER_TOKEN (systemd EnvironmentFile=).";
    };
    drainTimeout = lib.mkOption {
      type = lib.types.str;
      default = "30min";
      description = ''
        How long systemd waits after SIGTERM before killing the worker. On
        SIGTERM the worker drains: it takes no new match and finishes the ones
        it is playing, so this should exceed the longest match.
      '';
    };
    extraArgs = lib.mkOption {
      type = lib.types.listOf lib.types.str;
      default = [ ];
      description = "More arguments for `arena worker` (e.g. --tls-ca, --memory-mb).";
    };
  };

  config = lib.mkIf cfg.enable {
    systemd.services.arena-worker = {
      description = "Arena match worker";
      wantedBy = [ "multi-user.target" ];
      after = [ "network-online.target" ];
      wants = [ "network-online.target" ];
      serviceConfig = {
        ExecStart = arenaLib.execStart "${cfg.package}/bin/arena" (
          arenaLib.workerArgs {
            inherit (cfg)
              coordinator
              storePaths
              metrics
              cores
              cacheDir
              cgroupParent
              extraArgs
              ;
          }
        );
        EnvironmentFile = cfg.environmentFile;
        # Root: the sandbox creates namespaces, mounts, cgroups and switches
        # to unprivileged uids (from 61000) for the bots.
        User = "root";
        # The worker manages cgroups below its own; systemd leaves them alone.
        Delegate = true;
        # Drain on SIGTERM, sent to the worker only: the bots are its
        # business (it kills their cgroups itself).
        KillSignal = "SIGTERM";
        KillMode = "mixed";
        TimeoutStopSec = cfg.drainTimeout;
        Restart = "on-failure";
        RestartSec = 5;
        CacheDirectory = "arena-worker";
      };
    };
  };
}
