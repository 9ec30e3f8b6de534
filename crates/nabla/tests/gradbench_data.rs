//! Every GradBench input in the repository's `testdata/gradbench/` goes
//! through the same code path as `nabla gradbench` (`Session::handle_line`
//! on an `evaluate` message) and must match the stored reference output
//! under GradBench's comparison rule (same JSON types and shapes, integers
//! equal, floats within |x − y| / max(1, |x| + |y|) ≤ 1e-4). A missing data
//! file fails its test.
//!
//! Each pair runs three ways: the interpreter with dynamic AD, the
//! interpreter with static AD, and the executables of the C backend
//! (`nabla gradbench`'s default; module `compiled`, all workloads, with the
//! executables cached in Cargo's test folder).
//!
//! The slowest workloads are `#[ignore]`d in the interpreter so that CI
//! stays fast; run them with
//! `cargo test --release -p nabla --test gradbench_data -- --ignored`.

use nabla::gradbench::json::{compare, TOLERANCE};
use nabla::gradbench::{Backend, Session};
use serde_json::{json, Value as Json};
use std::path::PathBuf;

fn data_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../testdata/gradbench")
}

/// Runs `f` on a thread with the interpreter's large stack.
fn with_stack<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    std::thread::Builder::new()
        .stack_size(nabla::testrunner::runner::STACK_SIZE)
        .spawn(f)
        .expect("spawn")
        .join()
        .expect("the test thread panicked")
}

/// How a pair is evaluated.
#[derive(Clone, Copy, PartialEq)]
enum Mode {
    /// The interpreter with dynamic AD.
    Dynamic,
    /// The interpreter with static AD (the `ad` pass).
    Static,
    /// The C backend's executable.
    Compiled,
}

/// Checks one stored pair with the interpreter's dynamic AD.
fn check(rel: &str) {
    check_with(rel, Mode::Dynamic)
}

/// Checks one stored pair with static AD (the `ad` pass): the same
/// reference outputs, so static and dynamic AD agree on every workload.
fn check_static(rel: &str) {
    check_with(rel, Mode::Static)
}

/// Checks one stored pair with the eval's executable.
fn check_compiled(rel: &str) {
    check_with(rel, Mode::Compiled)
}

/// Serialises the `define`s of the compiled checks, so that the tests of
/// one eval compile its executable once and then find it in the cache.
static DEFINE_LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Checks one stored pair: evaluate its input and compare with its output.
fn check_with(rel: &str, mode: Mode) {
    let path = data_dir().join(rel);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let pair: Json = serde_json::from_str(&text).expect("a pair file is JSON");
    let module = pair["eval"].as_str().unwrap().to_string();
    let function = pair["function"].as_str().unwrap().to_string();
    let msg = json!({"id": 7, "kind": "evaluate", "module": module,
                     "function": function, "input": pair["input"]});
    let line = msg.to_string();
    let (resp, define) = with_stack(move || {
        let static_ad = || {
            let options =
                nabla::CompileOptions::new(nabla::Pipeline::default_pipeline().validating(true));
            Session::with_programs(nabla::gradbench::Programs::new().compiled_with(options))
        };
        let mut s = match mode {
            Mode::Dynamic => Session::new(),
            Mode::Static => static_ad(),
            Mode::Compiled => static_ad().with_backend(Backend::C {
                cache_dir: Some(PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("nabla-cache")),
            }),
        };
        let define_msg = json!({"id": 6, "kind": "define", "module": module}).to_string();
        let define = if mode == Mode::Compiled {
            let _one_at_a_time = DEFINE_LOCK.lock().unwrap_or_else(|p| p.into_inner());
            let define = s.handle_line(&define_msg).unwrap().unwrap();
            assert!(
                s.executable(&module).is_some(),
                "no executable for {module}"
            );
            define
        } else {
            s.handle_line(&define_msg).unwrap().unwrap()
        };
        (s.handle_line(&line).unwrap().unwrap(), define)
    });
    let define: Json = serde_json::from_str(&define).unwrap();
    assert_eq!(define, json!({"id": 6, "success": true}), "{rel}: define");
    let resp: Json = serde_json::from_str(&resp).expect("the response is JSON");
    assert_eq!(resp["id"], json!(7));
    assert_eq!(resp["success"], json!(true), "{rel}: {resp}");
    let runs = pair["input"]
        .get("min_runs")
        .and_then(Json::as_u64)
        .unwrap_or(1) as usize;
    let timings = resp["timings"].as_array().expect("timings");
    assert!(timings.len() >= runs, "{rel}: {} timings", timings.len());
    for t in timings {
        assert_eq!(t["name"], json!("evaluate"));
        assert!(t["nanoseconds"].is_u64());
    }
    if let Err(e) = compare(&pair["output"], &resp["output"], TOLERANCE) {
        panic!("{rel}: output differs from the reference: {e}");
    }
}

macro_rules! pairs {
    ($($(#[$attr:meta])* $name:ident => $file:literal,)*) => {
        $(
            #[test]
            $(#[$attr])*
            fn $name() {
                check($file);
            }
        )*
        /// The same pairs through static AD.
        mod static_ad {
            $(
                #[test]
                $(#[$attr])*
                fn $name() {
                    super::check_static($file);
                }
            )*
        }
        /// The same pairs through the C backend's executables (all of them:
        /// compiled code is fast).
        mod compiled {
            $(
                #[test]
                fn $name() {
                    super::check_compiled($file);
                }
            )*
        }
        /// Every stored file, so that `all_files_are_covered` can check the list.
        const FILES: &[&str] = &[$($file),*];
    };
}

pairs! {
    hello_double_1 => "hello/double-x_1.0.json",
    hello_double_16384 => "hello/double-x_16384.0.json",
    hello_double_4 => "hello/double-x_4.0.json",
    hello_double_64 => "hello/double-x_64.0.json",
    hello_square_1 => "hello/square-x_1.0.json",
    hello_square_128 => "hello/square-x_128.0.json",
    hello_square_2 => "hello/square-x_2.0.json",
    hello_square_8 => "hello/square-x_8.0.json",
    llsq_gradient_1024 => "llsq/gradient-n_1024_m_128.json",
    llsq_gradient_128 => "llsq/gradient-n_128_m_128.json",
    llsq_gradient_16 => "llsq/gradient-n_16_m_128.json",
    llsq_gradient_256 => "llsq/gradient-n_256_m_128.json",
    llsq_gradient_32 => "llsq/gradient-n_32_m_128.json",
    llsq_gradient_512 => "llsq/gradient-n_512_m_128.json",
    llsq_gradient_64 => "llsq/gradient-n_64_m_128.json",
    llsq_primal_1024 => "llsq/primal-n_1024_m_128.json",
    llsq_primal_128 => "llsq/primal-n_128_m_128.json",
    llsq_primal_16 => "llsq/primal-n_16_m_128.json",
    llsq_primal_256 => "llsq/primal-n_256_m_128.json",
    llsq_primal_32 => "llsq/primal-n_32_m_128.json",
    llsq_primal_512 => "llsq/primal-n_512_m_128.json",
    llsq_primal_64 => "llsq/primal-n_64_m_128.json",
    lse_gradient_2500 => "lse/gradient-n_2500.json",
    lse_gradient_5000 => "lse/gradient-n_5000.json",
    lse_primal_2500 => "lse/primal-n_2500.json",
    lse_primal_5000 => "lse/primal-n_5000.json",
    det_gradient_5 => "det/gradient-5.json",
    det_gradient_6 => "det/gradient-6.json",
    det_gradient_7 => "det/gradient-7.json",
    det_gradient_8 => "det/gradient-8.json",
    det_primal_5 => "det/primal-5.json",
    det_primal_6 => "det/primal-6.json",
    det_primal_7 => "det/primal-7.json",
    det_primal_8 => "det/primal-8.json",
    ode_gradient_s1 => "ode/gradient-n_1000_s_1.json",
    ode_gradient_s10 => "ode/gradient-n_1000_s_10.json",
    ode_primal_s1 => "ode/primal-n_1000_s_1.json",
    ode_primal_s10 => "ode/primal-n_1000_s_10.json",
    gmm_objective_2_5 => "gmm/objective-2_5_1000.json",
    gmm_objective_2_10 => "gmm/objective-2_10_1000.json",
    gmm_objective_2_25 => "gmm/objective-2_25_1000.json",
    gmm_objective_10_5 => "gmm/objective-10_5_1000.json",
    gmm_objective_10_10 => "gmm/objective-10_10_1000.json",
    gmm_objective_10_25 => "gmm/objective-10_25_1000.json",
    gmm_objective_20_5 => "gmm/objective-20_5_1000.json",
    gmm_objective_20_10 => "gmm/objective-20_10_1000.json",
    gmm_objective_20_25 => "gmm/objective-20_25_1000.json",
    gmm_jacobian_2_5 => "gmm/jacobian-2_5_1000.json",
    gmm_jacobian_2_10 => "gmm/jacobian-2_10_1000.json",
    gmm_jacobian_2_25 => "gmm/jacobian-2_25_1000.json",
    gmm_jacobian_10_5 => "gmm/jacobian-10_5_1000.json",
    #[ignore = "slow in the interpreter (~4 s in release)"]
    gmm_jacobian_10_10 => "gmm/jacobian-10_10_1000.json",
    #[ignore = "slow in the interpreter (~12 s in release)"]
    gmm_jacobian_10_25 => "gmm/jacobian-10_25_1000.json",
    #[ignore = "slow in the interpreter (~5 s in release)"]
    gmm_jacobian_20_5 => "gmm/jacobian-20_5_1000.json",
    #[ignore = "slow in the interpreter (~14 s in release)"]
    gmm_jacobian_20_10 => "gmm/jacobian-20_10_1000.json",
    #[ignore = "slow in the interpreter (~35 s in release)"]
    gmm_jacobian_20_25 => "gmm/jacobian-20_25_1000.json",
    kmeans_cost => "kmeans/cost-k_10_n_1000_d_8.json",
    kmeans_dir => "kmeans/dir-k_10_n_1000_d_8.json",
    lstm_objective_l2_c1024 => "lstm/objective-lstm_l2_c1024.json",
    lstm_objective_l2_c4096 => "lstm/objective-lstm_l2_c4096.json",
    lstm_objective_l4_c1024 => "lstm/objective-lstm_l4_c1024.json",
    lstm_objective_l4_c4096 => "lstm/objective-lstm_l4_c4096.json",
    lstm_jacobian_l2_c1024 => "lstm/jacobian-lstm_l2_c1024.json",
    #[ignore = "slow in the interpreter (~3.5 s in release)"]
    lstm_jacobian_l2_c4096 => "lstm/jacobian-lstm_l2_c4096.json",
    lstm_jacobian_l4_c1024 => "lstm/jacobian-lstm_l4_c1024.json",
    #[ignore = "slow in the interpreter (~7 s in release)"]
    lstm_jacobian_l4_c4096 => "lstm/jacobian-lstm_l4_c4096.json",
    ba_objective_1 => "ba/objective-ba1_n49_m7776_p31843.json",
    ba_objective_2 => "ba/objective-ba2_n21_m11315_p36455.json",
    ba_jacobian_1 => "ba/jacobian-ba1_n49_m7776_p31843.json",
    #[ignore = "slow in the interpreter (~5 s in release)"]
    ba_jacobian_2 => "ba/jacobian-ba2_n21_m11315_p36455.json",
    ht_objective_complicated_1 => "ht/objective-complicated_small-hand1_t26_c100.json",
    ht_objective_complicated_2 => "ht/objective-complicated_small-hand2_t26_c192.json",
    ht_objective_simple_1 => "ht/objective-simple_small-hand1_t26_c100.json",
    ht_objective_simple_2 => "ht/objective-simple_small-hand2_t26_c192.json",
    ht_jacobian_complicated_1 => "ht/jacobian-complicated_small-hand1_t26_c100.json",
    #[ignore = "slow in the interpreter (~9 s in release)"]
    ht_jacobian_complicated_2 => "ht/jacobian-complicated_small-hand2_t26_c192.json",
    ht_jacobian_simple_1 => "ht/jacobian-simple_small-hand1_t26_c100.json",
    #[ignore = "slow in the interpreter (~9 s in release)"]
    ht_jacobian_simple_2 => "ht/jacobian-simple_small-hand2_t26_c192.json",
    particle_ff => "particle/ff-w_0.json",
    particle_fr => "particle/fr-w_0.json",
    particle_rf => "particle/rf-w_0.json",
    particle_rr => "particle/rr-w_0.json",
    saddle_ff => "saddle/ff-w_0.json",
    saddle_fr => "saddle/fr-w_0.json",
    saddle_rf => "saddle/rf-w_0.json",
    saddle_rr => "saddle/rr-w_0.json",
}

/// The list above names every pair file in the data folder.
#[test]
fn all_files_are_covered() {
    let dir = data_dir();
    let mut found = Vec::new();
    for eval in std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let eval = eval.unwrap().path();
        if !eval.is_dir() {
            continue;
        }
        for f in std::fs::read_dir(&eval).unwrap() {
            let f = f.unwrap().path();
            if f.extension().is_some_and(|e| e == "json") {
                found.push(
                    f.strip_prefix(&dir)
                        .unwrap()
                        .to_string_lossy()
                        .replace('\\', "/"),
                );
            }
        }
    }
    found.sort();
    let mut listed: Vec<String> = FILES.iter().map(|s| s.to_string()).collect();
    listed.sort();
    assert_eq!(found, listed);
}

/// The comparison rule rejects what it should (so the checks above mean
/// something).
#[test]
fn comparison_rule() {
    let ok = |a: Json, b: Json| compare(&a, &b, TOLERANCE).is_ok();
    assert!(ok(json!(1.0), json!(1.00005)));
    assert!(!ok(json!(1.0), json!(1.0003)));
    assert!(ok(json!(1000.0), json!(1000.1)));
    assert!(!ok(json!(1000.0), json!(1001.0)));
    assert!(ok(json!(3), json!(3.00001)));
    assert!(!ok(json!(3), json!(4)));
    assert!(!ok(json!([1.0]), json!(1.0)));
    assert!(!ok(json!([1.0, 2.0]), json!([1.0])));
    assert!(!ok(json!({"a": 1.0}), json!({"a": 1.0, "b": 2.0})));
    assert!(!ok(json!({"a": 1.0}), json!({"b": 1.0})));
    assert!(ok(json!({"a": [1.0, -0.0]}), json!({"a": [1.0, 0.0]})));
    assert!(!ok(json!("x"), json!(1.0)));
}
