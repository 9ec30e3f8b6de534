//! Elaboration: checked AST → core IR. See [`elaborate`].
//!
//! The translation follows the usual Futhark compiler pipeline in one pass:
//!
//! * **Monomorphisation**: polymorphic definitions are instantiated per
//!   concrete type (from the type checker's `inst` annotations); each
//!   first-order instantiation becomes one cached IR [`nabla_ir::Function`].
//! * **Defunctionalisation by static values** (Hovgaard, Henriksen, Elsman:
//!   "High-performance defunctionalisation in Futhark", TFP 2018): function
//!   values are known statically (a lambda with its captured environment, a
//!   global, a partial application, an operator section, an intrinsic), and
//!   applying one inlines its body. SOAC arguments become IR lambdas.
//! * **Flattening of types**: records/tuples become their components in field
//!   order, arrays of records one array per component, sum types an `i8` tag
//!   (constructor index in sorted order) followed by the payloads of every
//!   constructor (blank for inactive ones); unit has no values.
//! * **A-normal form**: every intermediate value is bound by a statement with
//!   its IR type and the span of the source expression.

mod accs;
mod elab;
mod fb;
mod intrin;

use nabla_syntax::{ast, Diagnostic};

/// Elaborates a checked program (files in dependency order, the prelude
/// first, the main file last) into the core IR.
///
/// Entry points are the main file's `entry` declarations, plus a `def main`
/// when no entry is named `main` (two entries with one name are an error). Each becomes an [`nabla_ir::EntryPoint`]
/// whose function takes the flattened parameters (`param_arity` gives how many
/// flat values each source parameter has) and returns the flattened results
/// (a tuple result is several results; `result_arity` per component). Size
/// parameters of entry points are bound from the arguments' shapes.
///
/// Other first-order functions take their size parameters (`def f [n] …`)
/// as leading `i64` IR parameters, and their parameter and result types name
/// them (`fun f (n: i64, xs: [n]f64): ([n]f64)`), so the interpreter checks
/// argument sizes at calls and callers know result sizes. A caller passes a
/// size from an argument's shape, else from the function's instantiated type
/// at the reference (e.g. `split`'s `[n]` from the result type), else from a
/// size expression in a coerced argument (`split (xs :> [k + (n - k)]t)`,
/// `unflatten (xs :> [a * b]t)`); a size given by none of these is left out
/// (and is an error only if the body uses it as a value).
///
/// Only definitions reachable from the entry points are elaborated.
///
/// Errors: unsupported constructs, functions where Futhark requires them to
/// be static, missing type annotations → `Diagnostic`s of kind
/// `Elaboration` at the offending span (one per failing entry point).
pub fn elaborate(files: &[ast::Program]) -> Result<nabla_ir::Program, Vec<Diagnostic>> {
    elaborate_with_sources(files, None)
}

/// [`elaborate`] with the program's source text at hand, so run-time
/// messages can quote the source: a failed `assert c e` reports
/// `Assertion is false: c` (Futhark's wording, with `c` as written) instead
/// of `Assertion is false`.
pub fn elaborate_with_sources(
    files: &[ast::Program],
    sources: Option<&nabla_syntax::SourceMap>,
) -> Result<nabla_ir::Program, Vec<Diagnostic>> {
    // Elaboration recurses over the AST; run it on a thread with a large
    // stack so deeply nested (but depth-limited) programs cannot overflow.
    std::thread::scope(|s| {
        let h = std::thread::Builder::new()
            .stack_size(512 << 20)
            .spawn_scoped(s, || elaborate_inner(files, sources));
        match h {
            Ok(h) => h.join().unwrap_or_else(|_| {
                Err(vec![Diagnostic::new(
                    nabla_syntax::DiagnosticKind::Elaboration,
                    nabla_syntax::Span::default(),
                    "internal error: the elaborator panicked",
                )])
            }),
            Err(_) => elaborate_inner(files, sources),
        }
    })
}

fn elaborate_inner(
    files: &[ast::Program],
    sources: Option<&nabla_syntax::SourceMap>,
) -> Result<nabla_ir::Program, Vec<Diagnostic>> {
    let size_exprs = typed_arena::Arena::new();
    let mut el = elab::Elab::new(files, &size_exprs);
    el.sources = sources;
    let mut diags = vec![];
    let mut entries = vec![];
    let Some(main) = files.last() else {
        return Ok(nabla_ir::Program::default());
    };
    let mut eps: Vec<&ast::ValBind> = vec![];
    let mut main_def = None;
    for d in &main.decs {
        if let ast::Dec::Val(vb) = d {
            if vb.entry {
                if let Some(first) = eps.iter().find(|e| e.name.name == vb.name.name) {
                    diags.push(
                        Diagnostic::new(
                            nabla_syntax::DiagnosticKind::Elaboration,
                            vb.name.span,
                            format!(
                                "there is already an entry point named `{}`; entry point names must be unique",
                                vb.name.name
                            ),
                        )
                        .with_label(first.name.span, "first defined here"),
                    );
                    continue;
                }
                eps.push(vb);
            } else if vb.name.name == "main" {
                main_def = Some(vb);
            }
        }
    }
    if let Some(m) = main_def {
        if !eps.iter().any(|e| e.name.name == "main") {
            eps.push(m);
        }
    }
    for vb in eps {
        match entry_point(&mut el, vb) {
            Ok(ep) => entries.push(ep),
            Err(d) => diags.push(d),
        }
    }
    if !diags.is_empty() {
        return Err(diags);
    }
    let mut functions = vec![];
    for (i, f) in el.funs.into_iter().enumerate() {
        match f {
            Some(f) => functions.push(f),
            None => {
                return Err(vec![Diagnostic::new(
                    nabla_syntax::DiagnosticKind::Elaboration,
                    nabla_syntax::Span::default(),
                    format!("internal error: function {i} was not completed"),
                )])
            }
        }
    }
    let mut prog = nabla_ir::Program {
        functions,
        entries,
        ..Default::default()
    };
    // Loop parameters that their body updates in place are unique (the
    // validator's consumption rule relies on it).
    nabla_ir::infer_loop_uniqueness(&mut prog);
    Ok(prog)
}

fn entry_point<'a>(
    el: &mut elab::Elab<'a>,
    vb: &'a ast::ValBind,
) -> Result<nabla_ir::EntryPoint, Diagnostic> {
    use nabla_syntax::types::Type as STy;
    for tp in &vb.type_params {
        if let ast::TypeParam::Type(id, _) = tp {
            return Err(elab::err(
                id.span,
                format!("entry point {} cannot have type parameters", vb.name.name),
            ));
        }
    }
    let fid = nabla_ir::FunId(el.funs.len() as u32);
    el.funs.push(None);
    let (f, param_arity, rt) =
        el.build_function(vb, Default::default(), vb.name.name.clone(), None, &[])?;
    let result_arity = match &rt {
        STy::Record(_) => match rt.as_tuple() {
            Some(ts) => ts.iter().map(|t| elab::nflat(t).unwrap_or(0)).collect(),
            None => vec![elab::nflat(&rt).unwrap_or(0)],
        },
        t => vec![elab::nflat(t).unwrap_or(0)],
    };
    el.funs[fid.0 as usize] = Some(f);
    let signature = entry_signature(vb, &rt, &result_arity);
    Ok(nabla_ir::EntryPoint {
        name: vb.name.name.clone(),
        fun: fid,
        param_arity,
        result_arity,
        signature,
    })
}

/// The source-level signature of entry point `vb` with (elaborated) result
/// type `rt`; `None` when a parameter's type is unknown (not checked).
fn entry_signature(
    vb: &ast::ValBind,
    rt: &nabla_syntax::types::Type,
    result_arity: &[usize],
) -> Option<nabla_ir::EntrySignature> {
    use nabla_syntax::types::Type as STy;
    let mut params = vec![];
    for p in &vb.params {
        let (name, annot) = pat_name_and_annotation(p);
        params.push(nabla_ir::EntryParam {
            name,
            ty: entry_type(p.ty.as_ref()?, annot),
        });
    }
    // An entry point defined as a function value takes the parameters of
    // the function type it returns (`Elab::eta_params`), named and
    // annotated as its declared return type (`: t1 -> t2`) says.
    let mut ret_te = vb.ret.as_ref();
    let mut rest = vb
        .ty
        .as_ref()
        .and_then(|t| elab::peel(t, vb.params.len()).1);
    while let Some(STy::Arrow {
        param_name,
        param,
        ret,
    }) = rest
    {
        let (name, annot) = match ret_te.map(strip_unique) {
            Some(ast::TypeExp::Arrow(n, t1, t2, _)) => {
                ret_te = Some(&**t2);
                (n.as_ref().map(|i| i.name.clone()), Some(&**t1))
            }
            _ => {
                ret_te = None;
                (None, None)
            }
        };
        params.push(nabla_ir::EntryParam {
            name: name.or(param_name).unwrap_or_else(|| "_".into()),
            ty: entry_type(&param, annot),
        });
        rest = Some(*ret);
    }
    let ret_annot = ret_te.map(strip_unique);
    // Result sizes may name parameters; only the parameters' are checked.
    let result_type = |t: &nabla_syntax::types::Type, annot: Option<&ast::TypeExp>| {
        let mut et = entry_type(t, annot);
        et.shape.clear();
        et
    };
    let results = match rt.as_tuple() {
        Some(ts) if result_arity.len() == ts.len() && ts.len() != 1 => ts
            .iter()
            .enumerate()
            .map(|(i, t)| {
                let annot = match ret_annot {
                    Some(ast::TypeExp::Tuple(es, _)) if es.len() == ts.len() => Some(&es[i]),
                    _ => None,
                };
                result_type(t, annot)
            })
            .collect(),
        _ => vec![result_type(rt, ret_te)],
    };
    Some(nabla_ir::EntrySignature { params, results })
}

/// A parameter pattern's variable name (`_` for other patterns) and its
/// type annotation, if any.
fn pat_name_and_annotation(p: &ast::Pat) -> (String, Option<&ast::TypeExp>) {
    match &p.kind {
        ast::PatKind::Id(x) => (x.name.clone(), None),
        ast::PatKind::Ascribe(q, te) => (pat_name_and_annotation(q).0, Some(te)),
        _ => ("_".into(), None),
    }
}

fn strip_unique(te: &ast::TypeExp) -> &ast::TypeExp {
    match te {
        ast::TypeExp::Unique(t, _) => strip_unique(t),
        t => t,
    }
}

/// The manifest's view of type `t` (annotated as `annot` in the source):
/// a primitive or an array of primitives by its sizeless Futhark name,
/// anything else opaque, named by the annotation's type alias if any.
fn entry_type(t: &nabla_syntax::types::Type, annot: Option<&ast::TypeExp>) -> nabla_ir::EntryType {
    use nabla_syntax::types::Type as STy;
    // The annotation decides where there is one (the checker may infer a
    // fresh result to be unique).
    let unique = match annot {
        Some(te) => matches!(te, ast::TypeExp::Unique(..)),
        None => elab::flat_unique(t).iter().any(|&u| u),
    };
    let annot = annot.map(strip_unique);
    let transparent = match t {
        STy::Prim(_) => true,
        STy::Array { elem, .. } => matches!(**elem, STy::Prim(_)),
        _ => false,
    };
    let structural = sizeless(t).to_string();
    if transparent {
        let shape = match t {
            STy::Array { shape, .. } => shape
                .iter()
                .map(|d| match d {
                    nabla_syntax::types::Size::Const(n) => n.to_string(),
                    nabla_syntax::types::Size::Var(v) => v.to_string(),
                    nabla_syntax::types::Size::Expr(_) => String::new(),
                    nabla_syntax::types::Size::Any => String::new(),
                })
                .collect(),
            _ => vec![],
        };
        // Only named or constant sizes are worth recording.
        let shape = if shape.iter().all(String::is_empty) {
            vec![]
        } else {
            shape
        };
        return nabla_ir::EntryType {
            shape,
            ..nabla_ir::EntryType::transparent(structural, unique)
        };
    }
    let name = annot.and_then(annotation_name).unwrap_or(structural);
    let flat = elab::nflat(t).unwrap_or(0);
    let fields = match t {
        STy::Record(fs) => {
            let mut start = 0;
            let mut out = vec![];
            for (k, (fname, fty)) in fs.iter().enumerate() {
                let fannot = match annot {
                    Some(ast::TypeExp::Record(es, _)) => {
                        es.iter().find(|(n, _)| n.name == *fname).map(|(_, e)| e)
                    }
                    Some(ast::TypeExp::Tuple(es, _)) if es.len() == fs.len() => fname
                        .parse::<usize>()
                        .ok()
                        .and_then(|i| es.get(i))
                        .or(es.get(k)),
                    _ => None,
                };
                out.push(opaque_field(fname.clone(), fty, fannot, &mut start));
            }
            Some(out)
        }
        _ => None,
    };
    // A sum: the tag is flat value 0, then every constructor's payload.
    let variants = match t {
        STy::Sum(cs) => {
            let mut start = 1;
            let mut out = vec![];
            for (cname, tys) in cs {
                let mut payload = vec![];
                for (i, pty) in tys.iter().enumerate() {
                    payload.push(opaque_field(i.to_string(), pty, None, &mut start));
                }
                out.push(nabla_ir::OpaqueVariant {
                    name: cname.clone(),
                    payload,
                });
            }
            Some(out)
        }
        _ => None,
    };
    // An array of records, tuples or sums: the element's layout.
    let element = match t {
        STy::Array { elem, shape, .. } => {
            let mut elem_annot = annot;
            for _ in 0..shape.len() {
                elem_annot = match elem_annot.map(strip_unique) {
                    Some(ast::TypeExp::Array(_, inner, _)) => Some(&**inner),
                    _ => None,
                };
            }
            Some((shape.len(), Box::new(entry_type(elem, elem_annot))))
        }
        _ => None,
    };
    nabla_ir::EntryType {
        name,
        unique,
        opaque: Some(nabla_ir::OpaqueInfo {
            flat,
            fields,
            variants,
            element,
        }),
        shape: vec![],
    }
}

/// A field (or constructor argument) `name` of type `t` whose flat values
/// start at `*start`; advances `*start` past them.
fn opaque_field(
    name: String,
    t: &nabla_syntax::types::Type,
    annot: Option<&ast::TypeExp>,
    start: &mut usize,
) -> nabla_ir::OpaqueField {
    let len = elab::nflat(t).unwrap_or(0);
    let field = nabla_ir::OpaqueField {
        name,
        ty: entry_type(t, annot),
        start: *start,
        len,
    };
    *start += len;
    field
}

/// The name of an opaque type as its annotation spells it, sizes left out
/// (`point`, `[]point`, `(f64, point)`); `None` when the annotation names no
/// type alias (the structural name is as good) or is not a plain type.
fn annotation_name(te: &ast::TypeExp) -> Option<String> {
    fn go(te: &ast::TypeExp, named: &mut bool) -> Option<String> {
        Some(match te {
            ast::TypeExp::Prim(p, _) => p.to_string(),
            ast::TypeExp::Named(q, args, _) if args.is_empty() => {
                *named = true;
                q.to_string()
            }
            ast::TypeExp::Unique(t, _) => go(t, named)?,
            ast::TypeExp::Array(_, t, _) => format!("[]{}", go(t, named)?),
            ast::TypeExp::Tuple(ts, _) if ts.len() != 1 => {
                let parts = ts
                    .iter()
                    .map(|t| go(t, named))
                    .collect::<Option<Vec<_>>>()?;
                format!("({})", parts.join(", "))
            }
            ast::TypeExp::Record(fs, _) => {
                let mut parts = fs
                    .iter()
                    .map(|(n, t)| Some((n.name.clone(), go(t, named)?)))
                    .collect::<Option<Vec<_>>>()?;
                parts.sort();
                let parts: Vec<String> = parts
                    .into_iter()
                    .map(|(n, t)| format!("{n}: {t}"))
                    .collect();
                format!("{{{}}}", parts.join(", "))
            }
            _ => return None,
        })
    }
    let mut named = false;
    let name = go(te, &mut named)?;
    named.then_some(name)
}

/// `t` with every size anonymous and no uniqueness marks (for type names).
fn sizeless(t: &nabla_syntax::types::Type) -> nabla_syntax::types::Type {
    use nabla_syntax::types::{Size, Type as STy};
    match t {
        STy::Array { elem, shape, .. } => STy::Array {
            elem: Box::new(sizeless(elem)),
            shape: vec![Size::Any; shape.len()],
            unique: false,
        },
        STy::Record(fs) => STy::Record(fs.iter().map(|(n, t)| (n.clone(), sizeless(t))).collect()),
        STy::Sum(cs) => STy::Sum(
            cs.iter()
                .map(|(n, ts)| (n.clone(), ts.iter().map(sizeless).collect()))
                .collect(),
        ),
        t => t.clone(),
    }
}
