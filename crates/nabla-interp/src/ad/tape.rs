//! The reverse-mode tape and its sweep.
//!
//! A `vjp` records, in creation order, one [`Entry`] per scalar operation and
//! one per array operation (an index, an update, a scatter, a replicate, a
//! concatenation, a SOAC's collected result, …) whose result depends on its
//! parameters. Entry `i` produces node `i`; operands name earlier nodes, so
//! creation order is a topological order. [`sweep`] visits every entry once,
//! from the last to the first, and adds the entry's transposed contribution
//! of its (complete) output adjoint into its operands' adjoints — time and
//! memory linear in the recorded operations. This replaces Jensen 2024, §3.2's
//! recursive `deriveTape`, which re-derives shared sub-expressions once per
//! use (exponential on DAGs; its §4.2 "caveat #2" and §5.1).
//!
//! Array adjoints are flat buffers accumulated in place (`lin::move_into`);
//! an in-place update passes its output adjoint on to the updated array
//! without copying. When adjoints are themselves AD values (a `vjp` nested in
//! another `jvp`/`vjp`), contributions into parts of an array adjoint are
//! collected and summed by one linear operation when the node is swept, so
//! the nested case stays linear too.

use super::lin::{self, Lin, Reg};
use super::rules::{self, AdOp};
use super::value::V;
use super::AdState;
use nabla_ir::derivatives::Derivative;
use nabla_prim::{BinOp, PrimType, PrimValue};
use nabla_values::{shape_elems, ArrayValue, Value};
use std::collections::HashMap;
use std::rc::Rc;

use super::NONE;

/// One recorded operation.
pub(crate) enum Entry {
    /// A parameter of the `vjp`.
    Input { shape: Rc<[i64]>, elem: PrimType },
    /// A unary or binary scalar operation on plain scalar primals (boxed:
    /// rare on float programs, which record [`Entry::Partials`]).
    Scalar(Box<ScalarOp>),
    /// A first-order `f32`/`f64` scalar operation with its partial
    /// derivatives evaluated when it was recorded (`fast.rs`): the sweep adds
    /// `d[k]·ā` into node `nodes[k]` (`NONE`: a constant operand). Partials
    /// are stored as `f64` (exact for `f32`; the products are computed in
    /// the element type, `f32` when `f32`).
    Partials {
        f32: bool,
        d: [f64; 2],
        nodes: [u32; 2],
    },
    /// A `reduce` with a recognised operator over a rank-1 array, as one
    /// operation (`bulk.rs`).
    Reduce(Box<super::bulk::Red>),
    /// One output of a `map` of float scalar operations, reads of free
    /// arrays and `if`s over rank-1 arrays, with the per-element partials
    /// (`bulk.rs`).
    Map(Box<super::bulk::MapOut>),
    /// A scalar operation whose primals are AD values of lower levels
    /// (nested AD; boxed).
    General(Box<GeneralOp>),
    /// A linear array operation (see `lin.rs`), boxed.
    Lin(Box<LinOp>),
    /// The contiguous part `start..start + |shape|` of node `src` (a row or an
    /// element read by a SOAC or an index): a cheap special case of `Lin::Move`.
    Slice {
        src: u32,
        start: usize,
        shape: Rc<[i64]>,
        elem: PrimType,
    },
    /// A `with_vjp` whose arguments this tape tracks: recorded before its
    /// results ([`Entry::CustomOut`]), so the sweep reaches it once every
    /// result's adjoint is complete; it then hands the rule to the caller
    /// ([`Step::Custom`]).
    Custom(Box<CustomOp>),
    /// Result `j` of the [`Entry::Custom`] at node `head`.
    CustomOut(Box<CustomOut>),
}

/// The payload of [`Entry::Custom`]: what the rule of a `with_vjp` needs in
/// the sweep (Futhark's `with_vjp`, futhark-internals.md §2).
pub(crate) struct CustomOp {
    /// The rule (parameters: the saved values, then one adjoint per result).
    pub rule: Rc<nabla_ir::Lambda>,
    /// The frame size of the function the `with_vjp` is in (the rule's
    /// variables are that function's), and that function's index.
    pub frame: usize,
    pub fun: usize,
    /// The saved values (of lower levels than this tape's).
    pub saved: Box<[V]>,
    /// The rule's free variables and their values (this tape's level and
    /// higher stripped).
    pub env: Box<[(nabla_ir::Var, V)]>,
    /// Per argument: its node on this tape (`NONE`: a constant here).
    pub inputs: Box<[u32]>,
    /// Per result: shape and element type (for a zero adjoint).
    pub outs: Box<[(Rc<[i64]>, PrimType)]>,
    /// The `with_vjp` statement (for errors of its rule's results).
    pub span: nabla_ir::Span,
}

/// The payload of [`Entry::CustomOut`].
pub(crate) struct CustomOut {
    pub head: u32,
    pub j: u32,
    pub shape: Rc<[i64]>,
    pub elem: PrimType,
}

/// The payload of [`Entry::Scalar`]: `n` operands.
pub(crate) struct ScalarOp {
    pub op: AdOp,
    pub n: u8,
    pub args: [PrimValue; 2],
    pub nodes: [u32; 2],
}

/// The payload of [`Entry::General`].
pub(crate) struct GeneralOp {
    pub op: AdOp,
    pub args: Box<[V]>,
    pub nodes: [u32; 3],
}

/// The payload of [`Entry::Lin`]: output of shape `shape`.
pub(crate) struct LinOp {
    pub op: Rc<Lin>,
    pub nodes: Box<[u32]>,
    pub shape: Rc<[i64]>,
    pub elem: PrimType,
}

/// Entries in fixed-size chunks: appending never moves recorded entries
/// (no reallocation copies of a large tape), and the sweep frees chunks as
/// it consumes them.
#[derive(Default)]
pub(crate) struct Entries {
    chunks: Vec<Vec<Entry>>,
    len: usize,
}

const CHUNK: usize = 1 << 14;

/// Empty chunks and adjoint vectors kept for reuse by later tapes and sweeps
/// of this thread (at most [`POOL_CHUNKS`] chunks, about 14 MiB, and one
/// adjoint vector of at most [`POOL_ADJ`] slots): a large tape is written
/// and swept once, and memory fresh from the system costs a page fault per
/// page — about as much as recording the entries on it.
struct Pool {
    chunks: Vec<Vec<Entry>>,
    adj: Vec<Slot>,
}

const POOL_CHUNKS: usize = 16;
const POOL_ADJ: usize = 1 << 18;

thread_local! {
    static POOL: std::cell::RefCell<Pool> = const {
        std::cell::RefCell::new(Pool {
            chunks: Vec::new(),
            adj: Vec::new(),
        })
    };
}

/// What the tape is called in out-of-memory errors.
const TAPE: &str = "the tape of a vjp";

/// A chunk from the pool, or a new one (or the out-of-memory message).
fn new_chunk() -> Result<Vec<Entry>, String> {
    match POOL.with(|p| p.borrow_mut().chunks.pop()) {
        Some(c) => Ok(c),
        None => crate::alloc::try_with_capacity(CHUNK, TAPE),
    }
}

/// Returns an emptied chunk to the pool (or frees it).
fn recycle_chunk(c: Vec<Entry>) {
    debug_assert!(c.is_empty());
    POOL.with(|p| {
        let mut p = p.borrow_mut();
        if p.chunks.len() < POOL_CHUNKS && c.capacity() == CHUNK {
            p.chunks.push(c);
        }
    });
}

/// An adjoint vector of `n` empty slots (the pooled one when there is
/// one), or the out-of-memory message.
fn new_adj(n: usize) -> Result<Vec<Slot>, String> {
    let mut v = POOL.with(|p| std::mem::take(&mut p.borrow_mut().adj));
    v.clear();
    crate::alloc::try_reserve(&mut v, n, "the adjoints of a vjp's sweep")?;
    v.resize_with(n, || Slot::Empty);
    Ok(v)
}

/// Returns an adjoint vector to the pool when it is not too large.
fn recycle_adj(mut v: Vec<Slot>) {
    if v.capacity() <= POOL_ADJ {
        v.clear();
        POOL.with(|p| {
            let mut p = p.borrow_mut();
            if p.adj.capacity() < v.capacity() {
                p.adj = v;
            }
        });
    }
}

impl Entries {
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }
    /// Appends an entry, or gives the out-of-memory message.
    #[inline]
    fn push(&mut self, e: Entry) -> Result<(), String> {
        match self.chunks.last_mut() {
            Some(c) if c.len() < CHUNK => c.push(e),
            _ => {
                let mut c = new_chunk()?;
                c.push(e);
                if self.chunks.len() == self.chunks.capacity() {
                    let more = self.chunks.len().max(16);
                    crate::alloc::try_reserve(&mut self.chunks, more, TAPE)?;
                }
                self.chunks.push(c);
            }
        }
        self.len += 1;
        Ok(())
    }
    fn pop(&mut self) -> Option<Entry> {
        let c = self.chunks.last_mut()?;
        let e = c.pop();
        if c.is_empty() {
            if let Some(c) = self.chunks.pop() {
                recycle_chunk(c);
            }
        }
        if e.is_some() {
            self.len -= 1;
        }
        e
    }
    #[inline]
    fn get(&self, i: usize) -> &Entry {
        &self.chunks[i / CHUNK][i % CHUNK]
    }
}

/// The tape of one `vjp`.
#[derive(Default)]
pub(crate) struct Tape {
    pub entries: Entries,
}

impl Tape {
    /// Records an entry; returns its node.
    #[inline]
    pub fn push(&mut self, e: Entry) -> Result<u32, String> {
        let n = self.entries.len();
        if n >= NONE as usize {
            return Err("vjp: too many recorded operations".into());
        }
        self.entries.push(e)?;
        Ok(n as u32)
    }
}

/// One node's adjoint during a sweep, in 16 bytes (a third of an
/// `Option<V>`; one slot per tape entry is allocated for the sweep): the
/// plain `f64`/`f32` scalars of first-order AD inline, anything else boxed.
/// Converting to and from [`V`] is lossless.
pub(crate) enum Slot {
    Empty,
    F64(f64),
    F32(f32),
    Boxed(Box<V>),
}

impl Slot {
    #[inline]
    fn of(v: V) -> Slot {
        match v {
            V::Plain(Value::Prim(PrimValue::F64(x))) => Slot::F64(x),
            V::Plain(Value::Prim(PrimValue::F32(x))) => Slot::F32(x),
            v => Slot::Boxed(Box::new(v)),
        }
    }
    #[inline]
    fn take(&mut self) -> Option<V> {
        match std::mem::replace(self, Slot::Empty) {
            Slot::Empty => None,
            Slot::F64(x) => Some(V::prim(PrimValue::F64(x))),
            Slot::F32(x) => Some(V::prim(PrimValue::F32(x))),
            Slot::Boxed(b) => Some(*b),
        }
    }
    #[inline]
    fn is_none(&self) -> bool {
        matches!(self, Slot::Empty)
    }
}

/// The adjoints during a sweep.
struct Adj {
    dense: Vec<Slot>,
    /// Contributions `(positions, flat values)` into parts of array adjoints
    /// that are AD values (nested AD only).
    parts: HashMap<u32, Vec<(Reg, V)>>,
}

fn node_info(entries: &Entries, node: u32) -> (Rc<[i64]>, Option<PrimType>) {
    match entries.get(node as usize) {
        Entry::Input { shape, elem } | Entry::Slice { shape, elem, .. } => {
            (shape.clone(), Some(*elem))
        }
        Entry::Lin(l) => (l.shape.clone(), Some(l.elem)),
        Entry::CustomOut(c) => (c.shape.clone(), Some(c.elem)),
        Entry::Custom(_) => (Rc::from([]), None),
        Entry::Map(m) => (Rc::from([m.rec.n as i64]), Some(m.rec.elem)),
        Entry::Scalar(_) | Entry::General(_) | Entry::Partials { .. } | Entry::Reduce(_) => {
            (Rc::from([]), None)
        }
    }
}

impl Adj {
    /// `adj[node] += c` (same shape).
    fn full(&mut self, st: &mut AdState, node: u32, c: V) -> Result<(), String> {
        let slot = &mut self.dense[node as usize];
        if let Slot::Boxed(b) = slot {
            // Nested AD: the sum goes back into the same box.
            let a = std::mem::replace(&mut **b, V::prim(PrimValue::Bool(false)));
            let r = add(st, a, c)?;
            if matches!(
                r,
                V::Plain(Value::Prim(PrimValue::F64(_) | PrimValue::F32(_)))
            ) {
                *slot = Slot::of(r);
            } else {
                **b = r;
            }
            return Ok(());
        }
        *slot = Slot::of(match slot.take() {
            None => c,
            Some(a) => add(st, a, c)?,
        });
        Ok(())
    }

    /// `adj[node] += c` for a bulk rule's contribution `c` (`bulk.rs`) that
    /// the element-by-element path adds through [`Adj::at`] into an adjoint
    /// created as zeros: when there is no adjoint yet, `0 + c` (so `-0.0`
    /// becomes `+0.0`, bit for bit as that path).
    fn full_sliced(&mut self, st: &mut AdState, node: u32, c: V) -> Result<(), String> {
        if self.dense[node as usize].is_none() {
            if let V::Plain(Value::Array(mut a)) = c {
                if let Some(xs) = a.as_mut_slice::<f64>() {
                    xs.iter_mut().for_each(|x| *x += 0.0);
                } else if let Some(xs) = a.as_mut_slice::<f32>() {
                    xs.iter_mut().for_each(|x| *x += 0.0);
                }
                return self.full(st, node, V::Plain(Value::Array(a)));
            }
        }
        self.full(st, node, c)
    }

    /// `adj[node].flat[dst[k]] += v.flat[src[k]]`.
    fn at(
        &mut self,
        st: &mut AdState,
        entries: &Entries,
        node: u32,
        dst: &Reg,
        src: &Reg,
        v: &V,
    ) -> Result<(), String> {
        let (shape, elem) = node_info(entries, node);
        let elem = elem.unwrap_or_else(|| v.elem());
        let n = shape_elems(&shape).unwrap_or(0);
        // The whole target from a contiguous part: a view (O(1)).
        if let (Reg::Contig { start: 0, len }, Reg::Contig { start, .. }) = (dst, src) {
            if *len == n {
                let op = Rc::new(Lin::Move {
                    from: src.clone(),
                    to: Reg::whole(n),
                    shape: shape.clone(),
                    elem,
                });
                let _ = start;
                let c = st.lin(&op, vec![v.clone()])?;
                return self.full(st, node, c);
            }
        }
        if let V::Plain(pv) = v {
            let slot = &mut self.dense[node as usize];
            if slot.is_none() {
                *slot = Slot::of(V::Plain(if shape.is_empty() {
                    Value::Prim(PrimValue::zero(elem))
                } else {
                    Value::Array(ArrayValue::zeros(elem, &shape))
                }));
            }
            // An array adjoint is updated in its box; a scalar one through
            // a temporary value.
            let done = match slot {
                Slot::Boxed(b) => match &mut **b {
                    V::Plain(a) => Some(lin::move_into(a, dst, pv, src, true)),
                    _ => None,
                },
                Slot::Empty => None,
                sc => {
                    let Some(V::Plain(mut a)) = sc.take() else {
                        return Err("internal error: adjoint slot".into());
                    };
                    let ok = lin::move_into(&mut a, dst, pv, src, true);
                    *sc = Slot::of(V::Plain(a));
                    Some(ok)
                }
            };
            if let Some(ok) = done {
                if !ok {
                    return Err("internal error: adjoint contribution of the wrong shape".into());
                }
                return Ok(());
            }
        }
        let m = dst.len();
        let op = Rc::new(Lin::Move {
            from: src.clone(),
            to: Reg::whole(m),
            shape: Rc::from([m as i64]),
            elem,
        });
        let c = st.lin(&op, vec![v.clone()])?;
        self.parts.entry(node).or_default().push((dst.clone(), c));
        Ok(())
    }

    /// Takes the complete adjoint of `node` (None: zero).
    fn take(
        &mut self,
        st: &mut AdState,
        shape: &Rc<[i64]>,
        elem: Option<PrimType>,
        node: u32,
    ) -> Result<Option<V>, String> {
        let d = self.dense[node as usize].take();
        if self.parts.is_empty() {
            return Ok(d);
        }
        let Some(ps) = self.parts.remove(&node) else {
            return Ok(d);
        };
        let elem = elem
            .or_else(|| ps.first().map(|p| p.1.elem()))
            .unwrap_or(PrimType::F64);
        let n = shape_elems(shape).unwrap_or(0);
        let mut parts = Vec::with_capacity(ps.len() + 1);
        let mut ins = Vec::with_capacity(ps.len() + 1);
        if let Some(d) = d {
            parts.push((Reg::whole(n), shape.clone()));
            ins.push(d);
        }
        for (r, v) in ps {
            parts.push((r, v.shape().into()));
            ins.push(v);
        }
        let op = Rc::new(Lin::Embed {
            shape: shape.clone(),
            elem,
            parts: parts.into(),
        });
        st.lin(&op, ins).map(Some)
    }
}

/// `a + c` for adjoints of one shape.
fn add(st: &mut AdState, a: V, c: V) -> Result<V, String> {
    match (a, c) {
        (V::Plain(a), V::Plain(c)) => lin::add_plain(a, &c).map(V::Plain),
        (a, c) if a.shape().is_empty() => st.prim(AdOp::Bin(BinOp::Add), &[a, c]),
        (a, c) => {
            let shape: Rc<[i64]> = a.shape().into();
            let n = shape_elems(&shape).unwrap_or(0);
            let op = Rc::new(Lin::Embed {
                shape: shape.clone(),
                elem: a.elem(),
                parts: Rc::from([(Reg::whole(n), shape.clone()), (Reg::whole(n), shape)]),
            });
            st.lin(&op, vec![a, c])
        }
    }
}

/// `a` with the positions `reg` zeroed (in place when plain and unshared).
fn zero_at(st: &mut AdState, a: V, reg: &Reg) -> Result<V, String> {
    match a {
        V::Plain(mut x) => {
            lin::zero_region(&mut x, reg);
            Ok(V::Plain(x))
        }
        a => st.lin(&Rc::new(Lin::Zero { reg: reg.clone() }), vec![a]),
    }
}

/// Whether an adjoint is a plain (not nested-AD) scalar zero, which the
/// sweep treats as no adjoint at all.
pub(crate) fn is_plain_scalar_zero(a: &V) -> bool {
    match a {
        V::Plain(Value::Prim(p)) => match *p {
            PrimValue::F64(x) => x == 0.0,
            PrimValue::F32(x) => x == 0.0,
            PrimValue::F16(x) => f32::from(x) == 0.0,
            _ => false,
        },
        _ => false,
    }
}

/// What [`Sweep::run`] stopped at.
pub(crate) enum Step {
    /// The sweep is over: the adjoints of the tape's first `n_inputs` nodes
    /// (the `vjp`'s parameters; `None`: zero).
    Done(Vec<Option<V>>),
    /// A `with_vjp` with the adjoints of its results (`None`: zero): the
    /// caller runs the rule and gives its results to [`Sweep::add_custom`],
    /// then runs the sweep on.
    Custom(Box<CustomOp>, Vec<Option<V>>),
}

/// A sweep of one tape, backwards from the output adjoints, that stops at
/// each `with_vjp` whose rule must run (the interpreter runs it).
pub(crate) struct Sweep {
    adj: Adj,
    tape: Tape,
    n_inputs: usize,
    /// Per `with_vjp` (its head node): the adjoints of its results so far.
    custom: HashMap<u32, Vec<Option<V>>>,
}

impl Sweep {
    /// Starts a sweep of `tape` from the output adjoints `seeds` (node, adjoint).
    pub(crate) fn new(
        st: &mut AdState,
        tape: Tape,
        n_inputs: usize,
        seeds: Vec<(u32, V)>,
    ) -> Result<Sweep, String> {
        let mut adj = Adj {
            dense: new_adj(tape.entries.len())?,
            parts: HashMap::new(),
        };
        for (n, y) in seeds {
            adj.full(st, n, y)?;
        }
        Ok(Sweep {
            adj,
            tape,
            n_inputs,
            custom: HashMap::new(),
        })
    }

    /// Adds the results of a `with_vjp`'s rule (one adjoint per argument)
    /// into its arguments' adjoints.
    pub(crate) fn add_custom(
        &mut self,
        st: &mut AdState,
        op: &CustomOp,
        cs: Vec<V>,
    ) -> Result<(), String> {
        if cs.len() != op.inputs.len() {
            return Err("internal error: with_vjp rule with the wrong number of results".into());
        }
        for (&node, c) in op.inputs.iter().zip(cs) {
            if node == NONE {
                continue;
            }
            let (shape, _) = node_info(&self.tape.entries, node);
            if *shape != *c.shape() {
                return Err(format!(
                    "with_vjp: the derivative rule returned an adjoint of shape {} for an argument of shape {}",
                    crate::array::show_shape(c.shape()),
                    crate::array::show_shape(&shape)
                ));
            }
            self.adj.full(st, node, c)?;
        }
        Ok(())
    }

    /// Runs the sweep on to its end or to the next `with_vjp` rule.
    pub(crate) fn run(&mut self, st: &mut AdState) -> Result<Step, String> {
        let Sweep {
            adj,
            tape,
            n_inputs,
            custom,
        } = self;
        let n_inputs = *n_inputs;
        let entries = &mut tape.entries;
        while entries.len() > n_inputs {
            st.sweep_steps += 1;
            let i = (entries.len() - 1) as u32;
            if let Entry::Custom(_) = entries.get(i as usize) {
                adj.dense[i as usize].take();
                let Some(Entry::Custom(op)) = entries.pop() else {
                    break;
                };
                if let Some(outs) = custom.remove(&i) {
                    if outs.iter().any(|o| o.is_some()) {
                        return Ok(Step::Custom(op, outs));
                    }
                }
                continue;
            }
            let a = if adj.parts.is_empty() {
                adj.dense[i as usize].take()
            } else {
                let (shape, elem) = node_info(entries, i);
                adj.take(st, &shape, elem, i)?
            };
            let Some(a) = a else {
                entries.pop();
                continue;
            };
            if is_plain_scalar_zero(&a) {
                // A symbolic zero: contributes nothing, even through an
                // infinite or NaN partial (`0 · ∞` would be NaN).
                entries.pop();
                continue;
            }
            let Some(e) = entries.pop() else { break };
            match e {
                Entry::Input { .. } => {
                    return Err("internal error: vjp input recorded after other operations".into())
                }
                Entry::Scalar(sc) => {
                    let ScalarOp { op, n, args, nodes } = *sc;
                    let nodes3 = [nodes[0], nodes[1], NONE];
                    if let V::Plain(Value::Prim(ap)) = a {
                        scalar_back(adj, op, &args[..n as usize], &nodes3, ap)?;
                    } else {
                        let xs: Vec<V> = args[..n as usize].iter().map(|p| V::prim(*p)).collect();
                        prim_back(st, adj, op, &xs, &nodes3, a)?;
                    }
                }
                Entry::Partials { f32, d, nodes } => partials_back(st, adj, f32, &d, &nodes, a)?,
                Entry::General(g) => prim_back(st, adj, g.op, &g.args, &g.nodes, a)?,
                Entry::Map(m) => {
                    // One joint pass for this output and the map's earlier
                    // outputs (whose adjoints are complete: only later entries
                    // contribute to them); later outputs were swept already.
                    let mut roots = Vec::with_capacity(m.k + 1);
                    for k in 0..m.k {
                        let nd = m.first + k as u32;
                        let (shape, elem) = node_info(entries, nd);
                        if let Some(x) = adj.take(st, &shape, elem, nd)? {
                            roots.push((m.rec.tracked[k], x));
                        }
                    }
                    roots.push((m.rec.tracked[m.k], a));
                    let (cs, reads) = super::bulk::map_back(st, &m.rec, roots)?;
                    for (nd, c) in cs {
                        adj.full_sliced(st, nd, c)?;
                    }
                    // Reads of free arrays: as the generic path's slice entries.
                    for (nd, pos, c) in reads {
                        let dst = Reg::Contig { start: pos, len: 1 };
                        adj.at(st, entries, nd, &dst, &Reg::whole(1), &c)?;
                    }
                }
                Entry::Reduce(red) => {
                    if let (super::bulk::RedBack::Sel(Some(j)), true) = (&red.how, red.src != NONE)
                    {
                        let dst = Reg::Contig { start: *j, len: 1 };
                        adj.at(st, entries, red.src, &dst, &Reg::whole(1), &a)?;
                    } else if let Some(c) = super::bulk::reduce_back(st, &red, a)? {
                        adj.full_sliced(st, red.src, c)?;
                    }
                }
                Entry::Slice {
                    src, start, shape, ..
                } => {
                    let len = shape_elems(&shape).unwrap_or(0);
                    adj.at(
                        st,
                        entries,
                        src,
                        &Reg::Contig { start, len },
                        &Reg::whole(len),
                        &a,
                    )?;
                }
                Entry::Lin(l) => lin_back(st, adj, entries, &l.op, &l.nodes, a)?,
                Entry::CustomOut(c) => {
                    let head = custom.entry(c.head).or_default();
                    if head.len() <= c.j as usize {
                        head.resize(c.j as usize + 1, None);
                    }
                    head[c.j as usize] = Some(a);
                }
                Entry::Custom(_) => {
                    return Err("internal error: with_vjp entry swept twice".into());
                }
            }
        }
        let mut out = Vec::with_capacity(n_inputs);
        for i in 0..entries.len() {
            let (shape, elem) = node_info(entries, i as u32);
            out.push(adj.take(st, &shape, elem, i as u32)?);
        }
        recycle_adj(std::mem::take(&mut adj.dense));
        Ok(Step::Done(out))
    }
}

/// The reverse rule of an [`Entry::Partials`]: `d[k]·ā` into `nodes[k]`,
/// computed in the element type (`f32` when `f32`); with an adjoint that is
/// itself an AD value (nested AD) through the AD-aware multiplication.
fn partials_back(
    st: &mut AdState,
    adj: &mut Adj,
    f32: bool,
    d: &[f64; 2],
    nodes: &[u32; 2],
    a: V,
) -> Result<(), String> {
    for (&n, &dk) in nodes.iter().zip(d) {
        if n == NONE {
            continue;
        }
        let slot = &mut adj.dense[n as usize];
        match (&a, &mut *slot) {
            (V::Plain(Value::Prim(PrimValue::F64(a))), Slot::Empty) if !f32 => {
                *slot = Slot::F64(dk * a);
            }
            (V::Plain(Value::Prim(PrimValue::F64(a))), Slot::F64(s)) if !f32 => {
                *s += dk * a;
            }
            (V::Plain(Value::Prim(PrimValue::F32(a))), Slot::Empty) if f32 => {
                *slot = Slot::F32(dk as f32 * a);
            }
            (V::Plain(Value::Prim(PrimValue::F32(a))), Slot::F32(s)) if f32 => {
                *s += dk as f32 * a;
            }
            _ => {
                let dv = V::prim(if f32 {
                    PrimValue::F32(dk as f32)
                } else {
                    PrimValue::F64(dk)
                });
                let c = st.prim(AdOp::Bin(BinOp::Mul), &[dv, a.clone()])?;
                adj.full(st, n, c)?;
            }
        }
    }
    Ok(())
}

/// [`prim_back`] on plain scalars (the first-order fast path).
fn scalar_back(
    adj: &mut Adj,
    op: AdOp,
    xs: &[PrimValue],
    nodes: &[u32; 3],
    a: PrimValue,
) -> Result<(), String> {
    let put = |adj: &mut Adj, node: u32, c: PrimValue| -> Result<(), String> {
        let slot = &mut adj.dense[node as usize];
        *slot = Slot::of(V::prim(match slot.take() {
            None => c,
            Some(V::Plain(Value::Prim(s))) => rules::apply_plain(AdOp::Bin(BinOp::Add), &[s, c])?,
            Some(other) => {
                *slot = Slot::of(other);
                return Err("internal error: scalar adjoint of an array node".into());
            }
        }));
        Ok(())
    };
    // The commonest linear cases without the general rule machinery.
    match op {
        AdOp::Bin(BinOp::Add) => {
            for &n in &nodes[..2] {
                if n != NONE {
                    put(adj, n, a)?;
                }
            }
            return Ok(());
        }
        AdOp::Bin(BinOp::Mul) => {
            for (k, &n) in nodes[..2].iter().enumerate() {
                if n != NONE {
                    let c = crate::scalar::binop(BinOp::Mul, xs[1 - k], a)?;
                    put(adj, n, c)?;
                }
            }
            return Ok(());
        }
        _ => {}
    }
    match rules::deriv_plain(op, xs, None)? {
        Derivative::Constant => Ok(()),
        Derivative::Conversion { backward, .. } => {
            if nodes[0] != NONE {
                let c = rules::apply_plain(AdOp::Conv(backward), &[a])?;
                put(adj, nodes[0], c)?;
            }
            Ok(())
        }
        Derivative::Partials(ds) => {
            for (k, d) in ds.into_iter().enumerate().take(xs.len()) {
                if nodes[k] == NONE {
                    continue;
                }
                let Some(d) = d else { continue };
                let c = rules::apply_plain(AdOp::Bin(BinOp::Mul), &[d, a])?;
                put(adj, nodes[k], c)?;
            }
            Ok(())
        }
    }
}

/// The reverse rule of a scalar operation: ∂ᵢ·ā into each operand's adjoint.
fn prim_back(
    st: &mut AdState,
    adj: &mut Adj,
    op: AdOp,
    xs: &[V],
    nodes: &[u32; 3],
    a: V,
) -> Result<(), String> {
    match rules::deriv_ad(st, op, xs, None)? {
        Derivative::Constant => Ok(()),
        Derivative::Conversion { backward, .. } => {
            if nodes[0] != NONE {
                let c = st.prim(AdOp::Conv(backward), &[a])?;
                adj.full(st, nodes[0], c)?;
            }
            Ok(())
        }
        Derivative::Partials(ds) => {
            for (k, d) in ds.into_iter().enumerate().take(xs.len()) {
                if nodes[k] == NONE {
                    continue;
                }
                let Some(d) = d else { continue };
                let c = st.prim(AdOp::Bin(BinOp::Mul), &[d, a.clone()])?;
                adj.full(st, nodes[k], c)?;
            }
            Ok(())
        }
    }
}

/// The transposed contribution of a linear array operation.
fn lin_back(
    st: &mut AdState,
    adj: &mut Adj,
    entries: &Entries,
    op: &Lin,
    nodes: &[u32],
    a: V,
) -> Result<(), String> {
    match op {
        Lin::Move { from, to, .. } => {
            if nodes[0] != NONE {
                adj.at(st, entries, nodes[0], from, to, &a)?;
            }
        }
        Lin::Stack { n, row, .. } => {
            let rs = shape_elems(row).unwrap_or(0);
            for (j, &nd) in nodes.iter().enumerate().take(*n) {
                if nd != NONE {
                    let src = Reg::Contig {
                        start: j * rs,
                        len: rs,
                    };
                    adj.at(st, entries, nd, &Reg::whole(rs), &src, &a)?;
                }
            }
        }
        Lin::Embed { parts, .. } => {
            for ((reg, shape), &nd) in parts.iter().zip(nodes) {
                if nd != NONE {
                    let len = shape_elems(shape).unwrap_or(0);
                    adj.at(st, entries, nd, &Reg::whole(len), reg, &a)?;
                }
            }
        }
        Lin::Update { dst, src, .. } => {
            if nodes[1] != NONE {
                adj.at(st, entries, nodes[1], src, dst, &a)?;
            }
            if nodes[0] != NONE {
                let z = zero_at(st, a, dst)?;
                adj.full(st, nodes[0], z)?;
            }
        }
        Lin::Zero { reg } => {
            if nodes[0] != NONE {
                let z = zero_at(st, a, reg)?;
                adj.full(st, nodes[0], z)?;
            }
        }
        Lin::Replicate { n } => {
            if nodes[0] != NONE {
                let row: Rc<[i64]> = a.shape().get(1..).unwrap_or(&[]).into();
                let c = st.lin(&Rc::new(Lin::SumRows { n: *n, row }), vec![a])?;
                adj.full(st, nodes[0], c)?;
            }
        }
        Lin::SumRows { n, .. } => {
            if nodes[0] != NONE {
                let c = st.lin(&Rc::new(Lin::Replicate { n: *n }), vec![a])?;
                adj.full(st, nodes[0], c)?;
            }
        }
        Lin::Reshape {
            shape, in_shape, ..
        } => {
            if nodes[0] != NONE {
                let back = Rc::new(Lin::Reshape {
                    shape: in_shape.clone(),
                    in_shape: shape.clone(),
                    copy: false,
                });
                let c = st.lin(&back, vec![a])?;
                adj.full(st, nodes[0], c)?;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    /// Tape entries stay at 32 bytes (rare, large entries are boxed) and
    /// adjoint slots at 16: one of each per recorded operation is the bulk
    /// of reverse mode's memory.
    #[test]
    fn entry_size() {
        assert!(std::mem::size_of::<super::Entry>() <= 32);
        assert!(std::mem::size_of::<super::Slot>() <= 16);
    }
}
