//! CSS media emulation: the colour scheme a page is shown in.

use serde_json::json;

use super::Page;
use crate::support::browser::Result;

/// A `prefers-color-scheme` to emulate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ColourScheme {
    Light,
    Dark,
}

impl ColourScheme {
    fn as_str(self) -> &'static str {
        match self {
            ColourScheme::Light => "light",
            ColourScheme::Dark => "dark",
        }
    }
}

impl Page<'_> {
    /// Makes the page match `prefers-color-scheme: scheme` from now on,
    /// whatever the browser's own theme (`Emulation.setEmulatedMedia`);
    /// applies at once to the page shown and to those loaded after.
    pub fn emulate_colour_scheme(&self, scheme: ColourScheme) -> Result<()> {
        self.call(
            "Emulation.setEmulatedMedia",
            json!({ "features": [{ "name": "prefers-color-scheme", "value": scheme.as_str() }] }),
        )?;
        Ok(())
    }
}
