//! A short, bounded, reproducible run of the four cargo-fuzz targets on
//! stable (CI): the target bodies in `nabla::fuzzing` get every file of the
//! seed corpus in `fuzz/corpus/<target>/`, then a fixed number of seeded
//! byte-level mutations of them (flip, insert, delete, duplicate bytes;
//! splice two inputs). A panic (or an internal-error diagnostic, which the
//! target bodies turn into one) fails the test with the seed and the input.
//! A missing or empty corpus is a failure, not a skip.
//!
//! The coverage-guided runs are `cargo +nightly fuzz run <target>` (see
//! README.md, "Fuzzing").

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;

/// Mutated inputs per target (each derived from one seed of the run).
const MUTANTS: u64 = 2_000;

/// xorshift64* — small, seeded, reproducible.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        // splitmix64's finaliser: distinct seeds give unrelated streams.
        let mut z = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        Rng((z ^ (z >> 31)) | 1)
    }
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// Bytes worth inserting into text inputs: delimiters, operators and
/// keywords, so mutations reach past the lexer.
const TOKENS: &[&[u8]] = &[
    b"(",
    b")",
    b"[",
    b"]",
    b"{",
    b"}",
    b",",
    b" ",
    b"\n",
    b"-",
    b".",
    b"0",
    b"1e9",
    b"#",
    b"\\",
    b"\"",
    b"'",
    b"let",
    b"in",
    b"if",
    b"then",
    b"else",
    b"match",
    b"case",
    b"loop",
    b"for",
    b"do",
    b"def",
    b"entry",
    b"module",
    b"type",
    b"with",
    b"->",
    b"=",
    b"i32",
    b"f64",
    b"[]",
    b"empty(",
    b"b\x02",
    b"\xff",
    b"\x00",
    b"true",
    b"with x = ",
    b"|>",
    b"...",
];

/// One mutation of `input` (0–3 steps), possibly spliced with `other`.
fn mutate(rng: &mut Rng, input: &[u8], other: &[u8]) -> Vec<u8> {
    let mut v = input.to_vec();
    let steps = 1 + rng.below(4);
    for _ in 0..steps {
        let at = rng.below(v.len() + 1);
        match rng.below(7) {
            // Flip bits of one byte.
            0 if !v.is_empty() => {
                let i = rng.below(v.len());
                v[i] ^= 1 << rng.below(8);
            }
            // Insert a random byte.
            1 => v.insert(at, rng.next() as u8),
            // Insert a token.
            2 => {
                let t = TOKENS[rng.below(TOKENS.len())];
                v.splice(at..at, t.iter().copied());
            }
            // Delete a range.
            3 if !v.is_empty() => {
                let len = 1 + rng.below(16.min(v.len() - at.min(v.len() - 1)));
                let start = at.min(v.len() - 1);
                let end = (start + len).min(v.len());
                v.drain(start..end);
            }
            // Duplicate a range.
            4 if !v.is_empty() => {
                let start = rng.below(v.len());
                let end = (start + 1 + rng.below(32)).min(v.len());
                let chunk = v[start..end].to_vec();
                v.splice(at..at, chunk);
            }
            // Splice: a prefix of this input, a suffix of the other.
            5 => {
                let cut = rng.below(other.len() + 1);
                v.truncate(at);
                v.extend_from_slice(&other[cut..]);
            }
            // Truncate.
            _ => v.truncate(at),
        }
    }
    v
}

fn corpus(target: &str) -> Vec<(String, Vec<u8>)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../fuzz/corpus")
        .join(target);
    let entries = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("missing seed corpus {}: {e}", dir.display()));
    let mut files: Vec<(String, Vec<u8>)> = entries
        .map(|e| {
            let path = e.expect("corpus entry").path();
            let bytes = std::fs::read(&path)
                .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
            (path.display().to_string(), bytes)
        })
        .collect();
    files.sort();
    assert!(
        !files.is_empty(),
        "the seed corpus {} is empty",
        dir.display()
    );
    files
}

fn panic_message(p: &(dyn std::any::Any + Send)) -> String {
    p.downcast_ref::<String>()
        .cloned()
        .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_else(|| "(non-string panic)".to_string())
}

/// Runs `body` on the corpus of `target` and on [`MUTANTS`] mutations of it
/// (seeds `base..base + MUTANTS`); fails listing every panicking input.
fn run(target: &str, base: u64, body: fn(&[u8])) {
    let seeds = corpus(target);
    let mut failures = Vec::new();
    for (name, bytes) in &seeds {
        if let Err(p) = catch_unwind(AssertUnwindSafe(|| body(bytes))) {
            failures.push(format!(
                "corpus file {name}: {}\n  input: {:?}",
                panic_message(&*p),
                String::from_utf8_lossy(bytes)
            ));
        }
    }
    for seed in base..base + MUTANTS {
        let mut rng = Rng::new(seed);
        let (_, input) = &seeds[rng.below(seeds.len())];
        let (_, other) = &seeds[rng.below(seeds.len())];
        let mutant = mutate(&mut rng, input, other);
        if let Err(p) = catch_unwind(AssertUnwindSafe(|| body(&mutant))) {
            failures.push(format!(
                "seed {seed}: {}\n  input ({} bytes): {:?}",
                panic_message(&*p),
                mutant.len(),
                String::from_utf8_lossy(&mutant)
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{target}: {} of {} inputs panicked:\n{}",
        failures.len(),
        seeds.len() as u64 + MUTANTS,
        failures.join("\n")
    );
}

#[test]
fn value_reader() {
    run("value_reader", 1_000, nabla::fuzzing::value_reader);
}

#[test]
fn parser() {
    run("parser", 2_000, nabla::fuzzing::parser);
}

#[test]
fn type_checker() {
    run("type_checker", 3_000, nabla::fuzzing::type_checker);
}

#[test]
fn front_end() {
    run("front_end", 4_000, nabla::fuzzing::front_end);
}
