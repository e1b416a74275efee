//! What a configured environment writes, described as data, so that the
//! binding can allocate the arrays without knowing the game.

/// An element type of an array, with the same name NumPy gives it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dtype {
    Bool,
    U8,
    I32,
    I64,
    U64,
    F32,
}

impl Dtype {
    /// NumPy's name for the type.
    pub fn name(self) -> &'static str {
        match self {
            Dtype::Bool => "bool",
            Dtype::U8 => "uint8",
            Dtype::I32 => "int32",
            Dtype::I64 => "int64",
            Dtype::U64 => "uint64",
            Dtype::F32 => "float32",
        }
    }

    /// Bytes per element.
    pub fn size(self) -> usize {
        match self {
            Dtype::Bool | Dtype::U8 => 1,
            Dtype::I32 | Dtype::F32 => 4,
            Dtype::I64 | Dtype::U64 => 8,
        }
    }
}

/// Which of a step's return values an array belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Group {
    /// A part of the observation.
    Obs,
    /// Rewards and the end flags.
    Step,
    /// The `info` dictionary.
    Info,
}

/// One array an environment writes. Every shape starts with the number of
/// environments.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ArraySpec {
    pub name: &'static str,
    pub dtype: Dtype,
    pub shape: Vec<usize>,
    pub group: Group,
}

impl ArraySpec {
    /// Elements in one environment's row.
    pub fn row_len(&self) -> usize {
        self.shape.iter().skip(1).product()
    }

    /// Elements in the whole array.
    pub fn len(&self) -> usize {
        self.shape.iter().product()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Which observation arrays to write besides the compact planes, which
/// are always written (the scripted seats read them).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ObsLayout {
    /// The reference environment's float tensor.
    pub reference: bool,
    /// The legal-action masks.
    pub masks: bool,
    /// The model adapters' memory inputs: what each seat remembers of the
    /// board, the opponents' totals of the last turns, and the totals line.
    pub memory: bool,
}

/// A configured environment as the outside sees it.
#[derive(Clone, Debug, PartialEq)]
pub struct EnvSpec {
    /// The registered game's name.
    pub game: &'static str,
    pub envs: usize,
    pub seats: usize,
    /// The padded board side.
    pub side: usize,
    /// Head entries per cell.
    pub actions_per_cell: usize,
    /// Fields of one five-integer action.
    pub action_fields: usize,
    /// The reference tensor's channel names, in order.
    pub reference_channels: Vec<&'static str>,
    /// The seats a built-in player plays (their actions are neither read
    /// nor checked).
    pub builtin: Vec<usize>,
    /// Every array, in the order the binding allocates them.
    pub arrays: Vec<ArraySpec>,
}

impl EnvSpec {
    /// The array called `name`.
    pub fn array(&self, name: &str) -> Option<&ArraySpec> {
        self.arrays.iter().find(|a| a.name == name)
    }

    /// Entries of one seat's head.
    pub fn head_len(&self) -> usize {
        self.side * self.side * self.actions_per_cell
    }
}
