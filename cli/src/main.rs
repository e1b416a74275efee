//! `arena`: the one user-facing binary. Each subcommand is a thin module that
//! parses its flags and calls into the library crates.
//!
//! Exit codes (stable, scripts rely on them): 0 success; 1 error (bad input,
//! I/O, a runner failure); 2 usage error (from clap); 3 `replay verify` found
//! a difference.

mod bench;
mod bench_common;
mod bench_coordinator;
mod bench_model;
mod bench_pairing;
mod bench_sandbox;
mod bench_wasm;
mod build;
mod cli;
mod descriptors;
mod distributed;
mod entropy;
mod export;
mod games;
mod internal_bot;
mod launch;
mod messages;
mod metrics_http;
mod model_host;
mod play;
mod replay;
mod run;
mod run_state;
mod telemetry;
mod terminal;
mod wasm_host;

use std::process::ExitCode;

use clap::Parser;

use crate::cli::{Cli, Command};

/// Exit status of `arena replay verify` when the replay does not reproduce.
pub const EXIT_REPLAY_MISMATCH: u8 = 3;

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(code) => code,
        Err(err) => {
            crate::messages::say!("arena: {err:#}");
            ExitCode::FAILURE
        }
    }
}

fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    // The services and `arena run` install their own (with span export);
    // the hosts inside a seat's sandbox none: their stderr is the bot's log.
    match &cli.command {
        Command::Play(_)
        | Command::Games(_)
        | Command::Build(_)
        | Command::Tournament(_)
        | Command::Replay(_)
        | Command::Export(_)
        | Command::Bench(_)
        | Command::Model(_) => telemetry::init_logs(telemetry::LogStyle::Terminal),
        Command::Run(_)
        | Command::Coordinator(_)
        | Command::Worker(_)
        | Command::InternalBot(_)
        | Command::WasmHost(_)
        | Command::WasmCompile(_)
        | Command::ModelHost(_) => {}
    }
    match cli.command {
        Command::Play(args) => play::run(args),
        Command::Games(args) => games::run(args),
        Command::Build(args) => build::run(args),
        Command::Run(args) => {
            descriptors::raise_for_service("run");
            run::run(args)
        }
        Command::Coordinator(args) => {
            descriptors::raise_for_service("coordinator");
            distributed::coordinator(args)
        }
        Command::Worker(args) => {
            descriptors::raise_for_service("worker");
            distributed::worker(args)
        }
        Command::Tournament(args) => distributed::tournament(args),
        Command::Replay(args) => replay::run(args),
        Command::Export(args) => export::run(args),
        Command::Bench(args) => bench::run(args),
        Command::InternalBot(args) => internal_bot::run(args),
        Command::WasmHost(args) => wasm_host::run(args),
        Command::WasmCompile(args) => wasm_host::compile(args),
        Command::ModelHost(args) => model_host::run(args),
        Command::Model(args) => model_host::model(args),
    }
}
