//! Unit tests of the module pass: which flat declarations come out and what
//! the names in them were resolved to.

use crate::expand_modules;
use nabla_syntax::ast::{Dec, Program};
use nabla_syntax::parser::dump;
use nabla_syntax::{parse_file, SourceMap};
use std::path::PathBuf;

/// Expands one file; `Ok` holds `name = body` for each value declaration
/// (and `type name = def` for types), in order.
fn expand(src: &str) -> Result<Vec<String>, Vec<String>> {
    let mut sources = SourceMap::new();
    let file = sources.add(PathBuf::from("<test>"), src.to_string());
    let mut next_id = 0;
    let prog: Program =
        parse_file(&sources, file, &mut next_id).unwrap_or_else(|d| panic!("parse error: {d:?}"));
    let out = expand_modules(&sources, vec![prog], &mut next_id)
        .map_err(|ds| ds.into_iter().map(|d| d.message).collect::<Vec<_>>())?;
    let mut lines = Vec::new();
    for d in &out[0].decs {
        let d = match d {
            Dec::Local(d, _) => d.as_ref(),
            d => d,
        };
        match d {
            Dec::Val(vb) => lines.push(format!("{} = {}", vb.name.name, dump::expr(&vb.body))),
            Dec::Type(tb) => lines.push(format!("type {} = {}", tb.name.name, dump::ty(&tb.def))),
            Dec::Import(p, _) => lines.push(format!("import {p}")),
            other => panic!("left in the output: {other:?}"),
        }
    }
    Ok(lines)
}

fn expand_ok(src: &str) -> Vec<String> {
    expand(src).unwrap_or_else(|e| panic!("{src}: {e:?}"))
}

fn expand_err(src: &str) -> String {
    match expand(src) {
        Ok(out) => panic!("expected an error, got {out:?}"),
        Err(es) => es.join("\n"),
    }
}

fn has(out: &[String], line: &str) -> bool {
    out.iter().any(|l| l == line)
}

#[test]
fn members_get_qualified_flat_names() {
    let out =
        expand_ok("module M = { def x = 1  def y = x  module N = { def z = y } }\ndef w = M.N.z");
    let names: Vec<&str> = out.iter().map(|l| l.split(" = ").next().unwrap()).collect();
    assert_eq!(names, ["M.x", "M.y", "M.N.z", "w"]);
    assert!(out[1].ends_with("M.x"), "{out:?}");
    assert!(out[3].ends_with("M.N.z"), "{out:?}");
}

#[test]
fn locals_shadow_module_members() {
    let out = expand_ok(
        "module M = { def x = 1  def f (x: i32) = x  def g = let x = 2 in x  def h = \\x -> x }\nopen M\ndef k (x: i32) = x",
    );
    for l in &out {
        let body = l.split(" = ").nth(1).unwrap();
        if l.starts_with("M.f") || l.starts_with("M.h") || l.starts_with("k ") {
            assert!(!body.contains("M.x"), "{l}");
        }
    }
}

#[test]
fn later_definitions_shadow_opened_names() {
    let out = expand_ok("module M = { def x = 1 }\nopen M\ndef a = x\ndef x = 2\ndef b = x");
    assert!(out[1].ends_with("M.x"), "{out:?}");
    assert!(out[3].ends_with("x") && !out[3].ends_with("M.x"), "{out:?}");
}

#[test]
fn functor_application_expands_the_body_per_application() {
    let out = expand_ok(
        "module mk (P: { val v: i32 }) = { def w = P.v }\nmodule A = mk { def v = 1i32 }\nmodule B = mk { def v = 2i32 }",
    );
    assert!(has(&out, "A.P.v = 1i32"), "{out:?}");
    assert!(has(&out, "A.w = A.P.v"), "{out:?}");
    assert!(has(&out, "B.w = B.P.v"), "{out:?}");
}

#[test]
fn builtin_module_arguments_map_to_builtin_names() {
    let out = expand_ok(
        "module mk (R: { type t  val sqrt: t -> t }) = { type u = R.t  def f (x: R.t) = R.sqrt x }\nmodule F = mk f32",
    );
    assert!(has(&out, "type F.u = f32"), "{out:?}");
    assert!(
        out.iter()
            .any(|l| l.starts_with("F.f =") && l.contains("f32.sqrt")),
        "{out:?}"
    );
}

#[test]
fn local_open_is_removed() {
    let out = expand_ok("module M = { def k = 3 }\ndef a = M.(k + 1)\ndef b = f64.(sqrt 2.0)");
    assert!(out[1].contains("M.k") && !out[1].contains("M.("), "{out:?}");
    assert!(out[2].contains("f64.sqrt"), "{out:?}");
}

#[test]
fn record_puns_of_module_members_keep_their_field_names() {
    let out = expand_ok("module M = { def k = 3  def r = {k} }");
    assert_eq!(out[1], "M.r = (record (k M.k))");
}

#[test]
fn ascription_checks_and_hides() {
    let e = expand_err("module type S = { val x: i32  type t }\nmodule M : S = { def x = 1 }");
    assert!(e.contains("does not define the type `t`"), "{e}");
    let e = expand_err(
        "module type S = { val x: i32 }\nmodule M : S = { def x = 1i32  def y = 2 }\ndef z = M.y",
    );
    assert!(e.contains("has no member `y`"), "{e}");
}

#[test]
fn errors_for_unknown_modules_and_bad_applications() {
    let e = expand_err("open Nowhere");
    assert!(e.contains("unknown module `Nowhere`"), "{e}");
    let e = expand_err("module M = { def x = 1 }\nmodule N = M M");
    assert!(e.contains("only a parametric module can be applied"), "{e}");
    let e = expand_err("module F (X: { val v: i32 }) = X\nopen F");
    assert!(e.contains("parametric module"), "{e}");
    let e = expand_err("module type S = { type t }\nmodule type T = S with u = i32");
    assert!(
        e.contains("\"u\" is not an abstract type in the module type."),
        "{e}"
    );
}

#[test]
fn deep_module_nesting_does_not_overflow() {
    let depth = 100;
    let mut src = String::new();
    for i in 0..depth {
        src.push_str(&format!("module M{i} = {{ "));
    }
    src.push_str("def x = 1");
    for _ in 0..depth {
        src.push_str(" }");
    }
    let out = expand_ok(&src);
    assert_eq!(out.len(), 1);
    assert!(out[0].starts_with("M0.M1.M2."), "{out:?}");
}

#[test]
fn the_same_module_path_twice_gets_distinct_names() {
    // (A `local` declaration may be redefined by a later one.)
    let out = expand_ok("local module M = { def x = 1 }\nmodule M = { def x = 2 }\ndef y = M.x");
    assert_eq!(out[0], "M.x = 1");
    assert_eq!(out[1], "M.x#2 = 2");
    assert_eq!(out[2], "y = M.x#2");
}

#[test]
fn val_specifications_become_declarations_of_their_types() {
    let out = expand_ok(
        "module type S = { type t  val f: t -> i32  val g 'a: a -> a  val h [n]: [n]t -> t }\n\
         module M : S = { type t = f64  def f (x: t) = i32.f64 x  def g 'a (x: a) = x  def h [n] (xs: [n]t) = xs[0] }",
    );
    // Each specification gets a declaration of its type (over the
    // module's own types), matched against the member after type checking.
    for n in ["f", "g", "h"] {
        assert!(
            has(&out, &format!("M.{n}.<spec> = (app ??? ())")),
            "{out:?}"
        );
    }
}

#[test]
fn functors_keep_the_names_of_their_definition_site() {
    let out = expand_ok(
        "local def helper = 1i32\nmodule mk (X: {}) = { def v = helper }\ndef helper = 2i32\nmodule A = mk {}\ndef w = helper",
    );
    assert!(has(&out, "<test>.helper = 1i32"), "{out:?}");
    assert!(has(&out, "helper = 2i32"), "{out:?}");
    assert!(has(&out, "A.v = <test>.helper"), "{out:?}");
    assert!(has(&out, "w = helper"), "{out:?}");
}

#[test]
fn types_and_values_have_separate_namespaces() {
    let out = expand_ok("type t = i32\ndef t : t = 1");
    assert_eq!(out, ["type t = i32", "t = 1"]);
}

/// The sealed expansion of one file: `name = body` lines as in [`expand`],
/// or `None` when there is nothing to seal.
fn expand_sealed(src: &str) -> Option<Vec<String>> {
    let mut sources = SourceMap::new();
    let file = sources.add(PathBuf::from("<test>"), src.to_string());
    let mut next_id = 0;
    let prog: Program =
        parse_file(&sources, file, &mut next_id).unwrap_or_else(|d| panic!("parse error: {d:?}"));
    let out = crate::expand_modules_sealed(&sources, vec![prog], &mut next_id)
        .unwrap_or_else(|d| panic!("{d:?}"))?;
    Some(
        out.files[0]
            .decs
            .iter()
            .map(|d| match d {
                Dec::Val(vb) => format!(
                    "{} : {} = {}",
                    vb.name.name,
                    vb.ret.as_ref().map(dump::ty).unwrap_or_default(),
                    dump::expr(&vb.body)
                ),
                Dec::Type(tb) => format!("type {} = {}", tb.name.name, dump::ty(&tb.def)),
                other => panic!("left in the output: {other:?}"),
            })
            .collect(),
    )
}

#[test]
fn sealing_makes_abstract_types_new_and_values_declarations() {
    let out = expand_sealed(
        "module type S = { type t  type^ u = t -> t  val f: i32 -> t  val g: u }\n\
         module M : S = { type t = i32  type^ u = t -> t  def f (x: i32) = x  def g (x: t) = x }\n\
         def use = M.g (M.f 1)",
    )
    .expect("M hides a type");
    let text = out.join("\n");
    // The new type is a sum whose constructor no program can write.
    assert!(text.contains("type M.t#2 = "), "{text}");
    assert!(text.contains("abstract M.t#2"), "{text}");
    // `u` is redefined over the sealed `t`; the values are declarations
    // of their specified types, used by the rest of the program.
    assert!(text.contains("type M.u#2 = "), "{text}");
    assert!(text.contains("M.f#2 : "), "{text}");
    assert!(text.contains("M.g#2 : M.u#2"), "{text}");
    assert!(out.last().unwrap().contains("M.g#2"), "{text}");
    // A refinement keeps the type transparent: nothing to seal.
    assert!(expand_sealed(
        "module type S = { type t  val f: t -> t }\n\
         module M : S with t = i32 = { type t = i32  def f (x: t) = x }"
    )
    .is_none());
    // A functor argument is not sealed: the application's body uses the
    // argument's own `x` (only the body's check uses a made-up `P`).
    let out = expand_sealed(
        "module F (P: { type t  val x: t }) = { def y = P.x }\n\
         module N = F { type t = i32  def x = 1i32 }",
    )
    .expect("F's parameter hides a type");
    let text = out.join("\n");
    assert!(out.contains(&"N.y :  = N.P.x".to_string()), "{text}");
    assert!(out.contains(&"type N.P.t = i32".to_string()), "{text}");
}

#[test]
fn sealing_checks_functor_bodies_against_their_parameters() {
    // A functor that is never applied still has its body expanded once,
    // with `P` made from its module type: `P.t` is a new type there.
    let out = expand_sealed(
        "module F (P: { type t  val x: t }) = { def y = P.x }\nmodule type S = { type u }",
    )
    .expect("P hides a type");
    let text = out.join("\n");
    assert!(text.contains("type F.P.t = "), "{text}");
    assert!(text.contains("abstract F.P.t"), "{text}");
    assert!(text.contains("F.P.x : F.P.t"), "{text}");
    assert!(text.contains("F.y : "), "{text}");
    assert!(text.contains("= F.P.x"), "{text}");
}

#[test]
fn open_makes_the_opened_names_members_unless_local() {
    let out =
        expand_ok("module A = { def x = 1 }\nmodule B = { open A  def y = x }\ndef z = B.x + B.y");
    assert!(has(&out, "z = (+ A.x B.y)"), "{out:?}");
    let e = expand_err("module A = { def x = 1 }\nmodule B = { local open A }\ndef z = B.x");
    assert!(e.contains("has no member `x`"), "{e}");
}

#[test]
fn a_module_may_not_define_a_name_twice() {
    let e = expand_err("def x = 1\ndef x = 2");
    assert!(e.contains("Duplicate definition of value `x`"), "{e}");
    // Values and modules share a name space; types have their own.
    let e = expand_err("module M = { module x = {}  def x = 2 }");
    assert!(e.contains("Duplicate definition of value `x`"), "{e}");
    expand_ok("type t = i32\ndef t = 1\nmodule m = { def t = 1 }");
    // `local` declarations and opened names may be shadowed.
    expand_ok("local def x = 1\ndef x = 2\nmodule A = { def y = 1 }\nopen A\ndef y = 3");
    let e = expand_err("module type S = { type t  val x: i32  type t }");
    assert!(e.contains("Duplicate definition of type `t`"), "{e}");
}

#[test]
fn the_intrinsics_module_is_no_module_expression() {
    let e = expand_err("module M = intrinsics");
    assert!(
        e.contains("The 'intrinsics' module may not be used in module expressions."),
        "{e}"
    );
}

#[test]
fn a_qualified_name_before_its_module_is_unknown() {
    let e = expand_err("def f (x: i32) = M.g x\nmodule M = { def g (x: i32) = x }");
    assert!(e.contains("Unknown name \"M.g\""), "{e}");
    // A field of a record value is left to the type checker.
    expand_ok("def r = {a = 1}\ndef f = r.a\ndef g = intrinsics.foo");
}

#[test]
fn abstract_types_are_matched_for_liftedness_parameters_and_sizes() {
    let e = expand_err("module M : { type t } = { type^ t = i32 -> i32 }");
    assert!(
        e.contains("type^ t = i32 -> i32\nbut module type requires a non-lifted type."),
        "{e}"
    );
    let e = expand_err("module M : { type~ t } = { type^ t = [2](i32 -> i32) }");
    // (the array of functions is reported first)
    assert!(e.contains("Cannot create array"), "{e}");
    let e = expand_err("module M : { type t 'a } = { type t = i32 }");
    assert!(
        e.contains("type t = i32\nbut module type requires\n  type t 'a"),
        "{e}"
    );
    let e = expand_err("module M : { type t [n] } = { type t [n] = [n + 1]i32 }");
    assert!(
        e.contains("cannot be made abstract because size parameter\n  n\n"),
        "{e}"
    );
    // A size-lifted abstract type may be defined with anonymous sizes, a
    // type parameter may be more lifted than specified.
    expand_ok("module M : { type~ t  type u '~a } = { type~ t = []i32  type u '^a = i32 }");
}

#[test]
fn defined_types_must_be_defined_as_specified() {
    let e = expand_err(
        "module type S = { type t  type s = t }\nmodule M : S = { type t = f32  type s = i32 }",
    );
    assert!(
        e.contains("type s = i32\nbut module type requires\n  type s = f32"),
        "{e}"
    );
    // Parameters are compared by position, abbreviations expanded.
    expand_ok("type pair 'a = (a, a)\nmodule M : { type t 'x = pair x } = { type t 'y = (y, y) }");
    let e = expand_err(
        "module type S = { module inner: { type t } }\nmodule M : S with inner.t = bool = { module inner = { type t = i32 } }",
    );
    assert!(
        e.contains("type inner.t = i32\nbut module type requires\n  type inner.t = bool"),
        "{e}"
    );
}

#[test]
fn refinements_follow_futharks_rules() {
    let e = expand_err("module type S = { type t }\nmodule type T = S with t 'a = a");
    assert!(
        e.contains(
            "Cannot refine a type having type parameters 'a with a type having no type parameters."
        ),
        "{e}"
    );
    let e = expand_err("module type S = { type t '^a }\nmodule type T = S with t 'a = a");
    assert!(e.contains("Cannot refine a type having"), "{e}");
    let e = expand_err("module type S = { type t }\nmodule type T = S with t = []i32");
    assert!(
        e.contains("Anonymous dimensions are not allowed here."),
        "{e}"
    );
    // Inside a module type, a refinement names the earlier specifications.
    expand_ok(
        "module type arrow = { type a  type b }\n\
         module type two = { module F: arrow  module G: arrow with a = F.b }\n\
         module M : two = { module F = { type a = i32  type b = f64 }  module G = { type a = f64  type b = i32 } }",
    );
    let e = expand_err(
        "module type arrow = { type a  type b }\n\
         module type two = { module F: arrow  module G: arrow with a = F.b }\n\
         module M : two = { module F = { type a = i32  type b = f64 }  module G = { type a = i32  type b = i32 } }",
    );
    assert!(
        e.contains("type G.a = i32\nbut module type requires\n  type G.a = f64"),
        "{e}"
    );
}

#[test]
fn specifications_are_checked_where_the_module_type_is_written() {
    let e = expand_err("module type S = { val f : []i32 -> i32 }");
    assert!(
        e.contains("All function parameters must have non-anonymous sizes."),
        "{e}"
    );
    expand_ok("module type S = { val f [n] : [n]i32 -> []i32 }");
    let e = expand_err("module type S = { val f : (x: i32) -> (x: i32) -> i32 }");
    assert!(e.contains("\"x\" is named twice"), "{e}");
    let e = expand_err("module type S = { type t 'a 'a }");
    assert!(e.contains("Type parameter \"a\" previously defined"), "{e}");
    let e = expand_err("module type S = { type^ t  type u = t }");
    assert!(
        e.contains("Non-lifted type abbreviations may not contain functions."),
        "{e}"
    );
    let e = expand_err("module type S = { val x : nope }");
    assert!(e.contains("Unknown type \"nope\""), "{e}");
}

#[test]
fn a_functor_ascribed_a_functor_type_gives_its_results_that_type() {
    let out = expand_ok(
        "module F = (\\(X: { val x: i32 }) -> { def y = X.x  def z = 1i32 }) : (X: { val x: i32 }) -> { val y: i32 }\n\
         module A = F { def x = 2i32 }\ndef w = A.y",
    );
    assert!(has(&out, "w = A.y"), "{out:?}");
    let e = expand_err(
        "module F = (\\(X: { val x: i32 }) -> { def y = X.x  def z = 1i32 }) : (X: { val x: i32 }) -> { val y: i32 }\n\
         module A = F { def x = 2i32 }\ndef w = A.z",
    );
    assert!(e.contains("has no member `z`"), "{e}");
}

/// Expands and type-checks `src` after the prelude and matches the value
/// specifications: the messages of the errors.
fn check_values(src: &str) -> Vec<String> {
    let mut sources = SourceMap::new();
    let pre = sources.add(
        PathBuf::from("<prelude>"),
        nabla_typeck::PRELUDE_SOURCE.to_string(),
    );
    let file = sources.add(PathBuf::from("<test>"), src.to_string());
    let mut next_id = 0;
    let p0 = parse_file(&sources, pre, &mut next_id).unwrap();
    let p1 = parse_file(&sources, file, &mut next_id).unwrap();
    let mut ex = crate::expand_program(&sources, vec![p0, p1], &mut next_id)
        .unwrap_or_else(|d| panic!("{d:?}"));
    let _ = nabla_typeck::check_program(&sources, &mut ex.files);
    let diags = ex.value_checks.check(&ex.files);
    ex.value_checks.remove_declarations(&mut ex.files);
    assert!(ex.files[1]
        .decs
        .iter()
        .all(|d| !matches!(d, Dec::Val(vb) if vb.name.name.contains("<spec>"))));
    diags.into_iter().map(|d| d.message).collect()
}

#[test]
fn values_are_matched_against_their_specifications_after_type_checking() {
    let e = check_values("module M : { val x : bool } = { def x = 1i32 }");
    assert_eq!(
        e,
        ["Module type specifies\n  val x : bool\nbut module provides\n  val x : i32"]
    );
    // Specified type parameters are rigid, the member's instantiated.
    assert!(check_values("module M : { val f 'a : a -> a } = { def f 'b (x: b) = x }").is_empty());
    let e =
        check_values("module M : { val f 'a 'b : a -> b -> a } = { def f 'a (x: a) (_: a) = x }");
    assert_eq!(e.len(), 1, "{e:?}");
    // A lifted type parameter may not instantiate a non-lifted one.
    let e = check_values("module M : { val f '^a : a -> a } = { def f 'a (x: a) = x }");
    assert_eq!(e.len(), 1, "{e:?}");
    // Uniqueness: results may be more unique, parameters consumed less.
    assert!(check_values(
        "module M : { val f [n] : *[n]i32 -> [n]i32 } = { def f [n] (xs: [n]i32) : *[n]i32 = copy xs }"
    )
    .is_empty());
    let e = check_values(
        "module M : { val f [n] : [n]i32 -> *[n]i32 } = { def f [n] (xs: [n]i32) : [n]i32 = xs }",
    );
    assert_eq!(e.len(), 1, "{e:?}");
    // Sizes: the specification's are rigid; an existential result may be
    // any size; an abstract size-lifted type's are no particular size.
    let e = check_values(
        "module M : { val f [n] [m] : [n][m]i32 -> i64 } = { def f [k] (_: [k][k]i32) = k }",
    );
    assert_eq!(e.len(), 1, "{e:?}");
    assert!(check_values(
        "module M : { val f : i64 -> []i64 } = { def f (n: i64) : [3]i64 = iota 3 }"
    )
    .is_empty());
    let e = check_values(
        "module M : { type~ t  val f : t -> i64 } = { type~ t = [][]i32  def f [k] (_: [k][k]i32) = k }",
    );
    assert_eq!(e.len(), 1, "{e:?}");
}
