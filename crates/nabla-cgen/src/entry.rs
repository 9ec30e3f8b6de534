//! The entry-point wrappers (read the arguments, call the function the
//! requested number of times, print the results) and `main`.

use crate::func::{c_decl_type, c_string, fun_name};
use crate::scalar::type_code;
use crate::CgenError;
use nabla_ir::{Program, Type};
use std::fmt::Write;

/// The C of every entry wrapper and of `main`.
pub(crate) fn entries_and_main(
    program: &Program,
    unsupported: &[(String, CgenError)],
) -> Result<String, CgenError> {
    let mut out = String::new();
    let left_out = |name: &str| unsupported.iter().find(|(n, _)| n == name);
    for (k, e) in program.entries.iter().enumerate() {
        if left_out(&e.name).is_some() {
            continue;
        }
        let Some(f) = program.functions.get(e.fun.0 as usize) else {
            return Err(CgenError::internal("entry point of an unknown function"));
        };
        let _ = writeln!(
            out,
            "static void nb_entry_{k}(nb_reader *r, const nb_options *o) {{"
        );
        let value_args = |name: &str, t: &Type| -> String {
            if t.rank() == 0 {
                format!("&{name}, NULL")
            } else {
                format!("NULL, &{name}")
            }
        };
        for (i, p) in f.params.iter().enumerate() {
            let ct = c_decl_type(&p.ty)?;
            let init = if ct == "nb_arr" { "{0}" } else { "0" };
            let _ = writeln!(out, "  {ct} a{i} = {init};");
            if p.ty.is_acc() {
                return Err(CgenError::unsupported("accumulators as entry parameters"));
            }
            let _ = writeln!(
                out,
                "  nb_read_value(r, {}, {}, {});",
                type_code(p.ty.elem()),
                p.ty.rank(),
                value_args(&format!("a{i}"), &p.ty)
            );
        }
        let _ = writeln!(out, "  nb_read_end(r);");
        for (i, t) in f.ret.iter().enumerate() {
            let ct = c_decl_type(t)?;
            let init = if ct == "nb_arr" { "{0}" } else { "0" };
            let _ = writeln!(out, "  {ct} r{i} = {init};");
        }
        let _ = writeln!(out, "  int total = o->runs > 0 ? o->runs + 1 : 1;");
        let _ = writeln!(
            out,
            "  FILE *tf = o->timing_file ? fopen(o->timing_file, \"w\") : NULL;"
        );
        let _ = writeln!(
            out,
            "  if (o->timing_file && !tf) nb_fail(\"\", \"cannot open %s\", o->timing_file);"
        );
        let _ = writeln!(out, "  for (int run = 0; run < total; run++) {{");
        for (i, t) in f.ret.iter().enumerate() {
            if t.rank() > 0 {
                let _ = writeln!(out, "    nb_release(&r{i});");
            }
        }
        let mut args: Vec<String> = (0..f.ret.len()).map(|i| format!("&r{i}")).collect();
        for (i, p) in f.params.iter().enumerate() {
            args.push(if p.ty.rank() > 0 {
                format!("nb_retain(a{i})")
            } else {
                format!("a{i}")
            });
        }
        let _ = writeln!(out, "    int64_t t0 = nb_now_us();");
        let _ = writeln!(out, "    {}({});", fun_name(e.fun), args.join(", "));
        let _ = writeln!(out, "    int64_t t1 = nb_now_us();");
        let _ = writeln!(
            out,
            "    if (tf && (total == 1 || run > 0)) fprintf(tf, \"%\" PRId64 \"\\n\", t1 - t0);"
        );
        let _ = writeln!(out, "  }}");
        let _ = writeln!(out, "  if (tf) fclose(tf);");
        let _ = writeln!(out, "  if (!o->no_output) {{");
        for (i, t) in f.ret.iter().enumerate() {
            let _ = writeln!(
                out,
                "    nb_put_value(stdout, {}, {}, {}, o->binary);",
                type_code(t.elem()),
                t.rank(),
                value_args(&format!("r{i}"), t)
            );
        }
        let _ = writeln!(out, "  }}");
        for (i, t) in f.ret.iter().enumerate() {
            if t.rank() > 0 {
                let _ = writeln!(out, "  nb_release(&r{i});");
            }
        }
        for (i, p) in f.params.iter().enumerate() {
            if p.ty.rank() > 0 {
                let _ = writeln!(out, "  nb_release(&a{i});");
            }
        }
        let _ = writeln!(out, "}}\n");
    }
    let names: Vec<&str> = program.entries.iter().map(|e| e.name.as_str()).collect();
    let _ = writeln!(out, "int main(int argc, char **argv) {{");
    let _ = writeln!(out, "  nb_tune_malloc();");
    let _ = writeln!(out, "  nb_options o;");
    let _ = writeln!(out, "  nb_parse_options(argc, argv, &o);");
    let _ = writeln!(out, "  size_t len, cap;");
    let _ = writeln!(
        out,
        "  unsigned char *buf = nb_read_all(stdin, &len, &cap);"
    );
    let _ = writeln!(out, "  nb_reader r = {{buf, len, 0}};");
    let mut first = true;
    for (k, e) in program.entries.iter().enumerate() {
        let call = match left_out(&e.name) {
            Some((_, why)) => format!(
                "nb_fail(\"\", \"entry point %s was left out: %s\", o.entry, {})",
                c_string(&why.to_string())
            ),
            None => format!("nb_entry_{k}(&r, &o)"),
        };
        let _ = writeln!(
            out,
            "  {}if (strcmp(o.entry, {}) == 0) {call};",
            if first { "" } else { "else " },
            c_string(&e.name)
        );
        first = false;
    }
    let listed = if names.is_empty() {
        "the program has no entry points".to_string()
    } else {
        format!("entry points: {}", names.join(", "))
    };
    let _ = writeln!(
        out,
        "  {}nb_fail(\"\", \"no entry point named %s (%s)\", o.entry, {});",
        if first { "" } else { "else " },
        c_string(&listed)
    );
    let _ = writeln!(out, "  nb_counted_free(buf, cap);");
    let _ = writeln!(out, "  fflush(stdout);");
    let _ = writeln!(out, "  return 0;");
    let _ = writeln!(out, "}}");
    Ok(out)
}
