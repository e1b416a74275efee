# NixOS module: the tournament coordinator as a systemd service.
#
#   services.arena-coordinator = {
#     enable = true;
#     listen = "0.0.0.0:50051";
#     redis = "redis://127.0.0.1/";
#     environmentFile = "/run/secrets/arena-coordinator.env";
#   };
#
# The environment file holds the tokens, one per line:
#   ARENA_WORKER_TOKEN=...   (comma-separated for several)
#   ARENA_ADMIN_TOKEN=...
{
  config,
  lib,
  pkgs,
  ...
}:
let
  cfg = config.services.arena-coordinator;
  arenaLib = import ./lib.nix;
in
{
  options.services.arena-coordinator = {
    enable = lib.mkEnableOption "the Arena tournament coordinator";
    package = lib.mkOption {
      type = lib.types.package;
      description = "The package providing bin/arena.";
    };
    listen = lib.mkOption {
      type = lib.types.str;
      default = "127.0.0.1:50051";
      description = "Address the gRPC service listens on (--listen).";
    };
    redis = lib.mkOption {
      type = lib.types.nullOr lib.types.str;
      default = null;
      example = "redis://127.0.0.1/";
      description = "Redis URL for restart-safe state (--redis); null keeps state in memory.";
    };
    metrics = lib.mkOption {
      type = lib.types.nullOr lib.types.str;
      default = null;
      example = "127.0.0.1:9101";
      description = "Address serving Prometheus metrics at /metrics (--metrics).";
    };
    leaseTtl = lib.mkOption {
      type = lib.types.ints.positive;
      default = 30;
      description = "Seconds a match lease lives without a heartbeat (--lease-ttl).";
    };
    environmentFile = lib.mkOption {
      type = lib.types.str;
      example = "/run/secrets/arena-coordinator.env";
      description = "File with ARENA_WORKER_TOKEN and ARENA_ADMIN_TOKEN (systemd EnvironmentFile=).";
    };
    extraArgs = lib.mkOption {
      type = lib.types.listOf lib.types.str;
      default = [ ];
      description = "More arguments for `arena coordinator` (e.g. --tls-cert, --tls-key).";
    };
  };

  config = lib.mkIf cfg.enable {
    systemd.services.arena-coordinator = {
      description = "Arena tournament coordinator";
      wantedBy = [ "multi-user.target" ];
      after = [ "network-online.target" ] ++ lib.optional (cfg.redis != null) "redis.service";
      wants = [ "network-online.target" ];
      serviceConfig = {
        ExecStart = arenaLib.execStart "${cfg.package}/bin/arena" (
          arenaLib.coordinatorArgs {
            inherit (cfg)
              listen
              redis
              metrics
              leaseTtl
              extraArgs
              ;
          }
        );
        EnvironmentFile = cfg.environmentFile;
        DynamicUser = true;
        Restart = "on-failure";
        RestartSec = 2;
        NoNewPrivileges = true;
        ProtectSystem = "strict";
        ProtectHome = true;
        PrivateTmp = true;
      };
    };
  };
}
