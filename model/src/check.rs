//! The build-time check: a model directory is loaded, typed and costed
//! exactly as the host will load it, and either fits the game's interface
//! and limits ([`Report`]) or is refused with the reason ([`Refusal`]).
//!
//! Steps, in order (each a refusal of its own): `bot.toml`; the file size
//! (before anything is parsed); loading in tract; operators tract lacks;
//! inputs against adapters; typing with the adapters' shapes; the head's
//! shape; the cost at the reference size.

use std::collections::BTreeMap;
use std::path::Path;

use arena_engine::registry::ModelLimits;
use arena_engine::registry::model::{
    AdapterSpec, BoardArgs, Dim, HeadRows, InputArgs, ModelInterface,
};
use serde::{Deserialize, Serialize};
use tract_hir::infer::Factoid;
use tract_onnx::prelude::*;

use crate::config::{BotToml, ConfigError, InputConfig, MODEL_FILE, ModelConfig, join};
use crate::cost::{estimate, typed_with};

/// The symbol every input's head-rows dim shares (and the head's rows).
pub(crate) const ROWS_SYMBOL: &str = "arena_head_rows";
const BOARD_ROWS_SYMBOL: &str = "arena_board_rows";
const BOARD_COLS_SYMBOL: &str = "arena_board_cols";

/// What the check found in a model that passed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Report {
    /// The adapter set it was checked against.
    pub adapter_set: String,
    /// `model.onnx`'s size.
    pub bytes: u64,
    /// Estimated multiply-accumulates of one turn at the reference size.
    pub macs: u64,
    /// The reference size: head rows, board rows, board cols.
    pub reference: [usize; 3],
    pub inputs: Vec<InputReport>,
    pub head: HeadReport,
}

/// One graph input as the host will feed it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct InputReport {
    pub name: String,
    pub adapter: String,
    /// Every parameter, as the host will pass it.
    pub params: BTreeMap<String, i64>,
    /// The shape, a dim a number or `N` (head rows), `rows` or `cols` (the board's).
    pub shape: Vec<String>,
}

/// The head as the check found it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct HeadReport {
    pub output: String,
    pub shape: Vec<String>,
}

/// Why a model directory cannot play (a `build_failed` verdict).
#[derive(Debug, thiserror::Error)]
pub enum Refusal {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error("cannot read {MODEL_FILE}: {0}")]
    Missing(std::io::Error),
    #[error("{MODEL_FILE} is {bytes} bytes, more than the limit of {max}")]
    TooLarge { bytes: u64, max: u64 },
    #[error("{MODEL_FILE} cannot be loaded: {0}")]
    Load(String),
    #[error(
        "unsupported operator {op} (node {node:?}): tract {} does not implement it",
        crate::TRACT_VERSION
    )]
    UnsupportedOp { op: String, node: String },
    #[error("graph input {0:?} has no adapter in bot.toml")]
    InputWithoutAdapter(String),
    #[error("bot.toml gives an adapter to {input:?}, which is not a graph input (inputs: {known})")]
    NotAnInput { input: String, known: String },
    #[error("graph input {input:?} ({adapter}): {problem}")]
    InputShape {
        input: String,
        adapter: &'static str,
        problem: String,
    },
    #[error("the head {output:?} is not an output of the graph (outputs: {known})")]
    NoHead { output: String, known: String },
    #[error("bot.toml names no [head] output and the graph has {0} outputs")]
    WhichHead(usize),
    #[error("the graph cannot be typed by tract: {0}")]
    Typing(String),
    #[error("the head {output:?} has shape {shape}, not [{rows}, {width}]")]
    HeadShape {
        output: String,
        shape: String,
        /// The rows expected, as the report shows them.
        rows: String,
        width: usize,
    },
    #[error("graph inputs fix the board's {axis} to {first} and to {second}: one size for all")]
    BoardSizes {
        axis: &'static str,
        first: usize,
        second: usize,
    },
    #[error("the cost cannot be estimated: {0}")]
    Cost(String),
    #[error(
        "estimated cost {macs} multiply-accumulates a turn (at {rows} head rows on a {board_rows}x{board_cols} board) is more than the limit of {max}"
    )]
    TooCostly {
        macs: u64,
        max: u64,
        rows: usize,
        board_rows: usize,
        board_cols: usize,
    },
    #[error("the graph cannot be prepared for evaluation: {0}")]
    Optimise(String),
}

/// A model that passed: its typed graph (symbolic head rows) and how to
/// feed each input, in the graph's input order.
pub(crate) struct Checked {
    pub report: Report,
    pub typed: TypedModel,
    pub feeds: Vec<Feed>,
    /// The board size the inputs fix, if they fix one.
    pub board: BoardArgs,
}

/// How one graph input is built each turn.
#[derive(Clone, Debug)]
pub(crate) struct Feed {
    pub adapter: &'static AdapterSpec,
    pub args: InputArgs,
}

/// Checks the model in `dir` against `interface` and `limits`.
pub fn check(
    dir: &Path,
    interface: &ModelInterface,
    limits: &ModelLimits,
) -> Result<Report, Refusal> {
    let checked = load(dir, interface, limits)?;
    // The host optimises the graph once it is loaded; a graph that cannot
    // be optimised would refuse there, so it is refused here.
    optimise(checked.typed)?;
    Ok(checked.report)
}

pub(crate) fn load(
    dir: &Path,
    interface: &ModelInterface,
    limits: &ModelLimits,
) -> Result<Checked, Refusal> {
    // tract asserts on some graphs it cannot type (dims that overflow, for
    // one) instead of returning an error: that is this graph's refusal.
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        load_unguarded(dir, interface, limits)
    }))
    .unwrap_or_else(|_| {
        Err(Refusal::Typing(
            "tract panicked while loading it".to_owned(),
        ))
    })
}

fn load_unguarded(
    dir: &Path,
    interface: &ModelInterface,
    limits: &ModelLimits,
) -> Result<Checked, Refusal> {
    let config = BotToml::read(dir)?.resolve(interface)?;
    let path = dir.join(MODEL_FILE);
    let bytes = file_size(&path, limits)?;
    let mut model = read_graph(&path)?;
    let head = select_head(&mut model, config.head_output.as_deref())?;
    let input_names = input_names(&model, &config)?;
    let sizes = Sizes::new(&model, interface);
    let resolved = resolve_inputs(&model, &config, &input_names)?;
    // One board for every input: a size one input fixes holds for all.
    let board = board_args(resolved.iter().map(|(_, _, feed)| &feed.args))?;
    let inputs = shape_inputs(resolved, &board, &sizes);
    let typed = typed_with(model.clone(), &inputs.symbolic)?;
    let head_shape = check_head(&typed, interface, &board, &sizes, &head)?;
    let macs = check_cost(model, &inputs.reference, limits, &sizes)?;
    let report = Report {
        adapter_set: interface.adapter_set.to_owned(),
        bytes,
        macs,
        reference: [sizes.reference.0, sizes.reference.1, sizes.reference.2],
        inputs: inputs.reports,
        head: HeadReport {
            output: head,
            shape: head_shape,
        },
    };
    Ok(Checked {
        report,
        typed,
        feeds: inputs.feeds,
        board,
    })
}

/// `model.onnx`'s size, refused over the limit before anything is parsed.
fn file_size(path: &Path, limits: &ModelLimits) -> Result<u64, Refusal> {
    let bytes = std::fs::metadata(path).map_err(Refusal::Missing)?.len();
    if bytes > limits.max_bytes {
        return Err(Refusal::TooLarge {
            bytes,
            max: limits.max_bytes,
        });
    }
    Ok(bytes)
}

/// The graph as tract loads it, refused when it holds an operator tract
/// does not implement.
fn read_graph(path: &Path) -> Result<InferenceModel, Refusal> {
    // Shapes inside the graph come from typing with the adapters' shapes,
    // never from the file's own annotations, which could contradict them.
    let model = tract_onnx::onnx()
        .with_ignore_output_shapes(true)
        .with_ignore_value_info(true)
        .model_for_path(path)
        .map_err(|e| Refusal::Load(format!("{e:#}")))?;
    for node in model.nodes() {
        let name = node.op.name();
        if let Some(op) = name
            .strip_prefix("Unimplemented(")
            .and_then(|s| s.strip_suffix(')'))
        {
            return Err(Refusal::UnsupportedOp {
                op: op.to_owned(),
                node: node.name.clone(),
            });
        }
    }
    Ok(model)
}

/// The graph's input names, in order; refused when `bot.toml` gives an
/// adapter to a name that is not among them.
fn input_names(model: &InferenceModel, config: &ModelConfig) -> Result<Vec<String>, Refusal> {
    let input_names: Vec<String> = model
        .input_outlets()
        .map_err(|e| Refusal::Load(format!("{e:#}")))?
        .iter()
        .map(|o| model.node(o.node).name.clone())
        .collect();
    for given in &config.inputs {
        if !input_names.contains(&given.name) {
            return Err(Refusal::NotAnInput {
                input: given.name.clone(),
                known: join(input_names.iter()),
            });
        }
    }
    Ok(input_names)
}

/// Each graph input with its adapter and its feed as that input alone
/// fixes it, in the graph's input order.
fn resolve_inputs<'a>(
    model: &InferenceModel,
    config: &'a ModelConfig,
    input_names: &'a [String],
) -> Result<Vec<(&'a String, &'a InputConfig, Feed)>, Refusal> {
    let mut resolved = Vec::with_capacity(input_names.len());
    for (ix, name) in input_names.iter().enumerate() {
        let Some(given) = config.inputs.iter().find(|i| &i.name == name) else {
            return Err(Refusal::InputWithoutAdapter(name.clone()));
        };
        let declared = model
            .input_fact(ix)
            .map_err(|e| Refusal::Load(format!("{e:#}")))?;
        resolved.push((name, given, resolve_input(given, declared)?));
    }
    Ok(resolved)
}

/// Every input's feed, report and shapes, in the graph's input order.
struct ShapedInputs {
    feeds: Vec<Feed>,
    reports: Vec<InputReport>,
    /// The shapes for evaluation.
    symbolic: Vec<Vec<TDim>>,
    /// The shapes at the reference size, for the cost.
    reference: Vec<Vec<usize>>,
}

/// Gives every input the board size `board` fixes and shapes it.
fn shape_inputs(
    resolved: Vec<(&String, &InputConfig, Feed)>,
    board: &BoardArgs,
    sizes: &Sizes,
) -> ShapedInputs {
    let mut feeds = Vec::with_capacity(resolved.len());
    let mut reports = Vec::with_capacity(resolved.len());
    let mut symbolic = Vec::with_capacity(resolved.len());
    let mut reference = Vec::with_capacity(resolved.len());
    for (name, given, mut feed) in resolved {
        if given.adapter.shape.contains(&Dim::BoardRows) {
            feed.args.rows = board.rows;
        }
        if given.adapter.shape.contains(&Dim::BoardCols) {
            feed.args.cols = board.cols;
        }
        let (sym, conc, shown) = sizes.shapes(given.adapter, &feed.args);
        reports.push(InputReport {
            name: name.clone(),
            adapter: given.adapter.name.to_owned(),
            params: feed.args.params.clone(),
            shape: shown,
        });
        symbolic.push(sym);
        reference.push(conc);
        feeds.push(feed);
    }
    ShapedInputs {
        feeds,
        reports,
        symbolic,
        reference,
    }
}

/// The head's shape as the report shows it, refused unless it is f32
/// `[rows, width]` as the interface wants.
fn check_head(
    typed: &TypedModel,
    interface: &ModelInterface,
    board: &BoardArgs,
    sizes: &Sizes,
    head: &str,
) -> Result<Vec<String>, Refusal> {
    let head_fact = typed
        .output_fact(0)
        .map_err(|e| Refusal::Typing(format!("{e:#}")))?;
    let width = interface.head.width;
    let (rows, rows_shown) = match interface.head.rows {
        HeadRows::PerFrame => (
            TDim::Sym(sizes.rows.clone()),
            "N (the head rows of the inputs)".to_owned(),
        ),
        HeadRows::BoardCells => {
            let side = |fixed: Option<usize>, sym: &Symbol| {
                fixed.map_or(TDim::Sym(sym.clone()), |n| TDim::Val(n as i64))
            };
            let cells = side(board.rows, &sizes.board_rows) * side(board.cols, &sizes.board_cols);
            let shown = format!("{cells} (the board's rows x cols)");
            (cells, shown)
        }
    };
    let fits = head_fact.shape.rank() == 2
        && head_fact.shape[0].clone().simplify() == rows.clone().simplify()
        && head_fact.shape[1] == TDim::Val(width as i64);
    let head_shape: Vec<String> = head_fact.shape.iter().map(show).collect();
    if !fits || head_fact.datum_type != f32::datum_type() {
        return Err(Refusal::HeadShape {
            output: head.to_owned(),
            shape: format!("[{}] ({:?})", head_shape.join(", "), head_fact.datum_type),
            rows: rows_shown,
            width,
        });
    }
    Ok(head_shape)
}

/// The estimated multiply-accumulates of one turn at the reference size,
/// refused over the limit.
fn check_cost(
    model: InferenceModel,
    reference: &[Vec<usize>],
    limits: &ModelLimits,
    sizes: &Sizes,
) -> Result<u64, Refusal> {
    let macs = estimate(model, reference)?;
    if macs > limits.max_macs {
        return Err(Refusal::TooCostly {
            macs,
            max: limits.max_macs,
            rows: sizes.reference.0,
            board_rows: sizes.reference.1,
            board_cols: sizes.reference.2,
        });
    }
    Ok(macs)
}

/// The board size every input agrees on: a dim one input fixes, no two
/// inputs fixing it differently.
fn board_args<'a>(args: impl Iterator<Item = &'a InputArgs>) -> Result<BoardArgs, Refusal> {
    let mut board = BoardArgs::default();
    for a in args {
        for (axis, mine, theirs) in [
            ("rows", &mut board.rows, a.rows),
            ("cols", &mut board.cols, a.cols),
        ] {
            match (*mine, theirs) {
                (Some(first), Some(second)) if first != second => {
                    return Err(Refusal::BoardSizes {
                        axis,
                        first,
                        second,
                    });
                }
                (None, Some(n)) => *mine = Some(n),
                _ => {}
            }
        }
    }
    Ok(board)
}

/// The graph prepared for evaluation (tract may panic here too).
pub(crate) fn optimise(typed: TypedModel) -> Result<std::sync::Arc<TypedSimplePlan>, Refusal> {
    let prepared = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        typed.into_optimized()?.into_runnable()
    }));
    match prepared {
        Ok(Ok(plan)) => Ok(plan),
        Ok(Err(e)) => Err(Refusal::Optimise(format!("{e:#}"))),
        Err(_) => Err(Refusal::Optimise("tract panicked".to_owned())),
    }
}

/// Keeps only the head among the graph's outputs and returns its name.
fn select_head(model: &mut InferenceModel, wanted: Option<&str>) -> Result<String, Refusal> {
    let outputs = model
        .output_outlets()
        .map_err(|e| Refusal::Load(format!("{e:#}")))?
        .to_vec();
    let label = |o: &OutletId| {
        model
            .outlet_label(*o)
            .map(str::to_owned)
            .unwrap_or_else(|| model.node(o.node).name.clone())
    };
    let names: Vec<String> = outputs.iter().map(label).collect();
    let at = match wanted {
        Some(name) => names
            .iter()
            .position(|n| n == name)
            .ok_or_else(|| Refusal::NoHead {
                output: name.to_owned(),
                known: join(names.iter()),
            })?,
        None if names.len() == 1 => 0,
        None => return Err(Refusal::WhichHead(names.len())),
    };
    model
        .select_output_outlets(&[outputs[at]])
        .map_err(|e| Refusal::Load(format!("{e:#}")))?;
    Ok(names[at].clone())
}

/// The adapter arguments for one input: `bot.toml`'s parameters, those the
/// graph's declared shape fixes, and the defaults, each checked.
fn resolve_input(given: &InputConfig, declared: &InferenceFact) -> Result<Feed, Refusal> {
    let spec = given.adapter;
    let problem = |problem: String| Refusal::InputShape {
        input: given.name.clone(),
        adapter: spec.name,
        problem,
    };
    if let Some(dt) = declared.datum_type.concretize()
        && dt != f32::datum_type()
    {
        return Err(problem(format!("its type is {dt:?}; adapters give f32")));
    }
    let dims: Option<Vec<Option<i64>>> = declared.shape.concretize().map(|dims| {
        dims.iter()
            .map(|d| d.to_i64().ok())
            .collect::<Vec<Option<i64>>>()
    });
    if let Some(dims) = &dims
        && dims.len() != spec.shape.len()
    {
        return Err(problem(format!(
            "it has {} dims; the adapter gives {}",
            dims.len(),
            spec.shape.len()
        )));
    }
    let mut args = InputArgs {
        params: given.params.clone(),
        ..InputArgs::default()
    };
    for (axis, dim) in spec.shape.iter().enumerate() {
        let fixed = dims.as_ref().and_then(|d| d[axis]);
        let Some(fixed) = fixed else { continue };
        match *dim {
            Dim::Fixed(n) if fixed == n as i64 => {}
            Dim::Fixed(n) => return Err(problem(format!("dim {axis} is {fixed}, not {n}"))),
            Dim::HeadRows => {
                return Err(problem(format!(
                    "dim {axis} is fixed to {fixed}; it must be symbolic (one row per ant, changing every turn)"
                )));
            }
            Dim::Param { param, times, plus } => {
                let value = (fixed - plus as i64) / times as i64;
                let exact = value * times as i64 + plus as i64 == fixed;
                let bounds = spec.params.iter().find(|p| p.name == param);
                let within = bounds.is_some_and(|p| (p.min..=p.max).contains(&value));
                if !exact || !within {
                    return Err(problem(format!(
                        "dim {axis} is {fixed}, which no {param} gives ({times} * {param} + {plus})"
                    )));
                }
                match args.params.get(param) {
                    Some(&set) if set != value => {
                        return Err(problem(format!(
                            "dim {axis} is {fixed}, which needs {param} = {value}, but bot.toml says {set}"
                        )));
                    }
                    _ => {
                        args.params.insert(param.to_owned(), value);
                    }
                }
            }
            Dim::BoardRows | Dim::BoardCols => {
                let size = usize::try_from(fixed)
                    .ok()
                    .filter(|&s| s > 0)
                    .ok_or_else(|| problem(format!("dim {axis} is {fixed}")))?;
                if *dim == Dim::BoardRows {
                    args.rows = Some(size);
                } else {
                    args.cols = Some(size);
                }
            }
        }
    }
    for p in spec.params {
        args.params.entry(p.name.to_owned()).or_insert(p.default);
    }
    Ok(Feed {
        adapter: spec,
        args,
    })
}

/// The symbols and reference sizes shapes are written in.
struct Sizes {
    rows: Symbol,
    board_rows: Symbol,
    board_cols: Symbol,
    reference: (usize, usize, usize),
}

impl Sizes {
    /// The model's symbols for the head rows and the board, and the
    /// interface's reference size.
    fn new(model: &InferenceModel, interface: &ModelInterface) -> Sizes {
        Sizes {
            rows: model.symbols.sym(ROWS_SYMBOL),
            board_rows: model.symbols.sym(BOARD_ROWS_SYMBOL),
            board_cols: model.symbols.sym(BOARD_COLS_SYMBOL),
            reference: (
                interface.reference_rows,
                interface.largest_board.0,
                interface.largest_board.1,
            ),
        }
    }

    /// One input's shape: symbolic (for evaluation), at the reference size
    /// (for the cost), and as the report shows it.
    fn shapes(&self, spec: &AdapterSpec, args: &InputArgs) -> (Vec<TDim>, Vec<usize>, Vec<String>) {
        let (mut sym, mut conc, mut shown) = (Vec::new(), Vec::new(), Vec::new());
        for dim in spec.shape {
            let (s, c, w) = match *dim {
                Dim::Fixed(n) => (TDim::Val(n as i64), n, n.to_string()),
                Dim::HeadRows => (
                    TDim::Sym(self.rows.clone()),
                    self.reference.0,
                    "N".to_owned(),
                ),
                Dim::Param { param, times, plus } => {
                    let n = usize::try_from(args.param(param)).unwrap_or(0) * times + plus;
                    (TDim::Val(n as i64), n, n.to_string())
                }
                Dim::BoardRows => match args.rows {
                    Some(n) => (TDim::Val(n as i64), n, n.to_string()),
                    None => (
                        TDim::Sym(self.board_rows.clone()),
                        self.reference.1,
                        "rows".to_owned(),
                    ),
                },
                Dim::BoardCols => match args.cols {
                    Some(n) => (TDim::Val(n as i64), n, n.to_string()),
                    None => (
                        TDim::Sym(self.board_cols.clone()),
                        self.reference.2,
                        "cols".to_owned(),
                    ),
                },
            };
            sym.push(s);
            conc.push(c);
            shown.push(w);
        }
        (sym, conc, shown)
    }
}

fn show(dim: &TDim) -> String {
    match dim {
        TDim::Val(v) => v.to_string(),
        TDim::Sym(s) if format!("{s}") == ROWS_SYMBOL => "N".to_owned(),
        other => format!("{other}"),
    }
}
