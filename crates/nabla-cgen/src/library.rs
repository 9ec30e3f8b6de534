//! Library and server output: Futhark's C API (`futhark_context_*`, one
//! family of functions per array and opaque type, `futhark_entry_NAME`), its
//! header and JSON manifest, and the server executable built on them.
//!
//! The generic parts are C (`library.c`, `server.c`); this module builds the
//! type table (every primitive, the arrays and opaque types of the entry
//! points' signatures, and per entry with several results the tuple of its
//! results, which the server's one-output `call` needs) and the thin typed
//! wrappers around the generic functions.

use crate::func::{c_decl_type, c_string, fun_name};
use crate::scalar::type_code;
use crate::CgenError;
use nabla_ir::{EntryPoint, EntryType, Function, OpaqueField, OpaqueInfo, PrimType, Program, Type};
use std::fmt::Write;

/// The C type the API uses for a primitive: the generated code's type
/// ([`crate::scalar::c_type`]), except that `f16` is passed as its bits.
fn api_ctype(p: PrimType) -> &'static str {
    match (p, crate::scalar::c_type(p)) {
        (PrimType::F16, _) | (_, Err(_)) => "uint16_t",
        (_, Ok(t)) => t,
    }
}

/// The runtime's type code of a primitive: its enum (`NB_I8`, …, `NB_BOOL`
/// in runtime.c) lists the types in the order of [`PrimType::ALL`].
fn prim_index(p: PrimType) -> usize {
    PrimType::ALL.iter().position(|&q| q == p).unwrap_or(0)
}

/// A field of an opaque record in the type table.
#[derive(Clone, Debug)]
struct Field {
    name: String,
    ty: usize,
    start: usize,
    len: usize,
}

#[derive(Clone, Debug)]
enum Kind {
    Prim(PrimType),
    Array(PrimType, usize),
    Opaque {
        flat: Vec<(PrimType, usize)>,
        fields: Option<Vec<Field>>,
    },
}

/// One type of the API.
#[derive(Clone, Debug)]
struct TypeEntry {
    /// Futhark's name (`[]f64`, or the opaque's name).
    name: String,
    /// The C name's suffix: `f64_1d`, `opaque_point`.
    cname: String,
    kind: Kind,
}

impl TypeEntry {
    /// The C type of a value of this type in the API (`struct … *` or a scalar type).
    fn ctype(&self) -> String {
        match self.kind {
            Kind::Prim(p) => api_ctype(p).to_string(),
            _ => format!("struct futhark_{} *", self.cname),
        }
    }

    /// A C declaration of `declarator` with this type: `int32_t *out`,
    /// `struct futhark_f64_1d **out` (for `*out`), `double v`.
    fn declare(&self, declarator: &str) -> String {
        match self.kind {
            Kind::Prim(p) => format!("{} {declarator}", api_ctype(p)),
            _ => format!("{}{declarator}", self.ctype()),
        }
    }
}

/// The API's types; the first twelve are the primitives in type-code order.
struct Types {
    types: Vec<TypeEntry>,
}

/// A C identifier made of `name` (letters, digits, `_`; `[]` becomes `arr`).
fn c_ident(name: &str) -> String {
    let mut out = String::new();
    let cs: Vec<char> = name.chars().collect();
    let mut i = 0;
    while i < cs.len() {
        let c = cs[i];
        if c == '[' && cs.get(i + 1) == Some(&']') {
            out.push_str("_arr_");
            i += 2;
            continue;
        }
        if c.is_ascii_alphanumeric() || c == '_' {
            out.push(c);
        } else {
            out.push('_');
        }
        i += 1;
    }
    let parts: Vec<&str> = out.split('_').filter(|s| !s.is_empty()).collect();
    let s = parts.join("_");
    if s.is_empty() {
        "unit".to_string()
    } else {
        s
    }
}

impl Types {
    fn new() -> Types {
        Types {
            types: PrimType::ALL
                .iter()
                .map(|&p| TypeEntry {
                    name: p.to_string(),
                    cname: p.to_string(),
                    kind: Kind::Prim(p),
                })
                .collect(),
        }
    }

    fn flat_of(t: &Type) -> Result<(PrimType, usize), CgenError> {
        if t.is_acc() {
            return Err(CgenError::unsupported(
                "accumulators in entry point signatures",
            ));
        }
        c_decl_type(t)?;
        Ok((t.elem(), t.rank()))
    }

    /// The index of the type `et`, whose flat values have IR types `flat`
    /// (registered on first use).
    fn register(&mut self, et: &EntryType, flat: &[Type]) -> Result<usize, CgenError> {
        match &et.opaque {
            None => {
                let [t] = flat else {
                    return Err(CgenError::internal(
                        "a transparent entry type spans several values",
                    ));
                };
                let (p, rank) = Self::flat_of(t)?;
                if rank == 0 {
                    return Ok(prim_index(p));
                }
                let name = format!("{}{p}", "[]".repeat(rank));
                if let Some(i) = self.types.iter().position(|x| x.name == name) {
                    return Ok(i);
                }
                self.types.push(TypeEntry {
                    name,
                    cname: format!("{p}_{rank}d"),
                    kind: Kind::Array(p, rank),
                });
                Ok(self.types.len() - 1)
            }
            Some(OpaqueInfo { fields, .. }) => {
                if let Some(i) = self.types.iter().position(|x| x.name == et.name) {
                    return Ok(i);
                }
                let flat_types = flat
                    .iter()
                    .map(Self::flat_of)
                    .collect::<Result<Vec<_>, _>>()?;
                let fields = match fields {
                    Some(fs) => {
                        let mut out = vec![];
                        for f in fs {
                            let Some(sub) = flat.get(f.start..f.start + f.len) else {
                                return Err(CgenError::internal("an opaque field out of range"));
                            };
                            let ty = self.register(&f.ty, sub)?;
                            out.push(Field {
                                name: f.name.clone(),
                                ty,
                                start: f.start,
                                len: f.len,
                            });
                        }
                        Some(out)
                    }
                    None => None,
                };
                let base = format!("opaque_{}", c_ident(&et.name));
                let mut cname = base.clone();
                let mut k = 1;
                while self.types.iter().any(|x| x.cname == cname) {
                    k += 1;
                    cname = format!("{base}_{k}");
                }
                self.types.push(TypeEntry {
                    name: et.name.clone(),
                    cname,
                    kind: Kind::Opaque {
                        flat: flat_types,
                        fields,
                    },
                });
                Ok(self.types.len() - 1)
            }
        }
    }
}

/// One entry point of the API.
struct Entry<'a> {
    name: String,
    ep: &'a EntryPoint,
    f: &'a Function,
    /// (name, type index, unique) per parameter.
    inputs: Vec<(String, usize, bool)>,
    /// Per parameter: its sizes as the source names them (see [`EntryType::shape`]).
    shapes: Vec<Vec<String>>,
    /// (type index, unique) per result.
    outputs: Vec<(usize, bool)>,
    /// The tuple of the results (several results only).
    tuple: Option<usize>,
}

/// The signature of an entry point without one (IR written by hand): flat
/// values by their IR types, groups of several as unnamed opaques.
fn fallback_type(entry: &str, what: &str, i: usize, flat: &[Type]) -> EntryType {
    match flat {
        [t] if !t.is_acc() => {
            EntryType::transparent(format!("{}{}", "[]".repeat(t.rank()), t.elem()), false)
        }
        _ => EntryType {
            name: format!("{entry}_{what}{i}"),
            unique: false,
            shape: vec![],
            opaque: Some(OpaqueInfo {
                flat: flat.len(),
                ..OpaqueInfo::default()
            }),
        },
    }
}

fn entries<'a>(
    program: &'a Program,
    types: &mut Types,
    left_out: &[(String, CgenError)],
) -> Result<Vec<Entry<'a>>, CgenError> {
    let mut out = vec![];
    for ep in &program.entries {
        if left_out.iter().any(|(n, _)| *n == ep.name) {
            continue;
        }
        let Some(f) = program.functions.get(ep.fun.0 as usize) else {
            return Err(CgenError::internal("entry point of an unknown function"));
        };
        let mut inputs = vec![];
        let mut shapes = vec![];
        let mut off = 0;
        for (i, &n) in ep.param_arity.iter().enumerate() {
            let Some(ps) = f.params.get(off..off + n) else {
                return Err(CgenError::internal("entry parameter arity"));
            };
            let flat: Vec<Type> = ps.iter().map(|p| p.ty.clone()).collect();
            let (name, et) = match ep.signature.as_ref().and_then(|s| s.params.get(i)) {
                Some(p) => (p.name.clone(), p.ty.clone()),
                None => (format!("in{i}"), fallback_type(&ep.name, "in", i, &flat)),
            };
            inputs.push((name, types.register(&et, &flat)?, et.unique));
            shapes.push(et.shape.clone());
            off += n;
        }
        let mut outputs = vec![];
        let mut result_types = vec![];
        let mut off = 0;
        for (i, &n) in ep.result_arity.iter().enumerate() {
            let Some(flat) = f.ret.get(off..off + n) else {
                return Err(CgenError::internal("entry result arity"));
            };
            let et = match ep.signature.as_ref().and_then(|s| s.results.get(i)) {
                Some(t) => t.clone(),
                None => fallback_type(&ep.name, "out", i, flat),
            };
            outputs.push((types.register(&et, flat)?, et.unique));
            result_types.push((et, off, n));
            off += n;
        }
        let tuple = if outputs.len() > 1 {
            let names: Vec<&str> = result_types
                .iter()
                .map(|(t, _, _)| t.name.as_str())
                .collect();
            let et = EntryType {
                name: format!("({})", names.join(", ")),
                unique: false,
                shape: vec![],
                opaque: Some(OpaqueInfo {
                    flat: off,
                    fields: Some(
                        result_types
                            .iter()
                            .enumerate()
                            .map(|(i, (t, start, len))| OpaqueField {
                                name: i.to_string(),
                                ty: t.clone(),
                                start: *start,
                                len: *len,
                            })
                            .collect(),
                    ),
                    ..OpaqueInfo::default()
                }),
            };
            Some(types.register(&et, &f.ret)?)
        } else {
            None
        };
        out.push(Entry {
            name: ep.name.clone(),
            ep,
            f,
            inputs,
            shapes,
            outputs,
            tuple,
        });
    }
    Ok(out)
}

/// A generated library: the C source, the header and the manifest.
#[derive(Clone, Debug)]
pub struct CLibrary {
    /// The C source (the runtime, the program, the API; with `main` for a server).
    pub source: String,
    /// The header: plain C declarations of the API.
    pub header: String,
    /// The manifest (Futhark's manifest schema), JSON.
    pub manifest: String,
    /// Entry points left out because the backend does not support them.
    pub unsupported_entries: Vec<(String, CgenError)>,
}

/// The C of the declarations of the API (the header's body).
fn declarations(types: &Types, entries: &[Entry]) -> String {
    let mut h = String::new();
    h.push_str(
        "struct futhark_context_config;\n\
         struct futhark_context_config *futhark_context_config_new(void);\n\
         void futhark_context_config_free(struct futhark_context_config *cfg);\n\
         void futhark_context_config_set_debugging(struct futhark_context_config *cfg, int flag);\n\
         void futhark_context_config_set_profiling(struct futhark_context_config *cfg, int flag);\n\
         void futhark_context_config_set_logging(struct futhark_context_config *cfg, int flag);\n\
         void futhark_context_config_set_cache_file(struct futhark_context_config *cfg, const char *f);\n\
         void futhark_context_config_set_memory_limit(struct futhark_context_config *cfg, int64_t bytes);\n\
         int futhark_context_config_set_tuning_param(struct futhark_context_config *cfg, const char *param_name, size_t new_value);\n\
         int futhark_get_tuning_param_count(void);\n\
         const char *futhark_get_tuning_param_name(int i);\n\
         const char *futhark_get_tuning_param_class(int i);\n\
         struct futhark_context;\n\
         struct futhark_context *futhark_context_new(struct futhark_context_config *cfg);\n\
         void futhark_context_free(struct futhark_context *ctx);\n\
         int futhark_context_sync(struct futhark_context *ctx);\n\
         char *futhark_context_get_error(struct futhark_context *ctx);\n\
         int futhark_context_clear_caches(struct futhark_context *ctx);\n\
         char *futhark_context_report(struct futhark_context *ctx);\n\
         void futhark_context_pause_profiling(struct futhark_context *ctx);\n\
         void futhark_context_unpause_profiling(struct futhark_context *ctx);\n\n",
    );
    for t in &types.types {
        let c = &t.cname;
        match &t.kind {
            Kind::Prim(_) => {}
            Kind::Array(p, rank) => {
                let et = api_ctype(*p);
                let dims: Vec<String> = (0..*rank).map(|k| format!("int64_t dim{k}")).collect();
                let idx: Vec<String> = (0..*rank).map(|k| format!("int64_t i{k}")).collect();
                let _ = writeln!(h, "struct futhark_{c};");
                let _ = writeln!(h, "struct futhark_{c} *futhark_new_{c}(struct futhark_context *ctx, const {et} *data, {});", dims.join(", "));
                let _ = writeln!(
                    h,
                    "int futhark_free_{c}(struct futhark_context *ctx, struct futhark_{c} *arr);"
                );
                let _ = writeln!(h, "int futhark_values_{c}(struct futhark_context *ctx, struct futhark_{c} *arr, {et} *data);");
                let _ = writeln!(h, "int futhark_index_{c}(struct futhark_context *ctx, {et} *out, struct futhark_{c} *arr, {});", idx.join(", "));
                let _ = writeln!(h, "const int64_t *futhark_shape_{c}(struct futhark_context *ctx, struct futhark_{c} *arr);\n");
            }
            Kind::Opaque { fields, .. } => {
                let _ = writeln!(h, "struct futhark_{c};");
                let _ = writeln!(
                    h,
                    "int futhark_free_{c}(struct futhark_context *ctx, struct futhark_{c} *obj);"
                );
                let _ = writeln!(h, "int futhark_store_{c}(struct futhark_context *ctx, const struct futhark_{c} *obj, void **p, size_t *n);");
                let _ = writeln!(h, "struct futhark_{c} *futhark_restore_{c}(struct futhark_context *ctx, const void *p);");
                if let Some(fs) = fields {
                    let mut args = vec![];
                    for f in fs {
                        let ft = &types.types[f.ty];
                        let out = ft.declare("*out");
                        let _ = writeln!(h, "int futhark_project_{c}_{}(struct futhark_context *ctx, {out}, const struct futhark_{c} *obj);", c_ident(&f.name));
                        args.push(format!("const {}", ft.declare(&format!("v{}", args.len()))));
                    }
                    let mut ps = vec![format!("struct futhark_{c} **out")];
                    ps.extend(args);
                    let _ = writeln!(
                        h,
                        "int futhark_new_{c}(struct futhark_context *ctx, {});",
                        ps.join(", ")
                    );
                }
                h.push('\n');
            }
        }
    }
    for e in entries {
        let _ = writeln!(h, "{};", entry_prototype(types, e));
    }
    h
}

fn entry_prototype(types: &Types, e: &Entry) -> String {
    let mut ps = vec!["struct futhark_context *ctx".to_string()];
    for (i, (t, _)) in e.outputs.iter().enumerate() {
        let ty = &types.types[*t];
        ps.push(ty.declare(&format!("*out{i}")));
    }
    for (i, (_, t, _)) in e.inputs.iter().enumerate() {
        let ty = &types.types[*t];
        ps.push(format!("const {}", ty.declare(&format!("in{i}"))));
    }
    format!("int futhark_entry_{}({})", c_ident(&e.name), ps.join(", "))
}

/// The type table `nb_types` (C).
fn type_table(types: &Types) -> String {
    let mut out = String::new();
    let mut rows = vec![];
    for (i, t) in types.types.iter().enumerate() {
        let name = c_string(&t.name);
        match &t.kind {
            Kind::Prim(p) => rows.push(format!(
                "{{{name}, NB_KIND_PRIM, {}, 0, 0, NULL, NULL, -1, NULL}}",
                type_code(*p)
            )),
            Kind::Array(p, r) => rows.push(format!(
                "{{{name}, NB_KIND_ARRAY, {}, {r}, 0, NULL, NULL, -1, NULL}}",
                type_code(*p)
            )),
            Kind::Opaque { flat, fields } => {
                let (fe, fr) = if flat.is_empty() {
                    ("NULL".to_string(), "NULL".to_string())
                } else {
                    let es: Vec<&str> = flat.iter().map(|(p, _)| type_code(*p)).collect();
                    let rs: Vec<String> = flat.iter().map(|(_, r)| r.to_string()).collect();
                    let _ = writeln!(
                        out,
                        "static const int nb_flat_elem_{i}[] = {{{}}};",
                        es.join(", ")
                    );
                    let _ = writeln!(
                        out,
                        "static const int nb_flat_rank_{i}[] = {{{}}};",
                        rs.join(", ")
                    );
                    (format!("nb_flat_elem_{i}"), format!("nb_flat_rank_{i}"))
                };
                let (nf, fs) = match fields {
                    Some(fs) if !fs.is_empty() => {
                        let items: Vec<String> = fs
                            .iter()
                            .map(|f| {
                                format!(
                                    "{{{}, {}, {}, {}}}",
                                    c_string(&f.name),
                                    f.ty,
                                    f.start,
                                    f.len
                                )
                            })
                            .collect();
                        let _ = writeln!(
                            out,
                            "static const nb_field_info nb_fields_{i}[] = {{{}}};",
                            items.join(", ")
                        );
                        (fs.len() as i64, format!("nb_fields_{i}"))
                    }
                    Some(_) => (0, "NULL".to_string()),
                    None => (-1, "NULL".to_string()),
                };
                rows.push(format!(
                    "{{{name}, NB_KIND_OPAQUE, 0, 0, {}, {fe}, {fr}, {nf}, {fs}}}",
                    flat.len()
                ));
            }
        }
    }
    let _ = writeln!(
        out,
        "static const nb_type_info nb_types[] = {{\n  {}\n}};",
        rows.join(",\n  ")
    );
    let _ = writeln!(
        out,
        "static const int nb_num_types = {};\n",
        types.types.len()
    );
    out
}

/// The definitions of the typed API functions (C).
fn definitions(types: &Types) -> String {
    let mut out = String::new();
    for (k, t) in types.types.iter().enumerate() {
        let c = &t.cname;
        match &t.kind {
            Kind::Prim(_) => {}
            Kind::Array(p, rank) => {
                let et = api_ctype(*p);
                let dims: Vec<String> = (0..*rank).map(|k| format!("int64_t dim{k}")).collect();
                let dn: Vec<String> = (0..*rank).map(|k| format!("dim{k}")).collect();
                let idx: Vec<String> = (0..*rank).map(|k| format!("int64_t i{k}")).collect();
                let ixn: Vec<String> = (0..*rank).map(|k| format!("i{k}")).collect();
                let _ = writeln!(out, "struct futhark_{c} {{ nb_arr arr; }};");
                let _ = writeln!(out, "struct futhark_{c} *futhark_new_{c}(struct futhark_context *ctx, const {et} *data, {}) {{\n  int64_t shape[{rank}] = {{{}}};\n  return (struct futhark_{c} *)nb_array_new(ctx, &nb_types[{k}], data, shape);\n}}", dims.join(", "), dn.join(", "));
                let _ = writeln!(out, "int futhark_free_{c}(struct futhark_context *ctx, struct futhark_{c} *arr) {{\n  return nb_array_free(ctx, arr);\n}}");
                let _ = writeln!(out, "int futhark_values_{c}(struct futhark_context *ctx, struct futhark_{c} *arr, {et} *data) {{\n  return nb_array_values(ctx, &nb_types[{k}], arr, data);\n}}");
                let _ = writeln!(out, "int futhark_index_{c}(struct futhark_context *ctx, {et} *out, struct futhark_{c} *arr, {}) {{\n  int64_t is[{rank}] = {{{}}};\n  return nb_array_index(ctx, &nb_types[{k}], out, arr, is);\n}}", idx.join(", "), ixn.join(", "));
                let _ = writeln!(out, "const int64_t *futhark_shape_{c}(struct futhark_context *ctx, struct futhark_{c} *arr) {{\n  if (!arr) {{\n    nb_set_error(ctx, \"Error: the array passed to shape is NULL\\n\");\n    return NULL;\n  }}\n  return arr->arr.shape;\n}}\n");
            }
            Kind::Opaque { fields, .. } => {
                let _ = writeln!(
                    out,
                    "struct futhark_{c} {{ const nb_type_info *type; nb_flat *v; }};"
                );
                let _ = writeln!(out, "int futhark_free_{c}(struct futhark_context *ctx, struct futhark_{c} *obj) {{\n  return nb_opaque_free(ctx, obj);\n}}");
                let _ = writeln!(out, "int futhark_store_{c}(struct futhark_context *ctx, const struct futhark_{c} *obj, void **p, size_t *n) {{\n  return nb_opaque_store(ctx, obj, p, n);\n}}");
                let _ = writeln!(out, "struct futhark_{c} *futhark_restore_{c}(struct futhark_context *ctx, const void *p) {{\n  return (struct futhark_{c} *)nb_opaque_restore(ctx, &nb_types[{k}], p);\n}}");
                if let Some(fs) = fields {
                    let mut args = vec![];
                    let mut ptrs = vec![];
                    for (fi, f) in fs.iter().enumerate() {
                        let ft = &types.types[f.ty];
                        let outp = ft.declare("*out");
                        let _ = writeln!(out, "int futhark_project_{c}_{}(struct futhark_context *ctx, {outp}, const struct futhark_{c} *obj) {{\n  return nb_opaque_project(ctx, nb_types, out, obj, {fi});\n}}", c_ident(&f.name));
                        match ft.kind {
                            Kind::Prim(p) => {
                                args.push(format!("const {} v{fi}", api_ctype(p)));
                                ptrs.push(format!("&v{fi}"));
                            }
                            _ => {
                                args.push(format!("const {}v{fi}", ft.ctype()));
                                ptrs.push(format!("v{fi}"));
                            }
                        }
                    }
                    let mut ps = vec![format!("struct futhark_{c} **out")];
                    ps.extend(args);
                    let fields_init = if ptrs.is_empty() {
                        "const void *fields[1] = {NULL};".to_string()
                    } else {
                        format!(
                            "const void *fields[{}] = {{{}}};",
                            ptrs.len(),
                            ptrs.join(", ")
                        )
                    };
                    let _ = writeln!(out, "int futhark_new_{c}(struct futhark_context *ctx, {}) {{\n  {fields_init}\n  return nb_opaque_new(ctx, nb_types, &nb_types[{k}], (void **)out, fields);\n}}", ps.join(", "));
                }
                out.push('\n');
            }
        }
    }
    out
}

/// The definition of `futhark_entry_NAME` (C).
fn entry_wrapper(types: &Types, e: &Entry) -> Result<String, CgenError> {
    let mut o = String::new();
    let _ = writeln!(o, "{} {{", entry_prototype(types, e));
    let mut call_args: Vec<String> = vec![];
    let mut arg_decls = String::new();
    let mut mems: Vec<String> = vec![];
    let mut checks = String::new();
    let mut flat_i = 0;
    for (i, (_, t, _)) in e.inputs.iter().enumerate() {
        let ty = &types.types[*t];
        let n = e.ep.param_arity[i];
        match &ty.kind {
            Kind::Prim(_) | Kind::Array(..) => {}
            Kind::Opaque { .. } => {
                let _ = writeln!(checks, "  if (in{i} && in{i}->type != &nb_types[{t}]) {{\n    nb_set_error(ctx, \"Error: entry point argument {i} has the wrong type\\n\");\n    return 1;\n  }}");
            }
        }
        if !matches!(ty.kind, Kind::Prim(_)) {
            let _ = writeln!(checks, "  if (!in{i}) {{\n    nb_set_error(ctx, \"Error: entry point argument {i} is NULL\\n\");\n    return 1;\n  }}");
        }
        for j in 0..n {
            let p = &e.f.params[flat_i];
            let ct = c_decl_type(&p.ty)?;
            let src = match &ty.kind {
                Kind::Prim(_) => format!("in{i}"),
                Kind::Array(..) => format!("in{i}->arr"),
                Kind::Opaque { .. } if p.ty.rank() > 0 => format!("in{i}->v[{j}].arr"),
                Kind::Opaque { .. } => format!("in{i}->v[{j}].scalar"),
            };
            if p.ty.rank() > 0 {
                let _ = writeln!(arg_decls, "  nb_arr a{flat_i} = {src};");
                mems.push(format!("a{flat_i}.mem"));
                call_args.push(format!("nb_retain(a{flat_i})"));
            } else {
                let _ = writeln!(
                    arg_decls,
                    "  {ct} a{flat_i};\n  memcpy(&a{flat_i}, &{src}, sizeof a{flat_i});"
                );
                call_args.push(format!("a{flat_i}"));
            }
            flat_i += 1;
        }
    }
    for r in 0..e.outputs.len() {
        let _ = writeln!(checks, "  if (!out{r}) {{\n    nb_set_error(ctx, \"Error: entry point output {r} is NULL\\n\");\n    return 1;\n  }}");
    }
    o.push_str(&checks);
    o.push_str(&size_checks(types, e));
    o.push_str(&arg_decls);
    // Result holders, allocated before the call so that nothing can fail after it.
    let mut prealloc = String::new();
    let mut free_prealloc = String::new();
    let mut results = String::new();
    let mut fill = String::new();
    let mut res_args = vec![];
    let mut flat_r = 0;
    for (r, (t, _)) in e.outputs.iter().enumerate() {
        let ty = &types.types[*t];
        let n = e.ep.result_arity[r];
        match &ty.kind {
            Kind::Prim(_) => {}
            Kind::Array(..) => {
                let _ = writeln!(prealloc, "  o{r} = (nb_array_obj *)malloc(sizeof(nb_array_obj));\n  if (!o{r}) goto oom;");
                let _ = writeln!(free_prealloc, "  free(o{r});");
            }
            Kind::Opaque { .. } => {
                let _ = writeln!(
                    prealloc,
                    "  o{r} = nb_opaque_alloc(&nb_types[{t}]);\n  if (!o{r}) goto oom;"
                );
                let _ = writeln!(
                    free_prealloc,
                    "  if (o{r}) {{ free(o{r}->v); free(o{r}); }}"
                );
            }
        }
        for j in 0..n {
            let rt = &e.f.ret[flat_r];
            let ct = c_decl_type(rt)?;
            let init = if ct == "nb_arr" { "{0}" } else { "0" };
            let _ = writeln!(results, "  {ct} r{flat_r} = {init};");
            res_args.push(format!("&r{flat_r}"));
            match &ty.kind {
                Kind::Prim(_) => {
                    let _ = writeln!(fill, "  memcpy(out{r}, &r{flat_r}, sizeof r{flat_r});");
                }
                Kind::Array(..) => {
                    let _ = writeln!(fill, "  o{r}->arr = r{flat_r};\n  *out{r} = (void *)o{r};");
                }
                Kind::Opaque { .. } if rt.rank() > 0 => {
                    let _ = writeln!(fill, "  o{r}->v[{j}].arr = r{flat_r};");
                }
                Kind::Opaque { .. } => {
                    let _ = writeln!(
                        fill,
                        "  memcpy(&o{r}->v[{j}].scalar, &r{flat_r}, sizeof r{flat_r});"
                    );
                }
            }
            flat_r += 1;
        }
        if matches!(ty.kind, Kind::Opaque { .. }) {
            let _ = writeln!(fill, "  *out{r} = (void *)o{r};");
        }
    }
    // Declare every holder NULL first so that the `oom` path can free them.
    for (r, (t, _)) in e.outputs.iter().enumerate() {
        match types.types[*t].kind {
            Kind::Prim(_) => {}
            Kind::Array(..) => {
                let _ = writeln!(o, "  nb_array_obj *o{r} = NULL;");
            }
            Kind::Opaque { .. } => {
                let _ = writeln!(o, "  nb_opaque_obj *o{r} = NULL;");
            }
        }
    }
    o.push_str(&prealloc);
    o.push_str(&results);
    let nm = mems.len().max(1);
    let init = if mems.is_empty() {
        "NULL".to_string()
    } else {
        mems.join(", ")
    };
    let _ = writeln!(o, "  nb_mem *mems[{nm}] = {{{init}}};\n  int64_t rcs[{nm}];\n  for (int k = 0; k < {nm}; k++) rcs[k] = mems[k] ? mems[k]->rc : 0;");
    let _ = writeln!(o, "  jmp_buf jb;\n  int64_t ep = nb_enter(&jb);\n  if (setjmp(jb)) {{\n    for (int k = 0; k < {nm}; k++) if (mems[k]) mems[k]->rc = rcs[k];\n{}    return nb_failed(ctx, ep);\n  }}", free_prealloc.replace("  ", "    "));
    let mut args = res_args;
    args.extend(call_args);
    let _ = writeln!(o, "  {}({});", fun_name(e.ep.fun), args.join(", "));
    let _ = writeln!(o, "  nb_leave();");
    o.push_str(&fill);
    let _ = writeln!(o, "  return 0;");
    if e.outputs
        .iter()
        .any(|(t, _)| !matches!(types.types[*t].kind, Kind::Prim(_)))
    {
        let _ = writeln!(
            o,
            "oom:\n{free_prealloc}  nb_set_error(ctx, \"Error: out of memory\\n\");\n  return 3;"
        );
    }
    let _ = writeln!(o, "}}\n");
    Ok(o)
}

/// The check that the array arguments' sizes agree with each other, with
/// the constants and with the `i64` parameters their source types name
/// (C; Futhark's message "entry point arguments have invalid sizes").
fn size_checks(types: &Types, e: &Entry) -> String {
    let mut known: Vec<(String, String)> = vec![];
    for (i, (name, t, _)) in e.inputs.iter().enumerate() {
        if matches!(types.types[*t].kind, Kind::Prim(PrimType::I64)) {
            known.push((name.clone(), format!("in{i}")));
        }
    }
    let mut conds = vec![];
    for (i, shape) in e.shapes.iter().enumerate() {
        if !matches!(types.types[e.inputs[i].1].kind, Kind::Array(..)) {
            continue;
        }
        for (k, d) in shape.iter().enumerate() {
            let dim = format!("in{i}->arr.shape[{k}]");
            if d.is_empty() {
                continue;
            }
            if let Ok(n) = d.parse::<i64>() {
                conds.push(format!("{dim} != {n}LL"));
            } else if let Some((_, first)) = known.iter().find(|(n, _)| n == d) {
                conds.push(format!("{dim} != {first}"));
            } else {
                known.push((d.clone(), dim));
            }
        }
    }
    if conds.is_empty() {
        return String::new();
    }
    format!(
        "  if ({}) {{\n    nb_set_error(ctx, \"Error: entry point arguments have invalid sizes\\n\");\n    return 2;\n  }}\n",
        conds.join(" || ")
    )
}

/// The server's entry table and per-entry callers (C).
fn server_tables(types: &Types, entries: &[Entry]) -> String {
    let mut out = String::new();
    let mut rows = vec![];
    for (k, e) in entries.iter().enumerate() {
        let mut args = vec!["ctx".to_string()];
        for (i, (t, _)) in e.outputs.iter().enumerate() {
            let ty = &types.types[*t];
            args.push(format!("({})outs[{i}]", ty.declare("*")));
        }
        for (i, (_, t, _)) in e.inputs.iter().enumerate() {
            let ty = &types.types[*t];
            args.push(match ty.kind {
                Kind::Prim(p) => format!("*(const {} *)ins[{i}]", api_ctype(p)),
                _ => format!("(const {})ins[{i}]", ty.ctype()),
            });
        }
        let _ = writeln!(out, "static int nb_call_{k}(struct futhark_context *ctx, void *const *outs, void *const *ins) {{\n  (void)outs, (void)ins;\n  return futhark_entry_{}({});\n}}", c_ident(&e.name), args.join(", "));
        let mut list = |xs: Vec<String>, name: String, ty: &str| -> String {
            if xs.is_empty() {
                "NULL".to_string()
            } else {
                let _ = writeln!(out, "static const {ty} {name}[] = {{{}}};", xs.join(", "));
                name
            }
        };
        let it = list(
            e.inputs.iter().map(|(_, t, _)| t.to_string()).collect(),
            format!("nb_in_types_{k}"),
            "int",
        );
        let iu = list(
            e.inputs.iter().map(|(_, _, u)| u.to_string()).collect(),
            format!("nb_in_unique_{k}"),
            "bool",
        );
        let ot = list(
            e.outputs.iter().map(|(t, _)| t.to_string()).collect(),
            format!("nb_out_types_{k}"),
            "int",
        );
        let ou = list(
            e.outputs.iter().map(|(_, u)| u.to_string()).collect(),
            format!("nb_out_unique_{k}"),
            "bool",
        );
        rows.push(format!(
            "{{{}, {}, {it}, {iu}, {}, {ot}, {ou}, {}, nb_call_{k}}}",
            c_string(&e.name),
            e.inputs.len(),
            e.outputs.len(),
            e.tuple.map_or(-1, |t| t as i64)
        ));
    }
    if rows.is_empty() {
        rows.push("{NULL, 0, NULL, NULL, 0, NULL, NULL, -1, NULL}".to_string());
    }
    let _ = writeln!(
        out,
        "static const nb_entry_info nb_entries[] = {{\n  {}\n}};",
        rows.join(",\n  ")
    );
    let _ = writeln!(out, "static const int nb_num_entries = {};", entries.len());
    out
}

/// The manifest (Futhark's manifest schema) as JSON text.
fn manifest(types: &Types, entries: &[Entry]) -> String {
    use serde_json::{json, Map, Value};
    let mut eps = Map::new();
    for e in entries {
        let inputs: Vec<Value> = e
            .inputs
            .iter()
            .map(|(n, t, u)| json!({"name": n, "type": types.types[*t].name, "unique": u}))
            .collect();
        let outputs: Vec<Value> = e
            .outputs
            .iter()
            .map(|(t, u)| json!({"type": types.types[*t].name, "unique": u}))
            .collect();
        eps.insert(
            e.name.clone(),
            json!({
                "cfun": format!("futhark_entry_{}", c_ident(&e.name)),
                "tuning_params": [],
                "inputs": inputs,
                "outputs": outputs,
            }),
        );
    }
    let mut ts = Map::new();
    for t in &types.types {
        let c = &t.cname;
        let ctype = format!("struct futhark_{c} *");
        match &t.kind {
            Kind::Prim(_) => {}
            Kind::Array(p, rank) => {
                ts.insert(
                    t.name.clone(),
                    json!({
                        "kind": "array",
                        "ctype": ctype,
                        "rank": rank,
                        "elemtype": p.to_string(),
                        "ops": {
                            "new": format!("futhark_new_{c}"),
                            "free": format!("futhark_free_{c}"),
                            "shape": format!("futhark_shape_{c}"),
                            "values": format!("futhark_values_{c}"),
                            "index": format!("futhark_index_{c}"),
                        }
                    }),
                );
            }
            Kind::Opaque { fields, .. } => {
                let mut v = json!({
                    "kind": "opaque",
                    "ctype": ctype,
                    "ops": {
                        "free": format!("futhark_free_{c}"),
                        "store": format!("futhark_store_{c}"),
                        "restore": format!("futhark_restore_{c}"),
                    }
                });
                if let Some(fs) = fields {
                    let fields: Vec<Value> = fs
                        .iter()
                        .map(|f| {
                            json!({
                                "name": f.name,
                                "type": types.types[f.ty].name,
                                "project": format!("futhark_project_{c}_{}", c_ident(&f.name)),
                            })
                        })
                        .collect();
                    v["record"] = json!({"new": format!("futhark_new_{c}"), "fields": fields});
                }
                ts.insert(t.name.clone(), v);
            }
        }
    }
    let m = json!({
        "backend": "c",
        "version": env!("CARGO_PKG_VERSION"),
        "entry_points": Value::Object(eps),
        "types": Value::Object(ts),
    });
    serde_json::to_string_pretty(&m).unwrap_or_default() + "\n"
}

/// The comment at the top of the header: the API's error codes and the
/// memory limit.
const HEADER_COMMENT: &str = r#"/* The C API of a nabla-compiled Futhark program (Futhark's C API).
 *
 * Errors: a function that fails returns non-zero (1: a bad argument, such
 * as a NULL pointer; 2: a program error; 3: out of memory) or NULL, and
 * futhark_context_get_error returns the message (to be freed).
 *
 * Memory: every allocation counts against a memory limit, and one past it
 * fails with error code 3 and "out of memory: N bytes for ..." instead of
 * risking the kernel's out-of-memory killer. The default limit is three
 * quarters of the physical memory (at most `ulimit -v`);
 * futhark_context_config_set_memory_limit
 * sets it (bytes > 0: the limit, 0: none, < 0: the default) for the
 * contexts made from the configuration (one limit per loaded library:
 * the context made last sets it). */
"#;

/// The generic library runtime.
const LIBRARY_C: &str = include_str!("library.c");
/// The generic server.
const SERVER_C: &str = include_str!("server.c");

/// Generates the library (and with `server`, the server's `main`).
pub(crate) fn generate(
    program: &Program,
    lowered: &str,
    left_out: Vec<(String, CgenError)>,
    header_name: &str,
    server: bool,
) -> Result<CLibrary, CgenError> {
    let mut types = Types::new();
    let entries = entries(program, &mut types, &left_out)?;
    let decls = declarations(&types, &entries);
    let guard = format!("NABLA_{}_H", c_ident(header_name).to_uppercase());
    let header = format!(
        "{HEADER_COMMENT}\
         #ifndef {guard}\n#define {guard}\n#include <stdint.h>\n#include <stddef.h>\n#include <stdbool.h>\n\
\n{decls}\n#endif\n"
    );
    let mut src = String::new();
    src.push_str(
        "/* Generated by nabla: Futhark's C API (see the header). */\n\
         #ifndef _GNU_SOURCE\n#define _GNU_SOURCE\n#endif\n#define NB_LIBRARY 1\n\
         #pragma GCC diagnostic ignored \"-Wunused-function\"\n\
         #pragma GCC diagnostic ignored \"-Wunused-const-variable\"\n",
    );
    src.push_str(crate::allocation_define(lowered));
    src.push_str(crate::RUNTIME_C);
    src.push_str("\n/* ---------- the C API ---------- */\n\n");
    src.push_str(LIBRARY_C);
    src.push('\n');
    src.push_str(&decls);
    src.push('\n');
    src.push_str(&type_table(&types));
    src.push_str(&definitions(&types));
    src.push_str("\n/* ---------- generated from the core IR ---------- */\n\n");
    src.push_str(lowered);
    for e in &entries {
        src.push_str(&entry_wrapper(&types, e)?);
    }
    if server {
        src.push_str(&server_tables(&types, &entries));
        src.push_str(SERVER_C);
        // NB_NO_MAIN leaves `main` out, so that a harness can include the
        // server and call its static functions (fuzz/c/harness.c).
        src.push_str(
            "\n#ifndef NB_NO_MAIN\nint main(int argc, char **argv) { return nb_server_main(argc, argv); }\n#endif\n",
        );
    }
    Ok(CLibrary {
        source: src,
        header,
        manifest: manifest(&types, &entries),
        unsupported_entries: left_out,
    })
}
