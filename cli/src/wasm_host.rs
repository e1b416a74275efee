//! `arena wasm-host`: the WebAssembly host, as the worker starts it inside
//! a seat's sandbox (see the `arena-wasm` crate).

use std::io::{BufReader, Write};
use std::process::ExitCode;

use anyhow::Context;
use arena_wasm::HostLimits;

use crate::cli::WasmHostArgs;

pub fn run(args: WasmHostArgs) -> anyhow::Result<ExitCode> {
    let engine = arena_wasm::engine().map_err(|e| anyhow::anyhow!("{e:#}"))?;
    let limits = HostLimits {
        memory_bytes: args.memory_bytes,
        table_elements: args.table_elements,
        line_cap: args.line_cap,
    };
    let mut input = BufReader::new(std::io::stdin().lock());
    let mut output = std::io::stdout().lock();
    arena_wasm::host::serve(
        &engine,
        &limits,
        args.seed,
        &mut input,
        &mut output,
        Box::new(std::io::stderr()),
    )
    .context("the wasm host lost its pipes")?;
    output.flush().context("the wasm host lost its pipes")?;
    Ok(ExitCode::SUCCESS)
}
