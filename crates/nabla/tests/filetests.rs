//! IR filetests: every `.nir` file under `tests/ir/` is a printed IR program
//! (`nabla_ir::parse_program` reads it) with `--` comment lines that say
//! what to check. See `tests/ir/README.md` for the directives:
//!
//! * `-- test: validate` — the program validates;
//! * `-- test: validate-types` — the program validates except perhaps for
//!   size-only problems (what the driver checks by default in debug builds);
//! * `-- test: validate-error TEXT` — validation fails with a message
//!   containing TEXT;
//! * `-- test: interpret ENTRY`, then pairs of `-- input: VALUES` and
//!   `-- output: VALUES` (or `-- error: TEXT`), values in Futhark's text
//!   format;
//! * `-- test: pass NAME[,NAME…]`, then `-- check: LINE` lines (each must
//!   be found in a line of the printed result, in order) and/or an
//!   `-- expect:` block (the whole printed result: the following `--` lines
//!   up to the next directive; compared with whitespace normalised). `NABLA_BLESS=1` rewrites the
//!   expect blocks with the actual output.
//!
//! A file may hold several `test:` lines; the lines after one belong to it.

use nabla_ir::{parse_program, print_program, validate_program, Program};
use nabla_values::{compare_value_lists, read_values_text, ValueType};
use std::path::{Path, PathBuf};

fn ir_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/ir")
}

/// Runs one pass by its name in the pass manager's registry
/// (`nabla passes` lists them), or `optimise`: the optimiser alone
/// (`Pipeline::dynamic_ad`, no static AD).
fn run_pass(name: &str, prog: &mut Program) -> Result<(), String> {
    if name == "optimise" {
        return nabla_opt::Pipeline::dynamic_ad()
            .run(prog)
            .map_err(|e| e.to_string());
    }
    let pass = nabla_opt::pass_named(name).ok_or_else(|| {
        format!(
            "unknown pass `{name}` (known: {}, optimise)",
            nabla_opt::pass_names().join(", ")
        )
    })?;
    // A pipeline of the one pass hands it the program's analysis.
    nabla_opt::Pipeline::empty()
        .then(pass)
        .run(prog)
        .map_err(|e| e.to_string())
}

/// What one `test:` line asks for.
#[derive(Debug)]
enum Kind {
    Validate,
    ValidateTypes,
    ValidateError(String),
    Interpret(String),
    Pass(Vec<String>),
}

/// An expected outcome of one run of an entry point.
#[derive(Debug)]
enum Outcome {
    Output(String),
    Error(String),
}

#[derive(Debug)]
struct Test {
    kind: Kind,
    /// The `test:` line (0-based), for messages and blessing.
    line: usize,
    /// `input:` lines, each with its expected outcome.
    runs: Vec<(String, Option<Outcome>)>,
    checks: Vec<String>,
    /// The `expect:` block: its text and the lines it spans (the lines
    /// after the `expect:` line, end exclusive).
    expect: Option<(String, usize, usize)>,
}

/// The directive keys.
const KEYS: [&str; 6] = ["test:", "input:", "output:", "error:", "check:", "expect:"];

/// Whether a comment's text is a directive.
fn is_directive(c: &str) -> bool {
    KEYS.iter().any(|k| c.starts_with(k))
}

/// The text of a comment line (`-- text` → `text`), or `None`.
fn comment(line: &str) -> Option<&str> {
    let rest = line.trim_start().strip_prefix("--")?;
    Some(rest.strip_prefix(' ').unwrap_or(rest))
}

/// Reads the directives of a file.
fn directives(lines: &[&str]) -> Result<Vec<Test>, String> {
    let mut tests: Vec<Test> = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let Some(c) = comment(lines[i]) else {
            i += 1;
            continue;
        };
        let c = c.trim_end();
        let at = |what: &str| format!("line {}: {what}", i + 1);
        if let Some(t) = c.strip_prefix("test:") {
            let t = t.trim();
            let (word, arg) = t.split_once(char::is_whitespace).unwrap_or((t, ""));
            let arg = arg.trim().to_string();
            let kind = match word {
                "validate" if arg.is_empty() => Kind::Validate,
                "validate-types" if arg.is_empty() => Kind::ValidateTypes,
                "validate-error" if !arg.is_empty() => Kind::ValidateError(arg),
                "interpret" if !arg.is_empty() => Kind::Interpret(arg),
                "pass" if !arg.is_empty() => Kind::Pass(
                    arg.split(',')
                        .map(|s| s.trim().to_string())
                        .filter(|s| !s.is_empty())
                        .collect(),
                ),
                _ => return Err(at(&format!("unknown test `{t}`"))),
            };
            tests.push(Test {
                kind,
                line: i,
                runs: vec![],
                checks: vec![],
                expect: None,
            });
            i += 1;
            continue;
        }
        let key = KEYS[1..].iter().copied().find(|k| c.starts_with(k));
        let Some(key) = key else {
            // An ordinary comment.
            i += 1;
            continue;
        };
        let arg = c[key.len()..].trim().to_string();
        let Some(test) = tests.last_mut() else {
            return Err(at(&format!("`{key}` before any `test:` line")));
        };
        match key {
            "input:" => test.runs.push((arg, None)),
            "output:" | "error:" => match test.runs.last_mut() {
                Some((_, slot @ None)) => {
                    *slot = Some(if key == "output:" {
                        Outcome::Output(arg)
                    } else {
                        Outcome::Error(arg)
                    })
                }
                _ => return Err(at(&format!("`{key}` without an `input:` before it"))),
            },
            "check:" => test.checks.push(arg),
            _ => {
                // The block: the following comment lines, up to a directive
                // (printed IR has no line that starts like one).
                let start = i + 1;
                let mut end = start;
                while end < lines.len() && comment(lines[end]).is_some_and(|c| !is_directive(c)) {
                    end += 1;
                }
                let text: Vec<&str> = lines[start..end]
                    .iter()
                    .filter_map(|l| comment(l))
                    .collect();
                test.expect = Some((text.join("\n"), start, end));
                i = end;
                continue;
            }
        }
        i += 1;
    }
    Ok(tests)
}

/// Lines with runs of whitespace made one space, blank lines dropped.
fn normalise(text: &str) -> Vec<String> {
    text.lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|l| !l.is_empty())
        .collect()
}

/// A line diff (`-` expected, `+` actual, ` ` both) by longest common
/// subsequence.
fn diff(expected: &[String], actual: &[String]) -> String {
    let (n, m) = (expected.len(), actual.len());
    if n * m > 4_000_000 {
        return format!(
            "expected:\n{}\nactual:\n{}",
            expected.join("\n"),
            actual.join("\n")
        );
    }
    // lcs[i][j]: common subsequence length of expected[i..] and actual[j..].
    let mut lcs = vec![vec![0usize; m + 1]; n + 1];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            lcs[i][j] = if expected[i] == actual[j] {
                lcs[i + 1][j + 1] + 1
            } else {
                lcs[i + 1][j].max(lcs[i][j + 1])
            };
        }
    }
    let (mut i, mut j) = (0, 0);
    let mut out = String::new();
    while i < n || j < m {
        if i < n && j < m && expected[i] == actual[j] {
            out.push_str(&format!("  {}\n", expected[i]));
            i += 1;
            j += 1;
        } else if i < n && (j == m || lcs[i + 1][j] >= lcs[i][j + 1]) {
            out.push_str(&format!("- {}\n", expected[i]));
            i += 1;
        } else {
            out.push_str(&format!("+ {}\n", actual[j]));
            j += 1;
        }
    }
    out
}

fn validation_errors(prog: &Program) -> Vec<String> {
    validation_errors_where(prog, |_| true)
}

/// The validation errors that `keep` accepts.
fn validation_errors_where(
    prog: &Program,
    keep: impl Fn(&nabla_ir::ValidationError) -> bool,
) -> Vec<String> {
    match validate_program(prog) {
        Ok(_) => vec![],
        Err(es) => es
            .iter()
            .filter(|e| keep(e))
            .map(|e| e.to_string())
            .collect(),
    }
}

/// Runs an entry point on textual input; the results or the error message.
fn interpret(prog: &Program, entry: &str, input: &str) -> Result<Vec<nabla_values::Value>, String> {
    let ep = prog
        .entry(entry)
        .ok_or_else(|| format!("no entry point `{entry}`"))?;
    let f = prog
        .functions
        .get(ep.fun.0 as usize)
        .ok_or("the entry point names a missing function")?;
    let types: Vec<ValueType> = f
        .params
        .iter()
        .map(|p| ValueType::new(p.ty.elem(), p.ty.rank()))
        .collect();
    let args = read_values_text(input, Some(&types)).map_err(|e| format!("bad input: {e}"))?;
    nabla_interp::run_entry(prog, entry, args).map_err(|e| e.message)
}

/// Runs one test; `Err` says what failed. `bless` receives the new text of
/// an expect block.
fn run_test(
    prog: &Program,
    test: &Test,
    bless: &mut Option<(usize, usize, String)>,
) -> Result<(), String> {
    match &test.kind {
        Kind::Validate => {
            let errs = validation_errors(prog);
            if !errs.is_empty() {
                return Err(format!("does not validate:\n  {}", errs.join("\n  ")));
            }
        }
        Kind::ValidateTypes => {
            let errs = validation_errors_where(prog, |e| !e.is_size_error());
            if !errs.is_empty() {
                return Err(format!("does not validate:\n  {}", errs.join("\n  ")));
            }
        }
        Kind::ValidateError(text) => {
            let errs = validation_errors(prog);
            if errs.is_empty() {
                return Err(format!(
                    "validates, but an error containing `{text}` was expected"
                ));
            }
            if !errs.iter().any(|e| e.contains(text.as_str())) {
                return Err(format!(
                    "no validation error contains `{text}`; the errors:\n  {}",
                    errs.join("\n  ")
                ));
            }
        }
        Kind::Interpret(entry) => {
            if test.runs.is_empty() {
                return Err("no `input:` lines".into());
            }
            let errs = validation_errors(prog);
            if !errs.is_empty() {
                return Err(format!("does not validate:\n  {}", errs.join("\n  ")));
            }
            check_runs(prog, entry, &test.runs)?;
        }
        Kind::Pass(names) => {
            if test.checks.is_empty() && test.expect.is_none() && bless.is_none() {
                return Err("no `check:` lines or `expect:` block".into());
            }
            let mut p = prog.clone();
            for name in names {
                run_pass(name, &mut p)?;
            }
            let errs = validation_errors(&p);
            if !errs.is_empty() {
                return Err(format!(
                    "the result of {} does not validate:\n  {}\n{}",
                    names.join(","),
                    errs.join("\n  "),
                    print_program(&p)
                ));
            }
            let text = print_program(&p);
            let actual = normalise(&text);
            // `check:` lines: each found in a later line than the previous one.
            let mut from = 0;
            for c in &test.checks {
                let want = c.split_whitespace().collect::<Vec<_>>().join(" ");
                match actual[from..].iter().position(|l| l.contains(&want)) {
                    Some(k) => from += k + 1,
                    None => {
                        return Err(format!(
                            "`check: {c}` not found (after line {from} of the output):\n{text}"
                        ))
                    }
                }
            }
            // `input:` lines: the transformed program's `main` runs on them.
            check_runs(&p, "main", &test.runs)?;
            if let Some(b) = bless {
                // Blessing: the caller rewrites the block with this text.
                b.2 = text.clone();
                if let Some((_, start, end)) = &test.expect {
                    b.0 = *start;
                    b.1 = *end;
                }
                return Ok(());
            }
            if let Some((want, _, _)) = &test.expect {
                let expected = normalise(want);
                if expected != actual {
                    return Err(format!(
                        "output differs from the expect block (- expected, + actual):\n{}",
                        diff(&expected, &actual)
                    ));
                }
            }
        }
    }
    Ok(())
}

/// Runs every test of one file; returns the failures. With `bless`, rewrites
/// the file's expect blocks.
fn run_file(path: &Path, bless: bool) -> Result<usize, Vec<String>> {
    let text = std::fs::read_to_string(path).map_err(|e| vec![format!("cannot read: {e}")])?;
    let lines: Vec<&str> = text.lines().collect();
    let tests = directives(&lines).map_err(|e| vec![e])?;
    if tests.is_empty() {
        return Err(vec!["no `-- test:` line".into()]);
    }
    let prog = parse_program(&text).map_err(|e| vec![format!("does not parse: {e}")])?;
    let mut failures = Vec::new();
    // (line index to insert or replace at, end, new text) per blessed test.
    let mut edits: Vec<(usize, usize, String)> = Vec::new();
    for t in &tests {
        // Blessing rewrites an expect block, or adds one to a pass test
        // that has no expectation at all.
        let blessable = t.expect.is_some() || t.checks.is_empty();
        let mut b = if bless && blessable && matches!(t.kind, Kind::Pass(_)) {
            Some((t.line + 1, t.line + 1, String::new()))
        } else {
            None
        };
        let insert = t.expect.is_none();
        match run_test(&prog, t, &mut b) {
            Ok(()) => {
                if let Some((start, end, new)) = b {
                    let mut block: String = new
                        .lines()
                        .map(|l| {
                            if l.is_empty() {
                                "--\n".to_string()
                            } else {
                                format!("-- {l}\n")
                            }
                        })
                        .collect();
                    if insert {
                        block = format!("-- expect:\n{block}");
                    }
                    edits.push((start, end, block));
                }
            }
            Err(e) => failures.push(format!(
                "test on line {} (`{}`): {e}",
                t.line + 1,
                lines[t.line].trim()
            )),
        }
    }
    if !edits.is_empty() {
        edits.sort_by_key(|e| std::cmp::Reverse(e.0));
        let mut out: Vec<String> = lines.iter().map(|l| format!("{l}\n")).collect();
        for (start, end, block) in edits {
            out.splice(start..end.min(out.len()), [block]);
        }
        if let Err(e) = std::fs::write(path, out.concat()) {
            failures.push(format!("cannot bless: {e}"));
        }
    }
    if failures.is_empty() {
        Ok(tests.len())
    } else {
        Err(failures)
    }
}

fn nir_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<PathBuf> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            nir_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "nir") {
            out.push(p);
        }
    }
}

/// The fewest files the directory may hold (no silent pass on an empty or
/// missing directory).
const MIN_FILES: usize = 30;

#[test]
fn ir_filetests() {
    let bless = std::env::var("NABLA_BLESS").is_ok_and(|v| v == "1");
    let mut files = Vec::new();
    nir_files(&ir_dir(), &mut files);
    let mut failures = Vec::new();
    let mut tests = 0;
    for f in &files {
        let name = f.strip_prefix(ir_dir()).unwrap_or(f).display().to_string();
        match run_file(f, bless) {
            Ok(n) => tests += n,
            Err(es) => {
                for e in es {
                    failures.push(format!("tests/ir/{name}: {e}"));
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} filetest failure(s):\n\n{}",
        failures.len(),
        failures.join("\n\n")
    );
    assert!(
        files.len() >= MIN_FILES,
        "only {} .nir files under tests/ir (expected at least {MIN_FILES})",
        files.len()
    );
    println!("{} files, {tests} tests", files.len());
}

#[test]
fn directive_reader_and_diff() {
    let lines = [
        "-- test: interpret main",
        "-- input: 1i32",
        "-- output: 2i32",
        "-- a comment",
        "-- test: pass simplify",
        "-- check: let",
        "-- expect:",
        "-- fun f",
        "--",
        "-- }",
        "-- test: validate",
        "fun f (): () = {",
    ];
    let t = directives(&lines).unwrap();
    assert_eq!(t.len(), 3);
    assert!(matches!(&t[0].kind, Kind::Interpret(e) if e == "main"));
    assert_eq!(t[0].runs.len(), 1);
    assert_eq!(t[1].checks, vec!["let"]);
    assert_eq!(t[1].expect.as_ref().map(|e| (e.1, e.2)), Some((7, 10)));
    assert!(directives(&["-- input: 1"]).is_err());
    assert!(directives(&["-- test: frobnicate"]).is_err());
    let a: Vec<String> = ["x", "y", "z"].iter().map(|s| s.to_string()).collect();
    let b: Vec<String> = ["x", "w", "z"].iter().map(|s| s.to_string()).collect();
    assert_eq!(diff(&a, &b), "  x\n- y\n+ w\n  z\n");
}

/// Runs entry point `entry` of `prog` on each input and compares with the
/// expected output or error.
fn check_runs(
    prog: &Program,
    entry: &str,
    runs: &[(String, Option<Outcome>)],
) -> Result<(), String> {
    for (input, outcome) in runs {
        let got = interpret(prog, entry, input);
        match (outcome, got) {
            (None, _) => return Err(format!("input `{input}` has no `output:` or `error:`")),
            (Some(Outcome::Output(out)), Ok(vals)) => {
                let f = &prog.functions[prog.entry(entry).map_or(0, |e| e.fun.0 as usize)];
                let types: Vec<ValueType> = f
                    .ret
                    .iter()
                    .map(|t| ValueType::new(t.elem(), t.rank()))
                    .collect();
                let expected = read_values_text(out.as_str(), Some(&types))
                    .map_err(|e| format!("bad expected output `{out}`: {e}"))?;
                if let Err(m) = compare_value_lists(&expected, &vals) {
                    let shown: Vec<String> =
                        vals.iter().map(nabla_values::write_value_text).collect();
                    return Err(format!(
                        "input `{input}`: {m}\n  expected: {out}\n  actual:   {}",
                        shown.join(" ")
                    ));
                }
            }
            (Some(Outcome::Output(out)), Err(e)) => {
                return Err(format!(
                    "input `{input}`: expected `{out}`, got the error: {e}"
                ))
            }
            (Some(Outcome::Error(text)), Err(e)) => {
                if !e.contains(text.as_str()) {
                    return Err(format!(
                        "input `{input}`: the error `{e}` does not contain `{text}`"
                    ));
                }
            }
            (Some(Outcome::Error(text)), Ok(vals)) => {
                let shown: Vec<String> = vals.iter().map(nabla_values::write_value_text).collect();
                return Err(format!(
                    "input `{input}`: expected an error containing `{text}`, got {}",
                    shown.join(" ")
                ));
            }
        }
    }
    Ok(())
}
