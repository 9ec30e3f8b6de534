//! The values the consumption checker computes with: what a value may alias,
//! shaped like its type ([`Als`]); the uniqueness a type declares, part by
//! part ([`Uniq`]); how a function treats an argument ([`Diet`]); and the
//! uniqueness signature of a function ([`FnSig`]).

use nabla_syntax::ast::*;
use std::collections::{BTreeMap, BTreeSet};
use std::rc::Rc;

/// A set of alias ids (variables, results of applications and loops).
pub(crate) type Ids = BTreeSet<u32>;

/// What a value may alias, shaped like its type (Futhark's "type with
/// aliases"): every array (or value of a type parameter) and every function
/// carries the set of ids it may alias; records and sums are tracked part by
/// part. A function also carries its uniqueness signature when it is known.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Als {
    /// A primitive value: aliases nothing.
    Prim,
    /// An array, an accumulator (consumed and aliased like an array) or a
    /// value of a type parameter.
    Arr(Ids),
    /// A function: what its closure aliases, and its signature if known.
    Fun(Ids, Option<Rc<FnSig>>),
    Rec(Vec<(Name, Als)>),
    Sum(Vec<(Name, Vec<Als>)>),
}

impl Als {
    /// A value of type `t` every part of which aliases `ids` (Futhark's
    /// `setAliases`); functions get no signature. An unknown type is taken to
    /// be an array.
    pub fn of_type(t: Option<&Type>, ids: &Ids) -> Als {
        match t {
            Some(Type::Prim(_)) => Als::Prim,
            Some(Type::Arrow { .. }) => Als::Fun(ids.clone(), None),
            Some(Type::Record(fs)) => Als::Rec(
                fs.iter()
                    .map(|(n, t)| (n.clone(), Als::of_type(Some(t), ids)))
                    .collect(),
            ),
            Some(Type::Sum(cs)) => Als::Sum(
                cs.iter()
                    .map(|(n, ts)| {
                        let ps = ts.iter().map(|t| Als::of_type(Some(t), ids)).collect();
                        (n.clone(), ps)
                    })
                    .collect(),
            ),
            _ => Als::Arr(ids.clone()),
        }
    }

    /// A fresh value of type `t` (aliasing nothing).
    pub fn fresh(t: Option<&Type>) -> Als {
        Als::of_type(t, &Ids::new())
    }

    /// `self` shaped after the type `t`: the parts that match keep their
    /// aliases (and signatures); a part that does not match gets all the
    /// aliases of the corresponding part of `self`.
    pub fn reshape(self, t: Option<&Type>) -> Als {
        let Some(t) = t else {
            return self;
        };
        match (self, t) {
            (_, Type::Prim(_)) => Als::Prim,
            (
                a @ Als::Arr(_),
                Type::Array { .. } | Type::Acc { .. } | Type::Param(_) | Type::Var(_),
            ) => a,
            (a @ Als::Fun(..), Type::Arrow { .. }) => a,
            (Als::Rec(fs), Type::Record(ts))
                if fs.len() == ts.len() && fs.iter().zip(ts).all(|(a, b)| a.0 == b.0) =>
            {
                Als::Rec(
                    fs.into_iter()
                        .zip(ts)
                        .map(|((n, a), (_, t))| (n, a.reshape(Some(t))))
                        .collect(),
                )
            }
            (Als::Sum(cs), Type::Sum(ts))
                if cs.len() == ts.len()
                    && cs
                        .iter()
                        .zip(ts)
                        .all(|(a, b)| a.0 == b.0 && a.1.len() == b.1.len()) =>
            {
                Als::Sum(
                    cs.into_iter()
                        .zip(ts)
                        .map(|((n, ps), (_, pts))| {
                            let ps = ps
                                .into_iter()
                                .zip(pts)
                                .map(|(a, t)| a.reshape(Some(t)))
                                .collect();
                            (n, ps)
                        })
                        .collect(),
                )
            }
            (a, t) => {
                let sig = match &a {
                    Als::Fun(_, s) => s.clone(),
                    _ => None,
                };
                match Als::of_type(Some(t), &a.flat()) {
                    Als::Fun(ids, _) => Als::Fun(ids, sig),
                    other => other,
                }
            }
        }
    }

    /// Every id anywhere in the value (Futhark's `aliases`).
    pub fn flat(&self) -> Ids {
        let mut out = Ids::new();
        self.flat_into(&mut out, true);
        out
    }

    /// The ids of the array parts (not functions' closures; Futhark's
    /// `arrayAliases`).
    pub fn array_flat(&self) -> Ids {
        let mut out = Ids::new();
        self.flat_into(&mut out, false);
        out
    }

    fn flat_into(&self, out: &mut Ids, funs: bool) {
        match self {
            Als::Prim => {}
            Als::Arr(s) => out.extend(s.iter().copied()),
            Als::Fun(s, _) => {
                if funs {
                    out.extend(s.iter().copied())
                }
            }
            Als::Rec(fs) => fs.iter().for_each(|(_, a)| a.flat_into(out, funs)),
            Als::Sum(cs) => cs
                .iter()
                .flat_map(|(_, ps)| ps)
                .for_each(|a| a.flat_into(out, funs)),
        }
    }

    /// Applies `f` to every alias set (arrays and functions).
    pub fn map_sets(&self, f: &mut dyn FnMut(&Ids) -> Ids) -> Als {
        match self {
            Als::Prim => Als::Prim,
            Als::Arr(s) => Als::Arr(f(s)),
            Als::Fun(s, sig) => Als::Fun(f(s), sig.clone()),
            Als::Rec(fs) => Als::Rec(fs.iter().map(|(n, a)| (n.clone(), a.map_sets(f))).collect()),
            Als::Sum(cs) => Als::Sum(
                cs.iter()
                    .map(|(n, ps)| (n.clone(), ps.iter().map(|a| a.map_sets(f)).collect()))
                    .collect(),
            ),
        }
    }

    /// `self` with every part aliasing exactly `ids`.
    pub fn replace_ids(&self, ids: &Ids) -> Als {
        self.map_sets(&mut |_| ids.clone())
    }

    /// `self` without the ids that `keep` rejects.
    pub fn retain(&self, keep: &dyn Fn(u32) -> bool) -> Als {
        self.map_sets(&mut |s| s.iter().copied().filter(|&i| keep(i)).collect())
    }

    /// The part for record field `f` (the whole value if it is not a record).
    pub fn field(&self, f: &str) -> Als {
        match self {
            Als::Rec(fs) => fs
                .iter()
                .find(|(n, _)| n == f)
                .map(|(_, a)| a.clone())
                .unwrap_or(Als::Prim),
            other => other.clone(),
        }
    }

    /// The payloads of constructor `c` (of a sum value), if known.
    pub fn payloads(&self, c: &str) -> Option<&[Als]> {
        match self {
            Als::Sum(cs) => cs.iter().find(|(n, _)| n == c).map(|(_, ps)| &ps[..]),
            _ => None,
        }
    }

    /// The value after `src with path = v` (Futhark's `setFieldAliases`).
    pub fn set_field(&self, path: &[Ident], v: Als) -> Als {
        match (path.split_first(), self) {
            (Some((f, rest)), Als::Rec(fs)) => Als::Rec(
                fs.iter()
                    .map(|(n, a)| {
                        if n == &f.name {
                            (n.clone(), a.set_field(rest, v.clone()))
                        } else {
                            (n.clone(), a.clone())
                        }
                    })
                    .collect(),
            ),
            _ => v,
        }
    }

    /// The aliases of `self` and `other` together, in the shape of `self`
    /// (Futhark's `combineAliases`; a function keeps the first known
    /// signature).
    pub fn combine(&self, other: &Als) -> Als {
        match (self, other) {
            (Als::Prim, _) => Als::Prim,
            (Als::Rec(a), Als::Rec(b))
                if a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.0 == y.0) =>
            {
                Als::Rec(
                    a.iter()
                        .zip(b)
                        .map(|((n, x), (_, y))| (n.clone(), x.combine(y)))
                        .collect(),
                )
            }
            (Als::Sum(a), Als::Sum(b))
                if a.len() == b.len()
                    && a.iter()
                        .zip(b)
                        .all(|(x, y)| x.0 == y.0 && x.1.len() == y.1.len()) =>
            {
                Als::Sum(
                    a.iter()
                        .zip(b)
                        .map(|((n, xs), (_, ys))| {
                            (
                                n.clone(),
                                xs.iter().zip(ys).map(|(x, y)| x.combine(y)).collect(),
                            )
                        })
                        .collect(),
                )
            }
            (Als::Fun(a, s1), Als::Fun(b, s2)) => Als::Fun(
                a.union(b).copied().collect(),
                s1.clone().or_else(|| s2.clone()),
            ),
            (a, b) => {
                let extra = b.flat();
                a.map_sets(&mut |s| s.union(&extra).copied().collect())
            }
        }
    }

    /// The signature of a function value, if known.
    pub fn sig(&self) -> Option<&Rc<FnSig>> {
        match self {
            Als::Fun(_, s) => s.as_ref(),
            _ => None,
        }
    }

    /// Whether the value contains no function (Futhark's `orderZero`).
    pub fn order_zero(&self) -> bool {
        match self {
            Als::Fun(..) => false,
            Als::Prim | Als::Arr(_) => true,
            Als::Rec(fs) => fs.iter().all(|(_, a)| a.order_zero()),
            Als::Sum(cs) => cs.iter().flat_map(|(_, ps)| ps).all(Als::order_zero),
        }
    }

    /// The alias sets of the parts of a record value, each non-record part
    /// as a whole (Futhark's `aliasParts`).
    pub fn parts(&self) -> Vec<Ids> {
        match self {
            Als::Rec(fs) => fs.iter().flat_map(|(_, a)| a.parts()).collect(),
            a => vec![a.flat()],
        }
    }

    /// The ids occurring in more than one part of a record value (Futhark's
    /// `aliasesMultipleTimes`): a result part aliasing one of them cannot be
    /// unique.
    pub fn shared_between_parts(&self) -> Ids {
        let mut count: BTreeMap<u32, usize> = BTreeMap::new();
        for p in self.parts() {
            for i in p {
                *count.entry(i).or_default() += 1;
            }
        }
        count
            .into_iter()
            .filter(|(_, n)| *n > 1)
            .map(|(i, _)| i)
            .collect()
    }

    /// Gives the function parts the signatures that `u` declares (where
    /// `self` has none).
    pub fn with_sigs(self, u: &Uniq) -> Als {
        match (self, u) {
            (Als::Fun(ids, None), Uniq::Fun(s)) => Als::Fun(ids, s.clone()),
            (Als::Rec(fs), Uniq::Rec(us)) => Als::Rec(
                fs.into_iter()
                    .map(|(n, a)| {
                        let a = match us.iter().find(|(m, _)| *m == n) {
                            Some((_, u)) => a.with_sigs(u),
                            None => a,
                        };
                        (n, a)
                    })
                    .collect(),
            ),
            (a, _) => a,
        }
    }
}

/// How a function treats one argument: observes it, consumes it, or (for a
/// record or tuple parameter) field by field.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Diet {
    Observe,
    Consume,
    Rec(Vec<(Name, Diet)>),
}

impl Diet {
    /// Whether some part is consumed (Futhark's `diet` of the whole).
    pub fn consumes(&self) -> bool {
        match self {
            Diet::Observe => false,
            Diet::Consume => true,
            Diet::Rec(fs) => fs.iter().any(|(_, d)| d.consumes()),
        }
    }
}

/// The uniqueness a type declares, part by part: which arrays (and values
/// of type parameters) are unique (`*`), and the signatures of functions.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Uniq {
    Prim,
    /// An array or a value of a type parameter; `true` if unique.
    Arr(bool),
    /// A function, with its signature if known.
    Fun(Option<Rc<FnSig>>),
    Rec(Vec<(Name, Uniq)>),
    Sum(Vec<(Name, Vec<Uniq>)>),
}

/// `te` without grouping parentheses and existential size binders.
fn peel_te(te: Option<&TypeExp>) -> Option<&TypeExp> {
    match te {
        Some(TypeExp::Tuple(ts, _)) if ts.len() == 1 => peel_te(Some(&ts[0])),
        Some(TypeExp::Exists(_, t, _)) => peel_te(Some(t)),
        te => te,
    }
}

/// The written type of record (or tuple) field `f` of `te`, if written.
fn te_field<'a>(te: Option<&'a TypeExp>, f: &str) -> Option<&'a TypeExp> {
    match te {
        Some(TypeExp::Tuple(ts, _)) => f.parse::<usize>().ok().and_then(|i| ts.get(i)),
        Some(TypeExp::Record(fs, _)) => fs.iter().find(|(i, _)| i.name == f).map(|(_, t)| t),
        _ => None,
    }
}

/// The written type of payload `k` of constructor `c` of `te`, if written.
fn te_payload<'a>(te: Option<&'a TypeExp>, c: &str, k: usize) -> Option<&'a TypeExp> {
    match te {
        Some(TypeExp::Sum(cs, _)) => cs
            .iter()
            .find(|(i, _)| i.name == c)
            .and_then(|(_, ts)| ts.get(k)),
        _ => None,
    }
}

impl Uniq {
    /// The uniqueness declared by the written type `te` (if any) of the
    /// resolved type `t`; `star` if an enclosing `*` makes every array
    /// unique. Only a `*` makes an array unique (a type abbreviation's
    /// resolved type may carry uniqueness inferred from the value it was
    /// unified with).
    pub fn of(te: Option<&TypeExp>, t: &Type, star: bool) -> Uniq {
        Uniq::of_in(te, t, star, false)
    }

    fn of_in(te: Option<&TypeExp>, t: &Type, star: bool, trust: bool) -> Uniq {
        let te = peel_te(te);
        if let Some(TypeExp::Unique(inner, _)) = te {
            return Uniq::of_in(Some(inner), t, true, trust);
        }
        match t {
            Type::Prim(_) => Uniq::Prim,
            Type::Array { unique, .. } | Type::Acc { unique, .. } => {
                Uniq::Arr(star || (trust && *unique))
            }
            Type::Param(_) | Type::Var(_) => Uniq::Arr(star),
            Type::Arrow { .. } => Uniq::Fun(Some(Rc::new(FnSig::of_arrow_in(te, t, trust)))),
            Type::Record(fs) => Uniq::Rec(
                fs.iter()
                    .map(|(n, ft)| (n.clone(), Uniq::of_in(te_field(te, n), ft, star, trust)))
                    .collect(),
            ),
            Type::Sum(cs) => Uniq::Sum(
                cs.iter()
                    .map(|(n, ts)| {
                        let ps = ts
                            .iter()
                            .enumerate()
                            .map(|(k, pt)| Uniq::of_in(te_payload(te, n, k), pt, star, trust))
                            .collect();
                        (n.clone(), ps)
                    })
                    .collect(),
            ),
        }
    }

    /// The uniqueness of an inferred type: nothing is unique (Futhark never
    /// infers a unique parameter), and functions are unknown.
    pub fn plain(t: Option<&Type>) -> Uniq {
        match t {
            Some(Type::Prim(_)) => Uniq::Prim,
            Some(Type::Arrow { .. }) => Uniq::Fun(None),
            Some(Type::Record(fs)) => Uniq::Rec(
                fs.iter()
                    .map(|(n, t)| (n.clone(), Uniq::plain(Some(t))))
                    .collect(),
            ),
            Some(Type::Sum(cs)) => Uniq::Sum(
                cs.iter()
                    .map(|(n, ts)| (n.clone(), ts.iter().map(|t| Uniq::plain(Some(t))).collect()))
                    .collect(),
            ),
            _ => Uniq::Arr(false),
        }
    }

    /// `self` with every array made unique (`true`) or not.
    pub fn set_unique(&self, u: bool) -> Uniq {
        match self {
            Uniq::Arr(_) => Uniq::Arr(u),
            Uniq::Rec(fs) => Uniq::Rec(
                fs.iter()
                    .map(|(n, x)| (n.clone(), x.set_unique(u)))
                    .collect(),
            ),
            Uniq::Sum(cs) => Uniq::Sum(
                cs.iter()
                    .map(|(n, ps)| (n.clone(), ps.iter().map(|x| x.set_unique(u)).collect()))
                    .collect(),
            ),
            other => other.clone(),
        }
    }

    /// The part for record field `f`, if `self` is a record.
    pub fn field(&self, f: &str) -> Option<&Uniq> {
        match self {
            Uniq::Rec(fs) => fs.iter().find(|(n, _)| n == f).map(|(_, u)| u),
            _ => None,
        }
    }

    /// Whether some array is unique (Futhark's `uniqueness` of a whole type,
    /// and the `diet` of a parameter of this type).
    pub fn is_unique(&self) -> bool {
        match self {
            Uniq::Arr(u) => *u,
            Uniq::Prim | Uniq::Fun(_) => false,
            Uniq::Rec(fs) => fs.iter().any(|(_, u)| u.is_unique()),
            Uniq::Sum(cs) => cs.iter().flat_map(|(_, ps)| ps).any(Uniq::is_unique),
        }
    }

    /// How a parameter of this type is treated, field by field.
    pub fn diet(&self) -> Diet {
        match self {
            Uniq::Rec(fs) if self.is_unique() => {
                Diet::Rec(fs.iter().map(|(n, u)| (n.clone(), u.diet())).collect())
            }
            u if u.is_unique() => Diet::Consume,
            _ => Diet::Observe,
        }
    }

    /// Whether a parameter of this type is consumable as a whole, so that a
    /// unique result may alias it (Futhark's `consumableParamType`): every
    /// array is unique, and it holds no function.
    pub fn consumable_param(&self) -> bool {
        match self {
            Uniq::Prim => true,
            Uniq::Arr(u) => *u,
            Uniq::Fun(_) => false,
            Uniq::Rec(fs) => fs.iter().all(|(_, u)| u.consumable_param()),
            Uniq::Sum(cs) => cs.iter().flat_map(|(_, ps)| ps).all(Uniq::consumable_param),
        }
    }
}

/// The uniqueness signature of a function: the declared uniqueness of each
/// parameter (its diet, and for a function-typed parameter the signature
/// it promises) and of the result once all of them are given.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct FnSig {
    pub(crate) params: Vec<Uniq>,
    pub(crate) ret: Uniq,
}

impl FnSig {
    /// The signature of an intrinsic of type `t`.
    pub(crate) fn of_scheme(t: &Type) -> FnSig {
        FnSig::of_arrow_in(None, t, true)
    }

    fn of_arrow_in(te: Option<&TypeExp>, t: &Type, trust: bool) -> FnSig {
        let mut params = Vec::new();
        let (mut te, mut t) = (peel_te(te), t);
        while let Type::Arrow { param, ret, .. } = t {
            let (pte, rte) = match te {
                Some(TypeExp::Arrow(_, p, r, _)) => (Some(&**p), peel_te(Some(&**r))),
                _ => (None, None),
            };
            params.push(Uniq::of_in(pte, param, false, trust));
            te = rte;
            t = ret;
        }
        FnSig {
            params,
            ret: Uniq::of_in(te, t, false, trust),
        }
    }

    /// The signature of a call of `n` arguments to a function known only by
    /// its inferred type: every parameter observes, and no part of the result
    /// is unique.
    pub(crate) fn observing(t: Option<&Type>, n: usize) -> FnSig {
        let mut params = Vec::new();
        let mut t = t;
        while params.len() < n {
            match t {
                Some(Type::Arrow { param, ret, .. }) => {
                    params.push(Uniq::plain(Some(param)));
                    t = Some(ret);
                }
                _ => break,
            }
        }
        let ret = Uniq::plain(t);
        FnSig { params, ret }
    }
}
