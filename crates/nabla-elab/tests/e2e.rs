//! End-to-end tests: parse → type check → elaborate → validate → interpret.

use nabla_syntax::SourceMap;
use nabla_values::{read_values_text, Value, ValueType};

fn compile(src: &str) -> Result<nabla_ir::Program, String> {
    let mut sources = SourceMap::new();
    let mut next = 0u32;
    let pf = sources.add("prelude.fut".into(), nabla_typeck::PRELUDE_SOURCE.into());
    let mf = sources.add("main.fut".into(), src.into());
    let render =
        |d: Vec<nabla_syntax::Diagnostic>, s: &SourceMap| nabla_syntax::diag::render_all(&d, s);
    let p = nabla_syntax::parse_file(&sources, pf, &mut next).map_err(|d| render(d, &sources))?;
    let m = nabla_syntax::parse_file(&sources, mf, &mut next).map_err(|d| render(d, &sources))?;
    let mut files = vec![p, m];
    nabla_typeck::check_program(&sources, &mut files).map_err(|d| render(d, &sources))?;
    nabla_elab::elaborate(&files).map_err(|d| render(d, &sources))
}

/// Runs `entry` on textual arguments; returns the results in Futhark's text format.
fn run(src: &str, entry: &str, args: &str) -> Result<String, String> {
    let prog = compile(src)?;
    if let Err(e) = nabla_ir::validate_program(&prog) {
        return Err(format!(
            "validation: {e:?}\n{}",
            nabla_ir::print_program(&prog)
        ));
    }
    let ep = prog.entry(entry).ok_or("no entry")?;
    let f = prog.function(ep.fun);
    let tys: Vec<ValueType> = f
        .params
        .iter()
        .map(|p| ValueType::new(p.ty.elem(), p.ty.rank()))
        .collect();
    let vals = read_values_text(args, Some(&tys)).map_err(|e| e.to_string())?;
    let out = nabla_interp::run_entry(&prog, entry, vals)
        .map_err(|e| format!("runtime: {}\n{}", e.message, nabla_ir::print_program(&prog)))?;
    Ok(out
        .iter()
        .map(Value::to_string)
        .collect::<Vec<_>>()
        .join(" "))
}

#[track_caller]
fn check(src: &str, args: &str, expect: &str) {
    match run(src, "main", args) {
        Ok(s) => assert_eq!(s, expect, "program:\n{src}"),
        Err(e) => panic!("program:\n{src}\nfailed: {e}"),
    }
}

#[test]
fn scalars() {
    check(
        "def main (x: i32) (y: i32) : i32 = x + y * 2",
        "3 4",
        "11i32",
    );
}

#[test]
fn let_if_tuples() {
    check(
        "def main (x: i32) : (i32, bool) = let (a, b) = (x * 2, x > 3) in if b then (a, true) else (a - 1, false)",
        "5",
        "10i32 true",
    );
    check("def main (x: i32) : (i32, bool) = let (a, b) = (x * 2, x > 3) in if b then (a, true) else (a - 1, false)", "1", "1i32 false");
}

#[test]
fn short_circuit() {
    check(
        "def main (xs: []i32) (i: i64) : bool = i < length xs && xs[i] > 0",
        "[1,2] 5",
        "false",
    );
    check(
        "def main (xs: []i32) (i: i64) : bool = i >= length xs || xs[i] > 0",
        "[1,-2] 1",
        "false",
    );
}

#[test]
fn functions_and_polymorphism() {
    check(
        "def twice 'a (f: a -> a) (x: a) : a = f (f x)
         def sq (x: i32) = x * x
         def main (x: i32) : (i32, f64) = (twice sq x, twice (\\y -> y + 0.5) 1.0)",
        "3",
        "81i32 2.0f64",
    );
}

#[test]
fn first_order_function_is_called() {
    let p =
        compile("def add (x: i32) (y: i32) = x + y\ndef main (a: i32) = add a (add a 1)").unwrap();
    assert_eq!(p.functions.len(), 2, "{}", nabla_ir::print_program(&p));
    check(
        "def add (x: i32) (y: i32) = x + y\ndef main (a: i32) = add a (add a 1)",
        "2",
        "5i32",
    );
}

#[test]
fn loops() {
    check(
        "def main (n: i32) : i32 = loop acc = 0 for i < n do acc + i",
        "5",
        "10i32",
    );
    check(
        "def main (n: i32) : i32 = loop x = 1 while x < n do x * 2",
        "100",
        "128i32",
    );
    check(
        "def main (xs: []f64) : f64 = loop s = 0.0 for x in xs do s + x",
        "[1.0, 2.5]",
        "3.5f64",
    );
    check(
        "def main (n: i64) : (i64, i64) = loop (a, b) = (0, 1) for _i < n do (b, a + b)",
        "10",
        "55i64 89i64",
    );
}

#[test]
fn arrays_and_indexing() {
    check(
        "def main (xs: []i32) : i32 = xs[1] + xs[2]",
        "[1,2,3]",
        "5i32",
    );
    check(
        "def main (xs: [][]i32) : []i32 = xs[1]",
        "[[1,2],[3,4]]",
        "[3i32, 4i32]",
    );
    check(
        "def main (xs: []i32) : []i32 = xs[1:3]",
        "[1,2,3,4]",
        "[2i32, 3i32]",
    );
    check(
        "def main (xs: []i32) : []i32 = xs[::-1]",
        "[1,2,3,4]",
        "[4i32, 3i32, 2i32, 1i32]",
    );
    check(
        "def main (xs: []i32) : []i32 = xs[::2]",
        "[1,2,3,4,5]",
        "[1i32, 3i32, 5i32]",
    );
    check(
        "def main (xs: []i32) (s: i64) : []i32 = xs[3:0:s]",
        "[1,2,3,4,5] -2",
        "[4i32, 2i32]",
    );
    check(
        "def main (xs: [][]i32) : []i32 = xs[:, 1]",
        "[[1,2],[3,4]]",
        "[2i32, 4i32]",
    );
    check(
        "def main (x: i32) : []i32 = [x, x + 1, 7]",
        "1",
        "[1i32, 2i32, 7i32]",
    );
}

#[test]
fn soacs() {
    check(
        "def main (xs: []i32) : []i32 = map (\\x -> x * 2) xs",
        "[1,2,3]",
        "[2i32, 4i32, 6i32]",
    );
    check(
        "def main (xs: []i32) : i32 = reduce (+) 0 xs",
        "[1,2,3]",
        "6i32",
    );
    check(
        "def main (xs: []i32) : []i32 = scan (+) 0 xs",
        "[1,2,3]",
        "[1i32, 3i32, 6i32]",
    );
    check(
        "def main (xs: []i32) (ys: []i32) : []i32 = map2 (+) xs ys",
        "[1,2] [10,20]",
        "[11i32, 22i32]",
    );
    check(
        "def main (n: i64) : []i64 = map (\\i -> i * i) (iota n)",
        "4",
        "[0i64, 1i64, 4i64, 9i64]",
    );
    check(
        "def main (xs: []f64) : f64 = f64.sum xs",
        "[1.0, 2.0]",
        "3.0f64",
    );
    check(
        "def main (xs: []i32) (ys: []f64) : ([]i32, []f64) = unzip (map (\\(a, b) -> (a + 1, b * 2.0)) (zip xs ys))",
        "[1,2] [1.5,2.5]",
        "[2i32, 3i32] [3.0f64, 5.0f64]",
    );
}

#[test]
fn free_variables_in_lambdas() {
    check(
        "def main (k: i32) (xs: []i32) : []i32 = map (\\x -> x + k) xs",
        "10 [1,2]",
        "[11i32, 12i32]",
    );
    check(
        "def main (xss: [][]i32) : [][]i32 = map (map (*2)) xss",
        "[[1,2],[3,4]]",
        "[[2i32, 4i32], [6i32, 8i32]]",
    );
}

#[test]
fn records() {
    check(
        "def main (x: i32) : i32 = let r = {a = x, b = x * 2} in let r2 = r with a = 100 in r2.a + r.b",
        "3",
        "106i32",
    );
    check(
        "def main (x: f64) : f64 = let p = {x, y = 2.0} in p.x * p.y",
        "3.0",
        "6.0f64",
    );
}

#[test]
fn sums_and_match() {
    check(
        "type shape = #circle f64 | #rect f64 f64
         def area (s: shape) : f64 = match s case #circle r -> 3.0 * r * r case #rect w h -> w * h
         def main (x: f64) : (f64, f64) = (area (#circle x), area (#rect x 2.0))",
        "2.0",
        "12.0f64 4.0f64",
    );
    check(
        "def main (x: i32) : i32 = match x case 0 -> 10 case 1 -> 20 case _ -> 30",
        "1",
        "20i32",
    );
}

#[test]
fn ranges() {
    check(
        "def main (n: i32) : []i32 = 1..<n",
        "4",
        "[1i32, 2i32, 3i32]",
    );
    check(
        "def main (n: i32) : []i32 = 1...n",
        "3",
        "[1i32, 2i32, 3i32]",
    );
    check(
        "def main (n: i32) : []i32 = n..>0",
        "3",
        "[3i32, 2i32, 1i32]",
    );
    check(
        "def main (n: i32) : []i32 = 0..2...n",
        "5",
        "[0i32, 2i32, 4i32]",
    );
    assert!(run("def main (n: i32) : []i32 = 5..<n", "main", "2").is_err());
}

#[test]
fn updates() {
    check(
        "def main (xs: *[]i32) : []i32 = let xs[1] = 42 in xs",
        "[1,2,3]",
        "[1i32, 42i32, 3i32]",
    );
    check(
        "def main (xs: *[]i32) : []i32 = xs with [0] = 7",
        "[1,2,3]",
        "[7i32, 2i32, 3i32]",
    );
}

#[test]
fn numeric_module_functions() {
    check(
        "def main (x: i32) : f64 = f64.i32 x + f64.sqrt 4.0",
        "3",
        "5.0f64",
    );
    check(
        "def main (x: i32) : i32 = i32.max x 3 + i32.abs (-2)",
        "1",
        "5i32",
    );
}

#[test]
fn structural_equality() {
    check(
        "def main (xs: []i32) (ys: []i32) : bool = xs == ys",
        "[1,2] [1,2]",
        "true",
    );
    check(
        "def main (xs: []i32) (ys: []i32) : bool = xs == ys",
        "[1,2] [1,3]",
        "false",
    );
    check(
        "def main (xs: []i32) (ys: []i32) : bool = xs != ys",
        "[1,2] [1,3]",
        "true",
    );
    check(
        "def main (a: i32) (b: i32) : bool = (a, b) == (b, a)",
        "1 1",
        "true",
    );
}

#[test]
fn entry_points_and_arity() {
    let p = compile(
        "entry f (x: (i32, f64)) (y: []i32) : (i32, (f64, bool)) = (x.0, (x.1, length y > 0))",
    )
    .unwrap();
    let ep = p.entry("f").unwrap();
    assert_eq!(ep.param_arity, vec![2, 1]);
    assert_eq!(ep.result_arity, vec![1, 2]);
}

#[test]
fn size_params() {
    check(
        "def f [n] (xs: [n]i32) : i64 = n\ndef main (xs: []i32) : i64 = f xs",
        "[1,2,3]",
        "3i64",
    );
    check(
        "entry main [n] (xs: [n]i32) : [n]i32 = map (+1) xs",
        "[1,2,3]",
        "[2i32, 3i32, 4i32]",
    );
}

#[test]
fn prelude_functions() {
    check(
        "def main (xs: []i32) : []i32 = filter (>1) xs",
        "[1,2,3,0,5]",
        "[2i32, 3i32, 5i32]",
    );
    check(
        "def main (n: i64) : i64 = iota n |> map (+1) |> reduce (+) 0",
        "4",
        "10i64",
    );
}

#[test]
fn errors_are_diagnostics() {
    let e = compile(
        "def main (b: bool) : i32 = let f = if b then (\\x -> x + 1) else (\\x -> x * 2) in f 3",
    );
    // Either the type checker or the elaborator must reject a function-valued branch.
    assert!(e.is_err());
}

#[test]
fn histograms_and_scatter() {
    check(
        "def main (is: []i64) (vs: []i32) : []i32 = hist (+) 0 3 is vs",
        "[0,1,1,5] [1,2,3,4]",
        "[1i32, 5i32, 0i32]",
    );
    check(
        "def main (dest: *[]i32) (is: []i64) (vs: []i32) : []i32 = reduce_by_index dest (+) 0 is vs",
        "[10,10] [0,0,1] [1,2,3]",
        "[13i32, 13i32]",
    );
    check(
        "def main (dest: *[]i32) (is: []i64) (vs: []i32) : []i32 = scatter dest is vs",
        "[0,0,0] [2,0,9] [5,6,7]",
        "[6i32, 0i32, 5i32]",
    );
    check(
        "def main (dest: *[][]i32) (is: [](i64, i64)) (vs: []i32) : [][]i32 = scatter_2d dest is vs",
        "[[0,0],[0,0]] [1,1] [0,1] [5,6]",
        "[[0i32, 0i32], [5i32, 6i32]]",
    );
}

#[test]
fn array_operations() {
    check(
        "def main (xs: [][]i32) : [][]i32 = transpose xs",
        "[[1,2],[3,4]]",
        "[[1i32, 3i32], [2i32, 4i32]]",
    );
    check(
        "def main (xs: [][]i32) : []i32 = flatten xs",
        "[[1,2],[3,4]]",
        "[1i32, 2i32, 3i32, 4i32]",
    );
    check(
        "def main (xs: []i32) (ys: []i32) : []i32 = xs ++ ys",
        "[1] [2,3]",
        "[1i32, 2i32, 3i32]",
    );
    check(
        "def main (xs: []i32) : []i32 = rotate 1 xs",
        "[1,2,3]",
        "[2i32, 3i32, 1i32]",
    );
    check(
        "def main (xs: []i32) : []i32 = reverse xs",
        "[1,2,3]",
        "[3i32, 2i32, 1i32]",
    );
    check(
        "def main (n: i64) : [][]f32 = replicate n (replicate 2 1f32)",
        "2",
        "[[1.0f32, 1.0f32], [1.0f32, 1.0f32]]",
    );
    check("def main (xs: []i32) : []i32 = copy xs", "[4]", "[4i32]");
    check(
        "def main (xs: []i32) : [2]i32 = sized 2 xs",
        "[4, 5]",
        "[4i32, 5i32]",
    );
    assert!(run("def main (xs: []i32) : [2]i32 = sized 2 xs", "main", "[4]").is_err());
    check(
        "def main (n: i64) (xs: []i32) : [n]i32 = xs :> [n]i32",
        "2 [4, 5]",
        "[4i32, 5i32]",
    );
    assert!(run(
        "def main (n: i64) (xs: []i32) : [n]i32 = xs :> [n]i32",
        "main",
        "3 [4, 5]"
    )
    .is_err());
}

#[test]
fn arrays_of_records_and_sums() {
    check(
        "def main (xs: []i32) : []i32 = let ps = map (\\x -> {a = x, b = x + 1}) xs in map (\\p -> p.a * p.b) ps",
        "[1,2]",
        "[2i32, 6i32]",
    );
    check(
        "type opt = #none | #some i32
         def get (o: opt) : i32 = match o case #some x -> x case #none -> -1
         def main (xs: []i32) : []i32 = map (\\x -> if x > 0 then #some x else #none) xs |> map get",
        "[3,-1]",
        "[3i32, -1i32]",
    );
}

#[test]
fn higher_order_misc() {
    check(
        "def main (x: i32) : i32 = let add a b = a + b in let inc = add 1 in inc (inc x)",
        "1",
        "3i32",
    );
    check(
        "def main (x: i32) : i32 = (\\(a, b) -> a - b) (x, 1)",
        "5",
        "4i32",
    );
    check("def main (x: i32) : i32 = (10 -) x + (/ 2) x", "4", "8i32");
    check("def main (x: i32) : i32 = (.1) (x, x * 3)", "2", "6i32");
    check(
        "def main (n: i64) : i64 = foldl (+) 0 (iota n)",
        "5",
        "10i64",
    );
    check(
        "def main (n: i64) : []i64 = tabulate n (\\i -> i * 2)",
        "3",
        "[0i64, 2i64, 4i64]",
    );
    check("def main (x: i32) : i32 = (id >-> (+1)) x", "1", "2i32");
}

#[test]
fn bits_and_conversions() {
    check(
        "def main (x: f64) : u64 = f64.to_bits x",
        "1.0",
        "4607182418800017408u64",
    );
    check(
        "def main (x: i32) : i32 = i32.get_bit 1 x + i32.set_bit 0 x 1",
        "2",
        "4i32",
    );
    check("def main (x: f64) : i64 = i64.f64 x", "2.7", "2i64");
    check("def main (x: i32) : bool = bool.i32 x", "2", "true");
}

#[test]
fn assert_fails_at_run_time() {
    check(
        "def main (x: i32) : i32 = assert (x > 0) (x + 1)",
        "1",
        "2i32",
    );
    assert!(run(
        "def main (x: i32) : i32 = assert (x > 0) (x + 1)",
        "main",
        "0"
    )
    .is_err());
}

#[test]
fn loop_changing_size() {
    check(
        "def main (n: i32) : []i32 = loop xs = [1] for _i < n do xs ++ xs",
        "2",
        "[1i32, 1i32, 1i32, 1i32]",
    );
}

#[test]
fn constants() {
    check(
        "def k : i32 = 42\ndef main (x: i32) : i32 = x + k",
        "1",
        "43i32",
    );
    check(
        "def inc = (+ 1)\ndef main (x: i32) : i32 = inc x",
        "1",
        "2i32",
    );
}

#[test]
fn tuple_reduce_and_scan() {
    check(
        "def main (xs: []i32) (ys: []f64) : (i32, f64) = reduce (\\(a, b) (c, d) -> (a + c, b * d)) (0, 1.0) (zip xs ys)",
        "[1,2,3] [2.0,3.0,0.5]",
        "6i32 3.0f64",
    );
    check(
        "def main (xs: []i32) : ([]i32, []i32) = unzip (scan (\\(a, b) (c, d) -> (a + c, i32.max b d)) (0, i32.lowest) (zip xs xs))",
        "[1,3,2]",
        "[1i32, 4i32, 6i32] [1i32, 3i32, 3i32]",
    );
}

#[test]
fn unflatten_sizes() {
    check(
        "def main (n: i64) (m: i64) (xs: []i32) : [][]i32 = (unflatten xs : [n][m]i32)",
        "2 2 [1,2,3,4]",
        "[[1i32, 2i32], [3i32, 4i32]]",
    );
    check(
        "def main (xs: []i32) : [][]i32 = unflatten (sized (2*2) xs) : [2][2]i32",
        "[1,2,3,4]",
        "[[1i32, 2i32], [3i32, 4i32]]",
    );
}

#[test]
fn local_polymorphic_function() {
    check(
        "def main (x: i32) (y: f64) : (i32, f64) = let dup 'a (v: a) : (a, a) = (v, v) in ((dup x).0, (dup y).1)",
        "1 2.0",
        "1i32 2.0f64",
    );
}

#[test]
fn while_on_tuples_and_for_in_records() {
    check(
        "def main (n: i32) : (i32, i32) = loop (i, acc) = (0, 1) while i < n do (i + 1, acc * 2)",
        "4",
        "4i32 16i32",
    );
    check(
        "def main (xs: []i32) : i32 = loop s = 0 for p in map (\\x -> {a = x, b = 2}) xs do s + p.a * p.b",
        "[1,2]",
        "6i32",
    );
}

#[test]
fn nested_match() {
    check(
        "def f (p: (i32, bool)) : i32 = match p case (0, true) -> 1 case (0, false) -> 2 case (_, b) -> if b then 3 else 4
         def main (x: i32) (b: bool) : i32 = f (x, b)",
        "0 false",
        "2i32",
    );
    check(
        "def f (p: (i32, bool)) : i32 = match p case (0, true) -> 1 case (0, false) -> 2 case (_, b) -> if b then 3 else 4
         def main (x: i32) (b: bool) : i32 = f (x, b)",
        "5 true",
        "3i32",
    );
}

#[test]
fn ad_constructs_elaborate() {
    let p = compile("def main (x: f64) : f64 = jvp (\\y -> y * y) x 1.0").unwrap();
    let printed = nabla_ir::print_program(&p);
    assert!(
        p.functions[0]
            .body
            .stms
            .iter()
            .any(|s| matches!(s.exp, nabla_ir::Exp::Jvp { .. })),
        "{printed}"
    );
    let p = compile("def main (x: f64) (y: f64) : (f64, f64) = vjp (\\(a, b) -> a * b) (x, y) 1.0")
        .unwrap();
    let ep = p.entry("main").unwrap();
    assert_eq!(ep.result_arity, vec![1, 1]);
    assert!(p.functions[0]
        .body
        .stms
        .iter()
        .any(|s| matches!(s.exp, nabla_ir::Exp::Vjp { .. })));
}

#[test]
fn ad_runs() {
    let s = run(
        "def main (x: f64) : f64 = jvp (\\y -> y * y) x 1.0",
        "main",
        "3.0",
    )
    .unwrap_or_else(|e| panic!("jvp: {e}"));
    assert_eq!(s, "6.0f64");
    let s = run(
        "def main (x: f64) (y: f64) : (f64, f64) = vjp (\\(a, b) -> a * b) (x, y) 1.0",
        "main",
        "3.0 5.0",
    )
    .unwrap_or_else(|e| panic!("vjp: {e}"));
    assert_eq!(s, "5.0f64 3.0f64");
}

#[test]
fn unsupported_functions_as_values_give_diagnostics() {
    // Functions inside loop parameters or arrays must be rejected (by the checker or by us), never panic.
    for src in [
        "def main (x: i32) : i32 = let f = loop f = (\\y -> y) for i < 3 do (\\y -> f y + 1) in f x",
        "def main (x: i32) : i32 = let fs = [(\\y -> y), (\\y -> y + 1)] in fs[0] x",
    ] {
        assert!(compile(src).is_err(), "{src}");
    }
}

#[test]
fn missing_annotations_are_diagnostics() {
    // An unchecked AST (no types) gives an Elaboration diagnostic, not a panic.
    let mut sources = SourceMap::new();
    let mut next = 0;
    let f = sources.add("m.fut".into(), "def main (x: i32) : i32 = x + 1".into());
    let prog = nabla_syntax::parse_file(&sources, f, &mut next).unwrap();
    let e = nabla_elab::elaborate(&[prog]).unwrap_err();
    assert_eq!(e[0].kind, nabla_syntax::DiagnosticKind::Elaboration);
}

#[track_caller]
fn check_entry(src: &str, entry: &str, args: &str, expect: &str) {
    match run(src, entry, args) {
        Ok(s) => assert_eq!(s, expect, "program:\n{src}"),
        Err(e) => panic!("program:\n{src}\nfailed: {e}"),
    }
}

#[test]
fn split_sizes_from_use_site_and_coercion() {
    // `n` from the result type at the call (the ascribed entry result).
    let src = "entry sp [l] (k: i64) (xs: [l]i32) : ([k]i32, [l - k]i32) = split (xs :> [k + (l - k)]i32)";
    check_entry(src, "sp", "1i64 [1, 2, 3]", "[1i32] [2i32, 3i32]");
    check_entry(src, "sp", "0i64 [4, 5]", "empty([0]i32) [4i32, 5i32]");
    // A constant size in the result type.
    check(
        "def main (xs: []i32) : ([2]i32, []i32) = split xs",
        "[7, 8, 9]",
        "[7i32, 8i32] [9i32]",
    );
    // Only the coercion's size expression says where to split.
    check(
        "def main [n] (xs: [n]i32) = let (a, b) = split (xs :> [1 + (n - 1)]i32) in (b, a)",
        "[1, 2, 3]",
        "[2i32, 3i32] [1i32]",
    );
}

#[test]
fn undeterminable_size_parameter_is_reported_at_the_call() {
    let e = compile("def main [n] (xs: [n]i32) = let (a, b) = split xs in (b, a)").unwrap_err();
    // The type checker finds it (split's [n + m] cannot be the [n] of xs,
    // as in Futhark), before the elaborator would.
    assert!(e.contains("Cannot apply \"split\" to \"xs\""), "{e}");
    assert!(
        e.contains("main.fut:1:"),
        "error should point at the call: {e}"
    );
    // A size parameter that is never used as a value may stay unknown.
    check(
        "def f [n] [m] (xs: [n + m]i32) : [m]i32 = xs[1:] :> [m]i32\ndef main (xs: []i32) : []i32 = f xs",
        "[1, 2, 3]",
        "[2i32, 3i32]",
    );
}

#[test]
fn unflatten_and_flatten_3d() {
    check(
        "def main (a: i64) (b: i64) (xs: []i32) = unflatten (xs :> [a * b]i32)",
        "2i64 3i64 [1, 2, 3, 4, 5, 6]",
        "[[1i32, 2i32, 3i32], [4i32, 5i32, 6i32]]",
    );
    check(
        "def main (a: i64) (b: i64) (c: i64) (xs: []i32) = unflatten_3d (xs :> [a * b * c]i32)",
        "1i64 2i64 2i64 [1, 2, 3, 4]",
        "[[[1i32, 2i32], [3i32, 4i32]]]",
    );
    check(
        "def main (xs: [8]i32) : [2][2][2]i32 = unflatten_3d (xs :> [2 * 2 * 2]i32)",
        "[1, 2, 3, 4, 5, 6, 7, 8]",
        "[[[1i32, 2i32], [3i32, 4i32]], [[5i32, 6i32], [7i32, 8i32]]]",
    );
    check(
        "def main [n][m][k] (xs: [n][m][k]i32) : [n][m][k]i32 = unflatten_3d (flatten_3d xs)",
        "[[[1, 2]], [[3, 4]], [[5, 6]]]",
        "[[[1i32, 2i32]], [[3i32, 4i32]], [[5i32, 6i32]]]",
    );
    check(
        "def main (xs: [][][]i32) = flatten_3d xs",
        "[[[1, 2], [3, 4]], [[5, 6], [7, 8]]]",
        "[1i32, 2i32, 3i32, 4i32, 5i32, 6i32, 7i32, 8i32]",
    );
    // The product must match at run time.
    assert!(run(
        "def main (a: i64) (b: i64) (xs: []i32) = unflatten (xs :> [a * b]i32)",
        "main",
        "2i64 2i64 [1, 2, 3]"
    )
    .is_err());
}

#[test]
fn scatter_3d_and_reduce_comm() {
    check(
        "def main (v: i32) = scatter_3d (replicate 2 (replicate 2 (replicate 2 0i32))) [(0, 0, 1), (1, 1, 0), (5, 0, 0)] [v, v + 1, v + 2]",
        "7",
        "[[[0i32, 7i32], [0i32, 0i32]], [[0i32, 0i32], [8i32, 0i32]]]",
    );
    check(
        "def main (xs: []i32) = (reduce_comm (+) 0 xs, reduce_comm i32.max i32.lowest xs)",
        "[3, 9, -2]",
        "10i32 9i32",
    );
}

#[test]
fn f16_arithmetic() {
    check(
        "def main (x: f16) (y: f16) = (x + y, x * y, x / y, x - y, f16.sqrt x, f16.max x y, f16.i32 3, f16.to_bits y)",
        "1.5f16 0.25f16",
        "1.75f16 0.375f16 6.0f16 1.25f16 1.2246094f16 1.5f16 3.0f16 13312u16",
    );
}

#[test]
fn unsigned_ranges() {
    check(
        "def main (a: u8) (b: u8) = (a..<b, a...b, b..>a, a..a+2...b)",
        "250u8 255u8",
        "[250u8, 251u8, 252u8, 253u8, 254u8] [250u8, 251u8, 252u8, 253u8, 254u8, 255u8] [255u8, 254u8, 253u8, 252u8, 251u8] [250u8, 252u8, 254u8]",
    );
    check(
        "def main (a: u32) (b: u32) = a...b",
        "4294967293u32 4294967295u32",
        "[4294967293u32, 4294967294u32, 4294967295u32]",
    );
}

#[test]
fn float_module_extras() {
    check(
        "def main (x: f64) = (f64.recip x, f64.rsqrt x, f64.copysign x (-1.0), f64.ldexp x 3, f64.ldexp x (-1080), f64.ldexp 1.0 2000, f64.from_fraction 3 4, f32.to_f64 0.5f32)",
        "4.0",
        "0.25f64 0.5f64 -4.0f64 32.0f64 0.0f64 f64.inf 0.75f64 0.5f64",
    );
    check(
        "def main (x: f64) (y: f64) = (f64.nextafter x y, f32.nextafter (f32.f64 x) (f32.f64 y), f16.nextafter (f16.f64 x) (f16.f64 y))",
        "1.0 2.0",
        "1.0000000000000002f64 1.0000001f32 1.0009766f16",
    );
    check(
        "def main (x: f64) (y: f64) = (f64.nextafter x y, f64.nextafter y y, f64.isnan (f64.nextafter f64.nan y))",
        "0.0 -1.0",
        "-5.0e-324f64 -1.0f64 true",
    );
    check(
        "def main (x: f64) = (1.0 + f64.epsilon > 1.0, 1.0 + f64.epsilon / 4.0 == 1.0, f64.nextafter 1.0 2.0 - 1.0 == f64.epsilon)",
        "4.0",
        "true true true",
    );
    check(
        "def main (x: f32) = (f32.get_bit 31 x, f32.set_bit 31 x 0, f64.num_bits, f16.num_bits)",
        "-1.5f32",
        "1i32 1.5f32 64i32 16i32",
    );
}

#[test]
fn integer_module_extras() {
    let src = "def main (x: i64) (y: i64) = (i64.mul_hi x y, u64.mul_hi (u64.i64 x) (u64.i64 y), i32.mul_hi (i32.i64 x) (i32.i64 y), u8.mul_hi (u8.i64 x) (u8.i64 y), i64.mad_hi x y 1)";
    check(src, "-3i64 5i64", "-1i64 4u64 -1i32 4u8 0i64");
    check(
        src,
        "9223372036854775807i64 9223372036854775807i64",
        "4611686018427387903i64 4611686018427387903u64 0i32 254u8 4611686018427387904i64",
    );
    check(
        src,
        "-9223372036854775807i64 3i64",
        "-2i64 1u64 0i32 0u8 -1i64",
    );
    check(
        "def main (x: i32) = (i32.rem x 3, i32.quot x 3, i32.get_bit 1 x, i16.set_bit 15 0 1, u8.get_bit 7 200u8, i64.u64 5u64, i32.sgn x, u16.num_bits)",
        "-7",
        "-1i32 -2i32 0i32 -32768i16 1i32 5i64 -1i32 16i32",
    );
}

/// Every named member of every numeric module (as listed in the type
/// checker's signature table) elaborates, validates and runs.
#[test]
fn every_module_member_elaborates() {
    fn lit(t: &str) -> Option<String> {
        Some(match t {
            "bool" => "true".into(),
            "f16" | "f32" | "f64" => format!("1.5{t}"),
            "i8" | "i16" | "i32" | "i64" | "u8" | "u16" | "u32" | "u64" => format!("3{t}"),
            _ => {
                let e = t.strip_prefix("[n]")?;
                let x = lit(e)?;
                format!("[{x}, {x}]")
            }
        })
    }
    let mut src = String::new();
    let mut entries = vec![];
    for (i, (name, sig)) in nabla_typeck::intrinsic_signatures().into_iter().enumerate() {
        let Some((m, f)) = name.split_once('.') else {
            continue;
        };
        // The `intrinsics` module's own members (accumulators, flat
        // views) take functions and accumulators: tests/programs has them.
        if m == "intrinsics" {
            continue;
        }
        if !f.starts_with(|c: char| c.is_ascii_alphabetic()) {
            continue;
        }
        let parts: Vec<&str> = sig.split("->").map(str::trim).collect();
        let mut call = format!("{m}.{f}");
        for p in &parts[..parts.len() - 1] {
            let Some(a) = lit(p) else {
                panic!("unexpected parameter type {p} in {name}: {sig}")
            };
            call.push_str(&format!(" ({a})"));
        }
        let e = format!("e{i}");
        src.push_str(&format!("entry {e} (_: i32) = {call}\n"));
        entries.push((e, name));
    }
    assert!(entries.len() > 300, "{}", entries.len());
    let prog = compile(&src).unwrap_or_else(|e| panic!("{e}"));
    if let Err(e) = nabla_ir::validate_program(&prog) {
        panic!("validation: {e:?}");
    }
    for (e, name) in entries {
        let r =
            nabla_interp::run_entry(&prog, &e, vec![Value::Prim(nabla_prim::PrimValue::I32(0))]);
        assert!(r.is_ok(), "{name}: {:?}", r.err().map(|e| e.message));
    }
}

#[test]
fn size_parameters_are_ir_parameters() {
    let src = "def f [n] (xs: [n]f64) : [n]f64 = map (+1) xs\n\
               def h [n][m] (a: [n][m]f64) (b: [m]f64) : [n]f64 = map (\\r -> reduce (+) 0 (map2 (*) r b)) a\n\
               def main (xs: []f64) (a: [][]f64) = h a (f xs)";
    let prog = compile(src).unwrap();
    nabla_ir::validate_program(&prog).unwrap();
    let ir = nabla_ir::print_program(&prog);
    assert!(
        ir.contains("fun f (n_0: i64, xs_1: [n_0]f64): ([n_0]f64)"),
        "{ir}"
    );
    assert!(
        ir.contains("fun h (n_0: i64, m_1: i64, a_2: [n_0][m_1]f64, b_3: [m_1]f64): ([n_0]f64)"),
        "{ir}"
    );
    check(
        src,
        "[1.0, 2.0] [[1.0, 1.0], [2.0, 0.0]]",
        "[5.0f64, 4.0f64]",
    );
    // Sizes that disagree at a call are a run-time error.
    let e = run(src, "main", "[1.0, 2.0] [[1.0, 1.0, 1.0]]").unwrap_err();
    assert!(e.contains("size"), "{e}");
}

/// For each IR function whose name starts with `prefix`: its name, its
/// number of parameters and whether its body (at any depth) calls itself.
fn self_calls(p: &nabla_ir::Program, prefix: &str) -> Vec<(String, usize, bool)> {
    let mut out = vec![];
    for (i, f) in p.functions.iter().enumerate() {
        if !f.name.starts_with(prefix) {
            continue;
        }
        let mut calls_itself = false;
        let mut stack = vec![&f.body];
        while let Some(b) = stack.pop() {
            for s in &b.stms {
                if let nabla_ir::Exp::Apply(g, _) = &s.exp {
                    calls_itself |= g.0 as usize == i;
                }
                s.exp.for_each_nested(|n| match n {
                    nabla_ir::Nested::Body(nb) => stack.push(nb),
                    nabla_ir::Nested::Lambda(l) => stack.push(&l.body),
                });
            }
        }
        out.push((f.name.clone(), f.params.len(), calls_itself));
    }
    out.sort();
    out
}

#[test]
fn a_recursive_function_is_one_ir_function_calling_itself() {
    let src = "def fact (n: i64) = if n == 0 then 1 else n * fact (n - 1)\n\
               def main (n: i64) = fact n";
    let p = compile(src).unwrap();
    assert_eq!(
        self_calls(&p, "fact"),
        vec![("fact".to_string(), 1, true)],
        "{}",
        nabla_ir::print_program(&p)
    );
    check(src, "5i64", "120i64");
}

#[test]
fn a_recursive_higher_order_function_is_specialised_per_function_passed() {
    // `add_a` is passed twice (one specialisation, with `a` as a further
    // parameter), the lambda once (a second one, with nothing captured);
    // each specialisation's recursive call calls that same specialisation.
    let src = "def iter (n: i64) (g: i64 -> i64) (x: i64) : i64 =\n\
               \x20 if n == 0 then x else iter (n - 1) g (g x)\n\
               def main (n: i64) (a: i64) =\n\
               \x20 let add_a (x: i64) = x + a\n\
               \x20 in iter n add_a 0 + iter n (\\x -> x * 2) 1 + iter (n + 1) add_a 0";
    let p = compile(src).unwrap();
    nabla_ir::validate_program(&p).unwrap();
    let specs = self_calls(&p, "iter");
    let ir = nabla_ir::print_program(&p);
    assert_eq!(specs.len(), 2, "{ir}");
    let mut arities: Vec<usize> = specs.iter().map(|s| s.1).collect();
    arities.sort();
    assert_eq!(arities, vec![2, 3], "{ir}");
    assert!(
        specs
            .iter()
            .all(|(name, _, rec)| name.contains("specialised") && *rec),
        "{ir}"
    );
    // 3·2 + 2^3 + 4·2 for n = 3, a = 2.
    check(src, "3i64 2i64", "22i64");
}

#[test]
fn a_recursive_call_at_another_size_calls_the_same_function() {
    let src = "def sum [n] (xs: [n]i32) : i32 =\n\
               \x20 if n == 0 then 0 else xs[0] + sum (drop 1 xs)\n\
               def main (xs: []i32) = sum xs";
    let p = compile(src).unwrap();
    let specs = self_calls(&p, "sum");
    assert_eq!(specs.len(), 1, "{}", nabla_ir::print_program(&p));
    assert!(specs[0].2);
    check(src, "[1, 2, 3, 4]", "10i32");
}
