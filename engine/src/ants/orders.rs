//! A seat's action: one order per ant, positional in mine order.
//!
//! The reply is `{"orders":"NES-W"}`, one letter per ant of the
//! observation the seat answered, in that observation's mine order. Fewer
//! letters than ants (only a fallback or a forged replay has that) leave
//! the rest staying; extra letters are ignored.

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::geometry::Dir;

/// The orders of one seat for one turn; empty is "every ant stays".
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Orders(pub Vec<Dir>);

impl Orders {
    /// The reply string: `N`, `E`, `S`, `W`, `-` per ant.
    pub fn letters(&self) -> String {
        self.0.iter().map(|d| d.letter()).collect()
    }

    /// The inverse of [`Orders::letters`]; `None` on any other character.
    pub fn from_letters(text: &str) -> Option<Orders> {
        text.chars()
            .map(Dir::from_letter)
            .collect::<Option<Vec<_>>>()
            .map(Orders)
    }

    /// The order for the `index`-th ant in mine order.
    pub fn get(&self, index: usize) -> Dir {
        self.0.get(index).copied().unwrap_or(Dir::Stay)
    }
}

/// Replays store the reply string itself.
impl Serialize for Orders {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.letters())
    }
}

impl<'de> Deserialize<'de> for Orders {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Orders, D::Error> {
        let text = String::deserialize(d)?;
        Orders::from_letters(&text)
            .ok_or_else(|| serde::de::Error::custom("orders hold only N, E, S, W and -"))
    }
}
