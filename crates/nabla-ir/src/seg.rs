//! Segmented operations: how the outermost SOACs of a function run.
//!
//! The `lower` pass (crate `nabla-opt`) classifies every *outermost* SOAC
//! statement of every function — one not inside another SOAC's lambda;
//! it may be inside branches, loop bodies and `with_acc` lambdas, which
//! run once per run of their enclosing body — as a segmented operation
//! ([`SegKind`], after Futhark's SegMap, SegRed, SegScan, SegHist) and
//! decides whether its outermost level runs in parallel ([`SegLevel`]).
//! Parallelism nested inside a parallel level runs sequentially in its
//! thread. The decisions live beside the IR, in [`crate::Program::segments`],
//! keyed by the function and the first variable the statement binds
//! (variables are bound once per function, so the key names one
//! statement); a backend reads them and decides nothing itself.
//!
//! Text form (`nabla dump-ir --after=lower`): an attribute line before the
//! statement, `#[seg_red parallel(4096)]` (parallel from 4096 rows on,
//! sequential below) or `#[seg_scan sequential]`.
//!
//! **Invariant:** every decision names an outermost SOAC statement of its
//! function that binds at least one variable, and its kind is that SOAC's
//! ([`check_segments`], run by the validator).

use crate::{Atom, BinOp, Body, Exp, FunId, Lambda, Param, Program, Soac, Stm, Type, Var};
use std::collections::BTreeMap;

/// The kind of a segmented operation: which SOAC it comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SegKind {
    /// `map` (also a map whose lambda updates accumulators of a `with_acc`).
    Map,
    /// `reduce`/`reduce_comm` (with the map before it, where the C backend
    /// fuses them: a redomap).
    Red,
    /// `scan`.
    Scan,
    /// `hist` (`reduce_by_index`).
    Hist,
    /// `scatter`.
    Scatter,
}

impl SegKind {
    /// The kind of segmented operation `soac` is.
    pub fn of(soac: &Soac) -> SegKind {
        match soac {
            Soac::Map { .. } => SegKind::Map,
            Soac::Reduce { .. } => SegKind::Red,
            Soac::Scan { .. } => SegKind::Scan,
            Soac::Hist { .. } => SegKind::Hist,
            Soac::Scatter { .. } => SegKind::Scatter,
        }
    }

    /// Every kind, in the order of the text form's names.
    pub const ALL: [SegKind; 5] = [
        SegKind::Map,
        SegKind::Red,
        SegKind::Scan,
        SegKind::Hist,
        SegKind::Scatter,
    ];

    /// The kind's name in the text form (`seg_map`, `seg_red`, …).
    pub fn name(self) -> &'static str {
        match self {
            SegKind::Map => "seg_map",
            SegKind::Red => "seg_red",
            SegKind::Scan => "seg_scan",
            SegKind::Hist => "seg_hist",
            SegKind::Scatter => "seg_scatter",
        }
    }

    /// The kind named `name` in the text form.
    pub fn from_name(name: &str) -> Option<SegKind> {
        SegKind::ALL.into_iter().find(|k| k.name() == name)
    }
}

/// How the outermost level of a segmented operation runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SegLevel {
    /// One thread, in order.
    Sequential,
    /// Its rows split among the threads, when there are at least
    /// `min_width` of them (fewer run sequentially: starting threads
    /// costs more than they gain).
    Parallel {
        /// The fewest rows run in parallel (at least 2).
        min_width: u64,
    },
}

/// The lowering's decision for one outermost SOAC statement.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SegOp {
    pub kind: SegKind,
    pub level: SegLevel,
}

impl SegOp {
    /// The attribute of the text form, without `#[` and `]`:
    /// `seg_map parallel(4096)`, `seg_scan sequential`.
    pub fn text(&self) -> String {
        match self.level {
            SegLevel::Sequential => format!("{} sequential", self.kind.name()),
            SegLevel::Parallel { min_width } => {
                format!("{} parallel({min_width})", self.kind.name())
            }
        }
    }
}

/// The decisions of a program, keyed by function and by the first
/// variable the SOAC statement binds. Empty until `lower` runs.
pub type Segments = BTreeMap<(FunId, Var), SegOp>;

/// The outermost SOAC statements of `body`, in order: the SOACs of its
/// statements, of the branches of its `if`s, of its loops' bodies (and
/// `while` conditions) and of its `with_acc` lambdas, but not those
/// inside a SOAC's lambda (nested parallelism) nor inside `jvp`, `vjp`
/// and `with_vjp` lambdas (differentiated code, which the backends never
/// see).
pub fn outermost_soacs(body: &Body) -> Vec<&Stm> {
    let mut out = Vec::new();
    collect_outermost(body, &mut out);
    out
}

fn collect_outermost<'a>(body: &'a Body, out: &mut Vec<&'a Stm>) {
    for stm in &body.stms {
        match &stm.exp {
            Exp::Soac(_) => out.push(stm),
            Exp::If { then_, else_, .. } => {
                collect_outermost(then_, out);
                collect_outermost(else_, out);
            }
            Exp::Loop { form, body, .. } => {
                if let crate::LoopForm::While { cond } = form {
                    collect_outermost(cond, out);
                }
                collect_outermost(body, out);
            }
            Exp::WithAcc { lam, .. } => collect_outermost(&lam.body, out),
            _ => {}
        }
    }
}

/// The problems of `prog.segments` (empty when there are none): a
/// decision for a missing function, for a variable that is not the first
/// one bound by an outermost SOAC statement, of another kind than the
/// statement's SOAC, or parallel from fewer than 2 rows.
pub fn check_segments(prog: &Program) -> Vec<(FunId, String)> {
    let mut errors = Vec::new();
    let mut by_function: BTreeMap<FunId, BTreeMap<Var, SegKind>> = BTreeMap::new();
    for ((f, v), op) in &prog.segments {
        let Some(fun) = prog.functions.get(f.0 as usize) else {
            errors.push((
                *f,
                format!("a segment decision for missing function #{}", f.0),
            ));
            continue;
        };
        let soacs = by_function.entry(*f).or_insert_with(|| {
            outermost_soacs(&fun.body)
                .into_iter()
                .filter_map(|s| match (&s.exp, s.pat.first()) {
                    (Exp::Soac(soac), Some(p)) => Some((p.var, SegKind::of(soac))),
                    _ => None,
                })
                .collect()
        });
        let name = fun.var_names.get(v.0 as usize).map_or("", |s| s.as_str());
        match soacs.get(v) {
            None => errors.push((
                *f,
                format!(
                    "the segment decision `{}` for variable {name} (#{}) names no outermost SOAC statement",
                    op.text(),
                    v.0
                ),
            )),
            Some(kind) if *kind != op.kind => errors.push((
                *f,
                format!(
                    "the segment decision `{}` for variable {name} (#{}) is on a {} statement",
                    op.text(),
                    v.0,
                    kind.name()
                ),
            )),
            Some(_) => {}
        }
        if let SegLevel::Parallel { min_width } = op.level {
            if min_width < 2 {
                errors.push((
                    *f,
                    format!(
                        "the segment decision `{}` for variable {name} (#{}) is parallel from fewer than 2 rows",
                        op.text(),
                        v.0
                    ),
                ));
            }
        }
    }
    errors
}

/// One component of a reduction operator that combines its components
/// independently (see [`componentwise_operator`]): `acc op elem` on
/// scalars, or, when `rows`, `map (\a b -> a op b) acc elem` on rank-1
/// rows (Futhark's `map2 op`).
pub struct Component<'a> {
    /// The operator's accumulator parameter of this component.
    pub acc: &'a Param,
    /// Its element parameter.
    pub elem: &'a Param,
    /// The statement computing the component (the map when `rows`), for
    /// its location and, when `rows`, its width and inputs.
    pub stm: &'a Stm,
    /// Whether the component is a row combined element by element.
    pub rows: bool,
    /// The binary operator.
    pub op: BinOp,
    /// For each operand of `op`, whether it comes from the accumulator
    /// (else from the element).
    pub operands: [bool; 2],
}

/// The components of a reduction operator whose body computes each result
/// from its own accumulator and element parameters alone, by one
/// statement: a scalar binary operator, or `map (\a b -> a op b) x y` on
/// rank-1 rows (`x`, `y` the component's parameters in either order), with
/// at least one of the latter, as in Futhark's `reduce (map2 (+))` or
/// vector-mode forward AD's (primal, tangent row) pairs. Such a reduction
/// combines each row into one accumulator in place (the C backend's
/// `reduce_rows_in_place`), and in parallel (multicore C) each thread
/// into a row of its own.
pub fn componentwise_operator(lam: &Lambda) -> Option<Vec<Component<'_>>> {
    let k = lam.body.result.len();
    if lam.params.len() != 2 * k || lam.body.stms.len() != k || k == 0 {
        return None;
    }
    let (accs, elems) = lam.params.split_at(k);
    let mut parts = Vec::with_capacity(k);
    for (i, r) in lam.body.result.iter().enumerate() {
        let (acc, elem) = (&accs[i], &elems[i]);
        let Atom::Var(r) = r else { return None };
        let stm = lam
            .body
            .stms
            .iter()
            .find(|s| matches!(&s.pat[..], [p] if p.var == *r))?;
        let which = |o: &Var| -> Option<bool> {
            if *o == acc.var {
                Some(true)
            } else if *o == elem.var {
                Some(false)
            } else {
                None
            }
        };
        match &stm.exp {
            Exp::BinOp(op, Atom::Var(o1), Atom::Var(o2))
                if matches!(acc.ty, Type::Prim(_)) && acc.ty == elem.ty =>
            {
                parts.push(Component {
                    acc,
                    elem,
                    stm,
                    rows: false,
                    op: *op,
                    operands: [which(o1)?, which(o2)?],
                });
            }
            Exp::Soac(Soac::Map {
                lam: inner, arrs, ..
            }) => {
                let rank1 = |t: &Type| matches!(t, Type::Array(_, d) if d.len() == 1);
                if !rank1(&acc.ty) || acc.ty != elem.ty {
                    return None;
                }
                let ([a, b], [x, y], [ist], [Atom::Var(ir)]) = (
                    &inner.params[..],
                    &arrs[..],
                    &inner.body.stms[..],
                    &inner.body.result[..],
                ) else {
                    return None;
                };
                let Exp::BinOp(op, Atom::Var(o1), Atom::Var(o2)) = &ist.exp else {
                    return None;
                };
                if !matches!(&ist.pat[..], [p] if p.var == *ir) {
                    return None;
                }
                // Which of the map's inputs is the accumulator.
                let a_is_acc = match (which(x)?, which(y)?) {
                    (true, false) => true,
                    (false, true) => false,
                    _ => return None,
                };
                let from_acc = |o: &Var| -> Option<bool> {
                    if o == &a.var {
                        Some(a_is_acc)
                    } else if o == &b.var {
                        Some(!a_is_acc)
                    } else {
                        None
                    }
                };
                parts.push(Component {
                    acc,
                    elem,
                    stm,
                    rows: true,
                    op: *op,
                    operands: [from_acc(o1)?, from_acc(o2)?],
                });
            }
            _ => return None,
        }
    }
    parts.iter().any(|p| p.rows).then_some(parts)
}
