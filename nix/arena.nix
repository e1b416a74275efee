# The `arena` binary, built from this workspace with the locked crates.
{ pkgs, src }:
pkgs.rustPlatform.buildRustPackage {
  pname = "arena";
  version = (builtins.fromTOML (builtins.readFile (src + "/Cargo.toml"))).workspace.package.version;
  inherit src;
  cargoLock.lockFile = src + "/Cargo.lock";
  cargoBuildFlags = [ "-p" "arena-cli" ];
  # The full suite needs root, cgroups and redis-server: see `checks` in
  # flake.nix for what runs inside a Nix build.
  doCheck = false;
  meta = {
    description = "Referees bot competitions in a sandbox";
    license = pkgs.lib.licenses.mit;
    mainProgram = "arena";
    platforms = pkgs.lib.platforms.linux;
  };
}
