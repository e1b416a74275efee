//! Compiles arena.proto with protox (a pure-Rust protobuf compiler), so no
//! system `protoc` is needed.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    println!("cargo:rerun-if-changed=arena.proto");
    let descriptors = protox::compile(["arena.proto"], ["."])?;
    tonic_prost_build::configure().compile_fds(descriptors)?;
    Ok(())
}
