//! The test modules of `bots/test/wasm` as WebAssembly text: each
//! `NAME.wat` there is a module body, assembled with `prelude.wat` (see
//! that directory's README). Tests turn the text into a module with the
//! `wat` crate; this crate does not parse text itself.

use std::path::Path;

/// The module text of `body` with the prelude in `dir`: its imports first
/// (text format wants imports before definitions), then the prelude, then
/// the rest of the body.
pub fn assemble(dir: &Path, body: &str) -> std::io::Result<String> {
    let prelude = std::fs::read_to_string(dir.join("prelude.wat"))?;
    Ok(assemble_with(&prelude, body))
}

/// [`assemble`] with the prelude's text given.
pub fn assemble_with(prelude: &str, body: &str) -> String {
    let (imports, rest): (Vec<&str>, Vec<&str>) = body
        .lines()
        .partition(|line| line.trim_start().starts_with("(import"));
    format!(
        "(module\n{}\n{prelude}\n{}\n)\n",
        imports.join("\n"),
        rest.join("\n")
    )
}

/// The text of the test module `name` in `dir`.
pub fn named(dir: &Path, name: &str) -> std::io::Result<String> {
    let body = std::fs::read_to_string(dir.join(format!("{name}.wat")))?;
    assemble(dir, &body)
}
