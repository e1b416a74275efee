//! `arena wasm-host`, the WebAssembly host, and `arena wasm-compile`, its
//! compiler, as the worker starts them inside a seat's sandbox (see the
//! `arena-wasm` crate).

use std::io::{BufReader, Write};
use std::process::ExitCode;

use anyhow::Context;
use arena_wasm::HostLimits;

use crate::cli::{WasmCompileArgs, WasmHostArgs};

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

pub fn compile(args: WasmCompileArgs) -> anyhow::Result<ExitCode> {
    let engine = arena_wasm::engine().map_err(|e| anyhow::anyhow!("{e:#}"))?;
    let limits = HostLimits {
        memory_bytes: args.memory_bytes,
        table_elements: args.table_elements,
        ..HostLimits::default()
    };
    let served = arena_wasm::compile::serve(
        &engine,
        &limits,
        &mut std::io::stdin().lock(),
        &mut std::io::stdout().lock(),
        &mut std::io::stderr().lock(),
    )
    .context("the wasm compiler lost its pipes")?;
    Ok(match served {
        arena_wasm::compile::Served::Compiled => ExitCode::SUCCESS,
        arena_wasm::compile::Served::Refused => ExitCode::from(arena_wasm::compile::REFUSED_EXIT),
    })
}
