{
  description = "Arena: a bot-tournament runner, and the sandbox environment its bots run in";

  # Pinned by branch here; the exact revision (and its hash) is recorded in
  # flake.lock, which must be made with `nix flake lock` on a machine with
  # internet access (see docs/nix.md). nixos-25.11 carries Rust >= 1.88 (the
  # workspace's locked crates need it) and python312Packages.
  inputs.nixpkgs.url = "github:NixOS/nixpkgs/nixos-25.11";

  outputs =
    { self, nixpkgs }:
    let
      arenaLib = import ./nix/lib.nix;
      # The sandbox is Linux-only (namespaces, cgroups, seccomp).
      systems = [
        "x86_64-linux"
        "aarch64-linux"
      ];
      forAllSystems = f: nixpkgs.lib.genAttrs systems (system: f nixpkgs.legacyPackages.${system});
    in
    {
      lib = arenaLib;

      packages = forAllSystems (
        pkgs:
        let
          arena = import ./nix/arena.nix {
            inherit pkgs;
            src = self;
          };
          env = import ./nix/env.nix { inherit pkgs; };
        in
        {
          inherit arena;
          default = arena;

          # The official bot environment as one closure.
          sandbox-env = env;

          # Its store-paths file: every path of the closure, one per line,
          # for `arena ... --store-paths`. Arena's own closure is in it too:
          # a WebAssembly seat runs `arena wasm-host` inside the sandbox.
          sandbox-env-paths = pkgs.runCommand "arena-sandbox-env-paths" { } ''
            cp ${pkgs.closureInfo { rootPaths = [ env arena ]; }}/store-paths $out
          '';

          # A worker image: `nix build .#worker-image && ./result | docker load`.
          worker-image = import ./nix/worker-image.nix {
            inherit pkgs arena env;
            storePaths = self.packages.${pkgs.stdenv.hostPlatform.system}.sandbox-env-paths;
          };
        }
      );

      # `nix develop .#bot`: the official environment with arena on PATH.
      devShells = forAllSystems (
        pkgs:
        let
          packages = self.packages.${pkgs.stdenv.hostPlatform.system};
        in
        {
          bot = pkgs.mkShellNoCC {
            name = "arena-bot";
            packages = [
              packages.sandbox-env
              packages.arena
            ];
            ARENA_STORE_PATHS = "${packages.sandbox-env-paths}";
            shellHook = ''
              echo "arena bot environment: try 'arena play my-bot other-bot --store-paths \$ARENA_STORE_PATHS'"
            '';
          };
        }
      );

      nixosModules = {
        coordinator =
          { lib, pkgs, ... }:
          {
            imports = [ ./nix/module-coordinator.nix ];
            services.arena-coordinator.package =
              lib.mkDefault
                self.packages.${pkgs.stdenv.hostPlatform.system}.arena;
          };
        worker =
          { lib, pkgs, ... }:
          let
            packages = self.packages.${pkgs.stdenv.hostPlatform.system};
          in
          {
            imports = [ ./nix/module-worker.nix ];
            services.arena-worker.package = lib.mkDefault packages.arena;
            services.arena-worker.storePaths = lib.mkDefault "${packages.sandbox-env-paths}";
          };
      };

      # What can run inside a Nix build: no root, no cgroups, so the sandbox
      # and end-to-end suites are left to CI (`cargo test --workspace` as root).
      checks = forAllSystems (
        pkgs:
        let
          packages = self.packages.${pkgs.stdenv.hostPlatform.system};
        in
        {
          unit-tests = packages.arena.overrideAttrs (_: {
            pname = "arena-unit-tests";
            doCheck = true;
            cargoTestFlags = [
              "--workspace"
              "--lib"
              "--bins"
            ];
          });
          sandbox-env-paths = packages.sandbox-env-paths;
        }
      );
    };
}
