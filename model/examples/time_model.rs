//! Times one model directory's turns on a busy synthetic frame:
//! `cargo run -p arena-model --example time_model -- DIR [TURNS]`.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use arena_engine::ants::adapters::INTERFACE;
use arena_engine::registry::ModelLimits;

fn main() {
    let mut args = std::env::args().skip(1);
    let dir = PathBuf::from(
        args.next()
            .unwrap_or_else(|| "bots/ants-models/starter".to_owned()),
    );
    let turns: usize = args.next().and_then(|t| t.parse().ok()).unwrap_or(50);
    let limits = ModelLimits {
        max_bytes: 64 << 20,
        max_macs: u64::MAX,
    };
    let start = Instant::now();
    let mut policy = match arena_model::Policy::load(&dir, &INTERFACE, &limits) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("refused: {e}");
            std::process::exit(1);
        }
    };
    eprintln!("loaded in {:?}: {:?}", start.elapsed(), policy.report());
    let frame = busy_frame(100, 100, 100);
    let mut times: Vec<u64> = Vec::with_capacity(turns);
    for _ in 0..turns {
        match policy.answer(&frame, Duration::from_secs(3600)) {
            Ok(a) => times.push(a.eval_us),
            Err(e) => {
                eprintln!("strike: {e}");
                std::process::exit(2);
            }
        }
    }
    times.sort_unstable();
    let at = |q: f64| times[((times.len() - 1) as f64 * q) as usize];
    println!(
        "{} turns, 100 ants on 100x100: p50 {} us, p99 {} us",
        turns,
        at(0.5),
        at(0.99)
    );
}

/// A board with `ants` of mine spread over it, as many enemies, and food.
fn busy_frame(rows: usize, cols: usize, ants: usize) -> Vec<u8> {
    let map: Vec<String> = (0..rows)
        .map(|r| {
            (0..cols)
                .map(|c| if (r * 7 + c * 3) % 23 == 0 { '%' } else { '.' })
                .collect::<String>()
        })
        .map(|row| format!("\"{row}\""))
        .collect();
    let mut mine = Vec::new();
    let mut all = Vec::new();
    let mut food = Vec::new();
    for i in 0..ants {
        let (r, c) = ((i * 37) % rows, (i * 53 + 1) % cols);
        mine.push((r, c));
        all.push(format!("[{r},{c},0]"));
        all.push(format!("[{},{},1]", (r + 50) % rows, (c + 50) % cols));
        food.push(format!("[{},{}]", (r + 3) % rows, (c + 2) % cols));
    }
    mine.sort_unstable();
    mine.dedup();
    let mine: Vec<String> = mine.iter().map(|(r, c)| format!("[{r},{c}]")).collect();
    format!(
        "{{\"turn\":9,\"max_turns\":1000,\"you\":0,\"players\":2,\"rows\":{rows},\"cols\":{cols},\"map\":[{}],\"ants\":[{}],\"mine\":[{}],\"food\":[{}],\"hills\":[],\"hive\":0,\"scores\":[1,1]}}\n",
        map.join(","),
        all.join(","),
        mine.join(","),
        food.join(",")
    )
    .into_bytes()
}
