//! The fuzz targets' checks on stable: every seed input in `fuzz/seeds/TARGET/`
//! goes through the same `mcp_harness::fuzz_checks` function the nightly
//! `cargo fuzz` target calls, so a target cannot rot unnoticed. A crash the fuzzer
//! finds is added to the seeds (and fixed), which makes it a regression test here.

use std::path::PathBuf;

use mcp_harness::fuzz_checks::{self, Violation};

fn replay(target: &str, check: fn(&[u8]) -> Result<(), Violation>) {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz/seeds")
        .join(target);
    let mut seeds: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.unwrap().path())
        .collect();
    seeds.sort();
    assert!(!seeds.is_empty(), "no seeds in {}", dir.display());
    for seed in seeds {
        let data = std::fs::read(&seed).unwrap();
        if let Err(violation) = check(&data) {
            panic!("{}: {violation}", seed.display());
        }
    }
}

#[test]
fn config_parse_seeds_hold() {
    replay("config_parse", fuzz_checks::config_parse);
}

#[test]
fn names_seeds_hold() {
    replay("names", fuzz_checks::names);
}

#[test]
fn schema_screen_seeds_hold() {
    replay("schema_screen", fuzz_checks::schema_screen);
}

#[test]
fn sanitize_seeds_hold() {
    replay("sanitize", fuzz_checks::sanitize);
}
