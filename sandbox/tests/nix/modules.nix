# Evaluates the NixOS modules of ../../../nix without nixpkgs: a stub `lib`
# with just what the modules use, and a config that enables each service.
# Returns the systemd units they define. Used by sandbox/tests/nix_closure.rs.
{ repo }:
let
  stubLib = {
    mkEnableOption = description: { inherit description; };
    mkOption = attrs: attrs;
    mkIf = condition: value: if condition then value else { };
    optional = condition: value: if condition then [ value ] else [ ];
    types = {
      package = "package";
      str = "str";
      nullOr = t: "nullOr ${t}";
      listOf = t: "listOf ${t}";
      ints.positive = "positive int";
    };
  };
  # Option defaults merged under what the test sets, like the module system.
  withDefaults =
    options: set:
    builtins.mapAttrs (name: option: set.${name} or option.default) options // set;
  evalModule =
    file: name: set:
    let
      module = import file;
      first = module {
        config = { };
        lib = stubLib;
        pkgs = { };
      };
      cfg = withDefaults first.options.services.${name} set;
      result = module {
        config.services.${name} = cfg;
        lib = stubLib;
        pkgs = { };
      };
    in
    result.config.systemd.services.${name};
in
{
  worker = evalModule (repo + "/nix/module-worker.nix") "arena-worker" {
    enable = true;
    package = "/nix/store/00000000000000000000000000000000-arena";
    coordinator = "http://10.0.0.1:50051";
    storePaths = "/nix/store/11111111111111111111111111111111-arena-sandbox-env-paths";
    cores = "2-7";
    metrics = "127.0.0.1:9102";
    environmentFile = "/run/secrets/worker.env";
  };
  coordinator = evalModule (repo + "/nix/module-coordinator.nix") "arena-coordinator" {
    enable = true;
    package = "/nix/store/00000000000000000000000000000000-arena";
    listen = "0.0.0.0:50051";
    redis = "redis://127.0.0.1/";
    metrics = "127.0.0.1:9101";
    environmentFile = "/run/secrets/coordinator.env";
  };
}
