//! Common-subexpression elimination: a scalar computation that repeats one
//! already in scope (in the same body or an enclosing one) is replaced by
//! the earlier result.
//!
//! Only statements with one scalar result are merged — arithmetic,
//! comparisons, conversions, `size` and the indexing of one element — so no
//! array is ever shared between two names (arrays may be consumed by
//! in-place updates, which must not see another name's array). Operands of
//! commutative operators are put in a canonical order first, so `a * b` and
//! `b * a` are one computation; floats compare bitwise (`0.0 ≠ -0.0`), so
//! only exact repeats merge. A merged computation that can fail (an index
//! out of bounds) has already failed at the earlier statement, which runs
//! first.

use crate::walk::{self, Visitor};
use nabla_ir::rewrite::Substitution;
use nabla_ir::{Atom, BinOp, Body, CmpOp, Dim, DimIndex, Exp, Function, Stm, Type, Var};
use std::collections::HashMap;

/// Eliminates common subexpressions in one function. Returns whether
/// anything changed.
pub fn cse_function(f: &mut Function) -> bool {
    let mut cx = Cse {
        sub: Substitution::with_capacity(f.var_names.len()),
        available: HashMap::new(),
        changed: false,
    };
    cx.body(&mut f.body);
    cx.changed
}

struct Cse {
    sub: Substitution,
    /// Computations in scope: expression and result type → result.
    available: HashMap<(Exp, Type), Var>,
    changed: bool,
}

impl Cse {
    /// The statement's key when it may be merged with an equal one.
    fn key(s: &Stm) -> Option<(Exp, Type)> {
        let [p] = &s.pat[..] else { return None };
        if !matches!(p.ty, Type::Prim(_)) {
            return None;
        }
        let exp = match &s.exp {
            Exp::BinOp(op, a, b) if commutative(*op) => {
                let (a, b) = ordered(*a, *b);
                Exp::BinOp(*op, a, b)
            }
            Exp::CmpOp(op @ (CmpOp::Eq | CmpOp::Neq), a, b) => {
                let (a, b) = ordered(*a, *b);
                Exp::CmpOp(*op, a, b)
            }
            e @ (Exp::BinOp(..)
            | Exp::CmpOp(..)
            | Exp::UnOp(..)
            | Exp::TernOp(..)
            | Exp::Conv(..)
            | Exp::Size(..)) => e.clone(),
            Exp::Index(_, idx) if idx.iter().all(|d| matches!(d, DimIndex::Fix(_))) => {
                s.exp.clone()
            }
            _ => return None,
        };
        Some((exp, p.ty.clone()))
    }
}

fn commutative(op: BinOp) -> bool {
    matches!(
        op,
        BinOp::Add
            | BinOp::Mul
            | BinOp::Min
            | BinOp::Max
            | BinOp::BitAnd
            | BinOp::BitOr
            | BinOp::BitXor
            | BinOp::LogAnd
            | BinOp::LogOr
    )
}

/// A canonical order of two operands: variables by number, then constants.
fn ordered(a: Atom, b: Atom) -> (Atom, Atom) {
    let rank = |x: &Atom| match x {
        Atom::Var(v) => (0u8, u64::from(v.0)),
        Atom::Const(c) => (1u8, c.as_f64().to_bits()),
    };
    if rank(&b) < rank(&a) {
        (b, a)
    } else {
        (a, b)
    }
}

impl Visitor for Cse {
    fn atom(&mut self, a: &mut Atom) {
        self.sub.atom(a);
    }
    fn var(&mut self, v: &mut Var) {
        self.sub.var(v);
    }
    fn bind(&mut self, _v: &mut Var) {}
    fn dim(&mut self, d: &mut Dim) {
        *d = self.sub.dim(*d);
    }
    fn body(&mut self, b: &mut Body) {
        stacker::maybe_grow(walk::RED_ZONE, walk::STACK_SEGMENT, || {
            let mut added = Vec::new();
            let old = std::mem::take(&mut b.stms);
            let mut out = Vec::with_capacity(old.len());
            for mut s in old {
                walk::walk_exp(&mut s.exp, self);
                for p in &mut s.pat {
                    self.ty(&mut p.ty);
                }
                if let Some(k) = Cse::key(&s) {
                    if let Some(&prev) = self.available.get(&k) {
                        self.sub.set(s.pat[0].var, Atom::Var(prev));
                        self.changed = true;
                        continue;
                    }
                    self.available.insert(k.clone(), s.pat[0].var);
                    added.push(k);
                }
                out.push(s);
            }
            for a in &mut b.result {
                self.atom(a);
            }
            b.stms = out;
            for k in added {
                self.available.remove(&k);
            }
        })
    }
}
