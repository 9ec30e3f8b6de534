//! Borrowed views: the views (rows of map inputs, `a[i]` with fixed
//! indices) that the generated C builds without touching the reference
//! count of their block.
//!
//! A view normally owns a reference to its block, so it stays valid
//! whatever happens to the array it was cut from; the price is an
//! increment when it is made and a decrement with a test when it dies, in
//! the innermost loops where views are made most (`t[r][c]` of a row `t`
//! of a map input costs two views per element). A view is *borrowed*
//! (`mem == NULL`, no reference) when both hold:
//!
//! - **its parent outlives it**: the parent is a map input (held by the
//!   map for the whole loop), or a variable that no statement of the
//!   bodies from the view's own up to the innermost repeated one (loop
//!   body or lambda) binds — such a variable is never released early while
//!   the view's body runs ([`crate::func`]'s `release_dead` stops at the
//!   innermost repeated body) — or itself a borrowed view; and the parent
//!   is consumed nowhere in the function;
//! - **it does not escape**: every read of it is the array of an `Index`
//!   with fixed indices (a scalar, or a view that is borrowed too), a
//!   `size`, or an input of a `map`, `reduce` or `scan` whose element is a
//!   scalar or a row parameter that is borrowed too. Anything else — a
//!   body result, a call argument, a loop's initial value, a copy, a
//!   reshape, a consumption — could keep it alive past its parent, so the
//!   view keeps its reference.
//!
//! Views derived from a borrowed view are borrowed as well (they copy its
//! `mem`), which is why the conditions are solved together, as a greatest
//! fixed point.

use nabla_ir::{
    visit::{for_each_var, Nested},
    AccInput, Atom, Body, DimIndex, Exp, Function, Param, Soac, Type, Var,
};
use std::collections::{HashMap, HashSet};

/// One view that may be borrowed.
struct Candidate {
    /// The array it is cut from.
    parent: Var,
    /// Whether the parent outlives the view without being borrowed itself.
    stable_parent: bool,
}

#[derive(Default)]
struct Analysis {
    candidates: HashMap<Var, Candidate>,
    /// Reads of a variable that a borrowed view allows.
    allowed: HashMap<Var, usize>,
    /// For a variable, the views whose borrowing its allowed reads assume
    /// (the view cut from it, the borrowed row parameter of a map over it).
    requires: HashMap<Var, Vec<Var>>,
    /// Arrays consumed somewhere in the function.
    consumed: HashSet<Var>,
}

/// A body being walked: the variables its statements bind and whether it
/// may run several times per run of its enclosing body.
struct Frame {
    bound: HashSet<Var>,
    repeated: bool,
}

/// The views of `f` that the C code builds as borrowed views (see the
/// module documentation).
pub(crate) fn borrowed_views(f: &Function, types: &HashMap<Var, Type>) -> HashSet<Var> {
    let mut a = Analysis::default();
    let mut frames = Vec::new();
    a.body(&f.body, true, &mut frames, types);
    let mut total: HashMap<Var, usize> = HashMap::new();
    for_each_var(&f.body, |v, _| *total.entry(v).or_default() += 1, |_| {});
    let mut borrowed: HashSet<Var> = a
        .candidates
        .iter()
        .filter(|(v, c)| {
            !a.consumed.contains(&c.parent)
                && a.allowed.get(v).copied().unwrap_or(0) == total.get(v).copied().unwrap_or(0)
        })
        .map(|(v, _)| *v)
        .collect();
    loop {
        let drop: Vec<Var> = borrowed
            .iter()
            .copied()
            .filter(|v| {
                let c = &a.candidates[v];
                let parent_ok = c.stable_parent || borrowed.contains(&c.parent);
                let users_ok = a
                    .requires
                    .get(v)
                    .is_none_or(|ws| ws.iter().all(|w| borrowed.contains(w)));
                !(parent_ok && users_ok)
            })
            .collect();
        if drop.is_empty() {
            return borrowed;
        }
        for v in drop {
            borrowed.remove(&v);
        }
    }
}

impl Analysis {
    fn allow(&mut self, v: Var, requires: Option<Var>) {
        *self.allowed.entry(v).or_default() += 1;
        if let Some(w) = requires {
            self.requires.entry(v).or_default().push(w);
        }
    }

    /// Whether `p` outlives anything bound in the innermost frame: no
    /// statement of the frames up to the innermost repeated one binds it.
    fn stable(frames: &[Frame], p: Var) -> bool {
        for f in frames.iter().rev() {
            if f.bound.contains(&p) {
                return false;
            }
            if f.repeated {
                break;
            }
        }
        true
    }

    fn body(
        &mut self,
        b: &Body,
        repeated: bool,
        frames: &mut Vec<Frame>,
        types: &HashMap<Var, Type>,
    ) {
        let bound = b
            .stms
            .iter()
            .flat_map(|s| s.pat.iter().map(|p| p.var))
            .collect();
        frames.push(Frame { bound, repeated });
        for s in &b.stms {
            match &s.exp {
                Exp::Index(p, idx)
                    if !idx.is_empty() && idx.iter().all(|d| matches!(d, DimIndex::Fix(_))) =>
                {
                    match s.pat.first().map(|q| (q.var, &q.ty)) {
                        Some((v, Type::Array(..))) if s.pat.len() == 1 => {
                            self.candidates.insert(
                                v,
                                Candidate {
                                    parent: *p,
                                    stable_parent: Self::stable(frames, *p),
                                },
                            );
                            self.allow(*p, Some(v));
                        }
                        _ => self.allow(*p, None),
                    }
                }
                Exp::Size(v, _) => self.allow(*v, None),
                Exp::Soac(Soac::Map { lam, arrs, .. }) => self.rows(&lam.params, arrs, true),
                Exp::Soac(Soac::Reduce { lam, arrs, .. } | Soac::Scan { lam, arrs, .. }) => {
                    let elems = lam.params.get(arrs.len()..).unwrap_or(&[]);
                    self.rows(elems, arrs, false);
                }
                Exp::Update(v, ..) => {
                    self.consumed.insert(*v);
                }
                Exp::Soac(Soac::Scatter { dest, .. } | Soac::Hist { dest, .. }) => {
                    self.consumed.extend(dest.iter().copied());
                }
                Exp::WithAcc { inputs, .. } => {
                    for AccInput { array, .. } in inputs {
                        self.consumed.insert(*array);
                    }
                }
                // Conservatively: any array a loop starts from, any array
                // argument of a call (the callee may take it unique).
                Exp::Loop { init: atoms, .. } | Exp::Apply(_, atoms) => {
                    let arrays = atoms.iter().filter_map(Atom::as_var);
                    self.consumed
                        .extend(arrays.filter(|v| matches!(types.get(v), Some(Type::Array(..)))));
                }
                _ => {}
            }
            s.exp.for_each_nested(|n| match n {
                Nested::Body(nb) => {
                    let repeated = matches!(s.exp, Exp::Loop { .. });
                    self.body(nb, repeated, frames, types)
                }
                Nested::Lambda(l) => {
                    let repeated = !matches!(s.exp, Exp::WithAcc { .. });
                    self.body(&l.body, repeated, frames, types)
                }
            });
        }
        frames.pop();
    }

    /// The element parameters `params` of a SOAC over `arrs`: a scalar
    /// element is a read; with `candidates` (a map), an array row
    /// parameter is a candidate whose parent, the input, the map holds
    /// throughout (other array elements are not allowed reads).
    fn rows(&mut self, params: &[Param], arrs: &[Var], candidates: bool) {
        if params.len() != arrs.len() {
            return;
        }
        for (p, a) in params.iter().zip(arrs) {
            match &p.ty {
                Type::Prim(_) => self.allow(*a, None),
                Type::Array(..) if candidates => {
                    self.candidates.insert(
                        p.var,
                        Candidate {
                            parent: *a,
                            stable_parent: true,
                        },
                    );
                    self.allow(*a, Some(p.var));
                }
                _ => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::func::{collect_body, collect_params};

    /// The names of the borrowed views of `main` in the IR text.
    fn borrowed(text: &str) -> Vec<String> {
        let prog = nabla_ir::parse::parse_program(text).expect("the test program parses");
        let f = &prog.functions[0];
        let mut types = HashMap::new();
        collect_params(&f.params, &mut types);
        collect_body(&f.body, &mut types).expect("types");
        let mut names: Vec<String> = borrowed_views(f, &types)
            .into_iter()
            .map(|v| f.var_names[v.0 as usize].clone())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn rows_and_views_read_only_by_indexing_are_borrowed() {
        let text = "
fun main (xss_0: [?][3][2]f64): ([?]f64) = {
  let n_1: i64 = size(xss_0, 0)
  let r_7: [n_1]f64 = map(n_1, \\(row_2: [3][2]f64): (f64) -> {
    let v_3: [2]f64 = row_2[1i64]
    let a_4: f64 = v_3[0i64]
    let m_5: i64 = size(v_3, 0)
    let b_6: f64 = row_2[2i64, 1i64]
    let c_8: f64 = a_4 + b_6
    in (c_8)
  }, xss_0)
  in (r_7)
}
";
        assert_eq!(borrowed(text), ["row_2", "v_3"]);
    }

    #[test]
    fn views_that_escape_keep_their_reference() {
        // The row is the lambda's result; the view of the other row is a
        // loop's initial value (it would outlive the iteration), and so
        // its row is not borrowed either.
        let text = "
fun main (xss_0: [?][3]f64, yss_1: [?][2][3]f64): ([?][3]f64, [?]f64) = {
  let n_2: i64 = size(xss_0, 0)
  let r_4: [n_2][3]f64 = map(n_2, \\(row_3: [3]f64): ([3]f64) -> {
    in (row_3)
  }, xss_0)
  let s_11: [n_2]f64 = map(n_2, \\(q_5: [2][3]f64): (f64) -> {
    let v_6: [3]f64 = q_5[0i64]
    let l_9: [3]f64 = loop (acc_7: [3]f64 = v_6) for i_8 < 2i64 do {
      in (acc_7)
    }
    let e_10: f64 = l_9[0i64]
    in (e_10)
  }, yss_1)
  in (r_4, s_11)
}
";
        assert_eq!(borrowed(text), Vec::<String>::new());
    }

    #[test]
    fn a_view_of_an_array_bound_in_its_own_body_keeps_its_reference() {
        // `c` may be released early (before a consuming statement) while
        // the view is still read; the view of the parameter may borrow.
        let text = "
fun main (xss_0: [?][3]f64): (f64, f64) = {
  let c_1: [?][3]f64 = copy(xss_0)
  let v_2: [3]f64 = c_1[0i64]
  let a_3: f64 = v_2[1i64]
  let w_4: [3]f64 = xss_0[0i64]
  let b_5: f64 = w_4[2i64]
  in (a_3, b_5)
}
";
        assert_eq!(borrowed(text), ["w_4"]);
    }
}
