//! `cargo +nightly fuzz run type_checker`: the body is [`nabla::fuzzing::type_checker`], which
//! `crates/nabla/tests/fuzz_targets.rs` also runs on stable.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| nabla::fuzzing::type_checker(data));
