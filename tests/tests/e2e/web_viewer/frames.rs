//! What the viewer should show, worked out here from `frames.json` on our
//! own: each seat's land and army in a generals-ffa match, its forfeits,
//! and the result. Nothing of the viewer's code is used.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use serde_json::Value;

/// The lines of `arena replay dump` for one match, as served.
pub struct Frames {
    lines: Vec<Value>,
}

/// One seat at one turn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SeatFigures {
    /// Cells the seat owns.
    pub land: u64,
    /// The armies on them, summed.
    pub army: u64,
}

impl Frames {
    /// `GET {address}{path}` over HTTP/1.0 (so the body is never chunked).
    pub fn fetch(address: &str, path: &str) -> Frames {
        let mut stream = TcpStream::connect(address).expect("connecting to the pages");
        stream
            .set_read_timeout(Some(Duration::from_secs(60)))
            .expect("a read timeout");
        write!(stream, "GET {path} HTTP/1.0\r\nHost: {address}\r\n\r\n").expect("the request");
        let mut answer = Vec::new();
        stream.read_to_end(&mut answer).expect("the answer");
        let answer = String::from_utf8(answer).expect("a UTF-8 answer");
        let (head, body) = answer
            .split_once("\r\n\r\n")
            .unwrap_or_else(|| panic!("no end of headers in {answer:.200}"));
        assert!(
            head.starts_with("HTTP/1.0 200") || head.starts_with("HTTP/1.1 200"),
            "{path}: {head}"
        );
        let lines: Vec<Value> = serde_json::from_str(body).expect("frames.json is JSON");
        // The header and the result at least: a match a forfeit ended
        // before its first turn has no turn line.
        assert!(lines.len() >= 2, "{} lines in {path}", lines.len());
        assert!(
            lines[0]["initial"].is_object(),
            "no header: {:.200}",
            lines[0]
        );
        Frames { lines }
    }

    /// The turn lines, in order: line `t` holds the state after turn `t`.
    fn turns(&self) -> impl Iterator<Item = &Value> {
        self.lines.iter().filter(|l| l.get("state").is_some())
    }

    /// The last turn (the number of turns played).
    pub fn last(&self) -> usize {
        self.turns().count()
    }

    /// The state shown at turn `index` (0: the initial state).
    fn state(&self, index: usize) -> &Value {
        if index == 0 {
            return &self.lines[0]["initial"];
        }
        let line = self
            .turns()
            .nth(index - 1)
            .unwrap_or_else(|| panic!("no turn {index}"));
        assert_eq!(line["turn"].as_u64(), Some(index as u64), "turn numbers");
        &line["state"]
    }

    /// Land and army of every seat of a generals-ffa state at `index`: a
    /// cell is a seat's when `owner[cell]` is that seat.
    pub fn ffa_figures(&self, index: usize) -> Vec<SeatFigures> {
        let state = self.state(index);
        let seats = state["seats"].as_array().expect("seats").len();
        let owners = state["owner"].as_array().expect("owner");
        let armies = state["army"].as_array().expect("army");
        let mut figures = vec![SeatFigures { land: 0, army: 0 }; seats];
        for (owner, army) in owners.iter().zip(armies) {
            let Some(owner) = owner.as_u64() else {
                continue;
            };
            let seat = &mut figures[owner as usize];
            seat.land += 1;
            seat.army += army.as_u64().expect("an army count");
        }
        figures
    }

    /// `(turn, seat, reason)` of every forfeit the turn lines name.
    pub fn forfeits(&self) -> Vec<(usize, usize, String)> {
        let mut all = Vec::new();
        for line in self.turns() {
            let turn = line["turn"].as_u64().expect("a turn number") as usize;
            for f in line["forfeits"].as_array().into_iter().flatten() {
                let seat = f["seat"].as_u64().expect("a seat") as usize;
                let reason = f["reason"].as_str().expect("a reason").to_owned();
                all.push((turn, seat, reason));
            }
        }
        all
    }

    /// The result line's ranks (0 is first) and reason.
    pub fn result(&self) -> (Vec<u64>, String) {
        let result = &self.lines.last().expect("lines")["result"];
        let ranks = result["ranks"]
            .as_array()
            .expect("ranks")
            .iter()
            .map(|r| r.as_u64().expect("a rank"))
            .collect();
        (
            ranks,
            result["reason"].as_str().expect("a reason").to_owned(),
        )
    }
}
