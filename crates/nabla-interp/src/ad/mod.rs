//! Dynamic automatic differentiation in the interpreter (Jensen 2024, §3, "Not-
//! Quite-Supersonic AD": AD in the Futhark interpreter), with a linear-time
//! reverse sweep and flat arrays.
//!
//! * `jvp` (forward mode) runs the differentiated function on dual values
//!   that carry a tangent beside each primal ([`value::V::DualS`],
//!   [`value::V::Dual`]); every scalar primitive computes its result's
//!   tangent from its partial derivatives (nabla-ir's derivative table,
//!   evaluated by `rules.rs`), every array operation
//!   applies itself to the tangents too (`lin.rs`).
//! * `vjp` (reverse mode) runs it on values that name the entry of a tape
//!   (`tape.rs`) that recorded the operation producing them; afterwards the
//!   tape is swept **once**, from the last entry to the first, adding each
//!   entry's contribution into its operands' adjoints — linear in the number
//!   of recorded operations, unlike Jensen 2024's recursive `deriveTape`, which
//!   revisits shared sub-expressions (its §5.1 names memoisation as the fix).
//! * Every AD value is tagged with the *level* of the `jvp`/`vjp` that
//!   introduced it (Jensen 2024, §3.3): operands of lower levels are constants
//!   for the operation at the highest level, and partial derivatives and
//!   adjoint updates are themselves computed with these AD-aware operations,
//!   so `jvp`/`vjp` nest (and mix) to any depth without perturbation
//!   confusion (Jensen 2024, §3.3 Example 5; Shaikhha et al., ICFP19, §4.3 Example 4).
//! * Programs that never call `jvp`/`vjp` never reach this module: the
//!   evaluator's plain path is unchanged. Inside a `jvp`/`vjp`, statements
//!   whose free variables are all plain still run on the plain path
//!   (`eval.rs`).

pub(crate) mod bulk;
pub(crate) mod bulk_eval;
pub(crate) mod eval;
pub(crate) mod fast;
pub(crate) mod lin;
pub(crate) mod partials;
pub(crate) mod rules;
pub(crate) mod tape;
pub(crate) mod usage;
pub(crate) mod value;

use crate::scalar;
use lin::Lin;
use nabla_ir::derivatives::Derivative;
use nabla_ir::{Body, Stm, Var};
use nabla_prim::{BinOp, PrimValue};
use rules::AdOp;
use std::collections::HashMap;
use std::rc::Rc;
use tape::{Entry, Tape};
use value::V;

/// One active `jvp` or `vjp` call.
pub(crate) enum Level {
    /// A `jvp`: values of this level are dual numbers.
    Fwd,
    /// A `vjp` and its tape.
    Rev(Tape),
}

/// The AD state of an interpreter: the stack of active `jvp`/`vjp` calls
/// (level `l` is `levels[l - 1]`) and a cache of statements' free variables.
#[derive(Default)]
pub(crate) struct AdState {
    pub levels: Vec<Level>,
    pub free_vars: HashMap<*const Stm, Rc<[Var]>, PtrHash>,
    /// Per body: which results may be moved out of their slots.
    pub movable: HashMap<*const Body, Rc<[bool]>, PtrHash>,
    /// Per function and variable: a scalar result whose derivative is never
    /// used (`usage.rs`); empty until the first `jvp`/`vjp` runs.
    pub primal_only: Vec<Vec<bool>>,
    /// AD slot vectors of returned calls, emptied, for reuse.
    pub frames: Vec<Vec<Option<V>>>,
    /// The shape of a scalar, shared by the tape entries of element reads.
    pub scalar_shape: Rc<[i64]>,
    /// Per map lambda: its reverse-mode bulk program (`bulk.rs`; `None`:
    /// the lambda has statements it does not compile).
    pub rev_maps: HashMap<*const nabla_ir::Lambda, Option<Rc<bulk::RevProg>>, PtrHash>,
    /// The rules of the `with_vjp`s met in reverse mode, shared by their
    /// tape entries (kept for the run: other caches key on their addresses).
    pub custom_rules: HashMap<*const nabla_ir::Lambda, Rc<nabla_ir::Lambda>, PtrHash>,
    /// Per lambda of a `with_vjp` (function or rule): its free variables.
    pub custom_free: HashMap<*const nabla_ir::Lambda, Rc<[Var]>, PtrHash>,
    /// Tape entries visited by the sweeps so far ([`crate::Stats::sweep_steps`]).
    pub sweep_steps: u64,
}

/// A fast hasher for pointer keys (the caches above are looked up once per
/// compound statement executed in AD mode).
#[derive(Default, Clone, Copy)]
pub(crate) struct PtrHash;

impl std::hash::BuildHasher for PtrHash {
    type Hasher = PtrHasher;
    fn build_hasher(&self) -> PtrHasher {
        PtrHasher(0)
    }
}

/// See [`PtrHash`].
pub(crate) struct PtrHasher(u64);

impl std::hash::Hasher for PtrHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ b as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }
    fn write_usize(&mut self, x: usize) {
        self.0 = (x as u64 ^ (x as u64 >> 29)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

/// "No node": the operand is a constant for this tape.
pub(crate) const NONE: u32 = u32::MAX;

/// Maximum nesting depth of `jvp`/`vjp` calls.
pub(crate) const MAX_AD_DEPTH: usize = 1000;

impl AdState {
    fn tape(&mut self, l: u32) -> &mut Tape {
        match &mut self.levels[l as usize - 1] {
            Level::Rev(t) => t,
            Level::Fwd => unreachable!("tape of a forward level"),
        }
    }

    fn is_fwd(&self, l: u32) -> bool {
        matches!(self.levels[l as usize - 1], Level::Fwd)
    }

    /// Applies a scalar operation to AD values (`doOp`, Jensen 2024, §3.3–3.4):
    /// at the highest level `l` among the operands, the primal result is the
    /// operation on the primals (recursively, for lower levels); forward
    /// mode adds the tangent Σ ∂ᵢ·ṫᵢ, reverse mode records a tape entry.
    pub fn prim(&mut self, op: AdOp, args: &[V]) -> Result<V, String> {
        let mut l = 0;
        for a in args {
            l = l.max(a.level());
        }
        let mut ps = [PrimValue::Bool(false); 3];
        if l == 0 {
            for (p, a) in ps.iter_mut().zip(args) {
                *p = a
                    .strip_prim()
                    .ok_or("internal error: scalar operation on an array")?;
            }
            return rules::apply_plain(op, &ps[..args.len()]).map(V::prim);
        }
        // Fast path (first-order AD): operands that are plain scalars or
        // inline scalars of level `l`; everything is computed on plain
        // scalars, with the same (generic) rules.
        let mut inline = true;
        for (p, a) in ps.iter_mut().zip(args) {
            match a {
                V::Plain(nabla_values::Value::Prim(x)) => *p = *x,
                V::DualS { p: x, lvl, .. } | V::RevS { p: x, lvl, .. } if *lvl == l => *p = *x,
                _ => {
                    inline = false;
                    break;
                }
            }
        }
        if inline {
            return self.prim_inline(op, args, &ps[..args.len()], l);
        }
        let primals: Vec<V> = args.iter().map(|a| a.primal_at(l)).collect();
        let p = self.prim(op, &primals)?;
        let t0 = primals[0].elem();
        if rules::is_constant(op, t0) {
            return Ok(p);
        }
        if self.is_fwd(l) {
            let d = rules::deriv_ad(self, op, &primals, Some(&p))?;
            let t = match d {
                Derivative::Constant => return Ok(p),
                Derivative::Conversion { forward, .. } => {
                    self.prim(AdOp::Conv(forward), &[args[0].tangent()])?
                }
                Derivative::Partials(ds) => {
                    let mut acc: Option<V> = None;
                    for (a, d) in args.iter().zip(ds) {
                        if a.level() != l {
                            continue;
                        }
                        let Some(d) = d else { continue };
                        let c = self.prim(AdOp::Bin(BinOp::Mul), &[d, a.tangent()])?;
                        acc = Some(match acc {
                            None => c,
                            Some(s) => self.prim(AdOp::Bin(BinOp::Add), &[s, c])?,
                        });
                    }
                    match acc {
                        Some(t) => t,
                        None => p.zeros_like(),
                    }
                }
            };
            Ok(V::dual(l, p, t))
        } else {
            let mut nodes = [NONE; 3];
            for (n, a) in nodes.iter_mut().zip(args) {
                if a.level() == l {
                    *n = a.node();
                }
            }
            let entry = match primals.as_slice() {
                [_] | [_, _]
                    if primals
                        .iter()
                        .all(|x| matches!(x, V::Plain(nabla_values::Value::Prim(_)))) =>
                {
                    let mut ps = [PrimValue::Bool(false); 2];
                    for (q, x) in ps.iter_mut().zip(&primals) {
                        *q = x.strip_prim().unwrap_or(PrimValue::Bool(false));
                    }
                    Entry::Scalar(Box::new(tape::ScalarOp {
                        op,
                        n: primals.len() as u8,
                        args: ps,
                        nodes: [nodes[0], nodes[1]],
                    }))
                }
                _ => Entry::General(Box::new(tape::GeneralOp {
                    op,
                    args: primals.into_boxed_slice(),
                    nodes,
                })),
            };
            let node = self.tape(l).push(entry)?;
            Ok(V::rev(l, p, node))
        }
    }

    /// [`AdState::prim`] when every operand is a plain scalar or an inline
    /// scalar of level `l` (`ps` are the operands' plain primals).
    pub(crate) fn prim_inline(
        &mut self,
        op: AdOp,
        args: &[V],
        ps: &[PrimValue],
        l: u32,
    ) -> Result<V, String> {
        let p = rules::apply_plain(op, ps)?;
        if rules::is_constant(op, ps[0].prim_type()) {
            return Ok(V::prim(p));
        }
        if self.is_fwd(l) {
            // The commonest linear cases without the general rule machinery.
            let tan = |k: usize| match args.get(k) {
                Some(V::DualS { t, .. }) => Some(*t),
                _ => None,
            };
            let add = |a: PrimValue, b: PrimValue| scalar::binop(BinOp::Add, a, b);
            let mul = |a: PrimValue, b: PrimValue| scalar::binop(BinOp::Mul, a, b);
            let direct_tangent = match op {
                AdOp::Bin(BinOp::Add) => Some(match (tan(0), tan(1)) {
                    (Some(a), Some(b)) => add(a, b)?,
                    (Some(a), None) | (None, Some(a)) => a,
                    (None, None) => PrimValue::zero(p.prim_type()),
                }),
                AdOp::Bin(BinOp::Mul) => Some(match (tan(0), tan(1)) {
                    (Some(a), Some(b)) => add(mul(a, ps[1])?, mul(ps[0], b)?)?,
                    (Some(a), None) => mul(a, ps[1])?,
                    (None, Some(b)) => mul(ps[0], b)?,
                    (None, None) => PrimValue::zero(p.prim_type()),
                }),
                _ => None,
            };
            if let Some(t) = direct_tangent {
                return Ok(V::DualS { lvl: l, p, t });
            }
            let t = match rules::deriv_plain(op, ps, Some(&p))? {
                Derivative::Constant => return Ok(V::prim(p)),
                Derivative::Conversion { forward, .. } => match &args[0] {
                    V::DualS { t, .. } => rules::apply_plain(AdOp::Conv(forward), &[*t])?,
                    _ => PrimValue::zero(p.prim_type()),
                },
                Derivative::Partials(ds) => {
                    let mut acc: Option<PrimValue> = None;
                    for (a, d) in args.iter().zip(ds) {
                        let (V::DualS { t, .. }, Some(d)) = (a, d) else {
                            continue;
                        };
                        let c = rules::apply_plain(AdOp::Bin(BinOp::Mul), &[d, *t])?;
                        acc = Some(match acc {
                            None => c,
                            Some(s) => rules::apply_plain(AdOp::Bin(BinOp::Add), &[s, c])?,
                        });
                    }
                    acc.unwrap_or_else(|| PrimValue::zero(p.prim_type()))
                }
            };
            Ok(V::DualS { lvl: l, p, t })
        } else {
            let mut nodes = [NONE; 3];
            for (k, a) in args.iter().enumerate() {
                if let V::RevS { node, .. } = a {
                    nodes[k] = *node;
                }
            }
            // Float operations record their partials (as the first-order
            // fast path does, `fast.rs`: the same rules and products, so
            // the sweep gives the same adjoints) in an unboxed entry.
            if args.len() <= 2 {
                let d = match p {
                    PrimValue::F64(_) => partials::partials_of::<f64>(op, ps, p),
                    PrimValue::F32(_) => partials::partials_of::<f32>(op, ps, p),
                    _ => None,
                };
                if let Some(Ok(Some((d, has)))) = d {
                    let mut nd = [NONE; 2];
                    for k in 0..2 {
                        if has[k] {
                            nd[k] = nodes[k];
                        }
                    }
                    let node = self.tape(l).push(Entry::Partials {
                        f32: matches!(p, PrimValue::F32(_)),
                        d,
                        nodes: nd,
                    })?;
                    return Ok(V::RevS { lvl: l, p, node });
                }
            }
            let entry = if args.len() <= 2 {
                let mut args2 = [PrimValue::Bool(false); 2];
                args2[..ps.len()].copy_from_slice(ps);
                Entry::Scalar(Box::new(tape::ScalarOp {
                    op,
                    n: args.len() as u8,
                    args: args2,
                    nodes: [nodes[0], nodes[1]],
                }))
            } else {
                Entry::General(Box::new(tape::GeneralOp {
                    op,
                    args: ps.iter().map(|p| V::prim(*p)).collect(),
                    nodes,
                }))
            };
            let node = self.tape(l).push(entry)?;
            Ok(V::RevS { lvl: l, p, node })
        }
    }

    /// Applies a linear array operation to AD values: on the primals (and in
    /// forward mode on the tangents, constants contributing zero tangents), or
    /// records one reverse-mode tape entry for the whole operation.
    pub fn lin(&mut self, op: &Rc<Lin>, ins: Vec<V>) -> Result<V, String> {
        let mut l = 0;
        for a in &ins {
            l = l.max(a.level());
        }
        if l == 0 {
            let vs = ins
                .into_iter()
                .map(|v| match v {
                    V::Plain(x) => x,
                    _ => unreachable!(),
                })
                .collect();
            return lin::apply_plain(op, vs).map(V::Plain);
        }
        if self.is_fwd(l) {
            let mut ps = Vec::with_capacity(ins.len());
            let mut ts = Vec::with_capacity(ins.len());
            for a in ins {
                if a.level() == l {
                    let (p, t) = a.into_dual_parts();
                    ps.push(p);
                    ts.push(t);
                } else {
                    ts.push(a.zeros_like());
                    ps.push(a);
                }
            }
            let p = self.lin(op, ps)?;
            let t = self.lin(op, ts)?;
            Ok(V::dual(l, p, t))
        } else {
            let mut ps = Vec::with_capacity(ins.len());
            let mut nodes = Vec::with_capacity(ins.len());
            for a in ins {
                if a.level() == l {
                    let (p, n) = a.into_rev_parts();
                    ps.push(p);
                    nodes.push(n);
                } else {
                    ps.push(a);
                    nodes.push(NONE);
                }
            }
            let p = self.lin(op, ps)?;
            let node = self.tape(l).push(Entry::Lin(Box::new(tape::LinOp {
                op: op.clone(),
                nodes: nodes.into_boxed_slice(),
                shape: p.shape().into(),
                elem: p.elem(),
            })))?;
            Ok(V::rev(l, p, node))
        }
    }
}
