//! The standings as JSON, CSV and a plain-text table.

use std::fmt::Write as _;

use super::{StandingRow, Standings};
use arena_engine::Forfeit;

/// The forfeit columns of the CSV, in order.
const FORFEIT_COLUMNS: [(Forfeit, &str); 7] = [
    (Forfeit::Crash, "forfeit_crash"),
    (Forfeit::Exit, "forfeit_exit"),
    (Forfeit::Memory, "forfeit_memory"),
    (Forfeit::Faults, "forfeit_faults"),
    (Forfeit::BuildFailed, "forfeit_build_failed"),
    (Forfeit::Trap, "forfeit_trap"),
    (Forfeit::WallBackstop, "forfeit_wall_backstop"),
];

/// The position of `reason` in [`FORFEIT_COLUMNS`]. The match is
/// exhaustive, so a new [`Forfeit`] fails to compile here until it has
/// a column (a unit test checks the two agree).
#[cfg_attr(not(test), allow(dead_code))]
const fn forfeit_column(reason: Forfeit) -> usize {
    match reason {
        Forfeit::Crash => 0,
        Forfeit::Exit => 1,
        Forfeit::Memory => 2,
        Forfeit::Faults => 3,
        Forfeit::BuildFailed => 4,
        Forfeit::Trap => 5,
        Forfeit::WallBackstop => 6,
    }
}

const CSV_HEADER: [&str; 19] = [
    "rank",
    "entrant",
    "name",
    "points",
    "buchholz",
    "sonneborn_berger",
    "rating_mu",
    "rating_sigma",
    "rating_conservative",
    "games",
    "wins",
    "draws",
    "losses",
    "byes",
    "timeouts",
    "malformed",
    "illegal",
    "fuel_exhausted",
    "strikes",
];

impl Standings {
    /// Pretty-printed JSON: `{"rows": [...]}` with the field names of
    /// [`StandingRow`]; forfeits are an object keyed by snake_case reason.
    pub fn to_json(&self) -> String {
        // Plain structs, string keys and finite floats: serializing cannot fail.
        serde_json::to_string_pretty(self).expect("standings always serialize to JSON")
    }

    /// Reads back what [`Standings::to_json`] wrote.
    pub fn from_json(json: &str) -> Result<Self, serde_json::Error> {
        serde_json::from_str(json)
    }

    /// RFC 4180 CSV: a header row, then one row per entrant, CRLF line
    /// endings. Text fields are quoted when they hold a comma, a quote, CR or
    /// LF, with quotes doubled; every forfeit reason has its own column.
    pub fn to_csv(&self) -> String {
        let mut out = String::new();
        let header = CSV_HEADER
            .iter()
            .copied()
            .chain(FORFEIT_COLUMNS.iter().map(|(_, column)| *column));
        push_csv_record(&mut out, header.map(str::to_owned));
        for row in &self.rows {
            let fields = [
                row.rank.to_string(),
                csv_field(&row.entrant),
                csv_field(&row.name),
                row.points.to_string(),
                row.buchholz.to_string(),
                row.sonneborn_berger.to_string(),
                row.rating_mu.to_string(),
                row.rating_sigma.to_string(),
                row.rating_conservative.to_string(),
                row.games.to_string(),
                row.wins.to_string(),
                row.draws.to_string(),
                row.losses.to_string(),
                row.byes.to_string(),
                row.timeouts.to_string(),
                row.malformed.to_string(),
                row.illegal.to_string(),
                row.fuel_exhausted.to_string(),
                row.strikes.to_string(),
            ];
            let forfeits = FORFEIT_COLUMNS
                .iter()
                .map(|(reason, _)| row.forfeits.get(reason).copied().unwrap_or(0).to_string());
            push_csv_record(&mut out, fields.into_iter().chain(forfeits));
        }
        out
    }

    /// A table for a terminal: rank, name, points, Buchholz, SB, the rating
    /// (μ − 3σ, as every page shows it),
    /// W/D/L and faults (timeouts/malformed/illegal/dry, i.e. WebAssembly
    /// turns out of fuel/strikes, i.e. failed model-graph turns/forfeits),
    /// columns aligned.
    /// Control characters in names print as spaces so a row stays one line.
    pub fn to_table(&self) -> String {
        let header: [String; 8] = [
            "#",
            "Name",
            "Points",
            "Buchholz",
            "SB",
            "Rating",
            "W/D/L",
            "Faults T/M/I/D/S/F",
        ]
        .map(str::to_owned);
        let lines: Vec<[String; 8]> = self.rows.iter().map(table_line).collect();
        let mut widths = header.clone().map(|cell| cell.chars().count());
        for line in &lines {
            for (width, cell) in widths.iter_mut().zip(line) {
                *width = (*width).max(cell.chars().count());
            }
        }
        let mut out = String::new();
        for line in std::iter::once(&header).chain(&lines) {
            let mut text = String::new();
            for (column, (cell, width)) in line.iter().zip(widths).enumerate() {
                if column > 0 {
                    text.push_str("  ");
                }
                let pad = " ".repeat(width - cell.chars().count());
                // The name is text: left-aligned; everything else is a number.
                if column == 1 {
                    text.push_str(cell);
                    text.push_str(&pad);
                } else {
                    text.push_str(&pad);
                    text.push_str(cell);
                }
            }
            let _ = writeln!(out, "{}", text.trim_end());
        }
        out
    }
}

fn table_line(row: &StandingRow) -> [String; 8] {
    let name: String = row
        .name
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    let forfeits: u32 = row.forfeits.values().sum();
    [
        row.rank.to_string(),
        name,
        format!("{:.2}", row.points),
        format!("{:.2}", row.buchholz),
        format!("{:.2}", row.sonneborn_berger),
        format!("{:.2}", row.rating_conservative),
        format!("{}/{}/{}", row.wins, row.draws, row.losses),
        format!(
            "{}/{}/{}/{}/{}/{}",
            row.timeouts, row.malformed, row.illegal, row.fuel_exhausted, row.strikes, forfeits
        ),
    ]
}

/// Appends one CSV record of already-quoted `fields`, CRLF-terminated.
pub fn push_csv_record(out: &mut String, fields: impl Iterator<Item = String>) {
    for (i, field) in fields.enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(&field);
    }
    out.push_str("\r\n");
}

/// One CSV text field per RFC 4180: quoted when it holds a comma, a double
/// quote, CR or LF, with every double quote doubled inside the quotes. Text
/// that a spreadsheet would run as a formula (starting with `=`, `+`, `-`,
/// `@`, a tab or CR) is prefixed with `'`, so a bot named `=HYPERLINK(...)`
/// is shown, not evaluated. Only names and ids go through here; numbers
/// are written as they are.
pub fn csv_field(text: &str) -> String {
    let text = if text.starts_with(['=', '+', '-', '@', '\t', '\r']) {
        format!("'{text}")
    } else {
        text.to_owned()
    };
    if text.contains([',', '"', '\r', '\n']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text
    }
}

#[cfg(test)]
mod tests {
    use super::{FORFEIT_COLUMNS, csv_field, forfeit_column};

    #[test]
    fn every_forfeit_reason_has_its_column() {
        for (i, (reason, column)) in FORFEIT_COLUMNS.iter().enumerate() {
            assert_eq!(forfeit_column(*reason), i);
            let json = serde_json::to_string(reason).expect("serializes");
            assert_eq!(
                format!("\"forfeit_{}\"", json.trim_matches('"')),
                format!("\"{column}\"")
            );
        }
    }

    #[test]
    fn csv_fields_quote_only_when_needed() {
        assert_eq!(csv_field("plain name"), "plain name");
        assert_eq!(csv_field("a,b"), "\"a,b\"");
        assert_eq!(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(csv_field("two\nlines"), "\"two\nlines\"");
        assert_eq!(csv_field("cr\r"), "\"cr\r\"");
        assert_eq!(csv_field(""), "");
    }

    #[test]
    fn csv_text_that_looks_like_a_formula_is_not_one() {
        assert_eq!(csv_field("=1+1"), "'=1+1");
        assert_eq!(
            csv_field("=HYPERLINK(\"x\",\"y\")"),
            "\"'=HYPERLINK(\"\"x\"\",\"\"y\"\")\""
        );
        for lead in ["+", "-", "@", "\t"] {
            assert!(csv_field(&format!("{lead}x")).starts_with("'"), "{lead}");
        }
        assert_eq!(csv_field("a-b"), "a-b");
    }
}
