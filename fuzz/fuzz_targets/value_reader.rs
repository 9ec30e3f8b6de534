//! `cargo +nightly fuzz run value_reader`: the body is [`nabla::fuzzing::value_reader`], which
//! `crates/nabla/tests/fuzz_targets.rs` also runs on stable.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| nabla::fuzzing::value_reader(data));
