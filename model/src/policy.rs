//! A checked model, ready to answer frames: adapters build its inputs, one
//! single-threaded tract evaluation runs, and the head becomes the reply.
//! Every way a turn can fail is a [`Strike`] value, never a panic.

use std::path::Path;
use std::time::{Duration, Instant};

use arena_engine::registry::ModelLimits;
use arena_engine::registry::model::{
    AdapterError, BoardArgs, FrameReader, HeadAnswer, ModelInterface,
};
use tract_onnx::prelude::*;

use crate::check::{Feed, Refusal, Report, load, optimise};

/// One turn that produced no reply: the game's fallback plays, and the seat
/// takes a strike.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Strike {
    #[error("adapter: {0}")]
    Adapter(#[from] AdapterError),
    #[error("evaluation: {0}")]
    Evaluation(String),
    #[error("head_shape: the head is {got:?}, not [{rows}, {width}]")]
    HeadShape {
        got: Vec<usize>,
        rows: usize,
        width: usize,
    },
    #[error("not_finite: the head's score at row {row}, column {col} is {value}")]
    NotFinite {
        row: usize,
        col: usize,
        value: String,
    },
    #[error("late: the evaluation took {took_ms} ms, more than the deadline of {deadline_ms} ms")]
    Late { took_ms: u64, deadline_ms: u64 },
}

impl Strike {
    /// A short, stable word for metrics and logs.
    pub fn kind(&self) -> &'static str {
        match self {
            Strike::Adapter(_) => "adapter",
            Strike::Evaluation(_) => "evaluation",
            Strike::HeadShape { .. } => "head_shape",
            Strike::NotFinite { .. } => "not_finite",
            Strike::Late { .. } => "late",
        }
    }
}

/// A model loaded for play, reading one seat's frames of one game.
pub struct Policy {
    interface: &'static ModelInterface,
    plan: std::sync::Arc<TypedSimplePlan>,
    feeds: Vec<Feed>,
    report: Report,
    /// The board size the graph fixes, which the reader pads to.
    board: BoardArgs,
    /// What the game's frames said so far (a game's memory lives here).
    reader: Box<dyn FrameReader>,
}

impl std::fmt::Debug for Policy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Policy")
            .field("adapter_set", &self.interface.adapter_set)
            .field("report", &self.report)
            .finish_non_exhaustive()
    }
}

/// One answered turn.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Answer {
    /// The reply line, without its newline.
    pub reply: Vec<u8>,
    /// The head's best entry was illegal, so the best legal one played.
    pub best_was_illegal: bool,
    /// Adapters plus evaluation plus the head's reading, in microseconds.
    pub eval_us: u64,
}

impl Policy {
    /// Checks the model in `dir` (as [`crate::check`] does) and prepares it.
    pub fn load(
        dir: &Path,
        interface: &'static ModelInterface,
        limits: &ModelLimits,
    ) -> Result<Policy, Refusal> {
        let checked = load(dir, interface, limits)?;
        let plan = optimise(checked.typed)?;
        let reader = (interface.reader)(checked.board);
        Ok(Policy {
            interface,
            plan,
            feeds: checked.feeds,
            report: checked.report,
            board: checked.board,
            reader,
        })
    }

    /// Forgets the game read so far: the next frame starts a new game (with
    /// its handshake).
    pub fn new_game(&mut self) {
        self.reader = (self.interface.reader)(self.board);
    }

    /// What the check found.
    pub fn report(&self) -> &Report {
        &self.report
    }

    /// Reads one frame without answering it (a turn already struck late):
    /// what the game's reader remembers stays complete.
    pub fn observe(&mut self, frame: &[u8]) -> Result<(), Strike> {
        self.reader.read(frame)?;
        Ok(())
    }

    /// Answers one frame, within `deadline` or as a [`Strike::Late`].
    pub fn answer(&mut self, frame: &[u8], deadline: Duration) -> Result<Answer, Strike> {
        let start = Instant::now();
        let answer = self.evaluate_head(frame)?;
        let took = start.elapsed();
        if took > deadline {
            return Err(Strike::Late {
                took_ms: u64::try_from(took.as_millis()).unwrap_or(u64::MAX),
                deadline_ms: u64::try_from(deadline.as_millis()).unwrap_or(u64::MAX),
            });
        }
        Ok(Answer {
            reply: answer.line,
            best_was_illegal: answer.best_was_illegal,
            eval_us: u64::try_from(took.as_micros()).unwrap_or(u64::MAX),
        })
    }

    /// The reply line for one frame, however long it takes.
    pub fn evaluate(&mut self, frame: &[u8]) -> Result<Vec<u8>, Strike> {
        Ok(self.evaluate_head(frame)?.line)
    }

    /// The reply for one frame and how the head chose it.
    fn evaluate_head(&mut self, frame: &[u8]) -> Result<HeadAnswer, Strike> {
        let view = self.reader.read(frame)?;
        let rows = view.head_rows();
        if rows == 0 {
            // Nothing to order: the reply is known without evaluating.
            return Ok(view.answer(&[])?);
        }
        let mut inputs = TVec::with_capacity(self.feeds.len());
        for feed in &self.feeds {
            let built = view.input(feed.adapter.name, &feed.args)?;
            let tensor = Tensor::from_shape(&built.shape, &built.data)
                .map_err(|e| Strike::Evaluation(format!("{e:#}")))?;
            inputs.push(tensor.into_tvalue());
        }
        // tract is not written for hostile graphs: a panic inside it is
        // this turn's failure, not the host's.
        let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| self.plan.run(inputs)));
        let outputs = match run {
            Ok(Ok(outputs)) => outputs,
            Ok(Err(e)) => return Err(Strike::Evaluation(format!("{e:#}"))),
            Err(_) => return Err(Strike::Evaluation("tract panicked".to_owned())),
        };
        let head = outputs
            .first()
            .ok_or_else(|| Strike::Evaluation("the graph returned no output".to_owned()))?;
        let scores = read_head(head, rows, self.interface.head.width)?;
        Ok(view.answer(&scores)?)
    }
}

/// The head's scores, if it has the shape `[rows, width]` and every score
/// is finite.
pub(crate) fn read_head(head: &Tensor, rows: usize, width: usize) -> Result<Vec<f32>, Strike> {
    let wrong = || Strike::HeadShape {
        got: head.shape().to_vec(),
        rows,
        width,
    };
    if head.shape() != [rows, width] {
        return Err(wrong());
    }
    let scores: Vec<f32> = head
        .to_plain_array_view::<f32>()
        .map_err(|_| wrong())?
        .iter()
        .copied()
        .collect();
    if let Some(at) = scores.iter().position(|s| !s.is_finite()) {
        return Err(Strike::NotFinite {
            row: at / width,
            col: at % width,
            value: scores[at].to_string(),
        });
    }
    Ok(scores)
}
