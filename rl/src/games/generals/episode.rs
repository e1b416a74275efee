//! An episode's record, compact enough to keep every turn, and the replay
//! it becomes.

use arena_engine::generals::Action;
use arena_engine::replay::ReplayTurn;

use super::board::Board;

/// One seat's applied action, stored compactly: an episode of 1,200 turns
/// keeps 12 bytes per seat per turn. Row and column are clamped into `i32`
/// and direction and split into `i8`; the engine reads every value those
/// clamps change as off the board, no direction or "not half" alike, so the
/// stored action plays exactly as the submitted one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Recorded {
    row: i32,
    col: i32,
    dir: i8,
    split: i8,
    /// The pass field, or `NOT_DUE` for a seat that was not asked.
    kind: u8,
}

pub(super) const NOT_DUE: u8 = u8::MAX;

impl Recorded {
    pub(super) fn of(action: Option<&Action>) -> Recorded {
        let clamp32 = |v: i64| v.clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as i32;
        let clamp8 = |v: i64| v.clamp(i64::from(i8::MIN), i64::from(i8::MAX)) as i8;
        match action {
            Some(a) => Recorded {
                row: clamp32(a.row),
                col: clamp32(a.col),
                dir: clamp8(a.dir),
                split: clamp8(a.split),
                kind: a.kind as u8,
            },
            None => Recorded {
                row: 0,
                col: 0,
                dir: 0,
                split: 0,
                kind: NOT_DUE,
            },
        }
    }

    pub(super) fn action(&self) -> Option<Action> {
        if self.kind == NOT_DUE {
            return None;
        }
        let fields = [
            i64::from(self.kind),
            i64::from(self.row),
            i64::from(self.col),
            i64::from(self.dir),
            i64::from(self.split),
        ];
        Action::try_from(fields).ok()
    }
}

/// A finished (or running) episode's record.
#[derive(Clone, Debug)]
pub(super) struct Episode {
    pub(super) initial: Board,
    pub(super) seed: u64,
    /// `seats` entries per turn.
    pub(super) turns: Vec<Recorded>,
}

impl Episode {
    pub(super) fn replay(&self, last: &Board, seats: usize) -> Result<Vec<u8>, String> {
        let turns = self
            .turns
            .chunks_exact(seats)
            .map(|turn| ReplayTurn {
                actions: turn.iter().map(Recorded::action).collect(),
                faults: vec![None; seats],
            })
            .collect();
        last.replay(&self.initial, self.seed, turns)
    }
}
