//! Fuzz target `schema_screen`: the checks live in `mcp_harness::fuzz_checks::schema_screen`, so
//! the normal test suite replays the seeds through them too (tests/it/fuzz_seeds.rs).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Err(violation) = mcp_harness::fuzz_checks::schema_screen(data) {
        panic!("{violation}");
    }
});
