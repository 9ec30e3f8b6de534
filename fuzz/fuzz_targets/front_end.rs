//! `cargo +nightly fuzz run front_end`: the body is [`nabla::fuzzing::front_end`], which
//! `crates/nabla/tests/fuzz_targets.rs` also runs on stable.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| nabla::fuzzing::front_end(data));
