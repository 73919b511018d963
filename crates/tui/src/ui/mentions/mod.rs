//! Server content typed into the input box: `@alias:uri` attaches a resource,
//! `/alias:prompt key=value …` uses a prompt. This module knows what the
//! servers listed (the catalog), which token the cursor is on, what completes
//! it (`complete`) and what a message asks for when it is sent (`parse`). It
//! sits below the reducer and the renderer, which both read it.

mod catalog;
mod complete;
mod memo;
mod parse;

pub use catalog::{Catalog, Listed, Picker, Token, split_alias, token};
pub use complete::{Candidate, Completion, Kind, MAX_CANDIDATES, completion};
pub use memo::Memo;
pub use parse::{Parsed, parse};
