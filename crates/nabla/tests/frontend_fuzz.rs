//! Grammar-based fuzzing of the whole front end (parser → type checker →
//! elaborator → IR validator).
//!
//! A seeded generator writes random, syntactically valid programs: type
//! declarations (records, sum types, tuples), several definitions and an
//! entry point, with expressions of every kind (let, if/else-if chains,
//! match, for/while loops, lambdas, operator sections, records and record
//! updates, tuples, arrays, indexing, slicing, in-place updates, SOACs,
//! numeric-module functions, conversions, ascriptions, sum constructors,
//! jvp/vjp). Generation is type-directed, so some programs are well typed;
//! most get mutations (a subexpression of the wrong type, an unknown name, a
//! wrong arity, an array applied as a function…) and are ill typed.
//!
//! For every program the test asserts: no panic anywhere, no diagnostic
//! mentioning an "internal error", and for programs that elaborate, an IR
//! that `nabla_ir::validate_program` accepts.

use nabla_syntax::{ast, Diagnostic, SourceMap};
use std::path::PathBuf;

/// xorshift64* — small, seeded, reproducible.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
    fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[self.below(xs.len())]
    }
}

#[derive(Clone, Debug, PartialEq)]
enum T {
    I32,
    I64,
    F64,
    Bool,
    Arr(Box<T>),
    Tup(Vec<T>),
    /// `pt = {x: f64, y: f64}`
    Pt,
    /// `opt = #none | #some i32`
    Opt,
}

impl T {
    /// Whether values of this type contain arrays (and so may alias one).
    fn has_array(&self) -> bool {
        match self {
            T::Arr(_) => true,
            T::Tup(ts) => ts.iter().any(T::has_array),
            T::I32 | T::I64 | T::F64 | T::Bool | T::Pt | T::Opt => false,
        }
    }

    fn src(&self) -> String {
        match self {
            T::I32 => "i32".into(),
            T::I64 => "i64".into(),
            T::F64 => "f64".into(),
            T::Bool => "bool".into(),
            T::Arr(t) => format!("[]{}", t.src()),
            T::Tup(ts) => format!(
                "({})",
                ts.iter().map(|t| t.src()).collect::<Vec<_>>().join(", ")
            ),
            T::Pt => "pt".into(),
            T::Opt => "opt".into(),
        }
    }
    fn is_num(&self) -> bool {
        matches!(self, T::I32 | T::I64 | T::F64)
    }
}

struct Gen {
    rng: Rng,
    /// Percent chance that a generated node is deliberately wrong.
    mutate: u64,
    env: Vec<(String, T)>,
    funs: Vec<(String, Vec<T>, T)>,
    fresh: u32,
}

const SCALARS: [T; 4] = [T::I32, T::I64, T::F64, T::Bool];

impl Gen {
    fn fresh(&mut self, base: &str) -> String {
        self.fresh += 1;
        format!("{base}{}", self.fresh)
    }

    fn rand_type(&mut self, depth: u32) -> T {
        match self.rng.below(if depth == 0 { 6 } else { 9 }) {
            0 | 1 => T::I32,
            2 => T::I64,
            3 => T::F64,
            4 => T::Bool,
            5 => T::Pt,
            6 => T::Opt,
            7 => T::Arr(Box::new(self.rand_type(depth - 1))),
            _ => T::Tup(vec![self.rand_type(depth - 1), self.rand_type(depth - 1)]),
        }
    }

    fn lit(&mut self, t: &T) -> String {
        match t {
            T::I32 => format!("{}", self.rng.below(20) as i64 - 5),
            T::I64 => format!("{}i64", self.rng.below(10)),
            T::F64 => format!("{}.{}", self.rng.below(9), self.rng.below(10)),
            T::Bool => if self.rng.chance(50) { "true" } else { "false" }.into(),
            T::Arr(e) => {
                let n = 1 + self.rng.below(3);
                let xs: Vec<String> = (0..n).map(|_| self.lit(e)).collect();
                format!("[{}]", xs.join(", "))
            }
            T::Tup(ts) => {
                let xs: Vec<String> = ts.iter().map(|t| self.lit(t)).collect();
                format!("({})", xs.join(", "))
            }
            T::Pt => format!("{{x = {}, y = {}}}", self.lit(&T::F64), self.lit(&T::F64)),
            T::Opt => {
                if self.rng.chance(50) {
                    "(#none : opt)".into()
                } else {
                    format!("(#some {} : opt)", self.lit(&T::I32))
                }
            }
        }
    }

    fn var_of(&mut self, t: &T) -> Option<String> {
        let cands: Vec<String> = self
            .env
            .iter()
            .filter(|(_, vt)| vt == t)
            .map(|(n, _)| n.clone())
            .collect();
        if cands.is_empty() {
            None
        } else {
            Some(self.rng.pick(&cands).clone())
        }
    }

    fn with_var<R>(&mut self, name: &str, t: &T, f: impl FnOnce(&mut Gen) -> R) -> R {
        self.env.push((name.to_string(), t.clone()));
        let r = f(self);
        self.env.pop();
        r
    }

    /// A deliberately wrong expression in place of one of type `t`.
    fn mutant(&mut self, t: &T, depth: u32) -> String {
        match self.rng.below(9) {
            0 => "undefined_name".into(),
            1 => {
                let other = self.rand_type(1);
                self.expr(&other, depth)
            }
            2 => format!(
                "({} {})",
                self.lit(&T::Arr(Box::new(T::I32))),
                self.lit(&T::I32)
            ),
            3 => format!("({}).nofield", self.expr(t, depth)),
            4 => format!("({} : {})", self.expr(t, depth), self.rand_type(1).src()),
            5 => format!("({})[0]", self.lit(&T::I32)),
            6 => format!("(f64.sqrt {} {})", self.lit(&T::F64), self.lit(&T::F64)),
            7 => format!("(#bogus {} : opt)", self.lit(&T::I32)),
            _ => format!(
                "(map {} {})",
                self.lit(&T::I32),
                self.lit(&T::Arr(Box::new(T::I32)))
            ),
        }
    }

    fn expr(&mut self, t: &T, depth: u32) -> String {
        if self.mutate > 0 && self.rng.chance(self.mutate) && depth > 0 {
            return self.mutant(t, depth - 1);
        }
        if depth == 0 {
            if self.rng.chance(60) {
                if let Some(v) = self.var_of(t) {
                    return v;
                }
            }
            return self.lit(t);
        }
        let d = depth - 1;
        // Generic forms, available at every type.
        match self.rng.below(28) {
            0 => {
                let bt = self.rand_type(1);
                let x = self.fresh("x");
                let v = self.expr(&bt, d);
                let body = self.with_var(&x, &bt, |g| g.expr(t, d));
                return format!("(let {x} = {v} in {body})");
            }
            1 => {
                // An if / else-if chain.
                let n = 1 + self.rng.below(3);
                let mut s = String::from("(");
                for _ in 0..n {
                    let c = self.expr(&T::Bool, d);
                    let a = self.expr(t, d);
                    s.push_str(&format!("if {c} then {a} else "));
                }
                s.push_str(&self.expr(t, d));
                s.push(')');
                return s;
            }
            2 => {
                let o = self.expr(&T::Opt, d);
                let v = self.fresh("v");
                let a = self.with_var(&v, &T::I32, |g| g.expr(t, d));
                let b = self.expr(t, d);
                return if self.rng.chance(50) {
                    format!("(match {o} case #some {v} -> {a} case #none -> {b})")
                } else {
                    format!("(match {o} case #none -> {b} case _ -> {a})")
                };
            }
            3 => {
                let acc = self.fresh("acc");
                let i = self.fresh("i");
                let init = self.expr(t, d);
                let n = self.rng.below(4);
                let body = self.with_var(&acc, t, |g| g.with_var(&i, &T::I64, |g| g.expr(t, d)));
                return format!("(loop {acc} = {init} for {i} < {n} do {body})");
            }
            4 => {
                let acc = self.fresh("acc");
                let k = self.fresh("k");
                let init = self.expr(t, d);
                let body = self.with_var(&acc, t, |g| g.expr(t, d));
                return format!(
                    "((loop ({acc}, {k}) = ({init}, 0i32) while {k} < 2 do ({body}, {k} + 1)).0)"
                );
            }
            5 => {
                let pt = self.rand_type(1);
                let x = self.fresh("p");
                let body = self.with_var(&x, &pt, |g| g.expr(t, d));
                let arg = self.expr(&pt, d);
                return format!("((\\({x}: {}) -> {body}) {arg})", pt.src());
            }
            6 => return format!("({} : {})", self.expr(t, d), t.src()),
            7 => {
                let arr = self.expr(&T::Arr(Box::new(t.clone())), d);
                let i = self.expr(&T::I64, d);
                return format!("({arr})[{i}]");
            }
            8 => {
                let tup = T::Tup(vec![t.clone(), self.rand_type(1)]);
                return format!("({}).0", self.expr(&tup, d));
            }
            9 => {
                if let Some((name, ps, _)) = self
                    .funs
                    .iter()
                    .filter(|(_, _, r)| r == t)
                    .cloned()
                    .collect::<Vec<_>>()
                    .first()
                    .cloned()
                {
                    let args: Vec<String> = ps.iter().map(|p| self.expr(p, d)).collect();
                    return format!("({name} {})", args.join(" "));
                }
            }
            10 => {
                let x = self.fresh("y");
                let v = self.expr(t, d);
                let body = self.with_var(&x, t, |g| g.expr(t, d));
                let f = self.fresh("lf");
                return format!("(let {f} ({x}: {}) = {body} in {f} {v})", t.src());
            }
            11 => return format!("(id {})", self.expr(t, d)),
            12 => {
                let c = self.expr(&T::Bool, d);
                let a = self.expr(t, d);
                let b = self.expr(t, d);
                return match self.rng.below(3) {
                    0 => format!("(pick {c} {a} {b})"),
                    1 => format!("((pick {c}) {a} {b})"),
                    _ => format!("({a} |> pick {c} {b})"),
                };
            }
            13 => {
                let a = self.fresh("q");
                let b = self.fresh("q");
                let t2 = self.rand_type(1);
                let tup = self.expr(&T::Tup(vec![t.clone(), t2.clone()]), d);
                let body = self.with_var(&a, t, |g| g.with_var(&b, &t2, |g| g.expr(t, d)));
                return format!("(let ({a}, {b}) = {tup} in {body})");
            }
            14 => {
                let arr = self.expr(&T::Arr(Box::new(t.clone())), d);
                return format!("(head ({arr} :> [1]{}))", t.src());
            }
            15 => {
                let xs = self.fresh("w");
                let arr = self.expr(&T::Arr(Box::new(t.clone())), d);
                let i = self.expr(&T::I64, d);
                // The written value may read `xs` only if it cannot alias it
                // (Futhark rejects `let xs[i] = v` where `v` aliases `xs`,
                // such as a row of `xs`).
                let body = if t.has_array() {
                    self.expr(t, d)
                } else {
                    self.with_var(&xs, &T::Arr(Box::new(t.clone())), |g| g.expr(t, d))
                };
                return format!("(let {xs} = copy {arr} let {xs}[{i}] = {body} in {xs}[0])");
            }
            _ => {}
        }
        self.typed(t, d)
    }

    /// Forms specific to type `t`.
    fn typed(&mut self, t: &T, d: u32) -> String {
        match t {
            T::I32 | T::I64 | T::F64 => {
                let ts = t.src();
                match self.rng.below(12) {
                    0 => {
                        let op = *self.rng.pick(&["+", "-", "*", "/", "%", "**"]);
                        let op = if op == "%" && *t == T::F64 { "+" } else { op };
                        format!("({} {op} {})", self.expr(t, d), self.expr(t, d))
                    }
                    1 => {
                        let f = *self.rng.pick(&["min", "max"]);
                        format!("({ts}.{f} {} {})", self.expr(t, d), self.expr(t, d))
                    }
                    2 if *t == T::F64 => {
                        let f = *self
                            .rng
                            .pick(&["sin", "cos", "exp", "sqrt", "log", "abs", "tanh"]);
                        format!("(f64.{f} {})", self.expr(t, d))
                    }
                    3 => {
                        let from = self.rng.pick(&SCALARS).clone();
                        format!("({ts}.{} {})", from.src(), self.expr(&from, d))
                    }
                    4 => {
                        let a = T::Arr(Box::new(t.clone()));
                        match self.rng.below(4) {
                            0 => format!("(reduce (+) 0 {})", self.expr(&a, d)),
                            1 => format!("({ts}.sum {})", self.expr(&a, d)),
                            2 => format!("({ts}.maximum {})", self.expr(&a, d)),
                            _ => format!(
                                "(foldl (\\a b -> a {} b) {} {})",
                                self.rng.pick(&["+", "*"]),
                                self.expr(t, d),
                                self.expr(&a, d)
                            ),
                        }
                    }
                    5 => {
                        // operator sections
                        let e = self.expr(t, d);
                        let f = self.expr(t, d);
                        match self.rng.below(3) {
                            0 => format!("((+ {e}) {f})"),
                            1 => format!("(({e} *) {f})"),
                            _ => format!("((-) {e} {f})"),
                        }
                    }
                    6 if *t == T::I64 => {
                        format!("(length {})", {
                            let et = self.rand_type(1);
                            self.expr(&T::Arr(Box::new(et)), d)
                        })
                    }
                    7 if *t == T::F64 => {
                        let x = self.fresh("z");
                        let body = self.with_var(&x, &T::F64, |g| g.expr(&T::F64, d));
                        let a = self.expr(&T::F64, d);
                        match self.rng.below(3) {
                            0 => format!("(jvp (\\{x} -> {body}) {a} 1.0)"),
                            1 => format!("(vjp (\\{x} -> {body}) {a} 1.0)"),
                            _ => format!("((vjp2 (\\{x} -> {body}) {a} 1.0).1)"),
                        }
                    }
                    8 if *t == T::F64 => {
                        let p = self.expr(&T::Pt, d);
                        let f = self.rng.pick(&["x", "y"]);
                        format!("({p}).{f}")
                    }
                    9 => format!("(-{})", self.expr(t, d)),
                    10 => match self.rng.below(4) {
                        0 => format!("{ts}.highest"),
                        1 => format!("({ts}.({} + {}))", self.expr(t, d), self.expr(t, d)),
                        2 => format!("(sumsz {})", {
                            let a = T::Arr(Box::new(t.clone()));
                            self.expr(&a, d)
                        }),
                        _ => format!("({} `{ts}.max` {})", self.expr(t, d), self.expr(t, d)),
                    },
                    _ => self.lit(t),
                }
            }
            T::Bool => match self.rng.below(6) {
                0 => {
                    let nt = self.rng.pick(&[T::I32, T::I64, T::F64]).clone();
                    let op = *self.rng.pick(&["<", "<=", "==", "!=", ">", ">="]);
                    format!("({} {op} {})", self.expr(&nt, d), self.expr(&nt, d))
                }
                1 => {
                    let op = *self.rng.pick(&["&&", "||"]);
                    format!("({} {op} {})", self.expr(t, d), self.expr(t, d))
                }
                2 => format!("(!{})", self.expr(t, d)),
                3 => {
                    let x = self.fresh("b");
                    let et = self.rand_type(0);
                    let a = self.expr(&T::Arr(Box::new(et.clone())), d);
                    let body = self.with_var(&x, &et, |g| g.expr(&T::Bool, d));
                    let f = *self.rng.pick(&["all", "any"]);
                    format!("({f} (\\{x} -> {body}) {a})")
                }
                4 => {
                    let et = self.rand_type(1);
                    format!("({} == {})", self.expr(&et, d), self.expr(&et, d))
                }
                _ => self.lit(t),
            },
            T::Arr(e) => {
                let e = (**e).clone();
                match self.rng.below(17) {
                    0 => {
                        let n = 1 + self.rng.below(3);
                        let xs: Vec<String> = (0..n).map(|_| self.expr(&e, d)).collect();
                        format!("[{}]", xs.join(", "))
                    }
                    1 => {
                        let src = self.rand_type(1);
                        let x = self.fresh("m");
                        let body = self.with_var(&x, &src, |g| g.expr(&e, d));
                        let a = self.expr(&T::Arr(Box::new(src)), d);
                        format!("(map (\\{x} -> {body}) {a})")
                    }
                    2 => format!("(replicate {} {})", self.expr(&T::I64, d), self.expr(&e, d)),
                    3 => {
                        let a = self.expr(t, d);
                        let i = self.expr(&T::I64, d);
                        let j = self.expr(&T::I64, d);
                        match self.rng.below(3) {
                            0 => format!("({a})[{i}:{j}]"),
                            1 => format!("({a})[{i}:]"),
                            _ => format!("({a})[:{j}]"),
                        }
                    }
                    4 => format!("({} ++ {})", self.expr(t, d), self.expr(t, d)),
                    5 => format!("(reverse {})", self.expr(t, d)),
                    6 => {
                        let x = self.fresh("f");
                        let body = self.with_var(&x, &e, |g| g.expr(&T::Bool, d));
                        format!("(filter (\\{x} -> {body}) {})", self.expr(t, d))
                    }
                    7 if e.is_num() => {
                        format!("(scan (+) 0 {})", self.expr(t, d))
                    }
                    8 if e == T::I64 => format!("(iota {})", self.expr(&T::I64, d)),
                    9 => {
                        let a = self.expr(t, d);
                        let i = self.expr(&T::I64, d);
                        let v = self.expr(&e, d);
                        let x = self.fresh("u");
                        format!("(let {x} = copy ({a}) in ({x} with [{i}] = {v}))")
                    }
                    10 => {
                        let x = self.fresh("tb");
                        let body = self.with_var(&x, &T::I64, |g| g.expr(&e, d));
                        format!("(tabulate {} (\\{x} -> {body}))", self.rng.below(4))
                    }
                    11 => {
                        if let T::Tup(ts) = &e {
                            if ts.len() == 2 {
                                let a = self.expr(&T::Arr(Box::new(ts[0].clone())), d);
                                let b = self.expr(&T::Arr(Box::new(ts[1].clone())), d);
                                return format!("(zip {a} {b})");
                            }
                        }
                        let a = self.expr(t, d);
                        format!("(rotate 1 {a})")
                    }
                    12 => {
                        let a = self.expr(&T::Arr(Box::new(T::Arr(Box::new(e.clone())))), d);
                        match self.rng.below(3) {
                            0 => format!("(flatten {a})"),
                            1 => format!("(flatten (transpose {a}))"),
                            _ => format!("(unflatten 1 (length {a}) (flatten {a}))[0]"),
                        }
                    }
                    13 if e == T::I64 => match self.rng.below(3) {
                        0 => format!("(0..<{})", self.expr(&T::I64, d)),
                        1 => format!("(1..3...{})", self.expr(&T::I64, d)),
                        _ => format!("(hist (+) 0 3 {} {})", self.expr(t, d), self.expr(t, d)),
                    },
                    13 => format!(
                        "(scatter (copy {}) {} {})",
                        self.expr(t, d),
                        self.expr(&T::Arr(Box::new(T::I64)), d),
                        self.expr(t, d)
                    ),
                    14 => format!("(zipsz {} {})", self.expr(t, d), self.expr(t, d)),
                    _ => self.lit(t),
                }
            }
            T::Tup(ts) => {
                if self.rng.chance(20) && ts.len() == 2 {
                    if let (T::Arr(a), T::Arr(b)) = (&ts[0], &ts[1]) {
                        let z = T::Arr(Box::new(T::Tup(vec![(**a).clone(), (**b).clone()])));
                        return format!("(unzip {})", self.expr(&z, d));
                    }
                }
                let xs: Vec<String> = ts.clone().iter().map(|t| self.expr(t, d)).collect();
                format!("({})", xs.join(", "))
            }
            T::Pt => match self.rng.below(3) {
                0 => format!(
                    "({} with x = {})",
                    self.expr(&T::Pt, d),
                    self.expr(&T::F64, d)
                ),
                1 => format!(
                    "{{y = {}, x = {}}}",
                    self.expr(&T::F64, d),
                    self.expr(&T::F64, d)
                ),
                _ => self.lit(t),
            },
            T::Opt => match self.rng.below(3) {
                0 => format!("(#some {} : opt)", self.expr(&T::I32, d)),
                1 => "(#none : opt)".into(),
                _ => {
                    let c = self.expr(&T::Bool, d);
                    let v = self.expr(&T::I32, d);
                    format!("(if {c} then #some {v} else #none : opt)")
                }
            },
        }
    }

    fn program(&mut self) -> String {
        let mut s = String::from(
            "type pt = {x: f64, y: f64}\ntype opt = #none | #some i32\n\
             def pick 't (b: bool) (x: t) (y: t) : t = if b then x else y\n\
             def sumsz [n] 'a (xs: [n]a) : a = xs[n - 1]\n\
             def zipsz [n] 'a (xs: [n]a) (ys: [n]a) : [n]a = map2 (\\x y -> pick true x y) xs ys\n",
        );
        let ndefs = 1 + self.rng.below(3);
        for _ in 0..ndefs {
            let name = self.fresh("fun");
            let nparams = 1 + self.rng.below(2);
            let ps: Vec<(String, T)> = (0..nparams)
                .map(|_| (self.fresh("a"), self.rand_type(1)))
                .collect();
            let rt = self.rand_type(1);
            self.env = ps.clone();
            let depth = 1 + self.rng.below(4) as u32;
            let body = self.expr(&rt, depth);
            let params: Vec<String> = ps
                .iter()
                .map(|(n, t)| format!("({n}: {})", t.src()))
                .collect();
            let ret = if self.rng.chance(80) {
                format!(" : {}", rt.src())
            } else {
                String::new()
            };
            s.push_str(&format!(
                "def {name} {}{ret} =\n  {body}\n",
                params.join(" ")
            ));
            self.funs
                .push((name, ps.into_iter().map(|(_, t)| t).collect(), rt));
        }
        // The entry point: first-order scalar/array parameters.
        let ps: Vec<(String, T)> = (0..1 + self.rng.below(2))
            .map(|_| {
                let t = match self.rng.below(5) {
                    0 => T::Arr(Box::new(T::F64)),
                    1 => T::Arr(Box::new(T::I32)),
                    _ => self.rng.pick(&SCALARS).clone(),
                };
                (self.fresh("e"), t)
            })
            .collect();
        self.env = ps.clone();
        let rt = self.rand_type(1);
        let depth = 1 + self.rng.below(4) as u32;
        let body = self.expr(&rt, depth);
        let params: Vec<String> = ps
            .iter()
            .map(|(n, t)| format!("({n}: {})", t.src()))
            .collect();
        s.push_str(&format!("entry main {} =\n  {body}\n", params.join(" ")));
        s
    }
}

/// Runs the front end on `src`; `Ok(true)` if it elaborated, `Ok(false)` on
/// ordinary diagnostics, `Err(why)` on a panic, an internal error, or an
/// invalid IR.
fn front_end(src: &str) -> Result<bool, String> {
    let src = src.to_string();
    let r = std::panic::catch_unwind(move || -> Result<bool, String> {
        let mut sources = SourceMap::new();
        let mut next_id = 0u32;
        let pre = sources.add(
            PathBuf::from("<prelude>"),
            nabla_typeck::PRELUDE_SOURCE.to_string(),
        );
        let prelude = nabla_syntax::parse_file(&sources, pre, &mut next_id)
            .map_err(|d| format!("prelude: {d:?}"))?;
        let file = sources.add(PathBuf::from("fuzz.fut"), src.clone());
        let internal = |ds: &[Diagnostic]| {
            ds.iter()
                .find(|d| d.message.contains("internal error") || d.message.contains("bug"))
                .map(|d| format!("{}: {}", d.kind_name(), d.message))
        };
        let user = match nabla_syntax::parse_file(&sources, file, &mut next_id) {
            Ok(p) => p,
            Err(ds) => {
                return match internal(&ds) {
                    Some(m) => Err(m),
                    None => Ok(false),
                }
            }
        };
        let mut files: Vec<ast::Program> = vec![prelude, user];
        if let Err(ds) = nabla_typeck::check_program(&sources, &mut files) {
            return match internal(&ds) {
                Some(m) => Err(m),
                None => Ok(false),
            };
        }
        match nabla_elab::elaborate(&files) {
            Ok(prog) => match nabla_ir::validate_program(&prog) {
                Ok(_) => Ok(true),
                Err(es) => {
                    let es: Vec<String> = es
                        .iter()
                        .filter(|e| !e.is_size_error())
                        .map(|e| e.to_string())
                        .collect();
                    if es.is_empty() {
                        Ok(true)
                    } else {
                        Err(format!("invalid IR: {}", es.join("; ")))
                    }
                }
            },
            Err(ds) => match internal(&ds) {
                Some(m) => Err(m),
                None => Ok(false),
            },
        }
    });
    match r {
        Ok(r) => r,
        Err(p) => Err(format!(
            "panic: {}",
            p.downcast_ref::<String>()
                .cloned()
                .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default()
        )),
    }
}

/// splitmix64's finaliser: distinct seeds give unrelated streams.
fn mix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    (z ^ (z >> 31)) | 1
}

fn run_fuzz(seed: u64, cases: usize) {
    let mut failures = vec![];
    let mut elaborated = 0;
    for case in 0..cases {
        let mut g = Gen {
            rng: Rng(mix(seed.wrapping_mul(0x1_0000_0001) ^ case as u64)),
            mutate: 0,
            env: vec![],
            funs: vec![],
            fresh: 0,
        };
        g.mutate = if g.rng.chance(25) {
            0
        } else {
            2 + g.rng.below(12) as u64
        };
        let src = g.program();
        match front_end(&src) {
            Ok(true) => elaborated += 1,
            Ok(false) => {}
            Err(why) => failures.push(format!("case {case}: {why}\n{src}")),
        }
    }
    if !failures.is_empty() {
        panic!(
            "{} of {cases} programs broke the front end; first ones:\n\n{}",
            failures.len(),
            failures
                .iter()
                .take(5)
                .cloned()
                .collect::<Vec<_>>()
                .join("\n----\n")
        );
    }
    // The generator must produce some well-typed programs, or the test
    // exercises only the error paths.
    assert!(
        elaborated * 20 >= cases,
        "only {elaborated} of {cases} programs elaborated"
    );
    eprintln!("frontend fuzz: {elaborated} of {cases} programs elaborated");
}

#[test]
fn frontend_fuzz() {
    // Optional overrides; a value that is not a number is an error, not
    // silently the default.
    let var = |name: &str, default: u64| match std::env::var(name) {
        Ok(s) => s
            .parse()
            .unwrap_or_else(|_| panic!("{name}={s:?} is not a number")),
        Err(_) => default,
    };
    let cases = var("NABLA_FUZZ_CASES", 3000) as usize;
    let seed = var("NABLA_FUZZ_SEED", 0x5eed);
    run_fuzz(seed, cases);
}
