//! The static values of the module pass: what a name in a module stands for
//! after expansion ([`ValTarget`], [`TypeTarget`]), modules ([`ModVal`]),
//! their environments ([`Env`]) and module types ([`Sig`]).

use nabla_prim::PrimType;
use nabla_syntax::ast::{
    Ident, Liftedness, ModExp, ModParam, ModTypeExp, Name, TypeExp, TypeParam,
};
use nabla_syntax::Span;
use std::collections::HashMap;
use std::rc::Rc;

/// What a value name stands for after expansion: a flat top-level name
/// (`quals` empty; for members of user modules the mangled `M.N.x`) or a
/// member of a built-in module (`quals == ["f64"]`).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct ValTarget {
    pub quals: Vec<Name>,
    pub name: Name,
}

impl ValTarget {
    /// A flat top-level name.
    pub fn flat(name: &str) -> ValTarget {
        ValTarget {
            quals: vec![],
            name: name.to_string(),
        }
    }
}

/// What a type name stands for after expansion.
#[derive(Clone, Debug)]
pub(crate) enum TypeTarget {
    /// A flat top-level type abbreviation (mangled for module members).
    Flat(Rc<TypeInfo>),
    /// The type `t` of a built-in numeric module.
    Prim(PrimType),
}

/// A type declaration the pass has output (or, for the checks of a module
/// type, a specification standing for one): what matching and the rules
/// on liftedness need to know of it.
#[derive(Debug)]
pub(crate) struct TypeInfo {
    /// The flat name it was given.
    pub flat: Name,
    pub params: Vec<TypeParam>,
    /// As declared.
    pub liftedness: Liftedness,
    /// The definition, its names resolved to flat names; `None` for an
    /// abstract type (a sealed one, or a specification's).
    pub def: Option<TypeExp>,
}

/// A module: a structure (its environment) or a functor (a closure).
#[derive(Clone, Debug)]
pub(crate) enum ModVal {
    Struct(Rc<Env>),
    Functor(Rc<Functor>),
}

/// A parametric module not yet applied: its remaining parameters, body and
/// the scope it was defined in (names in the body mean what they meant there).
#[derive(Debug)]
pub(crate) struct Functor {
    /// The user-facing name, for messages.
    pub name: String,
    /// At least one parameter.
    pub params: Vec<ModParam>,
    /// The ascribed module type of the result.
    pub ret: Option<ModTypeExp>,
    pub body: ModExp,
    pub scope: Rc<Env>,
}

/// The names a module (or a scope) defines, in their four namespaces.
#[derive(Clone, Debug, Default)]
pub(crate) struct Env {
    pub vals: HashMap<Name, ValTarget>,
    pub types: HashMap<Name, TypeTarget>,
    pub mods: HashMap<Name, ModVal>,
    pub sigs: HashMap<Name, Rc<Sig>>,
    /// True for the built-in numeric modules: `open` brings their functions
    /// into scope but not their operators (those are overloaded anyway); a
    /// local open `T.(e)` also brings the operators of a numeric module (see
    /// [`typed_operator`]).
    pub builtin: bool,
    /// True for a module that stands for a module specification while a
    /// module type is checked (see `sig.rs`).
    pub placeholder: bool,
}

impl Env {
    /// Adds every name of `other` to `self` (later names shadow earlier ones).
    pub fn merge(&mut self, other: &Env) {
        self.merge_names(other, true);
    }

    /// Brings the names of `other` into scope as `open` does: like
    /// [`Env::merge`], but a built-in module's operators stay overloaded.
    pub fn open(&mut self, other: &Env) {
        self.merge_names(other, !other.builtin);
    }

    fn merge_names(&mut self, other: &Env, with_operators: bool) {
        for (n, v) in &other.vals {
            if !with_operators && is_operator(n) {
                continue;
            }
            self.vals.insert(n.clone(), v.clone());
        }
        for (n, t) in &other.types {
            self.types.insert(n.clone(), t.clone());
        }
        for (n, m) in &other.mods {
            self.mods.insert(n.clone(), m.clone());
        }
        for (n, s) in &other.sigs {
            self.sigs.insert(n.clone(), s.clone());
        }
    }

    /// The environment of the built-in module `m` with the given members.
    pub fn builtin_module(m: &str, members: Vec<String>) -> Env {
        let mut env = Env {
            builtin: true,
            ..Env::default()
        };
        for n in members {
            env.vals.insert(
                n.clone(),
                ValTarget {
                    quals: vec![m.to_string()],
                    name: n,
                },
            );
        }
        if let Some(p) = PrimType::from_name(m) {
            env.types.insert("t".to_string(), TypeTarget::Prim(p));
            // The integer type of the same width (`float`'s `int_t`).
            let int = match p {
                PrimType::F16 => Some(PrimType::U16),
                PrimType::F32 => Some(PrimType::U32),
                PrimType::F64 => Some(PrimType::U64),
                _ => None,
            };
            if let Some(i) = int {
                env.types.insert("int_t".to_string(), TypeTarget::Prim(i));
            }
        }
        env
    }
}

/// Whether `name` is an operator rather than an identifier.
pub(crate) fn is_operator(name: &str) -> bool {
    !name
        .chars()
        .next()
        .is_some_and(|c| c.is_alphanumeric() || c == '_')
}

/// Whether the member `t` of a built-in module is an operator that a local
/// open `T.(e)` brings into scope, as in Futhark, so that `f64.(a == b)`
/// compares `f64`s and `u16.(7 // 2)` divides `u16`s: the arithmetic,
/// bitwise and comparison operators of the numeric modules (not `bool`'s,
/// nor `!`, which is not a binary operator).
pub(crate) fn typed_operator(t: &ValTarget) -> bool {
    const OPS: &[&str] = &[
        "+", "-", "*", "/", "%", "**", "//", "%%", "&", "|", "^", "<<", ">>", ">>>", "==", "!=",
        "<", "<=", ">", ">=",
    ];
    t.quals.len() == 1 && t.quals[0] != "bool" && OPS.contains(&t.name.as_str())
}

/// A module type, as far as the pass checks it: which names a module must
/// define, and the specifications' types (used to check `val`s and, when
/// the pass checks opaque ascription, to hide abstract types).
#[derive(Clone, Debug)]
pub(crate) enum Sig {
    Struct(SigStruct),
    /// The type of a functor, `(p: P) -> R`.
    Functor(Rc<FunctorSig>),
}

/// The module type of a functor, kept as written (its result may name the
/// parameter) with the scope it was written in.
#[derive(Debug)]
pub(crate) struct FunctorSig {
    pub param: Option<Ident>,
    pub param_sig: ModTypeExp,
    pub result: ModTypeExp,
    pub scope: Rc<Env>,
    pub span: Span,
}

/// The specifications of a structure's module type.
#[derive(Clone, Debug, Default)]
pub(crate) struct SigStruct {
    pub vals: Vec<ValSpec>,
    pub types: Vec<TypeSpec>,
    pub mods: Vec<(Name, Rc<Sig>, Span)>,
    /// The type and module specifications in the order written (includes
    /// in place): a type may be defined by a type of an earlier module
    /// specification (`module S: field` then `type scalar = S.t`), and a
    /// module specification may name earlier types, so a module is
    /// matched against them in this order.
    pub order: Vec<SpecRef>,
}

/// A type or module specification of a [`SigStruct`], by its index in
/// `types` or `mods`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SpecRef {
    Type(usize),
    Module(usize),
}

impl SigStruct {
    /// The type and module specifications in the order written: `order`,
    /// or, when it does not list each once, the types and then the
    /// modules.
    pub(crate) fn types_and_modules_in_order(&self) -> Vec<SpecRef> {
        let complete = self.order.len() == self.types.len() + self.mods.len()
            && self.order.iter().all(|r| match *r {
                SpecRef::Type(i) => i < self.types.len(),
                SpecRef::Module(i) => i < self.mods.len(),
            });
        if complete {
            return self.order.clone();
        }
        (0..self.types.len())
            .map(SpecRef::Type)
            .chain((0..self.mods.len()).map(SpecRef::Module))
            .collect()
    }
}

/// A `type` specification.
#[derive(Clone, Debug)]
pub(crate) struct TypeSpec {
    pub name: Name,
    pub span: Span,
    pub params: Vec<TypeParam>,
    pub liftedness: Liftedness,
    /// `type t = …` in the module type itself.
    pub def: Option<TypeExp>,
    /// Made transparent by a refinement `S with t 'a = def`: its
    /// parameters, definition, and the scope the refinement was written in.
    pub refinement: Option<Rc<Refinement>>,
    /// The scope the module type was written in (for the definition's names).
    pub scope: Rc<Env>,
}

/// The definition a refinement `S with t 'a = def` gives a type.
#[derive(Debug)]
pub(crate) struct Refinement {
    pub params: Vec<TypeParam>,
    pub def: TypeExp,
    pub scope: Rc<Env>,
}

/// A `val` specification.
#[derive(Clone, Debug)]
pub(crate) struct ValSpec {
    pub name: Name,
    pub span: Span,
    /// The specification's type parameters (`val f 'a [n]: …`).
    pub type_params: Vec<TypeParam>,
    /// The specified type, as written.
    pub ty: TypeExp,
    /// The scope the module type was written in (for the type's names).
    pub scope: Rc<Env>,
}
