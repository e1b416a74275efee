//! The command line, defined once: clap derive structs whose doc comments are
//! the help text.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

#[derive(Debug, Parser)]
#[command(
    name = "arena",
    version,
    about = "Arena: referee bot matches and tournaments"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Play one match between two bot directories.
    Play(PlayArgs),
    /// Work with replay files.
    Replay(ReplayArgs),
    /// Measure the engine or the runner.
    Bench(BenchArgs),
    /// A built-in bot for benchmarks (reads frames on stdin, replies instantly).
    #[command(hide = true)]
    InternalBot(InternalBotArgs),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum GameName {
    /// The Generals Competition ruleset (1v1, fog of war, castles).
    Generals,
}

#[derive(Debug, Args)]
pub struct PlayArgs {
    /// Directory of the bot in seat 0 (holds run.sh, maybe build.sh).
    pub bot_a: PathBuf,
    /// Directory of the bot in seat 1.
    pub bot_b: PathBuf,
    #[arg(long, value_enum, default_value = "generals")]
    pub game: GameName,
    /// Map seed; a random one is drawn (and printed) when omitted.
    #[arg(long)]
    pub seed: Option<u64>,
    /// Write a replay of the match to this file.
    #[arg(long, value_name = "PATH")]
    pub replay: Option<PathBuf>,
    /// Print the result as one JSON object.
    #[arg(long)]
    pub json: bool,
    /// Milliseconds per move.
    #[arg(long, default_value_t = 150, value_name = "MS")]
    pub move_ms: u64,
    /// Milliseconds for the first move.
    #[arg(long, default_value_t = 10_000, value_name = "MS")]
    pub first_move_ms: u64,
    /// Faults that forfeit a match.
    #[arg(long, default_value_t = 50)]
    pub fault_limit: u32,
    /// Wall limit for each build.sh, in seconds.
    #[arg(long, default_value_t = 600, value_name = "SECONDS")]
    pub build_timeout: u64,
    /// Write each bot's stderr (capped) to DIR/seat-<n>.log.
    #[arg(long, value_name = "DIR")]
    pub logs: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct ReplayArgs {
    #[command(subcommand)]
    pub command: ReplayCommand,
}

#[derive(Debug, Subcommand)]
pub enum ReplayCommand {
    /// Re-simulate a replay; exit 3 on any difference from what it records.
    Verify {
        /// The replay file written by `arena play --replay`.
        path: PathBuf,
    },
}

#[derive(Debug, Args)]
pub struct BenchArgs {
    #[command(subcommand)]
    pub target: BenchTarget,
}

#[derive(Debug, Subcommand)]
pub enum BenchTarget {
    /// Engine throughput on one core: raw steps/s and rendered turns/s.
    Engine {
        /// Seconds to measure each figure for.
        #[arg(long, default_value_t = 2.0)]
        seconds: f64,
        /// Print `{"raw_steps_per_s": ..., "rendered_turns_per_s": ...}`.
        #[arg(long)]
        json: bool,
    },
    /// Runner overhead: full matches between two instant bots as plain processes.
    Runner {
        /// Matches to play.
        #[arg(long, default_value_t = 5)]
        matches: u32,
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Args)]
pub struct InternalBotArgs {
    /// `pass` answers every frame with a pass; `random` with a random legal move.
    #[arg(value_enum)]
    pub kind: InternalBotKind,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum InternalBotKind {
    Pass,
    Random,
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn command_definition_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn play_parses_the_documented_flags() {
        let cli = Cli::try_parse_from([
            "arena", "play", "a", "b", "--seed", "7", "--json", "--replay", "r.json",
        ])
        .unwrap();
        let Command::Play(args) = cli.command else {
            panic!("expected play");
        };
        assert_eq!(args.seed, Some(7));
        assert!(args.json);
        assert_eq!(args.replay, Some(PathBuf::from("r.json")));
        assert_eq!(args.move_ms, 150);
        assert_eq!(args.first_move_ms, 10_000);
        assert_eq!(args.game, GameName::Generals);
    }

    #[test]
    fn play_needs_two_bots() {
        assert!(Cli::try_parse_from(["arena", "play", "a"]).is_err());
    }

    #[test]
    fn replay_verify_and_bench_parse() {
        assert!(Cli::try_parse_from(["arena", "replay", "verify", "x.json"]).is_ok());
        assert!(Cli::try_parse_from(["arena", "bench", "engine", "--json"]).is_ok());
        assert!(Cli::try_parse_from(["arena", "bench", "runner", "--matches", "2"]).is_ok());
    }
}
