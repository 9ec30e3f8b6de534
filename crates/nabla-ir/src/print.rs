//! Text printer for the core IR (`nabla dump-ir`).
//!
//! The output is stable (it depends only on the program), meant for people
//! and golden tests, and read back by [`crate::parse_program`] (the grammar
//! is in the `parse` module's docs). Shape:
//!
//! ```text
//! fun scale (x_0: f64, xs_1: [n_2]f64): ([n_2]f64) = {
//!   let ys_3: [n_2]f64 = map(n_2, \(a_4: f64): (f64) -> {
//!     let b_5: f64 = a_4 * x_0
//!     in (b_5)
//!   }, xs_1)
//!   in (ys_3)
//! }
//!
//! entry main = scale (params [1, 1], results [1])
//!   signature (params ["x": "f64", "xs": "[]f64"], results ["[]f64"])
//! ```
//!
//! The `signature` line (the source-level types, see
//! [`crate::EntrySignature`]) is printed only when the entry has one.
//!
//! Variables print as `name_index` (the index is the `Var` number, so names
//! are unique even where the source reused a name; a name that already ends
//! in `_index` is not suffixed twice); a name that is not an identifier is
//! quoted (`"+^"_3`), an empty one prints as `_3`. Constants
//! print as Futhark literals with their type suffix (`2i32`, `2.5f64`,
//! `true`, `f64.nan`), floats with the shortest digits that read back to the
//! same bits. Function names that are not identifiers, or that are spelt
//! like a built-in (`map`, `sqrt`, `f64`, …), are quoted; a call to a
//! function whose name several functions share adds its number (`f@3`).

use crate::{
    AccOp, Atom, Body, Dim, DimIndex, Exp, FunId, Function, Lambda, LoopForm, Param, Program, Soac,
    Type,
};
use nabla_prim::{BinOp, CmpOp, ConvOp, PrimType, PrimValue, TernOp, UnOp};
use std::fmt::Write as _;

/// Prints a program in a stable, readable text form: every function, then
/// one `entry` line per entry point.
pub fn print_program(prog: &Program) -> String {
    let mut out = String::new();
    for (i, f) in prog.functions.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        Printer {
            prog,
            fun: f,
            id: FunId(i as u32),
            out: &mut out,
        }
        .function();
    }
    if !prog.entries.is_empty() {
        out.push('\n');
    }
    for e in &prog.entries {
        let name = if is_ident(&e.name) {
            e.name.clone()
        } else {
            print_string(&e.name)
        };
        let _ = writeln!(
            out,
            "entry {name} = {} (params {:?}, results {:?})",
            fun_ref(prog, e.fun),
            e.param_arity,
            e.result_arity
        );
        if let Some(sig) = &e.signature {
            let params: Vec<String> = sig
                .params
                .iter()
                .map(|p| format!("{}: {}", print_string(&p.name), entry_type(&p.ty)))
                .collect();
            let results: Vec<String> = sig.results.iter().map(entry_type).collect();
            let _ = writeln!(
                out,
                "  signature (params [{}], results [{}])",
                params.join(", "),
                results.join(", ")
            );
        }
    }
    out
}

/// An entry type: `*"name"`, for an array with named sizes `shape ["n",
/// …]`, and for an opaque type `opaque N` (flat values) with `{"field":
/// TYPE [start, len], …}` for records, `variants {"name": [TYPE [start,
/// len], …], …}` for sums and `element RANK TYPE` for arrays of those.
fn entry_type(t: &crate::EntryType) -> String {
    let mut s = String::new();
    if t.unique {
        s.push('*');
    }
    s.push_str(&print_string(&t.name));
    if !t.shape.is_empty() {
        let dims: Vec<String> = t.shape.iter().map(|d| print_string(d)).collect();
        let _ = write!(s, " shape [{}]", dims.join(", "));
    }
    if let Some(o) = &t.opaque {
        let _ = write!(s, " opaque {}", o.flat);
        if let Some(fields) = &o.fields {
            let fs: Vec<String> = fields.iter().map(opaque_field).collect();
            let _ = write!(s, " {{{}}}", fs.join(", "));
        }
        if let Some(variants) = &o.variants {
            let vs: Vec<String> = variants
                .iter()
                .map(|v| {
                    let ps: Vec<String> = v.payload.iter().map(opaque_field).collect();
                    format!("{}: [{}]", print_string(&v.name), ps.join(", "))
                })
                .collect();
            let _ = write!(s, " variants {{{}}}", vs.join(", "));
        }
        if let Some((rank, elem)) = &o.element {
            let _ = write!(s, " element {rank} {}", entry_type(elem));
        }
    }
    s
}

/// `"name": TYPE [start, len]`.
fn opaque_field(f: &crate::OpaqueField) -> String {
    format!(
        "{}: {} [{}, {}]",
        print_string(&f.name),
        entry_type(&f.ty),
        f.start,
        f.len
    )
}

/// Prints one primitive constant as a Futhark literal with its type suffix.
///
/// Floats print with the shortest digits that read back to the same value
/// (`-0.0f64` keeps its sign); infinities as `f64.inf`/`-f64.inf`; the
/// canonical quiet NaN as `f64.nan` (`-f64.nan` with the sign bit set) and
/// any other NaN with its bits, `f64.nan(0x7ff0000000000001)`.
pub fn print_prim_value(v: &PrimValue) -> String {
    /// `x` is the value widened to `f64` (exact for every narrower float).
    fn float(x: f64, bits: u64, canonical_nan: u64, sign: u64, t: &str) -> String {
        if x.is_nan() {
            if bits == canonical_nan {
                format!("{t}.nan")
            } else if bits == canonical_nan | sign {
                format!("-{t}.nan")
            } else {
                format!("{t}.nan(0x{bits:x})")
            }
        } else if x.is_infinite() {
            if x > 0.0 {
                format!("{t}.inf")
            } else {
                format!("-{t}.inf")
            }
        } else {
            format!("{x:?}{t}")
        }
    }
    match *v {
        PrimValue::I8(x) => format!("{x}i8"),
        PrimValue::I16(x) => format!("{x}i16"),
        PrimValue::I32(x) => format!("{x}i32"),
        PrimValue::I64(x) => format!("{x}i64"),
        PrimValue::U8(x) => format!("{x}u8"),
        PrimValue::U16(x) => format!("{x}u16"),
        PrimValue::U32(x) => format!("{x}u32"),
        PrimValue::U64(x) => format!("{x}u64"),
        PrimValue::F16(x) => float(
            f64::from(x.to_f32()),
            u64::from(x.to_bits()),
            u64::from(nabla_prim::f16::NAN.to_bits()),
            0x8000,
            "f16",
        ),
        PrimValue::F32(x) => {
            // Print the shortest f32 digits, not the widened f64's.
            if x.is_finite() {
                format!("{x:?}f32")
            } else {
                float(
                    f64::from(x),
                    u64::from(x.to_bits()),
                    u64::from(f32::NAN.to_bits()),
                    0x8000_0000,
                    "f32",
                )
            }
        }
        PrimValue::F64(x) => float(
            x,
            x.to_bits(),
            f64::NAN.to_bits(),
            0x8000_0000_0000_0000,
            "f64",
        ),
        PrimValue::Bool(b) => b.to_string(),
    }
}

/// Prints a string literal: `"` … `"` with `\\`, `\"`, `\n`, `\t`, `\r` and
/// `\u{HEX}` (for every other control character) escaped.
pub(crate) fn print_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if c.is_control() => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Whether `s` reads back as one identifier token: `[A-Za-z_][A-Za-z0-9_']*`.
pub(crate) fn is_ident(s: &str) -> bool {
    let mut cs = s.chars();
    matches!(cs.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && cs.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '\'')
}

/// Words with a meaning of their own in the text format: a function spelt
/// like one of these is printed quoted.
pub(crate) fn is_reserved(s: &str) -> bool {
    // The words an expression may start with, and the top-level keywords.
    const WORDS: &[&str] = &[
        "fun",
        "entry",
        "let",
        "in",
        "if",
        "loop",
        "true",
        "false",
        "map",
        "reduce",
        "reduce_comm",
        "scan",
        "hist",
        "scatter",
        "with_acc",
        "update_acc",
        "jvp",
        "vjp",
        "iota",
        "replicate",
        "copy",
        "size",
        "reshape",
        "rearrange",
        "concat",
        "rotate",
        "reverse",
        "assert_eq_sizes",
        "assert",
        "bitcast",
    ];
    WORDS.contains(&s)
        || PrimType::from_name(s).is_some()
        || UNOPS.iter().any(|&o| unop_name(o) == s)
        || BINOPS.iter().any(|&o| binop_text(o) == (false, s))
        || TERNOPS.iter().any(|&o| ternop_name(o) == s)
}

/// A function name as written in a `fun` header: bare when it is an
/// identifier that is not reserved, quoted otherwise.
pub(crate) fn print_fun_name(name: &str) -> String {
    if is_ident(name) && !is_reserved(name) {
        name.to_string()
    } else {
        print_string(name)
    }
}

/// A reference to function `id` (a call or an entry point): its name, with
/// `@id` added when several functions share the name (or `id` is not a
/// function of the program).
fn fun_ref(prog: &Program, id: FunId) -> String {
    match prog.functions.get(id.0 as usize) {
        Some(f) => {
            let shared = prog.functions.iter().filter(|g| g.name == f.name).count() > 1;
            if shared {
                format!("{}@{}", print_fun_name(&f.name), id.0)
            } else {
                print_fun_name(&f.name)
            }
        }
        None => format!("\"\"@{}", id.0),
    }
}

/// Every binary operator, for the parser's reverse lookup.
pub(crate) const BINOPS: [BinOp; 22] = BinOp::ALL;

/// Every comparison operator.
pub(crate) const CMPOPS: [CmpOp; 6] = CmpOp::ALL;

/// Every unary operator.
pub(crate) const UNOPS: [UnOp; 40] = UnOp::ALL;

/// Every ternary operator.
pub(crate) const TERNOPS: [TernOp; 3] = TernOp::ALL;

/// How a binary operator prints: `(true, symbol)` for an infix operator
/// (`a + b`), `(false, name)` for one written as a call (`min(a, b)`).
pub(crate) fn binop_text(op: BinOp) -> (bool, &'static str) {
    match op {
        BinOp::Add => (true, "+"),
        BinOp::Sub => (true, "-"),
        BinOp::Mul => (true, "*"),
        BinOp::Div => (true, "/"),
        BinOp::Mod => (true, "%"),
        BinOp::IntDiv => (true, "//"),
        BinOp::IntMod => (true, "%%"),
        BinOp::Pow => (true, "**"),
        BinOp::BitAnd => (true, "&"),
        BinOp::BitOr => (true, "|"),
        BinOp::BitXor => (true, "^"),
        BinOp::Shl => (true, "<<"),
        BinOp::Shr => (true, ">>"),
        BinOp::LShr => (true, ">>>"),
        BinOp::LogAnd => (true, "&&"),
        BinOp::LogOr => (true, "||"),
        BinOp::Quot => (false, "quot"),
        BinOp::Rem => (false, "rem"),
        BinOp::Min => (false, "min"),
        BinOp::Max => (false, "max"),
        BinOp::Atan2 => (false, "atan2"),
        BinOp::Hypot => (false, "hypot"),
    }
}

/// The infix symbol of a comparison.
pub(crate) fn cmpop_symbol(op: CmpOp) -> &'static str {
    match op {
        CmpOp::Eq => "==",
        CmpOp::Neq => "!=",
        CmpOp::Lt => "<",
        CmpOp::Le => "<=",
        CmpOp::Gt => ">",
        CmpOp::Ge => ">=",
    }
}

/// The name a unary operator prints as (`sqrt(x)`; `!(x)` for `Not`).
pub(crate) fn unop_name(op: UnOp) -> &'static str {
    match op {
        UnOp::Neg => "neg",
        UnOp::Not => "!",
        UnOp::Abs => "abs",
        UnOp::Sgn => "sgn",
        UnOp::Sqrt => "sqrt",
        UnOp::Cbrt => "cbrt",
        UnOp::Exp => "exp",
        UnOp::Exp2 => "exp2",
        UnOp::Expm1 => "expm1",
        UnOp::Log => "log",
        UnOp::Log2 => "log2",
        UnOp::Log10 => "log10",
        UnOp::Log1p => "log1p",
        UnOp::Sin => "sin",
        UnOp::Cos => "cos",
        UnOp::Tan => "tan",
        UnOp::Asin => "asin",
        UnOp::Acos => "acos",
        UnOp::Atan => "atan",
        UnOp::Sinh => "sinh",
        UnOp::Cosh => "cosh",
        UnOp::Tanh => "tanh",
        UnOp::Asinh => "asinh",
        UnOp::Acosh => "acosh",
        UnOp::Atanh => "atanh",
        UnOp::Lgamma => "lgamma",
        UnOp::Digamma => "digamma",
        UnOp::Trigamma => "trigamma",
        UnOp::Gamma => "gamma",
        UnOp::Erf => "erf",
        UnOp::Erfc => "erfc",
        UnOp::Floor => "floor",
        UnOp::Ceil => "ceil",
        UnOp::Round => "round",
        UnOp::Trunc => "trunc",
        UnOp::IsNan => "isnan",
        UnOp::IsInf => "isinf",
        UnOp::Clz => "clz",
        UnOp::Ctz => "ctz",
        UnOp::Popc => "popc",
    }
}

/// The name a ternary operator prints as.
pub(crate) fn ternop_name(op: TernOp) -> &'static str {
    match op {
        TernOp::Fma => "fma",
        TernOp::Mad => "mad",
        TernOp::Lerp => "lerp",
    }
}

/// The part of variable `index`'s name that is printed before `_index`:
/// the name without a trailing `_index` when it has one (the elaborator
/// names variables `x_5`; the optimiser gives the variables it makes bare
/// names like `x`; both print as `x_5`).
pub(crate) fn base_name(name: &str, index: u32) -> &str {
    name.strip_suffix(&index.to_string())
        .and_then(|p| p.strip_suffix('_'))
        .unwrap_or(name)
}

/// A variable as printed: `base_index` (see [`base_name`]), the base quoted
/// when it is not an identifier (`"+^"_3`), `_index` when it is empty.
/// Variables beyond `var_names` print as if their name were empty.
pub(crate) fn print_var(names: &[String], v: crate::Var) -> String {
    let base = names.get(v.0 as usize).map_or("", |n| base_name(n, v.0));
    if base.is_empty() || is_ident(base) {
        format!("{base}_{}", v.0)
    } else {
        format!("{}_{}", print_string(base), v.0)
    }
}

struct Printer<'a> {
    prog: &'a Program,
    fun: &'a Function,
    /// The function's number (the key of its segment decisions).
    id: FunId,
    out: &'a mut String,
}

impl Printer<'_> {
    fn var(&self, v: crate::Var) -> String {
        print_var(&self.fun.var_names, v)
    }

    fn atom(&self, a: &Atom) -> String {
        match a {
            Atom::Var(v) => self.var(*v),
            Atom::Const(c) => print_prim_value(c),
        }
    }

    fn atoms(&self, xs: &[Atom]) -> String {
        xs.iter()
            .map(|a| self.atom(a))
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// `, a, b` (empty for no items): the items that end an argument list.
    fn list_tail(&self, items: impl Iterator<Item = String>) -> String {
        items.map(|s| format!(", {s}")).collect()
    }

    /// `a, b, ` (empty for no items): the items that start an argument list.
    fn list_head(&self, items: impl Iterator<Item = String>) -> String {
        items.map(|s| format!("{s}, ")).collect()
    }

    fn vars(&self, xs: &[crate::Var]) -> String {
        xs.iter()
            .map(|v| self.var(*v))
            .collect::<Vec<_>>()
            .join(", ")
    }

    fn ty(&self, t: &Type) -> String {
        match t {
            Type::Prim(p) => p.name().to_string(),
            Type::Acc(p, dims) => format!("acc({})", self.ty(&Type::Array(*p, dims.clone()))),
            Type::Array(p, dims) => {
                let mut s = String::new();
                for d in dims {
                    match d {
                        Dim::Const(n) => {
                            let _ = write!(s, "[{n}]");
                        }
                        Dim::Var(v) => {
                            let _ = write!(s, "[{}]", self.var(*v));
                        }
                        Dim::Ext => s.push_str("[?]"),
                    }
                }
                s.push_str(p.name());
                s
            }
        }
    }

    fn types(&self, ts: &[Type]) -> String {
        format!(
            "({})",
            ts.iter().map(|t| self.ty(t)).collect::<Vec<_>>().join(", ")
        )
    }

    fn param(&self, p: &Param) -> String {
        let star = if p.unique { "*" } else { "" };
        format!("{}: {star}{}", self.var(p.var), self.ty(&p.ty))
    }

    fn params(&self, ps: &[Param]) -> String {
        ps.iter()
            .map(|p| self.param(p))
            .collect::<Vec<_>>()
            .join(", ")
    }

    fn indent(&mut self, depth: usize) {
        for _ in 0..depth {
            self.out.push_str("  ");
        }
    }

    fn function(&mut self) {
        let f = self.fun;
        // With one flag per result, the flags are `*`s on the result types;
        // otherwise (an invalid function) they are listed after the results.
        let flags_match = f.unique_ret.len() == f.ret.len();
        let ret = f
            .ret
            .iter()
            .enumerate()
            .map(|(i, t)| {
                let star = if flags_match && f.unique_ret[i] {
                    "*"
                } else {
                    ""
                };
                format!("{star}{}", self.ty(t))
            })
            .collect::<Vec<_>>()
            .join(", ");
        let flags = if flags_match {
            String::new()
        } else {
            let fs: Vec<String> = f.unique_ret.iter().map(|b| b.to_string()).collect();
            format!(" unique({})", fs.join(", "))
        };
        let head = format!(
            "fun {} ({}): ({ret}){flags} = ",
            print_fun_name(&f.name),
            self.params(&f.params)
        );
        self.out.push_str(&head);
        self.body(&f.body, 0);
        self.out.push('\n');
    }

    /// Prints `{ stms… in (result) }`; the opening brace continues the
    /// current line, the closing one is indented at `depth`.
    fn body(&mut self, b: &Body, depth: usize) {
        stacker::maybe_grow(64 * 1024, 1024 * 1024, || self.body_inner(b, depth))
    }

    fn body_inner(&mut self, b: &Body, depth: usize) {
        self.out.push_str("{\n");
        for stm in &b.stms {
            let decision = stm
                .pat
                .first()
                .and_then(|p| self.prog.segments.get(&(self.id, p.var)));
            if let Some(op) = decision {
                self.indent(depth + 1);
                let _ = writeln!(self.out, "#[{}]", op.text());
            }
            self.indent(depth + 1);
            let pat = match stm.pat.len() {
                0 => "()".to_string(),
                1 => self.param(&stm.pat[0]),
                _ => format!("({})", self.params(&stm.pat)),
            };
            let _ = write!(self.out, "let {pat} = ");
            self.exp(&stm.exp, depth + 1);
            self.out.push('\n');
        }
        self.indent(depth + 1);
        let res = format!("in ({})\n", self.atoms(&b.result));
        self.out.push_str(&res);
        self.indent(depth);
        self.out.push('}');
    }

    fn lambda(&mut self, lam: &Lambda, depth: usize) {
        let head = format!(
            "\\({}): {} -> ",
            self.params(&lam.params),
            self.types(&lam.ret)
        );
        self.out.push_str(&head);
        self.body(&lam.body, depth);
    }

    fn dim_indices(&self, idx: &[DimIndex]) -> String {
        idx.iter()
            .map(|i| match i {
                DimIndex::Fix(a) => self.atom(a),
                DimIndex::Slice { start, len, stride } => {
                    format!(
                        "{}:+{}*{}",
                        self.atom(start),
                        self.atom(len),
                        self.atom(stride)
                    )
                }
            })
            .collect::<Vec<_>>()
            .join(", ")
    }

    fn push(&mut self, s: String) {
        self.out.push_str(&s);
    }

    fn exp(&mut self, e: &Exp, depth: usize) {
        match e {
            Exp::Atoms(xs) => {
                let s = if xs.len() == 1 {
                    self.atom(&xs[0])
                } else {
                    format!("({})", self.atoms(xs))
                };
                self.push(s);
            }
            Exp::BinOp(op, a, b) => {
                let s = match binop_text(*op) {
                    (true, sym) => format!("{} {sym} {}", self.atom(a), self.atom(b)),
                    (false, name) => format!("{name}({}, {})", self.atom(a), self.atom(b)),
                };
                self.push(s);
            }
            Exp::CmpOp(op, a, b) => {
                let s = format!("{} {} {}", self.atom(a), cmpop_symbol(*op), self.atom(b));
                self.push(s);
            }
            Exp::UnOp(op, a) => {
                let s = format!("{}({})", unop_name(*op), self.atom(a));
                self.push(s);
            }
            Exp::TernOp(op, a, b, c) => {
                let s = format!(
                    "{}({}, {}, {})",
                    ternop_name(*op),
                    self.atom(a),
                    self.atom(b),
                    self.atom(c)
                );
                self.push(s);
            }
            Exp::Conv(ConvOp::Convert(from, to), a) => {
                let s = format!("{}.{}({})", to.name(), from.name(), self.atom(a));
                self.push(s);
            }
            Exp::Conv(ConvOp::BitCast(from, to), a) => {
                let s = format!("bitcast<{}->{}>({})", from.name(), to.name(), self.atom(a));
                self.push(s);
            }
            Exp::Apply(f, args) => {
                let s = format!("{}({})", fun_ref(self.prog, *f), self.atoms(args));
                self.push(s);
            }
            Exp::If { cond, then_, else_ } => {
                let s = format!("if {} then ", self.atom(cond));
                self.push(s);
                self.body(then_, depth);
                self.out.push_str(" else ");
                self.body(else_, depth);
            }
            Exp::Loop {
                params,
                init,
                form,
                body,
            } => {
                if params.len() == init.len() {
                    let ps = params
                        .iter()
                        .zip(init)
                        .map(|(p, a)| format!("{} = {}", self.param(p), self.atom(a)))
                        .collect::<Vec<_>>()
                        .join(", ");
                    self.push(format!("loop ({ps}) "));
                } else {
                    // An invalid loop: parameters and initial values apart.
                    let s = format!(
                        "loop ({}) init ({}) ",
                        self.params(params),
                        self.atoms(init)
                    );
                    self.push(s);
                }
                match form {
                    LoopForm::For { i, bound } => {
                        let s = format!("for {} < {} do ", self.var(*i), self.atom(bound));
                        self.push(s);
                    }
                    LoopForm::While { cond } => {
                        self.out.push_str("while ");
                        self.body(cond, depth);
                        self.out.push_str(" do ");
                    }
                }
                self.body(body, depth);
            }
            Exp::Index(arr, idx) => {
                let s = format!("{}[{}]", self.var(*arr), self.dim_indices(idx));
                self.push(s);
            }
            Exp::Update(arr, idx, v) => {
                let s = format!(
                    "{} with [{}] = {}",
                    self.var(*arr),
                    self.dim_indices(idx),
                    self.atom(v)
                );
                self.push(s);
            }
            Exp::ArrayLit(xs, row) => {
                let s = format!("[{}]: []{}", self.atoms(xs), self.ty(row));
                self.push(s);
            }
            Exp::Iota { n, start, step, ty } => {
                let s = format!(
                    "iota<{}>({}, {}, {})",
                    ty.name(),
                    self.atom(n),
                    self.atom(start),
                    self.atom(step)
                );
                self.push(s);
            }
            Exp::Replicate(n, v) => {
                let s = format!("replicate({}, {})", self.atom(n), self.atom(v));
                self.push(s);
            }
            Exp::Copy(v) => {
                let s = format!("copy({})", self.var(*v));
                self.push(s);
            }
            Exp::Size(v, d) => {
                let s = format!("size({}, {d})", self.var(*v));
                self.push(s);
            }
            Exp::Reshape(shape, v) => {
                let s = format!("reshape([{}], {})", self.atoms(shape), self.var(*v));
                self.push(s);
            }
            Exp::Rearrange(perm, v) => {
                let s = format!("rearrange({perm:?}, {})", self.var(*v));
                self.push(s);
            }
            Exp::Concat(vs) => {
                let s = format!("concat({})", self.vars(vs));
                self.push(s);
            }
            Exp::Rotate(r, v) => {
                let s = format!("rotate({}, {})", self.atom(r), self.var(*v));
                self.push(s);
            }
            Exp::Reverse(v) => {
                let s = format!("reverse({})", self.var(*v));
                self.push(s);
            }
            Exp::AssertEqSizes(xs, msg) => {
                let s = format!(
                    "assert_eq_sizes({}{})",
                    self.list_head(xs.iter().map(|a| self.atom(a))),
                    print_string(msg)
                );
                self.push(s);
            }
            Exp::Assert(c, msg, xs) => {
                let mut s = format!("assert({}, {}", self.atom(c), print_string(msg));
                for x in xs {
                    s.push_str(", ");
                    s.push_str(&self.atom(x));
                }
                s.push(')');
                self.push(s);
            }
            Exp::WithAcc { inputs, lam } => {
                self.out.push_str("with_acc([");
                for (k, input) in inputs.iter().enumerate() {
                    if k > 0 {
                        self.out.push_str(", ");
                    }
                    let arr = self.var(input.array);
                    match &input.op {
                        AccOp::Add => self.push(format!("{arr} add")),
                        AccOp::Write => self.push(format!("{arr} write")),
                        AccOp::Lambda(op, neutral) => {
                            self.push(format!("{arr} op("));
                            self.lambda(op, depth);
                            let ne = self.atom(neutral);
                            self.push(format!(", {ne})"));
                        }
                    }
                }
                self.out.push_str("], ");
                self.lambda(lam, depth);
                self.out.push(')');
            }
            Exp::UpdateAcc {
                acc,
                indices,
                value,
            } => {
                let s = format!(
                    "update_acc({}, [{}], {})",
                    self.var(*acc),
                    self.atoms(indices),
                    self.atom(value)
                );
                self.push(s);
            }
            Exp::Soac(soac) => self.soac(soac, depth),
            Exp::Jvp {
                lam,
                primals,
                tangents,
            } => {
                self.out.push_str("jvp(");
                self.lambda(lam, depth);
                let s = format!(", ({}), ({}))", self.atoms(primals), self.atoms(tangents));
                self.push(s);
            }
            Exp::Vjp {
                lam,
                primals,
                adjoints,
            } => {
                self.out.push_str("vjp(");
                self.lambda(lam, depth);
                let s = format!(", ({}), ({}))", self.atoms(primals), self.atoms(adjoints));
                self.push(s);
            }
            Exp::WithVjp {
                lam,
                rule,
                args,
                tape,
            } => {
                self.push(format!("with_vjp({tape}, "));
                self.lambda(lam, depth);
                self.out.push_str(", ");
                self.lambda(rule, depth);
                let s = format!(", ({}))", self.atoms(args));
                self.push(s);
            }
        }
    }

    fn soac(&mut self, s: &Soac, depth: usize) {
        match s {
            Soac::Map { w, lam, arrs } => {
                self.push(format!("map({}, ", self.atom(w)));
                self.lambda(lam, depth);
                self.push(format!(
                    "{})",
                    self.list_tail(arrs.iter().map(|v| self.var(*v)))
                ));
            }
            Soac::Reduce {
                w,
                lam,
                neutral,
                arrs,
                commutative,
            } => {
                let name = if *commutative {
                    "reduce_comm"
                } else {
                    "reduce"
                };
                self.push(format!("{name}({}, ", self.atom(w)));
                self.lambda(lam, depth);
                let s = format!(
                    ", ({}){})",
                    self.atoms(neutral),
                    self.list_tail(arrs.iter().map(|v| self.var(*v)))
                );
                self.push(s);
            }
            Soac::Scan {
                w,
                lam,
                neutral,
                arrs,
            } => {
                self.push(format!("scan({}, ", self.atom(w)));
                self.lambda(lam, depth);
                let s = format!(
                    ", ({}){})",
                    self.atoms(neutral),
                    self.list_tail(arrs.iter().map(|v| self.var(*v)))
                );
                self.push(s);
            }
            Soac::Hist {
                w,
                dest,
                lam,
                neutral,
                indices,
                values,
            } => {
                self.push(format!("hist({}, ({}), ", self.atom(w), self.vars(dest)));
                self.lambda(lam, depth);
                let s = format!(
                    ", ({}), {}{})",
                    self.atoms(neutral),
                    self.var(*indices),
                    self.list_tail(values.iter().map(|v| self.var(*v)))
                );
                self.push(s);
            }
            Soac::Scatter {
                w,
                dest,
                indices,
                values,
            } => {
                self.push(format!(
                    "scatter({}, ({}), ({}), ({}))",
                    self.atom(w),
                    self.vars(dest),
                    self.vars(indices),
                    self.vars(values)
                ));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_util::{p, stm, v};
    use crate::{EntryPoint, Var};
    use nabla_prim::PrimType;
    use nabla_syntax::Span;

    /// `scale x xs = map (\a -> a * x) xs`, plus a loop and an if.
    fn sample() -> Program {
        let f64t = Type::Prim(PrimType::F64);
        let arr = Type::Array(PrimType::F64, vec![Dim::Var(Var(2))]);
        let lam = Lambda {
            params: vec![p(4, f64t.clone())],
            body: Body {
                stms: vec![stm(
                    vec![p(5, f64t.clone())],
                    Exp::BinOp(BinOp::Mul, v(4), v(0)),
                )],
                result: vec![v(5)],
            },
            ret: vec![f64t.clone()],
        };
        let body = Body {
            stms: vec![
                stm(
                    vec![p(3, arr.clone())],
                    Exp::Soac(Soac::Map {
                        w: v(2),
                        lam,
                        arrs: vec![Var(1)],
                    }),
                ),
                stm(
                    vec![p(6, f64t.clone())],
                    Exp::Loop {
                        params: vec![p(7, f64t.clone())],
                        init: vec![Atom::Const(PrimValue::F64(0.0))],
                        form: LoopForm::For {
                            i: Var(8),
                            bound: v(2),
                        },
                        body: Body {
                            stms: vec![stm(
                                vec![p(9, f64t.clone())],
                                Exp::BinOp(BinOp::Add, v(7), Atom::Const(PrimValue::F64(1.5))),
                            )],
                            result: vec![v(9)],
                        },
                    },
                ),
                stm(
                    vec![p(10, Type::Prim(PrimType::Bool))],
                    Exp::CmpOp(CmpOp::Lt, v(6), Atom::Const(PrimValue::F64(f64::NAN))),
                ),
                stm(
                    vec![p(11, f64t.clone())],
                    Exp::If {
                        cond: v(10),
                        then_: Body {
                            stms: vec![],
                            result: vec![v(6)],
                        },
                        else_: Body {
                            stms: vec![],
                            result: vec![v(0)],
                        },
                    },
                ),
            ],
            result: vec![v(3), v(11)],
        };
        let names = [
            "x", "xs", "n", "ys", "a", "b", "s", "acc", "i", "acc2", "c", "r",
        ];
        Program {
            functions: vec![Function {
                name: "scale".into(),
                params: vec![
                    p(2, Type::Prim(PrimType::I64)),
                    p(0, f64t.clone()),
                    p(1, arr.clone()),
                ],
                unique_ret: vec![false; 2],
                ret: vec![arr, f64t],
                body,
                var_names: names.iter().map(|s| s.to_string()).collect(),
                span: Span::default(),
            }],
            entries: vec![EntryPoint {
                name: "main".into(),
                fun: FunId(0),
                param_arity: vec![1, 1, 1],
                result_arity: vec![1, 1],
                signature: None,
            }],
            ..Default::default()
        }
    }

    #[test]
    fn prints_sample_program() {
        let text = print_program(&sample());
        let expected = "\
fun scale (n_2: i64, x_0: f64, xs_1: [n_2]f64): ([n_2]f64, f64) = {
  let ys_3: [n_2]f64 = map(n_2, \\(a_4: f64): (f64) -> {
    let b_5: f64 = a_4 * x_0
    in (b_5)
  }, xs_1)
  let s_6: f64 = loop (acc_7: f64 = 0.0f64) for i_8 < n_2 do {
    let acc2_9: f64 = acc_7 + 1.5f64
    in (acc2_9)
  }
  let c_10: bool = s_6 < f64.nan
  let r_11: f64 = if c_10 then {
    in (s_6)
  } else {
    in (x_0)
  }
  in (ys_3, r_11)
}

entry main = scale (params [1, 1, 1], results [1, 1])
";
        assert_eq!(text, expected);
    }

    #[test]
    fn entry_signatures_print_and_parse_back() {
        use crate::{
            EntryParam, EntrySignature, EntryType, OpaqueField, OpaqueInfo, OpaqueVariant,
        };
        let mut prog = sample();
        let pair = EntryType {
            name: "(f64, []f64)".into(),
            unique: false,
            shape: vec![],
            opaque: Some(OpaqueInfo {
                flat: 2,
                fields: Some(vec![
                    OpaqueField {
                        name: "0".into(),
                        ty: EntryType::transparent("f64", false),
                        start: 0,
                        len: 1,
                    },
                    OpaqueField {
                        name: "1".into(),
                        ty: EntryType::transparent("[]f64", true),
                        start: 1,
                        len: 1,
                    },
                ]),
                ..OpaqueInfo::default()
            }),
        };
        let option = EntryType {
            name: "opt".into(),
            unique: false,
            shape: vec![],
            opaque: Some(OpaqueInfo {
                flat: 2,
                variants: Some(vec![
                    OpaqueVariant {
                        name: "none".into(),
                        payload: vec![],
                    },
                    OpaqueVariant {
                        name: "some".into(),
                        payload: vec![OpaqueField {
                            name: "0".into(),
                            ty: EntryType::transparent("i32", false),
                            start: 1,
                            len: 1,
                        }],
                    },
                ]),
                ..OpaqueInfo::default()
            }),
        };
        prog.entries[0].signature = Some(EntrySignature {
            params: vec![
                EntryParam {
                    name: "n".into(),
                    ty: EntryType {
                        shape: vec!["n".into(), "".into(), "3".into()],
                        ..EntryType::transparent("[][][]i64", false)
                    },
                },
                EntryParam {
                    name: "p".into(),
                    ty: pair,
                },
            ],
            results: vec![
                EntryType::transparent("[]f64", true),
                EntryType {
                    name: "s".into(),
                    unique: false,
                    shape: vec![],
                    opaque: Some(OpaqueInfo {
                        flat: 1,
                        ..OpaqueInfo::default()
                    }),
                },
                EntryType {
                    name: "[]opt".into(),
                    unique: false,
                    shape: vec![],
                    opaque: Some(OpaqueInfo {
                        flat: 2,
                        element: Some((1, Box::new(option))),
                        ..OpaqueInfo::default()
                    }),
                },
            ],
        });
        let text = print_program(&prog);
        assert!(
            text.contains(
                "  signature (params [\"n\": \"[][][]i64\" shape [\"n\", \"\", \"3\"], \"p\": \"(f64, []f64)\" opaque 2 \
                 {\"0\": \"f64\" [0, 1], \"1\": *\"[]f64\" [1, 1]}], \
                 results [*\"[]f64\", \"s\" opaque 1, \"[]opt\" opaque 2 element 1 \"opt\" opaque 2 \
                 variants {\"none\": [], \"some\": [\"0\": \"i32\" [1, 1]]}])\n"
            ),
            "{text}"
        );
        let back = crate::parse_program(&text).expect("parses");
        assert_eq!(back.entries, prog.entries);
    }

    #[test]
    fn prints_is_deterministic() {
        assert_eq!(print_program(&sample()), print_program(&sample()));
    }

    #[test]
    fn prints_constants_with_suffixes() {
        assert_eq!(print_prim_value(&PrimValue::I32(-3)), "-3i32");
        assert_eq!(print_prim_value(&PrimValue::U8(255)), "255u8");
        assert_eq!(print_prim_value(&PrimValue::F32(0.1)), "0.1f32");
        assert_eq!(print_prim_value(&PrimValue::F64(2.0)), "2.0f64");
        assert_eq!(
            print_prim_value(&PrimValue::F64(f64::NEG_INFINITY)),
            "-f64.inf"
        );
        assert_eq!(print_prim_value(&PrimValue::Bool(true)), "true");
    }

    #[test]
    fn prints_misc_expressions() {
        let i64t = Type::Prim(PrimType::I64);
        let arr2 = Type::Array(PrimType::I32, vec![Dim::Const(3), Dim::Ext]);
        let f = Function {
            name: "g".into(),
            params: vec![p(0, arr2.clone()), p(1, i64t.clone())],
            unique_ret: vec![],
            ret: vec![],
            body: Body {
                stms: vec![
                    stm(
                        vec![p(2, Type::Array(PrimType::I32, vec![Dim::Var(Var(1))]))],
                        Exp::Index(
                            Var(0),
                            vec![
                                DimIndex::Fix(Atom::Const(PrimValue::I64(1))),
                                DimIndex::Slice {
                                    start: Atom::Const(PrimValue::I64(0)),
                                    len: v(1),
                                    stride: Atom::Const(PrimValue::I64(1)),
                                },
                            ],
                        ),
                    ),
                    stm(
                        vec![],
                        Exp::AssertEqSizes(
                            vec![v(1), Atom::Const(PrimValue::I64(3))],
                            "zip".into(),
                        ),
                    ),
                    stm(
                        vec![p(3, Type::Prim(PrimType::I32))],
                        Exp::Conv(ConvOp::Convert(PrimType::I64, PrimType::I32), v(1)),
                    ),
                    stm(vec![p(4, i64t.clone())], Exp::BinOp(BinOp::Max, v(1), v(1))),
                    stm(vec![p(5, i64t)], Exp::Apply(FunId(0), vec![v(0), v(1)])),
                ],
                result: vec![],
            },
            var_names: vec!["a".into(), "n".into(), "row".into(), "".into()],
            span: Span::default(),
        };
        let prog = Program {
            functions: vec![f],
            entries: vec![],
            ..Default::default()
        };
        let text = print_program(&prog);
        assert!(
            text.contains("fun g (a_0: [3][?]i32, n_1: i64): () = {"),
            "{text}"
        );
        assert!(
            text.contains("let row_2: [n_1]i32 = a_0[1i64, 0i64:+n_1*1i64]"),
            "{text}"
        );
        assert!(
            text.contains("let () = assert_eq_sizes(n_1, 3i64, \"zip\")"),
            "{text}"
        );
        assert!(text.contains("let _3: i32 = i32.i64(n_1)"), "{text}");
        assert!(text.contains("let _4: i64 = max(n_1, n_1)"), "{text}");
        assert!(text.contains("= g(a_0, n_1)"), "{text}");
    }

    #[test]
    fn names_already_suffixed_are_not_doubled() {
        let f = Function {
            name: "h".into(),
            params: vec![
                p(0, Type::Prim(PrimType::I32)),
                p(1, Type::Prim(PrimType::I32)),
            ],
            unique_ret: vec![false; 1],
            ret: vec![Type::Prim(PrimType::I32)],
            body: Body {
                stms: vec![],
                result: vec![v(0)],
            },
            var_names: vec!["x_0".into(), "y_7".into()],
            span: Span::default(),
        };
        let text = print_program(&Program {
            functions: vec![f],
            entries: vec![],
            ..Default::default()
        });
        assert!(
            text.starts_with("fun h (x_0: i32, y_7_1: i32): (i32) = {"),
            "{text}"
        );
    }
}
