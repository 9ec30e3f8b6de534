//! Rules on declaration lists and module types that need no types:
//! duplicate definitions in one module (Futhark's `checkForDuplicateDecs`)
//! and duplicate specifications in one module type.

use nabla_syntax::ast::{Dec, Ident, Spec};
use nabla_syntax::{Diagnostic, DiagnosticKind};
use std::collections::HashMap;

/// The name spaces of a module: values and modules share one (a module
/// and a value of the same name clash), types and module types have their
/// own.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum Space {
    Term,
    Type,
    ModType,
}

/// Reports every name that `decs` (the declarations of one file or one
/// module body) defines twice in the same name space, as Futhark does:
/// later definitions may not shadow earlier ones of the same module.
/// `local` declarations, `open` and `import` are not checked.
pub(crate) fn duplicate_definitions(decs: &[Dec]) -> Vec<Diagnostic> {
    let mut seen = Seen::default();
    for d in decs {
        match d {
            Dec::Val(vb) => seen.define(Space::Term, "value", &vb.name),
            Dec::Module(mb) => seen.define(Space::Term, "module", &mb.name),
            Dec::Type(tb) => seen.define(Space::Type, "type", &tb.name),
            Dec::ModType(mt) => seen.define(Space::ModType, "module type", &mt.name),
            Dec::Local(..)
            | Dec::Open(..)
            | Dec::OpenModule(..)
            | Dec::Include(..)
            | Dec::Import(..) => {}
        }
    }
    seen.diags
}

/// Reports every name that the specifications `specs` of one module type
/// specify twice in the same name space (`include`d ones are not checked).
pub(crate) fn duplicate_specifications(specs: &[Spec]) -> Vec<Diagnostic> {
    let mut seen = Seen::default();
    for s in specs {
        match s {
            Spec::Val(name, ..) => seen.define(Space::Term, "value", name),
            Spec::Module(name, ..) => seen.define(Space::Term, "module", name),
            Spec::Type { name, .. } => seen.define(Space::Type, "type", name),
            Spec::Include(..) => {}
        }
    }
    seen.diags
}

#[derive(Default)]
struct Seen {
    first: HashMap<(Space, String), Ident>,
    diags: Vec<Diagnostic>,
}

impl Seen {
    fn define(&mut self, space: Space, what: &str, name: &Ident) {
        match self.first.get(&(space, name.name.clone())) {
            Some(first) => self.diags.push(
                Diagnostic::new(
                    DiagnosticKind::Type,
                    name.span,
                    format!(
                        "Duplicate definition of {what} `{}`: a module (or file) may define a name only once",
                        name.name
                    ),
                )
                .with_label(first.span, "previously defined here"),
            ),
            None => {
                self.first.insert((space, name.name.clone()), name.clone());
            }
        }
    }
}
