//! Regression tests for front-end problems found by `frontend_fuzz.rs` and
//! by review: long `else if` chains, static size clashes, negative
//! constant sizes, and the wording and location of common diagnostics.

use std::path::PathBuf;

/// Writes `src` to a fresh file in a per-test scratch directory.
fn file(name: &str, src: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("nabla-frontend-reg-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(format!("{name}.fut"));
    std::fs::write(&p, src).unwrap();
    p
}

/// The first diagnostic of a program that must not compile:
/// (`kind: message`, line, column).
fn first_error(name: &str, src: &str) -> (String, usize, usize) {
    let p = file(name, src);
    let e = match nabla::compile(&p) {
        Ok(_) => panic!("{name}: expected a compile error"),
        Err(e) => e,
    };
    assert!(
        !e.rendered.contains("internal"),
        "{name}: internal error: {}",
        e.rendered
    );
    let d = e.diagnostics.first().expect("a diagnostic");
    let c = nabla::compile(&p).unwrap_err();
    // `summary` ends with `(at path.fut:line:col-end)` (`end` is a column,
    // or `line:col` for a span over several lines).
    let at = c
        .summary
        .rsplit("(at ")
        .next()
        .unwrap()
        .trim_end_matches(')');
    let mut parts = at.rsplit(".fut:").next().unwrap().split(':');
    let line: usize = parts.next().unwrap().parse().unwrap();
    let col: usize = parts
        .next()
        .unwrap()
        .split('-')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    (format!("{}: {}", d.kind_name(), d.message), line, col)
}

fn else_if_chain(n: usize) -> String {
    let mut s = String::from("def classify (x: i32) : i32 =\n  if x == 0 then 0\n");
    for i in 1..n {
        s.push_str(&format!("  else if x == {i} then {}\n", 2 * i));
    }
    s.push_str("  else -1\n\nentry main (x: i32) : i32 = classify x\n");
    s
}

#[test]
fn long_else_if_chains_compile_and_run() {
    for (n, x, want) in [(300usize, 299, 598), (2000, 1999, 3998), (2000, 5000, -1)] {
        let p = file(&format!("chain{n}"), &else_if_chain(n));
        let c = nabla::compile(&p).unwrap_or_else(|e| panic!("chain of {n}: {e}"));
        nabla_ir::validate_program(&c.program).expect("valid IR");
        let r = c
            .run_on_input("main", format!("{x}").as_bytes())
            .expect("runs");
        assert_eq!(r.len(), 1);
        assert_eq!(
            r[0].to_string(),
            format!("{want}i32"),
            "chain of {n} at {x}"
        );
    }
}

#[test]
fn real_nesting_is_still_limited() {
    // 300 nested parentheses are nesting, not a chain: a clean error.
    let src = format!(
        "def main (x: i32) : i32 = {}x{}\n",
        "(".repeat(300),
        ")".repeat(300)
    );
    let (m, line, _) = first_error("nest300", &src);
    assert!(m.contains("nesting too deep"), "{m}");
    assert_eq!(line, 1);
}

#[test]
fn concat_of_rows_with_different_static_shapes_is_an_error() {
    // Found by the fuzzer: this elaborated into IR the validator rejects.
    // Static size checking now rejects it in the type checker, at the
    // second operand.
    let (m, line, col) = first_error(
        "concat_rows",
        "def main (b: bool) : []i32 =\n  flatten ([[1, 1], [2, 2]] ++ [[3, 4, 5]])\n",
    );
    assert!(
        m.contains("Cannot apply \"++\" to argument #2") && m.contains("[1][3]i32"),
        "{m}"
    );
    assert_eq!((line, col), (2, 32));
}

#[test]
fn negative_constant_replicate_is_a_run_time_error() {
    // Found by the fuzzer: `replicate (-2) x` gave an IR type with size -2.
    let p = file(
        "neg_replicate",
        "entry main (x: i32) : []i32 = if x > 0 then replicate 2 x else replicate (-2i64) x\n",
    );
    let c = nabla::compile(&p).expect("compiles");
    nabla_ir::validate_program(&c.program).expect("valid IR");
    let r = c.run_on_input("main", b"1").expect("runs");
    assert_eq!(r[0].to_string(), "[1i32, 1i32]");
    let e = c.run_on_input("main", b"0").unwrap_err();
    assert!(e.message.contains("-2"), "{}", e.message);
}

/// A diagnostic case: name, program, substrings of the message, (line, column).
type DiagCase<'a> = (&'a str, &'a str, &'a [&'a str], (usize, usize));

/// Each typical mistake: the message (substrings) and where it points.
#[test]
fn diagnostics_say_what_and_where() {
    let cases: &[DiagCase] = &[
        (
            "missing_in",
            "def main (x: i32) : i32 =\n  let y = x + 1\n  y * 2\n",
            &["syntax error", "expected `in` after the `let` binding", "end of file"],
            // just after the last token, not on the empty line after it
            (3, 8),
        ),
        (
            "missing_in_before_def",
            "def f (x: i32) : i32 =\n  let y = x\ndef main (x: i32) : i32 = x\n",
            &["missing `in`"],
            (3, 1),
        ),
        (
            "unbalanced_open",
            "def main (x: i32) : i32 =\n  let y = (x + 1 * (x - 2)\n  in y\n",
            &["syntax error", "Unexpected \"in\"", "expected `)`"],
            (3, 3),
        ),
        (
            "unbalanced_close",
            "def main (x: i32) : i32 =\n  let y = x + 1)\n  in y\n",
            &["syntax error", "Unexpected \")\""],
            (2, 16),
        ),
        (
            "if_without_else",
            "def main (x: i32) : i32 =\n  if x > 0 then x\n",
            &["every `if` needs an `else` branch", "end of file"],
            (2, 18),
        ),
        (
            "missing_then",
            "def main (x: i32) : i32 =\n  if x > 0 x else 0\n",
            &["Unexpected \"else\"", "expected `then`"],
            (2, 14),
        ),
        (
            "too_many_arguments",
            "def add (a: i32) (b: i32) : i32 = a + b\n\ndef main (x: i32) : i32 = add x x x\n",
            &["type error", "`add` is applied to too many arguments (it takes 2 arguments)"],
            (3, 35),
        ),
        (
            "unknown_field",
            "type point = {x: f64, y: f64}\n\ndef main (p: f64) : f64 =\n  let q : point = {x = p, y = 2}\n  in q.z\n",
            &["type `{x: f64, y: f64}` has no field `z`"],
            (5, 6),
        ),
        (
            "field_typo",
            "def main (x: f64) : f64 =\n  let r = {mass = x, velocity = 2.0}\n  in r.mass * r.velocty\n",
            &["has no field `velocty`"],
            (3, 15),
        ),
        (
            "record_update_typo",
            "def main (x: f64) : f64 =\n  let r = {mass = x, velocity = 2.0}\n  let s = r with mas = 3.0\n  in s.mass\n",
            &["has no field `mas`"],
            (3, 18),
        ),
        (
            "undefined_type",
            "def f (v: vec3) : f64 = 1.0\n\ndef main (x: f64) : f64 = x\n",
            &["Unknown type \"vec3\""],
            (1, 11),
        ),
        (
            "apply_array",
            "def main (xs: []i32) : i32 =\n  xs 0\n",
            &["`xs` has type `[]i32` and is not a function", "applied to an argument"],
            // the applied array, not its argument
            (2, 3),
        ),
        (
            "index_scalar",
            "def main (x: i32) : i32 =\n  x[0]\n",
            &["cannot index a value of type `i32`"],
            (2, 3),
        ),
        (
            "loop_body_type",
            "def main (n: i64) : i64 =\n  let (a, _) = loop (a, b) = (0, 1) for i < n do\n    (b, a + b, 1)\n  in a\n",
            &["Loop body does not have expected type"],
            (3, 5),
        ),
        (
            "loop_body_elem_type",
            "def main (n: i64) : f64 =\n  loop acc = 0.0 for i < n do\n    acc + i\n",
            &["expected `f64`, found `i64`"],
            (3, 11),
        ),
        (
            "if_condition_int",
            "def main (x: i32) : i32 =\n  if x then 1 else 2\n",
            &["the condition of `if` must be bool"],
            (2, 6),
        ),
        (
            "unknown_constructor",
            "type t = #a | #b i32\ndef main (x: i32) : i32 =\n  match (#b x : t)\n  case #a -> 0\n  case #c y -> y\n",
            // no inference variables (`?t12`) in the message
            &["has no constructor #c"],
            (5, 8),
        ),
        (
            "unknown_name",
            "def main (x: i32) : i32 =\n  let y = x + 1\n  in z + y\n",
            &["Unknown name \"z\""],
            (3, 6),
        ),
        (
            "wrong_return_type",
            "def main (x: i32) : f64 =\n  x + 1\n",
            &["Function body does not have expected type", "expected `f64`, found `i32`"],
            (2, 3),
        ),
        (
            "mixed_operands",
            "def main (x: i32) (y: f64) : f64 =\n  x + y\n",
            &["Cannot apply \"+\" to \"y\"", "expected `i32`, found `f64`"],
            (2, 7),
        ),
        (
            "unclosed_bracket",
            "def main (x: i32) : []i32 =\n  [x, x + 1\n",
            &["expected `,` or `]`", "end of file"],
            (2, 12),
        ),
    ];
    let mut bad = vec![];
    for (name, src, wants, at) in cases {
        let (m, line, col) = first_error(name, src);
        assert!(
            !m.contains("?t"),
            "{name}: inference variable in message: {m}"
        );
        for w in *wants {
            if !m.contains(w) {
                bad.push(format!("{name}: message {m:?} lacks {w:?}"));
            }
        }
        if (line, col) != *at {
            bad.push(format!(
                "{name}: at {line}:{col}, want {}:{} ({m})",
                at.0, at.1
            ));
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// Loop parameter sizes, as Futhark decides them: a size the body keeps
/// is the initial value's size; one the body changes is an existential
/// size of the loop, which matches no other size.
#[test]
fn loop_parameter_sizes_are_invariant_or_existential() {
    let invariant = file(
        "loop_invariant",
        "def main [n] (xs: *[n]i32) : [n]i32 =\n  loop xs for i < n do xs with [i] = 1\n",
    );
    nabla::compile(&invariant).expect("an invariant size keeps the initial value's");
    let cases: &[(&str, &str, &str)] = &[
        (
            "loop_invariant_wrong",
            "def main [n] (xs: *[n]i32) : [10]i32 =\n  loop xs for i < n do xs with [i] = 1\n",
            "expected `[10]i32`, found `[n]i32`",
        ),
        (
            "loop_variant",
            "def main (k: i64) : [1]i32 =\n  loop xs = replicate 1 0i32 for _i < k do xs ++ xs\n",
            "expected `[1]i32`",
        ),
        (
            "loop_declared_size",
            "def main [m] (xs: [m]i32) (n: i64) =\n  loop (ys: [n]i32) = xs for _i < 3 do replicate n 0\n",
            "Initial loop values do not have expected type: expected `[n]i32`",
        ),
        (
            "loop_shared_size",
            "def main [n] (xs: [n]i32) (ys: [n]i32) =\n  loop (xs, ys) for _i < 2 do\n    let zs = filter (> 0) (map2 (+) xs ys)\n    in (xs, zs)\n",
            "Loop body does not have expected type",
        ),
    ];
    for (name, src, want) in cases {
        let (msg, _, _) = first_error(name, src);
        assert!(msg.contains(want), "{name}: {msg}");
    }
}

/// `unflatten` has Futhark's type `[n * m]t -> [n][m]t`: the result sizes
/// are the factors of the argument's size, and a run-time check refuses
/// negative factors.
#[test]
fn unflatten_takes_the_factors_of_the_argument_size() {
    let p = file(
        "unflatten_factors",
        "def main (n: i64) (m: i64) = unflatten (iota (n * m))\n",
    );
    let c = nabla::compile(&p).expect("sizes n and m come from n * m");
    let r = c.run_on_input("main", b"2 3").expect("runs");
    assert_eq!(r[0].to_string(), "[[0i64, 1i64, 2i64], [3i64, 4i64, 5i64]]");
    let e = c.run_on_input("main", b"-2 -3").unwrap_err();
    assert!(
        e.message
            .contains("Cannot unflatten array of shape [6] to array of shape [-2][-3]"),
        "{}",
        e.message
    );
    let (msg, _, _) = first_error(
        "unflatten_unrelated_size",
        "def main (xs: [6]i32) = unflatten xs\n",
    );
    assert!(msg.contains("expected `[n * m]_`, found `[6]i32`"), "{msg}");
}

/// The type checker's warnings, each on a program that still compiles.
#[test]
fn type_checker_warnings() {
    let cases: &[(&str, &str, &str)] = &[
        (
            "warn_eq_arrays",
            "def main (xs: []i32) (ys: []i32) = xs == ys\n",
            "Comparing arrays with \"==\" is deprecated",
        ),
        (
            "warn_size_binding",
            "def main (n: i64) = iota (let m = n + 1 in m * m)\n",
            "Size expression with binding is replaced by unknown size.",
        ),
        (
            "warn_slice_binding",
            "def main (n: i64) (xs: [n]i64) = xs[:let m = n - 1 in m]\n",
            "Size expression with binding is replaced by unknown size.",
        ),
        (
            "warn_unique_prim",
            "type t = f32\ndef main (x: *t) : t = x\n",
            "has no effect on the non-array type `f32`",
        ),
        (
            "warn_unroll",
            "def main (n: i64) = #[unroll] loop s = 0 for i < n do s + i\n",
            "#[unroll] has no effect here",
        ),
    ];
    for (name, src, want) in cases {
        let c = nabla::check(&file(name, src)).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(
            c.warnings.iter().any(|w| w.message.contains(want)),
            "{name}: {:?}",
            c.warnings
        );
    }
    // No warnings for their correct forms.
    for (name, src) in [
        ("nowarn_eq", "def main (x: i32) (y: i32) = x == y\n"),
        (
            "nowarn_unroll",
            "def main = #[unroll] loop s = 0i32 for i < 4 do s + i\n",
        ),
        ("nowarn_unique_array", "def main (x: *[]f32) = x\n"),
    ] {
        let c = nabla::check(&file(name, src)).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(c.warnings.is_empty(), "{name}: {:?}", c.warnings);
    }
}

/// Slices and ranges have the sizes Futhark gives them: `xs[i:]` has size
/// `n - i`, `xs[:j]` size `j`, `a..<b` size `b - a`, `0..<e` size `e`;
/// other ranges have an unknown length of their own.
#[test]
fn slice_and_range_sizes() {
    for (name, src) in [
        (
            "slice_tail",
            "def f [n] (xs: [n]i32) : [n - 1]i32 = xs[1:]\n",
        ),
        (
            "slice_prefix",
            "def f [n] (k: i64) (xs: [n]i32) : [k]i32 = xs[:k]\n",
        ),
        (
            "slice_reverse",
            "def f [n] (xs: [n]i32) : [n]i32 = xs[::-1]\n",
        ),
        ("range_from_zero", "def f (n: i64) : [n]i64 = 0..<n\n"),
        (
            "range_between",
            "def f (a: i64) (b: i64) : [b - a]i64 = a..<b\n",
        ),
    ] {
        nabla::check(&file(name, src)).unwrap_or_else(|e| panic!("{name}: {e}"));
    }
    let cases: &[(&str, &str, &str)] = &[
        (
            "slice_sizes_differ",
            "def main [n] [m] (xs: [n]i32) (ys: [m]i32) = zip xs[1:] ys[1:]\n",
            "expected `[n - 1]_`, found `[m - 1]i32`",
        ),
        (
            "range_wrong_size",
            "def main (n: i64) : [n]i64 = 0..<(n + 1)\n",
            "n + 1",
        ),
        (
            "range_unknown_length",
            "def main (n: i64) : [n]i64 = 1..2..<n + 1\n",
            "unknown length of range",
        ),
    ];
    for (name, src, want) in cases {
        let p = file(name, src);
        let e = nabla::compile(&p).expect_err(name);
        assert!(e.rendered.contains(want), "{name}: {}", e.rendered);
    }
}

/// Programs Futhark rejects for how they bind names or compare values.
#[test]
fn binding_and_equality_rules() {
    let cases: &[(&str, &str, &str)] = &[
        (
            "size_and_value_param",
            "def f [m] (m: [m]i64) = m\n",
            "is also bound as a parameter",
        ),
        (
            "let_size_and_value",
            "def f (x: []i32) =\n  let [n] (n: [n]i32) = x\n  in n\n",
            "is also bound as a parameter",
        ),
        (
            "size_names_value_in_same_param",
            "def main (n: f64, a: [n]i32) : []i32 = map (+ 2) a\n",
            "\"n\" is used as a size in this parameter's type",
        ),
        (
            "redefine_and",
            "def (&&) (x: bool) (y: bool) = x\n",
            "The operator `&&` cannot be defined",
        ),
        (
            "equality_on_type_parameter",
            "def f 't (x: t) = x == x\n",
            "does not support equality",
        ),
        (
            "ambiguous_equality",
            "def same x y = x == y\n",
            "does not support equality",
        ),
    ];
    for (name, src, want) in cases {
        let e = nabla::compile(&file(name, src)).expect_err(name);
        assert!(e.rendered.contains(want), "{name}: {}", e.rendered);
    }
    // Equality at a known type is fine.
    nabla::compile(&file("equality_known", "def same (x: i32) y = x == y\n")).expect("compiles");
}

/// The branches of `if` may have different sizes: the result has an
/// existential size (one per distinct pair of branch sizes), also where a
/// branch's size is bound inside the branch's scope.
#[test]
fn if_branches_with_different_sizes() {
    let p = file(
        "if_branch_deeper_size",
        "def main (k: i64) : i64 =\n  let b = loop b = iota 3 for i < k do\n    (let m = i + 2 in if m < length b then b else map (+ 1) (iota m))\n  in length b\n",
    );
    let c = nabla::compile(&p).expect("compiles");
    let r = c.run_on_input("main", b"4").expect("runs");
    assert_eq!(r[0].to_string(), "5i64");
    let p = file(
        "if_branch_same_pair",
        "def main (b: bool) : i64 =\n  let (xs, ys) = if b then ([1, 2, 3], [4, 5, 6]) else ([1, 2], [3, 4])\n  in length (zip xs ys)\n",
    );
    let c = nabla::compile(&p).expect("the two sizes are one existential");
    let r = c.run_on_input("main", b"false").expect("runs");
    assert_eq!(r[0].to_string(), "2i64");
}

/// Runs entry point `entry` of `src` on `input` and returns the results
/// printed in Futhark's value format.
fn run_entry(name: &str, src: &str, entry: &str, input: &str) -> Vec<String> {
    let c = nabla::compile(&file(name, src)).unwrap_or_else(|e| panic!("{name}: {e}"));
    let r = c
        .run_on_input(entry, input.as_bytes())
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    r.iter().map(|v| v.to_string()).collect()
}

/// The size of a value made by `filter` (an unknown size of its own) is
/// known once the value is: after a `let`, and to the right operand of a
/// pipeline. A size parameter that only a function's result type names is
/// then known at the call.
#[test]
fn sizes_of_values_bound_or_piped_are_known() {
    let src = "def f [n] (_: [n]i32 -> i32) : [n]i32 -> i64 =\n  let m = n * 10\n  in \\_ -> m\n\nentry bound (xs: []i32) = let ys = filter (> 0) xs in f (\\_ -> 0) ys\nentry piped (xs: []i32) = filter (> 0) xs |> f (\\_ -> 0)\n";
    for entry in ["bound", "piped"] {
        assert_eq!(
            run_entry("filtered_size", src, entry, "[4, -1, 7, 0, 2]"),
            ["30i64"],
            "{entry}"
        );
    }
}

/// A size parameter that is one term of a sum in a parameter's type is the
/// argument's length minus the other term (`[n + m]` with `m` known), also
/// where the argument's own size is unknown at the call.
#[test]
fn size_parameter_solved_from_a_sum() {
    let src = "def parts [n] [m] 't (_: [n + m]t) = (n, m)\n\nentry main [k] (xs: [k]i32) = parts (let small = filter (< 3) xs in small ++ xs)\n";
    assert_eq!(
        run_entry("sum_size", src, "main", "[5, 1, 2, 9]"),
        ["2i64", "4i64"]
    );
}

/// `unflatten` with one result size known from the use site computes the
/// other from the argument's length, and checks the product at run time.
#[test]
fn unflatten_with_one_known_size() {
    let src = "def rows [m] (k: i64) (xs: []f64) : [][m]f64 = unflatten (xs :> [k * m]f64)\n\nentry main (xs: []f64) : [][3]f64 = let r = unflatten xs in map (map (* 2)) r\n";
    assert_eq!(
        run_entry(
            "unflatten_one",
            src,
            "main",
            "[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]"
        ),
        ["[[2.0f64, 4.0f64, 6.0f64], [8.0f64, 10.0f64, 12.0f64]]"]
    );
    let c = nabla::compile(&file("unflatten_one_bad", src)).expect("compiles");
    let e = c
        .run_on_input("main", b"[1.0, 2.0, 3.0, 4.0]")
        .expect_err("4 elements are no rows of 3");
    assert!(e.to_string().contains("Cannot unflatten"), "{e}");
}

/// A record with the fields `0` … `13` is the 14-element tuple: fields
/// with numeric names are ordered by number.
#[test]
fn large_tuples_are_records_with_numeric_fields() {
    let fields: Vec<String> = (0..14).map(|i| format!("{i} = x + {i}")).collect();
    let names: Vec<String> = (0..14).map(|i| format!("v{i}")).collect();
    let src = format!(
        "def main (x: i32) =\n  let ({}) = {{{}}}\n  in v11 - v2\n",
        names.join(", "),
        fields.join(", ")
    );
    assert_eq!(run_entry("tuple14", &src, "main", "100"), ["9i32"]);
}

/// Futhark's wording for unification failures, and the warning for a
/// definition's numeric type left open.
#[test]
fn unification_failures_in_futharks_words() {
    let cases: &[(&str, &str, &str)] = &[
        ("occurs", "def bad a f = f a f\n", "Occurs check"),
        (
            "equality_then_function",
            "def f x = (x == x, x 2)\n",
            "does not support equality",
        ),
        (
            "field_mismatch",
            "def main (x: (i32, i8, i16)) : (i8, i16, i32) = (x.0, x.2, x.0)\n",
            "when matching field \"0\"",
        ),
        (
            "constructor_and_number",
            "def get (c: bool) : #a = if c then #a else 0\n",
            "Cannot unify",
        ),
        (
            "constructors_on_array",
            "def main (xs: [3]i32) = match xs\n  case #some x -> x\n  case #none -> 0\n",
            "Cannot unify type with constructors",
        ),
        (
            "branch_sizes_named",
            "def main (b: bool) (n: i64) (m: i64) : [2]i64 = if b then iota n else iota m\n",
            "[n] and [m]",
        ),
        (
            "pattern_sizes",
            "def main = let [n] (a: [n]i64, b: [n]i64) = (iota 1, iota 2) in zip a b\n",
            "cannot match",
        ),
        (
            "nested_param_size",
            "def f (x: i64, _: bool) : [x]i32 = replicate x 0\n",
            "bound inside a tuple or record parameter",
        ),
        (
            "defaulted_then_misused",
            "def add a b = a + b\ndef use_it a = add a 1.5\n",
            "Defaulting ambiguous type to i32.",
        ),
        (
            "unknown_name",
            "def main = undefined_thing + 1\n",
            "Unknown name \"undefined_thing\"",
        ),
    ];
    for (name, src, want) in cases {
        let e = nabla::compile(&file(name, src)).expect_err(name);
        assert!(e.rendered.contains(want), "{name}: {}", e.rendered);
    }
    // A sum value's tag is one byte: at most 256 constructors.
    let big = |n: usize| {
        let cs: Vec<String> = (0..n).map(|i| format!("#c{i}")).collect();
        format!("type big = {}\ndef main (x: big) = x\n", cs.join(" | "))
    };
    let e = nabla::compile(&file("constructors_257", &big(257))).expect_err("257");
    assert!(
        e.rendered.contains("at most 256 constructors"),
        "{}",
        e.rendered
    );
    nabla::compile(&file("constructors_256", &big(256))).expect("256 constructors");
    let c = nabla::check(&file("defaulted", "def plus x y = x + y\n")).expect("compiles");
    assert!(
        c.warnings
            .iter()
            .any(|w| w.message == "Defaulting ambiguous type to i32."),
        "{:?}",
        c.warnings
    );
    // A constructor pattern with a type ascription in parentheses.
    let src = "type t = #foo | #bar\ndef main (b: bool) : i32 =\n  match (if b then #foo else #bar)\n  case (#foo: t) -> 1\n  case (#bar: t) -> 2\n";
    assert_eq!(run_entry("constr_ascribed", src, "main", "false"), ["2i32"]);
}

/// A parameter named like its function shadows the function in the body;
/// a zero slice stride is an out-of-bounds error, not a division by zero.
#[test]
fn parameter_shadows_function_and_zero_strides() {
    assert_eq!(
        run_entry(
            "param_shadows",
            "def f (f: i32) = f * 3\nentry main = f\n",
            "main",
            "7"
        ),
        ["21i32"]
    );
    let c = nabla::compile(&file(
        "zero_stride",
        "def main (xs: []i32) (a: i64) (b: i64) (c: i64) = xs[a:b:c]\n",
    ))
    .expect("compiles");
    let e = c
        .run_on_input("main", b"[1, 2, 3] 0i64 1i64 0i64")
        .expect_err("a zero stride");
    assert!(e.to_string().contains("out of bounds"), "{e}");
    let ok = c
        .run_on_input("main", b"[1, 2, 3] 2i64 -1i64 -1i64")
        .expect("runs");
    assert_eq!(ok[0].to_string(), "[3i32, 2i32, 1i32]");
}

/// `#[warn(safety_checks)]` warns for the bounds checks in the marked
/// expression and in the functions it calls, and not elsewhere.
#[test]
fn safety_check_warnings() {
    let src = "def get (xs: []f32) (i: i64) = xs[i]\n\ndef main (xs: []f32) (is: []i64) =\n  #[warn(safety_checks)]\n  map (get xs) is\n\nentry other (xs: []f32) (i: i64) = xs[i]\n";
    let c = nabla::check(&file("safety", src)).expect("compiles");
    let safety: Vec<_> = c
        .warnings
        .iter()
        .filter(|w| w.message.starts_with("Safety check required"))
        .collect();
    assert_eq!(safety.len(), 1, "{:?}", c.warnings);
    let unmarked = "def main (xs: []f32) (i: i64) = xs[i]\n";
    let c = nabla::check(&file("no_safety", unmarked)).expect("compiles");
    assert!(c.warnings.is_empty(), "{:?}", c.warnings);
}

/// A compound size of an existential size in a result type (`[n - k]` in
/// `?[k].`) is existential too.
#[test]
fn compound_sizes_of_existential_sizes() {
    let src = "def split_first [n] (xs: [n]i64) : ?[k].([k]i64, [n - k]i64) = (xs[0:1], xs[1:n])\n\nentry main (n: i64) = let (a, b) = split_first (iota n) in (length a, length b, b[0])\n";
    assert_eq!(
        run_entry("exist_compound", src, "main", "5"),
        ["1i64", "4i64", "1i64"]
    );
}
