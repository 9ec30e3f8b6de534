//! Consumption (uniqueness) checking, run on each top-level definition once
//! its types are known.
//!
//! Follows the Futhark language reference ("In-place updates", "Uniqueness
//! types") and the rules of Futhark's own checker, with its alias model:
//!
//! - Every value carries the set of *aliases* it may share memory with,
//!   shaped like its type ([`als::Als`]). Each array or function part of a
//!   variable (a *location*: the variable and a path of fields) gets an id;
//!   a bound variable aliases its locations and what its value aliases, a
//!   parameter only its locations. Two components alias each other only if
//!   they share an id, but consuming one location consumes the variable. The result of a function
//!   application aliases a fresh id of its own ("the result of applying
//!   `f`"), the function's closure and the arguments passed for parameters
//!   that are not consumed, except where the function's result is unique;
//!   a loop's result likewise. A function value (lambda, local function,
//!   partial application, section) aliases its free variables and the
//!   arguments it holds. Aliases to variables that went out of scope stay
//!   (as "free" ids): leaving a scope does not break aliasing.
//! - A value is *consumed* by an in-place update (`a with [i] = v`, `let
//!   a[i] = v`, `r with f[i] = v` of the array in field `f`), by being passed for a unique (`*`) parameter (a whole
//!   argument is consumed when any part of the parameter is unique), and by
//!   being the initial value of a loop parameter that the loop body consumes
//!   (or that is declared unique). Consuming a value consumes all its
//!   aliases; none of them may be used afterwards ("use-after-consume").
//! - Only consumable variables may be consumed ("not-consumable"): `let`-
//!   and `match`-bound variables, loop parameters, and parameters whose
//!   declared type is unique (never an inferred one). Not: other parameters,
//!   `for … in` elements, top-level constants, loop parameters declared
//!   with a non-unique type, nor (inside a lambda, local function or loop
//!   body) anything bound outside it, nor anything inside a size expression
//!   of a parameter's type.
//! - Function results: a unique (`*`) result part may not alias a parameter
//!   that is not consumable ("return-aliased"), nor another part of the
//!   result ("unique-return-aliased"); a function's result may not alias a
//!   top-level constant ("alias-free-variable"). The uniqueness of a result
//!   without a declared type (of a lambda or local function, always) is
//!   inferred: a part is unique if it aliases only consumed parameters
//!   (and what went out of scope) and no other part of the result.
//! - Arguments: an argument for a consuming parameter may not alias itself
//!   across components ("self-aliasing-arg") nor another argument ("Argument
//!   is consumed"); an argument of function type may not consume anything
//!   when evaluated ("consuming-argument"), nor may a `let` bind a function
//!   whose evaluation consumes ("contains-consumption"); a function that
//!   consumes its argument (or whose result is not unique) may not be passed
//!   for a parameter whose function type does not consume (or declares a
//!   unique result), nor be ascribed such a type.
//! - `a with [i] = v`: `v` may not alias `a`.
//! - Loops: the parameters the body consumes are consuming; the value the
//!   body returns for a consuming parameter may not alias anything bound
//!   outside the loop ("consuming-loop-param-aliases"), nor a value returned
//!   for another parameter ("aliases-previously-returned"), and no returned
//!   value may alias one returned for a consuming parameter
//!   ("loop-parameter-aliases-other"); the body (and a `while` condition)
//!   may not use what the initial value consumes.
//!
//! Two rules are more careful than Futhark's own checker, where it loses
//! aliases the rest of nabla relies on: the elements of `for x in xs` alias
//! `xs` (as in later Futhark versions), and a loop's result aliases the
//! initial values of the parameters it does not consume even when it
//! consumes others.
//!
//! Errors carry Futhark's key words and, in a note, the link to the section
//! of Futhark's error index that explains them.

mod als;
mod expr;
mod func;
mod loops;

pub(crate) use als::FnSig;
use als::*;

use crate::sig::Scheme;
use nabla_syntax::ast::*;
use nabla_syntax::{Diagnostic, DiagnosticKind, Span};
use std::collections::{HashMap, HashSet};
use std::rc::Rc;

type R<T> = Result<T, Diagnostic>;

fn err(span: Span, msg: impl Into<String>) -> Diagnostic {
    Diagnostic::new(DiagnosticKind::Type, span, msg)
}

/// An error with a note pointing at the section `anchor` of Futhark's
/// compiler error index, which explains the rule.
fn err_index(span: Span, msg: impl Into<String>, anchor: &str) -> Diagnostic {
    err(span, msg).with_note(format!(
        "for more information, see https://futhark.readthedocs.io/en/latest/error-index.html#{anchor}"
    ))
}

/// A name as messages show it: without the module path the module pass
/// gives top-level names (`M.x`), nor its `#2` for redefinitions.
fn display(name: &str) -> &str {
    let name = name.split('#').next().unwrap_or(name);
    match name.rfind('.') {
        Some(k) if name[k + 1..].starts_with(|c: char| c.is_alphabetic() || c == '_') => {
            &name[k + 1..]
        }
        _ => name,
    }
}

/// Everything the consumption checker knows about a top-level definition.
#[derive(Clone, Debug)]
pub(crate) struct GlobalInfo {
    pub name: Name,
    /// A monomorphic constant (no parameters): its value may be observed but
    /// never consumed.
    pub constant: bool,
    /// Its uniqueness signature (for a constant of function type: that of
    /// its value).
    pub sig: Rc<FnSig>,
    /// The definition's type.
    pub ty: Option<Type>,
}

/// Where an alias id comes from.
#[derive(Clone, Debug, PartialEq)]
enum Origin {
    /// A variable bound by a pattern, parameter or loop.
    Var,
    /// A top-level constant.
    Global,
    /// The result of an application (of the named function, if any).
    AppRes(Option<Name>),
    /// The result of a loop.
    LoopRes,
}

/// Why a variable is not consumable.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Why {
    /// Consumable (unless bound outside the enclosing function or loop).
    No,
    Param,
    ForIn,
    LoopDeclared,
    Global,
}

/// An alias id. A variable has one id per array (or function) part, its
/// *locations* (Futhark's `(variable, path)`), which make up one group:
/// components of a value alias each other only if they share a location,
/// but consuming one location consumes the whole variable.
struct IdInfo {
    name: Name,
    span: Span,
    origin: Origin,
    /// In scope (for variables).
    live: bool,
    why: Why,
    /// The first id of the group (the variable's first location).
    group: u32,
    /// For the first id of a group: how many ids the group has.
    members: u32,
}

/// A variable in scope and what it aliases.
struct Var {
    name: Name,
    als: Als,
}

/// The consumed ids (and where each was consumed), with a log to undo the
/// consumption of a branch or a function body.
#[derive(Default)]
struct Consumed {
    map: HashMap<u32, Span>,
    log: Vec<u32>,
}

impl Consumed {
    fn mark(&self) -> usize {
        self.log.len()
    }

    fn get(&self, i: u32) -> Option<Span> {
        self.map.get(&i).copied()
    }

    fn add(&mut self, i: u32, span: Span) {
        if let std::collections::hash_map::Entry::Vacant(v) = self.map.entry(i) {
            v.insert(span);
            self.log.push(i);
        }
    }

    /// Undoes the consumption since `mark`, returning it.
    fn take_since(&mut self, mark: usize) -> Vec<(u32, Span)> {
        let ids: Vec<u32> = self.log.drain(mark..).collect();
        ids.into_iter()
            .filter_map(|i| self.map.remove(&i).map(|s| (i, s)))
            .collect()
    }

    /// The ids consumed since `mark`.
    fn since(&self, mark: usize) -> Ids {
        self.log[mark..].iter().copied().collect()
    }
}

/// The uses of variables bound outside some lambda, local function or loop
/// body while checking it: (index in `Cx::vars`, span of the first use).
/// A use is recorded in the innermost collector only, and passed on to the
/// enclosing one when that is done with.
struct Collector {
    vmark: usize,
    uses: Vec<(usize, Span)>,
    seen: HashSet<usize>,
}

/// A barrier: ids below `first` are bound outside the construct and may
/// not be consumed inside it, for the reason given.
struct Barrier {
    first: u32,
    reason: &'static str,
}

/// Maximum nesting the checker follows (the type checker already bounds it).
const MAX_DEPTH: usize = 20000;

struct Cx<'a> {
    globals: &'a HashMap<NodeId, GlobalInfo>,
    intrinsics: &'a HashMap<String, Rc<Scheme>>,
    intr_sigs: HashMap<String, Rc<FnSig>>,
    global_ids: HashMap<NodeId, u32>,
    ids: Vec<IdInfo>,
    vars: Vec<Var>,
    consumed: Consumed,
    barriers: Vec<Barrier>,
    collectors: Vec<Collector>,
    depth: usize,
    /// Whether function results may not alias top-level arrays.
    global_aliases: bool,
}

/// Checks the consumption rules in one type-checked top-level definition,
/// and gives its uniqueness signature (for the checks of later definitions).
/// Errors: the first violation, as a `Type` diagnostic at the offending use
/// or consumption, labelled with the earlier consumption or the binding.
///
/// `global_aliases`: whether the results of its functions may not alias a
/// top-level array ("alias-free-variable"); false for the copies of a
/// functor's body made by applying it (see [`crate::CheckOptions`]).
pub(crate) fn check_valbind(
    vb: &ValBind,
    globals: &HashMap<NodeId, GlobalInfo>,
    intrinsics: &HashMap<String, Rc<Scheme>>,
    global_aliases: bool,
) -> (FnSig, R<()>) {
    // A recursive function's uses of itself follow its declared signature:
    // its parameters' uniqueness, and its declared result (without one, a
    // result that may alias every argument).
    let with_self;
    let globals = if crate::recursion::is_recursive(vb) {
        let mut g = globals.clone();
        g.insert(
            vb.id,
            GlobalInfo {
                name: vb.name.name.clone(),
                constant: false,
                sig: Rc::new(func::declared_sig(vb)),
                ty: vb.ty.clone(),
            },
        );
        with_self = g;
        &with_self
    } else {
        globals
    };
    let mut cx = Cx {
        globals,
        intrinsics,
        intr_sigs: HashMap::new(),
        global_ids: HashMap::new(),
        ids: Vec::new(),
        vars: Vec::new(),
        consumed: Consumed::default(),
        barriers: Vec::new(),
        collectors: Vec::new(),
        depth: 0,
        global_aliases,
    };
    match cx.valbind(vb) {
        Ok(sig) => (sig, Ok(())),
        Err(e) => (func::declared_sig(vb), Err(e)),
    }
}

impl<'a> Cx<'a> {
    // ------------------------------------------------------------ bindings

    fn new_id(&mut self, name: &str, span: Span, origin: Origin, why: Why) -> u32 {
        let id = self.ids.len() as u32;
        let live = origin == Origin::Var;
        self.ids.push(IdInfo {
            name: name.to_string(),
            span,
            origin,
            live,
            why,
            group: id,
            members: 1,
        });
        id
    }

    /// A variable's value: `a` with a location of the variable added to each
    /// of its array and function parts (Futhark's `insertSelfAliases`).
    /// Gives the value and the variable's group (its first id).
    fn bind_locations(&mut self, a: &Als, name: &str, span: Span, why: Why) -> (Als, u32) {
        let leader = self.new_id(name, span, Origin::Var, why);
        let mut first = true;
        let out = a.map_sets(&mut |s| {
            let id = if first {
                first = false;
                leader
            } else {
                let id = self.ids.len() as u32;
                self.ids.push(IdInfo {
                    name: name.to_string(),
                    span,
                    origin: Origin::Var,
                    live: true,
                    why,
                    group: leader,
                    members: 0,
                });
                self.ids[leader as usize].members += 1;
                id
            };
            let mut s = s.clone();
            s.insert(id);
            s
        });
        (out, leader)
    }

    /// Starts collecting the uses of the variables bound so far.
    fn push_collector(&mut self) {
        self.collectors.push(Collector {
            vmark: self.vars.len(),
            uses: Vec::new(),
            seen: HashSet::new(),
        });
    }

    /// Records a use of the variable at index `k` of `vars`.
    fn record_use(&mut self, k: usize, span: Span) {
        if let Some(c) = self.collectors.last_mut() {
            if k < c.vmark && c.seen.insert(k) {
                c.uses.push((k, span));
            }
        }
    }

    /// Stops collecting: the uses collected since [`Cx::push_collector`]
    /// (also passed on to the enclosing collector).
    fn pop_collector(&mut self) -> Vec<(usize, Span)> {
        let uses = self.collectors.pop().map(|c| c.uses).unwrap_or_default();
        for &(k, s) in &uses {
            self.record_use(k, s);
        }
        uses
    }

    /// The group (variable) of an id.
    fn group(&self, i: u32) -> u32 {
        self.ids.get(i as usize).map_or(i, |x| x.group)
    }

    /// The groups of a set of ids.
    fn groups(&self, s: &Ids) -> Ids {
        s.iter().map(|&i| self.group(i)).collect()
    }

    /// Leaves a scope: drops the variables bound since `vmark`; the ids
    /// allocated since `imark` go out of scope (their aliases stay, free).
    fn unbind(&mut self, vmark: usize, imark: usize) {
        self.vars.truncate(vmark);
        for i in self.ids.iter_mut().skip(imark) {
            i.live = false;
        }
    }

    fn lookup(&self, name: &str) -> Option<usize> {
        self.vars.iter().rposition(|v| v.name == name)
    }

    /// Whether `i` is bound (in scope, or a top-level constant) rather than
    /// free (gone out of scope, or the result of an application or loop).
    fn is_bound(&self, i: u32) -> bool {
        self.ids
            .get(i as usize)
            .is_some_and(|x| x.live || x.origin == Origin::Global)
    }

    fn bound(&self, s: &Ids) -> Ids {
        s.iter().copied().filter(|&i| self.is_bound(i)).collect()
    }

    /// Binds the variables of a `let` or `match` pattern to (the matching
    /// parts of) `als`; they are consumable and alias themselves.
    fn bind_let_pat(&mut self, p: &Pat, als: &Als) {
        match &p.kind {
            PatKind::Id(i) => {
                let a = als.clone().reshape(p.ty.as_ref());
                let (als, _) = self.bind_locations(&a, &i.name, i.span, Why::No);
                self.vars.push(Var {
                    name: i.name.clone(),
                    als,
                });
            }
            PatKind::Ascribe(q, _) => self.bind_let_pat(q, als),
            PatKind::Tuple(ps) if ps.len() == 1 => self.bind_let_pat(&ps[0], als),
            PatKind::Tuple(ps) => {
                for (k, q) in ps.iter().enumerate() {
                    self.bind_let_pat(q, &als.field(&k.to_string()));
                }
            }
            PatKind::Record(fs) => {
                for (f, q) in fs {
                    self.bind_let_pat(q, &als.field(&f.name));
                }
            }
            PatKind::Constr(c, ps) => match als.payloads(&c.name) {
                Some(pl) if pl.len() == ps.len() => {
                    let pl = pl.to_vec();
                    for (q, a) in ps.iter().zip(&pl) {
                        self.bind_let_pat(q, a);
                    }
                }
                _ => {
                    let whole = Als::Arr(als.flat());
                    for q in ps {
                        self.bind_let_pat(q, &whole);
                    }
                }
            },
            PatKind::Wildcard | PatKind::Lit(_) => {}
        }
    }

    // ---------------------------------------------------------- consumption

    /// How messages name an alias id.
    fn describe(&self, i: u32) -> String {
        match self.ids.get(i as usize) {
            Some(x) => match &x.origin {
                Origin::Var | Origin::Global => format!("variable \"{}\"", display(&x.name)),
                Origin::AppRes(Some(f)) => format!("the result of applying \"{}\"", display(f)),
                Origin::AppRes(None) => "the result of an application".to_string(),
                Origin::LoopRes => "the result of a loop".to_string(),
            },
            None => "a value".to_string(),
        }
    }

    /// Reports a use (of `used`, a variable's name, if it is one) of a
    /// value that aliases a consumed one.
    fn check_not_consumed(&self, ids: &Ids, span: Span, used: Option<&str>) -> R<()> {
        for &i in ids {
            let Some(at) = self.consumed.get(i) else {
                continue;
            };
            let what = self.describe(i);
            let own = self.ids.get(i as usize).map(|x| x.name.as_str());
            let via = match used {
                Some(u)
                    if Some(u) != own || !matches!(self.ids[i as usize].origin, Origin::Var) =>
                {
                    format!("\"{}\", which aliases {what}", display(u))
                }
                _ => what.clone(),
            };
            return Err(err_index(
                span,
                format!(
                    "Using {via}, but this was consumed. Nothing that may alias a consumed value can be used afterwards; to keep the value, consume a \"copy\" of it instead."
                ),
                "use-after-consume",
            )
            .with_label(at, format!("{what} consumed here")));
        }
        Ok(())
    }

    /// Consumes the values with aliases `ids` at `span` (Futhark's
    /// `consumeAliases`): each bound one must be consumable, none may have
    /// been consumed already.
    fn consume_aliases(&mut self, ids: &Ids, span: Span) -> R<()> {
        for &i in ids {
            if !self.is_bound(i) {
                continue;
            }
            let info = &self.ids[i as usize];
            let outside = self
                .barriers
                .last()
                .filter(|b| i < b.first && info.origin == Origin::Var);
            let reason = if info.origin == Origin::Global {
                "it is a top-level constant".to_string()
            } else {
                match (info.why, outside) {
                    (Why::Param, _) => "it is a parameter whose type is not declared unique (write `*` before an array type, as in `*[]i32`, to allow consuming it)".to_string(),
                    (Why::ForIn, _) => "it is an element of the array that a `for … in` loop iterates over".to_string(),
                    (Why::LoopDeclared, _) => "it is a loop parameter whose declared type is not unique".to_string(),
                    (Why::Global, _) => "it is a top-level constant".to_string(),
                    (Why::No, Some(b)) => b.reason.to_string(),
                    (Why::No, None) => continue,
                }
            };
            let what = self.describe(i);
            let d = err_index(
                span,
                format!("Consuming {what}, which is not consumable: {reason}."),
                "not-consumable",
            );
            return Err(
                if info.span != Span::default() && info.origin == Origin::Var {
                    d.with_label(info.span, format!("{what} is bound here"))
                } else {
                    d
                },
            );
        }
        self.check_not_consumed(ids, span, None)?;
        for &i in ids {
            let g = self.group(i);
            let n = self.ids.get(g as usize).map_or(1, |x| x.members);
            for m in g..g + n {
                self.consumed.add(m, span);
            }
        }
        Ok(())
    }

    /// Consumes the parts of `a` that `diet` consumes (Futhark's
    /// `consumeAsNeeded`).
    fn consume_as_needed(&mut self, diet: &Diet, a: &Als, span: Span) -> R<()> {
        match (diet, a) {
            (Diet::Rec(ds), Als::Rec(_)) => {
                for (n, d) in ds {
                    self.consume_as_needed(d, &a.field(n), span)?;
                }
                Ok(())
            }
            (d, a) if d.consumes() => self.consume_aliases(&a.flat(), span),
            _ => Ok(()),
        }
    }

    /// Error index "self-aliasing-arg": the components of an argument for a
    /// consuming parameter may not alias each other.
    fn no_self_aliases(&self, a: &Als, span: Span) -> R<()> {
        let mut seen = Ids::new();
        for part in a.parts() {
            if let Some(&i) = part.intersection(&seen).next() {
                return Err(err_index(
                    span,
                    format!(
                        "Argument passed for consuming parameter is self-aliased: two of its components may alias {}, but the function may update each in place. Pass separate arrays (e.g. with \"copy\").",
                        self.describe(i)
                    ),
                    "self-aliasing-arg",
                ));
            }
            seen.extend(part);
        }
        Ok(())
    }

    /// In-place updates: the value written may not alias the array updated.
    fn overlap_check(&self, src: &Als, v: &Als, vspan: Span, sspan: Span) -> R<()> {
        let s = src.flat();
        match v.flat().intersection(&s).next() {
            None => Ok(()),
            Some(&i) => Err(err(
                vspan,
                format!(
                    "Source array for in-place update might alias the update value (both may alias {}). Hint: use \"copy\" to remove aliases from the value.",
                    self.describe(i)
                ),
            )
            .with_label(sspan, "the array updated in place")),
        }
    }
}
