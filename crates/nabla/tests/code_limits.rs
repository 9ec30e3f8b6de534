//! The size and layering limits of the middle of the compiler (issue 32,
//! item 5), checked on the source of `nabla-ir`, `nabla-ad`, `nabla-opt`
//! and `nabla-interp`:
//!
//! - no function (free, associated or nested; test code included) is
//!   longer than [`MAX_FUNCTION_LINES`] lines, from `fn` to its closing
//!   brace;
//! - no source file is longer than [`MAX_FILE_LINES`] lines, except the
//!   ones in [`LONG_FILES`], each with the reason;
//! - no two modules of one crate import each other, directly or through
//!   others (see [`module_graph`] for what counts as a use);
//! - outside `nabla-ir`, no function lists the bodies nested in an
//!   expression by hand (see [`Traversals`]): `nabla_ir::visit` and
//!   `nabla_ir::rewrite` are the one traversal of the IR.
//!
//! Every violation is printed before the test fails, so one run lists
//! them all. The files are parsed with `syn` (line numbers from
//! `proc-macro2`'s span locations).

use proc_macro2::Span;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use syn::visit::Visit;

/// The crates whose limits are checked.
const CRATES: &[&str] = &["nabla-ir", "nabla-ad", "nabla-opt", "nabla-interp"];

/// The longest function allowed, in lines.
const MAX_FUNCTION_LINES: usize = 300;

/// The longest source file allowed, in lines, outside [`LONG_FILES`].
const MAX_FILE_LINES: usize = 2000;

/// Files allowed to be longer than [`MAX_FILE_LINES`] (path from the
/// repository root), and why.
const LONG_FILES: &[(&str, &str)] = &[(
    "crates/nabla-ir/src/parse.rs",
    "one grammar: the lexer and recursive-descent parser of the IR's text \
     form, one function per production, and the round-trip tests that \
     exercise them",
)];

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A module of a crate: its path from the crate root (`[]` for `lib.rs`,
/// `["reverse", "scan"]` for `reverse/scan.rs`) and its file.
struct Module {
    path: Vec<String>,
    file: PathBuf,
    syntax: syn::File,
}

/// Every module of the crate that has its own file under `src/`
/// (inline `mod name { … }` blocks belong to their file's module).
fn modules(krate: &str) -> Vec<Module> {
    let src = root().join("crates").join(krate).join("src");
    let mut files = Vec::new();
    collect_rs_files(&src, &mut files);
    files.sort();
    files
        .into_iter()
        .map(|file| {
            let relative = file.strip_prefix(&src).unwrap();
            let mut path: Vec<String> = relative
                .with_extension("")
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            if matches!(
                path.last().map(String::as_str),
                Some("lib" | "mod" | "main")
            ) {
                path.pop();
            }
            let text = std::fs::read_to_string(&file).unwrap();
            let syntax = syn::parse_file(&text)
                .unwrap_or_else(|e| panic!("{}: does not parse: {e}", file.display()));
            Module { path, file, syntax }
        })
        .collect()
}

fn collect_rs_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            collect_rs_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

fn display(file: &Path) -> String {
    file.strip_prefix(root())
        .unwrap_or(file)
        .display()
        .to_string()
}

// ------------------------------------------------------ function length --

/// Collects every function longer than [`MAX_FUNCTION_LINES`], with its
/// first line and its length.
struct LongFunctions {
    found: Vec<(String, usize, usize)>,
}

impl LongFunctions {
    fn check(&mut self, name: &syn::Ident, start: Span, block: &syn::Block) {
        let first = start.start().line;
        let last = block.brace_token.span.close().end().line;
        let lines = last + 1 - first;
        if lines > MAX_FUNCTION_LINES {
            self.found.push((name.to_string(), first, lines));
        }
    }
}

impl<'ast> Visit<'ast> for LongFunctions {
    fn visit_item_fn(&mut self, f: &'ast syn::ItemFn) {
        self.check(&f.sig.ident, f.sig.fn_token.span, &f.block);
        syn::visit::visit_item_fn(self, f);
    }

    fn visit_impl_item_fn(&mut self, f: &'ast syn::ImplItemFn) {
        self.check(&f.sig.ident, f.sig.fn_token.span, &f.block);
        syn::visit::visit_impl_item_fn(self, f);
    }

    fn visit_trait_item_fn(&mut self, f: &'ast syn::TraitItemFn) {
        if let Some(block) = &f.default {
            self.check(&f.sig.ident, f.sig.fn_token.span, block);
        }
        syn::visit::visit_trait_item_fn(self, f);
    }
}

// -------------------------------------------------------- one traversal --

/// Collects the functions that re-implement a part of nabla-ir's traversal:
/// one that returns the bodies nested in an expression (a `Vec` of
/// `&Body`, `&mut Body`, or tuples starting with one, as
/// `Exp::nested_bodies` does) or that is named like one of nabla-ir's
/// walkers (`nested_bodies…`, `for_each_stm…`).
struct Traversals {
    found: Vec<(String, usize)>,
}

/// Whether `ty` is a reference to a `Body`.
fn is_body_reference(ty: &syn::Type) -> bool {
    matches!(ty, syn::Type::Reference(r)
        if matches!(&*r.elem, syn::Type::Path(p)
            if p.path.segments.last().is_some_and(|s| s.ident == "Body")))
}

/// Whether a function's result is a list of nested bodies.
fn returns_bodies(output: &syn::ReturnType) -> bool {
    let syn::ReturnType::Type(_, ty) = output else {
        return false;
    };
    let syn::Type::Path(p) = &**ty else {
        return false;
    };
    let Some(last) = p.path.segments.last() else {
        return false;
    };
    let syn::PathArguments::AngleBracketed(args) = &last.arguments else {
        return false;
    };
    last.ident == "Vec"
        && args.args.iter().any(|a| match a {
            syn::GenericArgument::Type(t) => {
                is_body_reference(t)
                    || matches!(t, syn::Type::Tuple(tuple)
                        if tuple.elems.first().is_some_and(is_body_reference))
            }
            _ => false,
        })
}

impl Traversals {
    fn check(&mut self, sig: &syn::Signature) {
        let name = sig.ident.to_string();
        if returns_bodies(&sig.output)
            || name.starts_with("nested_bodies")
            || name.starts_with("for_each_stm")
        {
            self.found.push((name, sig.fn_token.span.start().line));
        }
    }
}

impl<'ast> Visit<'ast> for Traversals {
    fn visit_item_fn(&mut self, f: &'ast syn::ItemFn) {
        self.check(&f.sig);
        syn::visit::visit_item_fn(self, f);
    }

    fn visit_impl_item_fn(&mut self, f: &'ast syn::ImplItemFn) {
        self.check(&f.sig);
        syn::visit::visit_impl_item_fn(self, f);
    }
}

// ---------------------------------------------------------- module graph --

/// Whether an item is compiled only for tests (`#[cfg(test)]`): test
/// modules are not part of the crate's layering.
fn is_test_only(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("cfg")
            && a.parse_args::<syn::Meta>()
                .is_ok_and(|m| m.path().is_ident("test"))
    })
}

/// The paths a module names: every `use` (groups and renames expanded)
/// and every path in its code, each with the module path it appears in
/// (inline modules extend the file's module path), skipping test-only
/// items.
struct PathCollector {
    /// The module the visitor is in.
    scope: Vec<String>,
    /// (module it appears in, the path's segments).
    paths: Vec<(Vec<String>, Vec<String>)>,
    /// `pub use` re-exports: (module, exported name) → the path it names.
    reexports: BTreeMap<(Vec<String>, String), Vec<String>>,
}

impl PathCollector {
    fn use_tree(&mut self, prefix: &mut Vec<String>, tree: &syn::UseTree, public: bool) {
        match tree {
            syn::UseTree::Path(p) => {
                prefix.push(p.ident.to_string());
                self.use_tree(prefix, &p.tree, public);
                prefix.pop();
            }
            syn::UseTree::Name(n) => {
                let mut full = prefix.clone();
                full.push(n.ident.to_string());
                if public {
                    self.reexports
                        .insert((self.scope.clone(), n.ident.to_string()), full.clone());
                }
                self.paths.push((self.scope.clone(), full));
            }
            syn::UseTree::Rename(r) => {
                let mut full = prefix.clone();
                full.push(r.ident.to_string());
                if public {
                    self.reexports
                        .insert((self.scope.clone(), r.rename.to_string()), full.clone());
                }
                self.paths.push((self.scope.clone(), full));
            }
            syn::UseTree::Glob(_) => self.paths.push((self.scope.clone(), prefix.clone())),
            syn::UseTree::Group(g) => {
                for t in &g.items {
                    self.use_tree(prefix, t, public);
                }
            }
        }
    }
}

impl<'ast> Visit<'ast> for PathCollector {
    fn visit_item(&mut self, item: &'ast syn::Item) {
        let attrs: &[syn::Attribute] = match item {
            syn::Item::Mod(m) => &m.attrs,
            syn::Item::Fn(f) => &f.attrs,
            syn::Item::Impl(i) => &i.attrs,
            syn::Item::Use(u) => &u.attrs,
            _ => &[],
        };
        if is_test_only(attrs) {
            return;
        }
        syn::visit::visit_item(self, item);
    }

    fn visit_item_mod(&mut self, m: &'ast syn::ItemMod) {
        if m.content.is_some() {
            self.scope.push(m.ident.to_string());
            syn::visit::visit_item_mod(self, m);
            self.scope.pop();
        }
    }

    fn visit_item_use(&mut self, u: &'ast syn::ItemUse) {
        let public = !matches!(u.vis, syn::Visibility::Inherited);
        self.use_tree(&mut Vec::new(), &u.tree, public);
    }

    fn visit_path(&mut self, p: &'ast syn::Path) {
        let segments: Vec<String> = p.segments.iter().map(|s| s.ident.to_string()).collect();
        self.paths.push((self.scope.clone(), segments));
        syn::visit::visit_path(self, p);
    }
}

/// Makes `path`, as written in module `scope`, absolute (from the crate
/// root): `crate::`, `super::` and `self::` are resolved, and a path whose
/// first segment is a child module of `scope` is taken as relative. Other
/// paths (other crates, the prelude, local names) give `None`.
fn absolute(
    scope: &[String],
    path: &[String],
    known: &BTreeSet<Vec<String>>,
) -> Option<Vec<String>> {
    let mut out: Vec<String> = match path.first().map(String::as_str) {
        Some("crate") => Vec::new(),
        Some("super") | Some("self") => scope.to_vec(),
        Some(first) => {
            let mut child = scope.to_vec();
            child.push(first.to_string());
            if !known.contains(&child) {
                return None;
            }
            scope.to_vec()
        }
        None => return None,
    };
    let mut rest = path.iter().peekable();
    if path[0] == "crate" || path[0] == "self" {
        rest.next();
    }
    while rest.peek().is_some_and(|s| *s == "super") {
        rest.next();
        out.pop()?;
    }
    out.extend(rest.cloned());
    Some(out)
}

/// The module an absolute path leads to: its longest prefix that is a
/// module, following `pub use` re-exports of the name after it.
fn target_module(
    path: &[String],
    known: &BTreeSet<Vec<String>>,
    reexports: &BTreeMap<(Vec<String>, String), Vec<String>>,
) -> Vec<String> {
    let mut path = path.to_vec();
    for _ in 0..8 {
        let module_len = (0..=path.len())
            .rev()
            .find(|&n| known.contains(&path[..n]))
            .unwrap_or(0);
        let module = path[..module_len].to_vec();
        let Some(name) = path.get(module_len) else {
            return module;
        };
        match reexports.get(&(module.clone(), name.clone())) {
            Some(source) => match absolute(&module, source, known) {
                Some(next) if next != path => path = next,
                _ => return module,
            },
            None => return module,
        }
    }
    path
}

/// The uses between the modules of a crate (each module is its file and
/// the inline modules in it): module A uses B when a `use` or a path in
/// A's non-test code names B or an item of B (through `crate::`,
/// `super::`, `self::` or a child module's name; `pub use` re-exports
/// followed). A use of an ancestor module (the items `lib.rs` or a
/// `mod.rs` defines for its children) is not an edge: a parent module is
/// its children's interface, and children share what it defines.
fn module_graph(modules: &[Module]) -> BTreeMap<Vec<String>, BTreeSet<Vec<String>>> {
    let mut collector = PathCollector {
        scope: Vec::new(),
        paths: Vec::new(),
        reexports: BTreeMap::new(),
    };
    for m in modules {
        collector.scope = m.path.clone();
        collector.visit_file(&m.syntax);
    }
    let mut known: BTreeSet<Vec<String>> = modules.iter().map(|m| m.path.clone()).collect();
    // Inline modules are part of their file's module: fold them away.
    let file_of = |scope: &[String], known: &BTreeSet<Vec<String>>| -> Vec<String> {
        let n = (0..=scope.len())
            .rev()
            .find(|&n| known.contains(&scope[..n]))
            .unwrap_or(0);
        scope[..n].to_vec()
    };
    let mut graph: BTreeMap<Vec<String>, BTreeSet<Vec<String>>> = BTreeMap::new();
    for m in modules {
        graph.entry(m.path.clone()).or_default();
    }
    known.insert(Vec::new());
    for (scope, path) in &collector.paths {
        let from = file_of(scope, &known);
        let Some(abs) = absolute(scope, path, &known) else {
            continue;
        };
        let to = target_module(&abs, &known, &collector.reexports);
        if to.len() <= from.len() && from.starts_with(&to) {
            continue; // itself or an ancestor
        }
        graph.entry(from).or_default().insert(to);
    }
    graph
}

/// The strongly connected components with more than one module (Tarjan's
/// algorithm): each is a set of modules that import each other.
fn cycles(graph: &BTreeMap<Vec<String>, BTreeSet<Vec<String>>>) -> Vec<Vec<Vec<String>>> {
    struct Tarjan<'g> {
        graph: &'g BTreeMap<Vec<String>, BTreeSet<Vec<String>>>,
        index: BTreeMap<&'g Vec<String>, usize>,
        low: BTreeMap<&'g Vec<String>, usize>,
        stack: Vec<&'g Vec<String>>,
        on_stack: BTreeSet<&'g Vec<String>>,
        components: Vec<Vec<Vec<String>>>,
    }
    impl<'g> Tarjan<'g> {
        fn visit(&mut self, v: &'g Vec<String>) {
            let i = self.index.len();
            self.index.insert(v, i);
            self.low.insert(v, i);
            self.stack.push(v);
            self.on_stack.insert(v);
            for w in self.graph.get(v).into_iter().flatten() {
                if !self.index.contains_key(w) {
                    self.visit(w);
                    let lw = self.low[w];
                    let lv = self.low.get_mut(v).unwrap();
                    *lv = (*lv).min(lw);
                } else if self.on_stack.contains(w) {
                    let iw = self.index[w];
                    let lv = self.low.get_mut(v).unwrap();
                    *lv = (*lv).min(iw);
                }
            }
            if self.low[v] == self.index[v] {
                let mut component = Vec::new();
                loop {
                    let w = self.stack.pop().unwrap();
                    self.on_stack.remove(w);
                    component.push(w.clone());
                    if w == v {
                        break;
                    }
                }
                if component.len() > 1 {
                    component.sort();
                    self.components.push(component);
                }
            }
        }
    }
    let mut t = Tarjan {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        components: Vec::new(),
    };
    for v in graph.keys() {
        if !t.index.contains_key(v) {
            t.visit(v);
        }
    }
    t.components
}

fn module_name(path: &[String]) -> String {
    if path.is_empty() {
        "crate".to_string()
    } else {
        path.join("::")
    }
}

/// The violations of one crate, one line each.
fn violations(krate: &str) -> Vec<String> {
    let modules = modules(krate);
    let mut out = Vec::new();
    for m in &modules {
        let shown = display(&m.file);
        let lines = std::fs::read_to_string(&m.file).unwrap().lines().count();
        let excepted = LONG_FILES.iter().any(|(p, _)| *p == shown);
        if lines > MAX_FILE_LINES && !excepted {
            out.push(format!(
                "{shown}: {lines} lines (more than {MAX_FILE_LINES})"
            ));
        }
        let mut long = LongFunctions { found: Vec::new() };
        long.visit_file(&m.syntax);
        for (name, line, n) in long.found {
            out.push(format!(
                "{shown}:{line}: function `{name}` is {n} lines (more than {MAX_FUNCTION_LINES})"
            ));
        }
        if krate != "nabla-ir" {
            let mut traversals = Traversals { found: Vec::new() };
            traversals.visit_file(&m.syntax);
            for (name, line) in traversals.found {
                out.push(format!(
                    "{shown}:{line}: function `{name}` lists nested bodies by hand \
                     (use nabla_ir::visit: Exp::nested_bodies, for_each_stm)"
                ));
            }
        }
    }
    let graph = module_graph(&modules);
    for component in cycles(&graph) {
        let names: BTreeSet<&Vec<String>> = component.iter().collect();
        let edges: Vec<String> = component
            .iter()
            .flat_map(|from| {
                graph[from]
                    .iter()
                    .filter(|to| names.contains(to))
                    .map(move |to| format!("{} -> {}", module_name(from), module_name(to)))
            })
            .collect();
        out.push(format!(
            "{krate}: import cycle between {}: {}",
            component
                .iter()
                .map(|p| module_name(p))
                .collect::<Vec<_>>()
                .join(", "),
            edges.join("; ")
        ));
    }
    out
}

#[test]
fn code_limits_hold() {
    let mut all = Vec::new();
    for krate in CRATES {
        all.extend(violations(krate));
    }
    for v in &all {
        eprintln!("{v}");
    }
    assert!(
        all.is_empty(),
        "{} violations of the code limits",
        all.len()
    );
}

#[test]
fn listed_long_files_exist_and_are_long() {
    // An exception that no longer applies is removed from the list.
    for (path, reason) in LONG_FILES {
        assert!(!reason.is_empty());
        let text =
            std::fs::read_to_string(root().join(path)).unwrap_or_else(|e| panic!("{path}: {e}"));
        assert!(
            text.lines().count() > MAX_FILE_LINES,
            "{path} is no longer over {MAX_FILE_LINES} lines: remove it from LONG_FILES"
        );
    }
}

/// The checker finds what it looks for: a long function, functions that
/// list nested bodies by hand, a cycle through `super::`, and a cycle
/// through a re-export; and does not count a use of an ancestor module.
#[test]
fn checker_finds_planted_violations() {
    let parse = |path: &[&str], text: &str| Module {
        path: path.iter().map(|s| s.to_string()).collect(),
        file: PathBuf::from(format!("{}.rs", path.join("/"))),
        syntax: syn::parse_file(text).unwrap(),
    };
    let body = "let x = 1;\n".repeat(MAX_FUNCTION_LINES);
    let long = parse(
        &["a"],
        &format!("fn long() {{\n{body}}}\nfn short() {{}}\n"),
    );
    let mut finder = LongFunctions { found: Vec::new() };
    finder.visit_file(&long.syntax);
    assert_eq!(finder.found.len(), 1);
    assert_eq!(finder.found[0].0, "long");
    assert_eq!(finder.found[0].2, MAX_FUNCTION_LINES + 2);

    let walks = parse(
        &["c"],
        "fn bodies(e: &mut Exp) -> Vec<&mut nabla_ir::Body> { vec![] }
         fn hot(e: &Exp) -> Vec<(&Body, bool)> { vec![] }
         fn for_each_stm_deep(b: &Body) {}
         fn vars(e: &Exp) -> Vec<Var> { vec![] }",
    );
    let mut traversals = Traversals { found: Vec::new() };
    traversals.visit_file(&walks.syntax);
    let names: Vec<&str> = traversals.found.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["bodies", "hot", "for_each_stm_deep"]);

    let modules = vec![
        parse(&[], "mod a; mod b; pub use a::Thing; pub struct Root;"),
        parse(
            &["a"],
            "use super::b::f; pub struct Thing; fn g() { crate::Root; }",
        ),
        parse(&["b"], "pub fn f() { let _ = crate::Thing; }"),
    ];
    let graph = module_graph(&modules);
    let a = vec!["a".to_string()];
    let b = vec!["b".to_string()];
    assert!(graph[&a].contains(&b), "{graph:?}");
    assert!(graph[&b].contains(&a), "re-export not followed: {graph:?}");
    assert!(
        !graph[&a].contains(&Vec::new()),
        "ancestor counted: {graph:?}"
    );
    assert_eq!(cycles(&graph), vec![vec![a, b]]);

    let acyclic = vec![
        parse(&[], "mod a; mod b;"),
        parse(&["a"], "use crate::b::f;"),
        parse(
            &["b"],
            "pub fn f() {} #[cfg(test)] mod tests { use crate::a::*; }",
        ),
    ];
    assert!(cycles(&module_graph(&acyclic)).is_empty());
}
