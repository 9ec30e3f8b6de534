//! Value specifications matched against the members that implement them,
//! once the program is type-checked (Futhark's `matchValBinding`): the
//! module pass gives each `val` specification of an ascription a
//! declaration of its specified type (with a hole for a body), and after
//! type checking the member's inferred type must be at least as general:
//! the specification's type parameters and sizes are rigid, the member's
//! are instantiated (a type parameter only by types as lifted as it
//! allows), and uniqueness is a subtype relation (a member may return a
//! unique array where a non-unique one is specified, and may not consume
//! a parameter the specification does not consume).

use nabla_syntax::ast::{Dec, Liftedness, Program, TypeExp, TypeParam, ValBind};
use nabla_syntax::types::{Size, Type};
use nabla_syntax::{Diagnostic, DiagnosticKind, Span};
use std::collections::HashMap;

/// One `val` specification to match after type checking.
#[derive(Clone, Debug)]
pub(crate) struct ValueCheck {
    /// The flat name of the declaration of the specified type.
    pub spec_decl: String,
    /// The flat name of the member that implements it.
    pub target: String,
    /// The member as messages name it (`bar.x`).
    pub shown: String,
    /// The specification as written (`val f 'a : a -> a`).
    pub spec_text: String,
    /// The specified type, its names resolved.
    pub spec_ty: TypeExp,
    /// The flat names of the types the module type specifies as abstract
    /// and size-lifted: the anonymous sizes of their definitions are no
    /// particular sizes (rigid), unlike the existential sizes a
    /// specification writes in a function's result.
    pub rigid: Vec<String>,
    /// The specification, in its module type.
    pub spec_span: Span,
    /// Where the module was ascribed.
    pub span: Span,
    /// The source range the made-up declaration covers.
    pub decl_span: Span,
}

/// The value specifications of a program's ascriptions, recorded by the
/// module pass for [`ValueChecks::check`] after type checking.
#[derive(Clone, Debug, Default)]
pub struct ValueChecks {
    pub(crate) checks: Vec<ValueCheck>,
}

impl ValueChecks {
    /// Whether `span` lies inside a declaration the module pass made up
    /// for a specification (a type error there says that the
    /// specification cannot be typed as a declaration, not that the
    /// program is wrong: the module pass has checked the specification).
    pub fn is_made_up(&self, span: Span) -> bool {
        self.checks.iter().any(|c| {
            c.decl_span.file == span.file
                && c.decl_span.start <= span.start
                && span.end <= c.decl_span.end
        })
    }

    /// Matches each specification against its member in the type-checked
    /// `files`: one error per member whose type does not match, at the
    /// ascription, in Futhark's words ("Module type specifies … but module
    /// provides …"). Members or specifications without a type (the type
    /// checker failed on them) are skipped.
    pub fn check(&self, files: &[Program]) -> Vec<Diagnostic> {
        let mut binds: HashMap<&str, &ValBind> = HashMap::new();
        for f in files {
            for d in &f.decs {
                let d = match d {
                    Dec::Local(d, _) => d.as_ref(),
                    d => d,
                };
                if let Dec::Val(vb) = d {
                    binds.insert(&vb.name.name, vb);
                }
            }
        }
        let mut diags = Vec::new();
        for c in &self.checks {
            let (Some(spec), Some(member)) = (
                binds.get(c.spec_decl.as_str()),
                binds.get(c.target.as_str()),
            ) else {
                continue;
            };
            let (Some(spec_t), Some(member_t)) = (&spec.ty, &member.ty) else {
                continue;
            };
            let Err(size_mismatch) = matches(spec, spec_t, member, member_t, &c.spec_ty, &c.rigid)
            else {
                continue;
            };
            let params: String = member
                .type_params
                .iter()
                .map(|p| format!(" {}", crate::types::show_type_param(p)))
                .collect();
            let mut d = Diagnostic::new(
                DiagnosticKind::Type,
                c.span,
                format!(
                    "Module type specifies\n  {}\nbut module provides\n  val {}{} : {}",
                    c.spec_text,
                    c.shown,
                    params,
                    show(member_t, 0)
                ),
            )
            .with_label(c.spec_span, "specified here");
            if let Some((specified, provided)) = size_mismatch {
                d = d.with_note(size_mismatch_note(&specified, &provided));
            }
            diags.push(d);
        }
        diags
    }

    /// Removes the declarations made up for the specifications from
    /// `files` (nothing refers to them; they only carried the types).
    pub fn remove_declarations(&self, files: &mut [Program]) {
        let names: std::collections::HashSet<&str> =
            self.checks.iter().map(|c| c.spec_decl.as_str()).collect();
        for f in files {
            f.decs
                .retain(|d| !matches!(d, Dec::Val(vb) if names.contains(vb.name.name.as_str())));
        }
    }
}

/// A size that is one name as the module type writes it (`n`), not its
/// flat name (`withvec.n`); other sizes as they are.
fn unqualified(size: &str) -> String {
    if size
        .chars()
        .all(|c| c.is_alphanumeric() || "._'".contains(c))
    {
        size.rsplit('.').next().unwrap_or(size).to_string()
    } else {
        size.to_string()
    }
}

/// Why the specification's size `specified` is not the member's
/// `provided`.
fn size_mismatch_note(specified: &Size, provided: &Size) -> String {
    let shown = |s: &Size| match s {
        Size::Const(k) => k.to_string(),
        Size::Var(n) if n.starts_with('∃') => "[]".to_string(),
        Size::Var(n) => unqualified(n),
        Size::Expr(e) => unqualified(&e.to_string()),
        Size::Any => "[]".to_string(),
    };
    let mut note = format!(
        "Sizes \"{}\" and \"{}\" do not match",
        shown(specified),
        shown(provided)
    );
    if matches!(provided, Size::Var(n) if n.starts_with('∃')) {
        note.push_str(
            ": the module's value has an existential size, known only once it is computed",
        );
    }
    note
}

/// Whether the member `member` (of type `member_t`) implements the
/// specification declared as `spec` (of type `spec_t`): `Ok(())`, or
/// `Err` with the first pair of sizes found to differ (the
/// specification's, the member's), if the mismatch is one of sizes.
fn matches(
    spec: &ValBind,
    spec_t: &Type,
    member: &ValBind,
    member_t: &Type,
    spec_te: &TypeExp,
    rigid: &[String],
) -> Result<(), Option<(Size, Size)>> {
    let mut m = Matcher::default();
    for p in &member.type_params {
        match p {
            TypeParam::Type(a, l) => {
                m.flex_types.insert(a.name.clone(), *l);
            }
            TypeParam::Size(n) => {
                m.flex_sizes.insert(n.name.clone(), None);
            }
        }
    }
    for p in &spec.type_params {
        if let TypeParam::Type(a, l) = p {
            m.rigid_types.insert(a.name.clone(), *l);
        }
    }
    let spec_t = m.mark_rigid(spec_te, spec_t, rigid);
    if m.ty(&spec_t, member_t, true) {
        Ok(())
    } else {
        Err(m.size_mismatch)
    }
}

/// The state of one match: what the member's type parameters and sizes
/// have been instantiated with.
#[derive(Default)]
struct Matcher {
    /// The member's explicit type parameters and their liftedness (its
    /// inferred ones, named `'t…`, take any type).
    flex_types: HashMap<String, Liftedness>,
    type_binds: HashMap<String, Type>,
    /// The member's size parameters (and named arrow parameters), with
    /// what they are bound to.
    flex_sizes: HashMap<String, Option<Size>>,
    /// The specification's type parameters.
    rigid_types: HashMap<String, Liftedness>,
    anonymous: usize,
    /// The first sizes found to differ: the specification's, the member's.
    size_mismatch: Option<(Size, Size)>,
}

impl Matcher {
    /// The specification's type `t` (written as `te`, names resolved) with
    /// each anonymous size of the types named in `rigid` made a distinct
    /// rigid size.
    fn mark_rigid(&mut self, te: &TypeExp, t: &Type, rigid: &[String]) -> Type {
        match (te, t) {
            (TypeExp::Named(q, _, _), t) if q.quals.is_empty() && rigid.contains(&q.name) => {
                self.rigid_anonymous_sizes(t)
            }
            (TypeExp::Tuple(tes, _), Type::Record(fs))
                if tes.len() == fs.len() && tes.len() != 1 =>
            {
                let mut fs = fs.clone();
                for (i, te) in tes.iter().enumerate() {
                    if let Some(f) = fs.iter_mut().find(|(n, _)| *n == i.to_string()) {
                        f.1 = self.mark_rigid(te, &f.1, rigid);
                    }
                }
                Type::Record(fs)
            }
            (TypeExp::Tuple(tes, _), t) if tes.len() == 1 => self.mark_rigid(&tes[0], t, rigid),
            (TypeExp::Record(tes, _), Type::Record(fs)) => {
                let mut fs = fs.clone();
                for (n, te) in tes {
                    if let Some(f) = fs.iter_mut().find(|(m, _)| *m == n.name) {
                        f.1 = self.mark_rigid(te, &f.1, rigid);
                    }
                }
                Type::Record(fs)
            }
            (TypeExp::Unique(te, _) | TypeExp::Exists(_, te, _), t) => {
                self.mark_rigid(te, t, rigid)
            }
            (
                TypeExp::Arrow(_, a, b, _),
                Type::Arrow {
                    param_name,
                    param,
                    ret,
                },
            ) => Type::Arrow {
                param_name: param_name.clone(),
                param: Box::new(self.mark_rigid(a, param, rigid)),
                ret: Box::new(self.mark_rigid(b, ret, rigid)),
            },
            (TypeExp::Sum(cs, _), Type::Sum(ks)) => {
                let mut ks = ks.clone();
                for (c, tes) in cs {
                    if let Some(k) = ks.iter_mut().find(|(n, _)| *n == c.name) {
                        if k.1.len() == tes.len() {
                            for (te, t) in tes.iter().zip(k.1.iter_mut()) {
                                *t = self.mark_rigid(te, t, rigid);
                            }
                        }
                    }
                }
                Type::Sum(ks)
            }
            _ => t.clone(),
        }
    }

    /// `t` with each anonymous size made a distinct rigid size (no
    /// particular size).
    fn rigid_anonymous_sizes(&mut self, t: &Type) -> Type {
        match t {
            Type::Array {
                elem,
                shape,
                unique,
            } => Type::Array {
                elem: Box::new(self.rigid_anonymous_sizes(elem)),
                shape: shape
                    .iter()
                    .map(|d| match d {
                        Size::Any => {
                            self.anonymous += 1;
                            Size::Var(format!("<anonymous {}>", self.anonymous))
                        }
                        d => d.clone(),
                    })
                    .collect(),
                unique: *unique,
            },
            t => t.map_children(|c| self.rigid_anonymous_sizes(c)),
        }
    }

    fn is_flex_type(&self, a: &str) -> bool {
        self.flex_types.contains_key(a)
            || (a.starts_with('\'') && !self.rigid_types.contains_key(a))
    }

    /// How lifted a type of the specification is.
    fn liftedness(&self, t: &Type) -> Liftedness {
        match t {
            Type::Arrow { .. } => Liftedness::Lifted,
            Type::Param(a) => self
                .rigid_types
                .get(a)
                .copied()
                .unwrap_or(Liftedness::Unlifted),
            Type::Prim(_) | Type::Var(_) => Liftedness::Unlifted,
            Type::Array { elem, .. } | Type::Acc { arr: elem, .. } => self.liftedness(elem),
            Type::Record(fs) => fs
                .iter()
                .map(|(_, t)| self.liftedness(t))
                .max()
                .unwrap_or(Liftedness::Unlifted),
            Type::Sum(cs) => cs
                .iter()
                .flat_map(|(_, ts)| ts)
                .map(|t| self.liftedness(t))
                .max()
                .unwrap_or(Liftedness::Unlifted),
        }
    }

    /// Whether the member's size `p` can be the specification's `s`.
    fn size(&mut self, s: &Size, p: &Size) -> bool {
        // `∃k`: an existential size of a result type (the type checker's
        // name for it).
        let existential = |s: &Size| matches!(s, Size::Var(n) if n.starts_with('∃'));
        if *s == Size::Any || existential(s) {
            // An existential size of the specification: any size.
            return true;
        }
        if existential(p) {
            // The member's result has a size known only once it is
            // computed; the specification promises a particular one.
            self.size_mismatch = Some((s.clone(), p.clone()));
            return false;
        }
        match p {
            // A size the type checker does not track: no evidence either way.
            Size::Any => true,
            // A size expression (`[n+1]`): the specification's would have to
            // be the same expression of the corresponding sizes; not
            // compared, so no evidence either way.
            Size::Expr(_) => true,
            Size::Const(k) => self.same_size(s, p, matches!(s, Size::Const(j) if j == k)),
            Size::Var(v) => match self.flex_sizes.get(v) {
                Some(Some(bound)) => {
                    let same = bound == s;
                    self.same_size(s, p, same)
                }
                Some(None) => {
                    self.flex_sizes.insert(v.clone(), Some(s.clone()));
                    true
                }
                // A size of the enclosing scope (a top-level constant).
                None => true,
            },
        }
    }

    /// `same` (whether the specification's size `s` is the member's `p`),
    /// remembering the first pair that differs for the message.
    fn same_size(&mut self, s: &Size, p: &Size, same: bool) -> bool {
        if !same && self.size_mismatch.is_none() {
            self.size_mismatch = Some((s.clone(), p.clone()));
        }
        same
    }

    /// Whether the member's type `p` can be the specification's `s`, at a
    /// position that is `positive` (a result) or not (a parameter).
    fn ty(&mut self, s: &Type, p: &Type, positive: bool) -> bool {
        match (s, p) {
            (_, Type::Param(a)) if self.is_flex_type(a) => {
                if let Some(bound) = self.type_binds.get(a) {
                    return same(bound, s);
                }
                if let Some(l) = self.flex_types.get(a) {
                    if self.liftedness(s) > *l {
                        return false;
                    }
                }
                self.type_binds.insert(a.clone(), s.clone());
                true
            }
            (Type::Param(x), Type::Param(y)) => x == y,
            (Type::Prim(a), Type::Prim(b)) => a == b,
            (
                Type::Array {
                    elem: se,
                    shape: ss,
                    unique: su,
                },
                Type::Array {
                    elem: pe,
                    shape: ps,
                    unique: pu,
                },
            ) => {
                // Uniqueness: the member's results may be more unique, its
                // parameters less consumed, than specified.
                let uniqueness = if positive { *pu || !*su } else { *su || !*pu };
                if !uniqueness || ps.len() > ss.len() {
                    return false;
                }
                if !ss.iter().zip(ps).all(|(s, p)| self.size(s, p)) {
                    return false;
                }
                if ps.len() < ss.len() {
                    // `[n]a` with `a` an array type.
                    let rest = Type::Array {
                        elem: se.clone(),
                        shape: ss[ps.len()..].to_vec(),
                        unique: false,
                    };
                    return self.ty(&rest, pe, positive);
                }
                self.ty(se, pe, positive)
            }
            (Type::Record(xs), Type::Record(ys)) => {
                xs.len() == ys.len()
                    && xs
                        .iter()
                        .zip(ys)
                        .all(|((n, x), (m, y))| n == m && self.ty(x, y, positive))
            }
            (Type::Sum(xs), Type::Sum(ys)) => {
                xs.len() == ys.len()
                    && xs.iter().zip(ys).all(|((n, x), (m, y))| {
                        n == m
                            && x.len() == y.len()
                            && x.iter().zip(y).all(|(a, b)| self.ty(a, b, positive))
                    })
            }
            (
                Type::Arrow {
                    param_name: sn,
                    param: sp,
                    ret: sr,
                },
                Type::Arrow {
                    param_name: pn,
                    param: pp,
                    ret: pr,
                },
            ) => {
                if let Some(pn) = pn {
                    let bound = sn.as_ref().map(|s| Size::Var(s.clone()));
                    self.flex_sizes.insert(pn.clone(), bound);
                }
                self.ty(sp, pp, !positive) && self.ty(sr, pr, positive)
            }
            _ => false,
        }
    }
}

/// Structural equality of types, where an untracked size matches any.
fn same(a: &Type, b: &Type) -> bool {
    match (a, b) {
        (
            Type::Array {
                elem: e1,
                shape: s1,
                ..
            },
            Type::Array {
                elem: e2,
                shape: s2,
                ..
            },
        ) => {
            s1.len() == s2.len()
                && s1
                    .iter()
                    .zip(s2)
                    .all(|(x, y)| x == y || *x == Size::Any || *y == Size::Any)
                && same(e1, e2)
        }
        (Type::Record(xs), Type::Record(ys)) => {
            xs.len() == ys.len()
                && xs
                    .iter()
                    .zip(ys)
                    .all(|((n, x), (m, y))| n == m && same(x, y))
        }
        (Type::Sum(xs), Type::Sum(ys)) => {
            xs.len() == ys.len()
                && xs.iter().zip(ys).all(|((n, x), (m, y))| {
                    n == m && x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same(a, b))
                })
        }
        (
            Type::Arrow {
                param: p1, ret: r1, ..
            },
            Type::Arrow {
                param: p2, ret: r2, ..
            },
        ) => same(p1, p2) && same(r1, r2),
        _ => a == b,
    }
}

/// A type in Futhark's syntax; `prec`: 0 anywhere, 1 as the parameter of
/// a function type, 2 as an array element or constructor payload.
fn show(t: &Type, prec: u8) -> String {
    let paren = |s: String, need: bool| if need { format!("({s})") } else { s };
    match t {
        Type::Prim(p) => p.to_string(),
        Type::Param(a) => a.trim_start_matches('\'').to_string(),
        Type::Var(_) | Type::Acc { .. } => t.to_string(),
        Type::Array {
            elem,
            shape,
            unique,
        } => {
            let mut s = if *unique {
                "*".to_string()
            } else {
                String::new()
            };
            for d in shape {
                s.push_str(&d.to_string());
            }
            s.push_str(&show(elem, 2));
            s
        }
        Type::Record(fs) => match t.as_tuple() {
            Some(ts) => format!(
                "({})",
                ts.iter().map(|t| show(t, 0)).collect::<Vec<_>>().join(", ")
            ),
            None => format!(
                "{{{}}}",
                fs.iter()
                    .map(|(n, t)| format!("{n}: {}", show(t, 0)))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        },
        // An abstract type of an opaquely ascribed module shows its name.
        Type::Sum(cs)
            if cs.len() == 1
                && cs[0]
                    .0
                    .starts_with(nabla_syntax::types::ABSTRACT_TYPE_CONSTRUCTOR) =>
        {
            paren(t.to_string(), prec >= 2 && !cs[0].1.is_empty())
        }
        Type::Sum(cs) => paren(
            cs.iter()
                .map(|(c, ts)| {
                    let mut s = format!("#{c}");
                    for t in ts {
                        s.push(' ');
                        s.push_str(&show(t, 2));
                    }
                    s
                })
                .collect::<Vec<_>>()
                .join(" | "),
            prec >= 1,
        ),
        Type::Arrow {
            param_name,
            param,
            ret,
        } => paren(
            match param_name {
                Some(n) => format!("({n}: {}) -> {}", show(param, 0), show(ret, 0)),
                None => format!("{} -> {}", show(param, 1), show(ret, 0)),
            },
            prec >= 1,
        ),
    }
}
