//! `cargo +nightly fuzz run parser`: the body is [`nabla::fuzzing::parser`], which
//! `crates/nabla/tests/fuzz_targets.rs` also runs on stable.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| nabla::fuzzing::parser(data));
