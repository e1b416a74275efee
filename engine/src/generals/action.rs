//! Reply lines: `<pass> <row> <col> <dir> <split>`.
//!
//! Parsing only decides whether a line is an action at all. Whether the action
//! is legal on the board is the step's business: an illegal action is a silent
//! pass, a malformed line is a runner fault.

use serde::{Deserialize, Serialize};

use crate::game::Malformed;

/// What a reply asks for: its first field.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[repr(u8)]
pub enum ActionKind {
    Move = 0,
    Pass = 1,
    Build = 2,
}

/// The four move directions, in the protocol's order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    Up = 0,
    Down = 1,
    Left = 2,
    Right = 3,
}

impl Direction {
    pub const ALL: [Direction; 4] = [
        Direction::Up,
        Direction::Down,
        Direction::Left,
        Direction::Right,
    ];

    /// `(drow, dcol)` of one step this way.
    pub fn delta(self) -> (i64, i64) {
        match self {
            Direction::Up => (-1, 0),
            Direction::Down => (1, 0),
            Direction::Left => (0, -1),
            Direction::Right => (0, 1),
        }
    }
}

/// One seat's action exactly as submitted, five integers. Row and column may
/// lie off the board; for a pass or a build the ignored fields keep whatever
/// the bot sent, so replays record the reply verbatim.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(into = "[i64; 5]", try_from = "[i64; 5]")]
pub struct Action {
    pub kind: ActionKind,
    pub row: i64,
    pub col: i64,
    pub dir: i64,
    pub split: i64,
}

impl Action {
    pub const PASS: Action = Action {
        kind: ActionKind::Pass,
        row: 0,
        col: 0,
        dir: 0,
        split: 0,
    };

    pub fn movement(row: i64, col: i64, dir: Direction, half: bool) -> Action {
        Action {
            kind: ActionKind::Move,
            row,
            col,
            dir: dir as i64,
            split: i64::from(half),
        }
    }

    pub fn build(row: i64, col: i64) -> Action {
        Action {
            kind: ActionKind::Build,
            row,
            col,
            dir: 0,
            split: 0,
        }
    }

    /// The move direction; `None` unless this is a move (moves always carry a valid one).
    pub fn direction(&self) -> Option<Direction> {
        if self.kind != ActionKind::Move {
            return None;
        }
        Direction::ALL.get(usize::try_from(self.dir).ok()?).copied()
    }

    /// The five fields in protocol order.
    pub fn fields(&self) -> [i64; 5] {
        [self.kind as i64, self.row, self.col, self.dir, self.split]
    }
}

impl From<Action> for [i64; 5] {
    fn from(action: Action) -> Self {
        action.fields()
    }
}

impl TryFrom<[i64; 5]> for Action {
    type Error = Malformed;

    fn try_from([pass, row, col, dir, split]: [i64; 5]) -> Result<Self, Malformed> {
        let kind = match pass {
            0 => ActionKind::Move,
            1 => ActionKind::Pass,
            2 => ActionKind::Build,
            _ => return Err(malformed("pass must be 0, 1 or 2")),
        };
        if kind == ActionKind::Move {
            if !(0..=3).contains(&dir) {
                return Err(malformed("dir must be 0..=3 for a move"));
            }
            if !(0..=1).contains(&split) {
                return Err(malformed("split must be 0 or 1 for a move"));
            }
        }
        Ok(Action {
            kind,
            row,
            col,
            dir,
            split,
        })
    }
}

fn malformed(reason: &'static str) -> Malformed {
    Malformed::new(reason)
}

/// Parses one reply line, without its `\n` (a trailing `\r` is tolerated).
///
/// Exactly five integers separated by spaces or tabs. Each is an optional sign
/// and decimal digits; values beyond the i64 range saturate, which leaves them
/// off the board rather than making them malformed.
pub fn parse(line: &[u8]) -> Result<Action, Malformed> {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let mut fields = [0i64; 5];
    let mut count = 0;
    for token in line
        .split(|b| *b == b' ' || *b == b'\t')
        .filter(|t| !t.is_empty())
    {
        let slot = fields
            .get_mut(count)
            .ok_or_else(|| malformed("more than five fields"))?;
        *slot = parse_integer(token)?;
        count += 1;
    }
    if count < 5 {
        return Err(malformed("fewer than five fields"));
    }
    Action::try_from(fields)
}

fn parse_integer(token: &[u8]) -> Result<i64, Malformed> {
    let (negative, digits) = match token {
        [b'-', rest @ ..] => (true, rest),
        [b'+', rest @ ..] => (false, rest),
        _ => (false, token),
    };
    if digits.is_empty() {
        return Err(malformed("a field is not an integer"));
    }
    let mut value: i64 = 0;
    for &b in digits {
        if !b.is_ascii_digit() {
            return Err(malformed("a field is not an integer"));
        }
        let digit = i64::from(b - b'0');
        value = if negative {
            value.saturating_mul(10).saturating_sub(digit)
        } else {
            value.saturating_mul(10).saturating_add(digit)
        };
    }
    Ok(value)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn parses_the_three_kinds() {
        assert_eq!(
            parse(b"0 3 4 1 1").unwrap(),
            Action::movement(3, 4, Direction::Down, true)
        );
        assert_eq!(parse(b"1 0 0 0 0").unwrap(), Action::PASS);
        assert_eq!(parse(b"2 5 6 0 0\r").unwrap(), Action::build(5, 6));
    }

    #[test]
    fn off_board_and_huge_coordinates_are_well_formed() {
        let action = parse(b"0 -1 99999999999999999999999 3 0").unwrap();
        assert_eq!(action.row, -1);
        assert_eq!(action.col, i64::MAX);
    }

    #[test]
    fn pass_and_build_ignore_their_unused_fields() {
        assert_eq!(parse(b"1 7 7 9 9").unwrap().kind, ActionKind::Pass);
        assert_eq!(parse(b"2 1 1 5 -3").unwrap().kind, ActionKind::Build);
    }

    #[test]
    fn rejects_what_is_not_an_action() {
        for line in [
            &b""[..],
            b"0 1 2 3",
            b"0 1 2 3 0 0",
            b"3 0 0 0 0",
            b"-1 0 0 0 0",
            b"0 1 1 4 0",
            b"0 1 1 0 2",
            b"0 1 1 x 0",
            b"0 1 1 1.5 0",
            b"0 1 - 1 0",
            b"0,1,1,1,0",
            b"\xff\xfe",
        ] {
            assert!(parse(line).is_err(), "{:?} should be malformed", line);
        }
    }

    proptest! {
        #[test]
        fn any_bytes_parse_without_panicking(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
            let _ = parse(&bytes);
        }

        #[test]
        fn well_formed_fields_round_trip(pass in 0i64..3, row in any::<i64>(), col in any::<i64>(), dir in 0i64..4, split in 0i64..2) {
            let line = format!("{pass} {row} {col} {dir} {split}");
            let action = parse(line.as_bytes()).unwrap();
            prop_assert_eq!(action.fields(), [pass, row, col, dir, split]);
        }
    }
}
