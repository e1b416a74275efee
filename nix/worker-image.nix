# An OCI image for workers: arena plus the bot environment's closure.
#   nix build .#worker-image && ./result | docker load
# The container must be privileged enough for the sandbox (namespaces,
# mounts, its own cgroup subtree), e.g. `docker run --privileged
# --cgroupns=private`, and gets ARENA_WORKER_TOKEN from its environment.
{
  pkgs,
  arena,
  env,
  storePaths,
}:
pkgs.dockerTools.streamLayeredImage {
  name = "arena-worker";
  tag = "latest";
  # The env's closure ends up in the image's /nix/store, so the paths listed
  # in the store-paths file exist inside the container at the same place.
  contents = [
    arena
    env
  ];
  config = {
    Entrypoint = [
      "${arena}/bin/arena"
      "worker"
      "--store-paths"
      "${storePaths}"
      "--cache-dir"
      "/var/cache/arena/builds"
    ];
    Env = [ "PATH=${env}/bin:${arena}/bin" ];
  };
  extraCommands = ''
    mkdir -p tmp var/cache/arena/builds run
    chmod 1777 tmp
  '';
}
