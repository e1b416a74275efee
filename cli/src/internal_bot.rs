//! A bot built into the binary, so benchmarks measure the runner rather than a
//! script interpreter. It speaks the generals protocol on stdin/stdout, or
//! (`no-orders`) answers every JSON line with an empty order batch.

use std::io::{BufRead, Write};
use std::process::ExitCode;

use arena_engine::rng::SplitMix64;

use crate::cli::{InternalBotArgs, InternalBotKind};

pub fn run(args: InternalBotArgs) -> anyhow::Result<ExitCode> {
    let stdin = std::io::stdin();
    let mut input = stdin.lock();
    let mut out = std::io::stdout().lock();
    let mut line = String::new();
    if let InternalBotKind::NoOrders = args.kind {
        return no_orders(&mut input, &mut out);
    }
    if input.read_line(&mut line)? == 0 {
        return Ok(ExitCode::SUCCESS);
    }
    let header: Vec<usize> = line
        .split_whitespace()
        .map(str::parse)
        .collect::<Result<_, _>>()?;
    let [seat, height, width] = header[..] else {
        anyhow::bail!("bad handshake {line:?}");
    };
    let mut rng = SplitMix64::new(seat as u64 + 1);
    let mut types = vec![0u8; height * width];
    let mut owners = vec![0u8; height * width];
    let mut armies = vec![0u32; height * width];
    loop {
        line.clear();
        if input.read_line(&mut line)? == 0 {
            return Ok(ExitCode::SUCCESS);
        }
        for plane in 0..3 {
            for row in 0..height {
                line.clear();
                if input.read_line(&mut line)? == 0 {
                    return Ok(ExitCode::SUCCESS);
                }
                for (col, value) in line.split_ascii_whitespace().take(width).enumerate() {
                    let cell = row * width + col;
                    match plane {
                        0 => types[cell] = value.parse()?,
                        1 => owners[cell] = value.parse()?,
                        _ => armies[cell] = value.parse()?,
                    }
                }
            }
        }
        let reply = match args.kind {
            InternalBotKind::Pass => "1 0 0 0 0".to_owned(),
            InternalBotKind::Random => {
                random_move(&types, &owners, &armies, height, width, &mut rng)
            }
            InternalBotKind::NoOrders => unreachable!("answered above"),
        };
        writeln!(out, "{reply}")?;
        out.flush()?;
    }
}

fn random_move(
    types: &[u8],
    owners: &[u8],
    armies: &[u32],
    height: usize,
    width: usize,
    rng: &mut SplitMix64,
) -> String {
    let mut candidates = Vec::new();
    for cell in 0..types.len() {
        if owners[cell] != 1 || armies[cell] < 2 {
            continue;
        }
        let (row, col) = (cell / width, cell % width);
        for (dir, (dr, dc)) in [(-1i64, 0i64), (1, 0), (0, -1), (0, 1)]
            .into_iter()
            .enumerate()
        {
            let (r, c) = (row as i64 + dr, col as i64 + dc);
            if r < 0 || c < 0 || r >= height as i64 || c >= width as i64 {
                continue;
            }
            let target = types[r as usize * width + c as usize];
            if target != 2 && target != 5 {
                candidates.push((row, col, dir));
            }
        }
    }
    if candidates.is_empty() {
        return "1 0 0 0 0".to_owned();
    }
    let (row, col, dir) = candidates[rng.below(candidates.len() as u64) as usize];
    format!("0 {row} {col} {dir} {}", rng.below(2))
}

/// Answers every line with Grid Royale's no-action reply.
fn no_orders(input: &mut impl BufRead, out: &mut impl Write) -> anyhow::Result<ExitCode> {
    let mut line = Vec::new();
    loop {
        line.clear();
        if input.read_until(b'\n', &mut line)? == 0 {
            return Ok(ExitCode::SUCCESS);
        }
        out.write_all(b"{\"orders\": [], \"spawn\": false}\n")?;
        out.flush()?;
    }
}
