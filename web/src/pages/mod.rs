//! One module per page; each handler reads what it shows through
//! [`crate::view`] and writes HTML with [`crate::html`].

pub mod crosstable;
pub mod entrant;
pub mod index;
pub mod login;
pub mod match_page;
pub mod tournament;
pub mod workers;
