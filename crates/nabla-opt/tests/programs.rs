//! The optimiser on real programs: every corpus and example program's IR
//! stays valid (sizes included) and gets no bigger in calls; the example
//! `dotprod.fut` loses its function call. Every program compiles except
//! those of tests/errors/ that are meant not to.

use nabla_ir::{print_program, validate_program, Exp, Program};
use std::path::{Path, PathBuf};

fn elaborate(path: &Path) -> Option<Program> {
    let checked = nabla::check(path).ok()?;
    nabla_elab::elaborate(&checked.files).ok()
}

fn calls(p: &Program) -> usize {
    p.functions
        .iter()
        .map(|f| {
            let mut n = 0;
            count_calls(&f.body, &mut n);
            n
        })
        .sum()
}

fn count_calls(b: &nabla_ir::Body, n: &mut usize) {
    for s in &b.stms {
        match &s.exp {
            Exp::Apply(..) => *n += 1,
            Exp::If { then_, else_, .. } => {
                count_calls(then_, n);
                count_calls(else_, n);
            }
            Exp::Loop { body, .. } => count_calls(body, n),
            Exp::Soac(nabla_ir::Soac::Map { lam, .. })
            | Exp::Soac(nabla_ir::Soac::Reduce { lam, .. })
            | Exp::Soac(nabla_ir::Soac::Scan { lam, .. })
            | Exp::Soac(nabla_ir::Soac::Hist { lam, .. })
            | Exp::Jvp { lam, .. }
            | Exp::Vjp { lam, .. } => count_calls(&lam.body, n),
            _ => {}
        }
    }
}

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

#[test]
fn dotprod_gets_simpler() {
    let path = repo().join("examples/dotprod.fut");
    let Some(before) = elaborate(&path) else {
        panic!("examples/dotprod.fut does not compile")
    };
    let mut after = before.clone();
    nabla_opt::optimise(&mut after);
    validate_program(&after).expect("valid");
    let text = print_program(&after);
    assert_eq!(before.functions.len(), 2);
    assert_eq!(calls(&before), 2);
    // `dot` is inlined at both call sites and removed.
    assert_eq!(after.functions.len(), 1, "{text}");
    assert_eq!(calls(&after), 0, "{text}");
    assert!(!text.contains("dot("), "{text}");
    // The size check on entry to `dot` is statically true at both calls.
    assert_eq!(text.matches("assert_eq_sizes").count(), 1, "{text}");
    // The entry point keeps its signature.
    assert_eq!(after.functions[0].params, before.functions[0].params);
    assert_eq!(after.functions[0].ret, before.functions[0].ret);
    assert_eq!(after.entries, before.entries);
}

fn fut_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let rd = std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    for e in rd.flatten() {
        let p = e.path();
        if p.is_dir() {
            fut_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "fut") {
            out.push(p);
        }
    }
}

#[test]
fn every_program_stays_valid_and_loses_calls() {
    let mut files = Vec::new();
    for d in ["tests", "examples", "gradbench"] {
        fut_files(&repo().join(d), &mut files);
    }
    files.sort();
    let mut checked = 0;
    for f in &files {
        // Only the programs of tests/errors/ may be rejected (on purpose:
        // they test the front end's diagnostics).
        let Some(before) = elaborate(f) else {
            assert!(
                f.starts_with(repo().join("tests/errors")),
                "{} does not compile",
                f.display()
            );
            continue;
        };
        if let Err(es) = validate_program(&before) {
            panic!("{}: elaborated IR invalid: {es:?}", f.display());
        }
        let mut after = before.clone();
        nabla_opt::optimise(&mut after);
        if let Err(es) = validate_program(&after) {
            panic!(
                "{}: optimised IR invalid: {}",
                f.display(),
                es.iter()
                    .map(|e| e.to_string())
                    .collect::<Vec<_>>()
                    .join("; ")
            );
        }
        assert!(calls(&after) <= calls(&before), "{}", f.display());
        assert_eq!(after.entries.len(), before.entries.len());
        for (ea, eb) in after.entries.iter().zip(&before.entries) {
            let (fa, fb) = (after.function(ea.fun), before.function(eb.fun));
            assert_eq!(
                (&fa.params, &fa.ret),
                (&fb.params, &fb.ret),
                "{}",
                f.display()
            );
        }
        checked += 1;
    }
    assert!(checked > 20, "only {checked} programs compiled");
}
