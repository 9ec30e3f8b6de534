//! Multicore C (`nabla multicore`): the sequential program with OpenMP
//! regions where `lower` decided a parallel level (func.rs), and the
//! runtime made safe for threads.
//!
//! The runtime stays one file (`runtime.c`), so that sequential C is
//! exactly what it was: for multicore C the generated source gets
//! `multicore_prelude.c` before the runtime (OpenMP, the atomic reference
//! counts' macros, the thread count, the worker failure protocol),
//! `multicore.c` after it, and the few places of the runtime, the C API
//! and the server that threads share are replaced, text for text
//! ([`RUNTIME_PATCHES`], [`OPTION_PATCH`]). Each replacement must find its
//! text the expected number of times (an error otherwise, and a unit test
//! below), so a change to the runtime cannot silently drop one.
//!
//! Threads come from OpenMP (`-fopenmp`): a well-kept library, shipped
//! with GCC; clang needs libomp installed. [`compile_flags`] adds the
//! flag; a compiler without OpenMP gets a clear error
//! ([`explain_compiler_failure`]).

use crate::CgenError;

/// Goes before the runtime.
const PRELUDE_C: &str = include_str!("multicore_prelude.c");

/// Goes after the runtime.
const EPILOGUE_C: &str = include_str!("multicore.c");

/// One replacement in the runtime: the text, what replaces it, and how
/// many times the text occurs there.
struct Patch {
    text: &'static str,
    with: &'static str,
    times: usize,
}

/// The runtime's shared state, made safe for threads.
const RUNTIME_PATCHES: &[Patch] = &[
    // Reference counts: atomic while threads run (NB_SHARED).
    Patch {
        text: "if (a.mem) a.mem->rc++;",
        with: "if (a.mem) NB_RC_INC(a.mem);",
        times: 1,
    },
    Patch {
        text: "if (r->mem) r->mem->rc++;",
        with: "if (r->mem) NB_RC_INC(r->mem);",
        times: 2,
    },
    Patch {
        text: "if (r.mem) r.mem->rc++;",
        with: "if (r.mem) NB_RC_INC(r.mem);",
        times: 1,
    },
    Patch {
        text: "if (a->mem && --a->mem->rc == 0) nb_free_mem(a->mem);",
        with: "if (a->mem && NB_RC_DEC_IS_ZERO(a->mem)) nb_free_mem(a->mem);",
        times: 1,
    },
    Patch {
        text: "if (a->mem && a->mem->rc == 1) return;",
        with: "if (a->mem && NB_RC_GET(a->mem) == 1) return;",
        times: 1,
    },
    // Each block's owner (see NB_OWNER_ENTER in multicore_prelude.c): a
    // tag in its header, stamped when it is allocated. The header stays a
    // multiple of 16 bytes (the data 16-byte aligned).
    Patch {
        text: "  int64_t rc;\n  int64_t pad; /* the block's size class (see nb_free_lists), or minus its size in bytes */\n} nb_mem;",
        with: "  int64_t rc;\n  int64_t pad; /* the block's size class (see nb_free_lists), or minus its size in bytes */\n  uint64_t owner; /* multicore: the thread of a region that allocated it */\n  int64_t unused; /* keeps the data 16-byte aligned */\n} nb_mem;",
        times: 1,
    },
    Patch {
        text: "  int64_t unused; /* keeps the data 16-byte aligned */\n} nb_mem;\nstatic nb_mem nb_live",
        with: "  uint64_t owner; /* multicore: the thread of a region that allocated it */\n} nb_mem;\nstatic nb_mem nb_live",
        times: 1,
    },
    Patch {
        text: "a.mem->rc = 1;\n",
        with: "a.mem->rc = 1;\n  a.mem->owner = nb_my_owner;\n",
        times: 3,
    },
    // A concatenation's large pieces, and large copies of arrays, are
    // copied by the threads.
    Patch {
        text: "  memcpy(r.data, a->data, (size_t)nb_count(a->shape, rank) * elem);\n",
        with: "  nb_copy_bytes(r.data, a->data, (size_t)nb_count(a->shape, rank) * elem);\n",
        times: 1,
    },
    Patch {
        text: "    if (bytes) memcpy(r.data + off, xs[j].data, bytes);\n",
        with: "    if (bytes) nb_copy_bytes(r.data + off, xs[j].data, bytes);\n",
        times: 1,
    },
    // The memory counted against the limit: atomic while threads run.
    Patch {
        text: "  if (lim > 0 && (bytes > (uint64_t)lim || nb_mem_used > lim - (int64_t)bytes)) return false;\n  nb_mem_used += (int64_t)bytes;\n  return true;",
        with: "  if (lim > 0 && bytes > (uint64_t)lim) return false;\n  int64_t used = NB_MEM_ADD(nb_mem_used, (int64_t)bytes);\n  if (lim > 0 && used > lim) {\n    NB_MEM_SUB(nb_mem_used, (int64_t)bytes);\n    return false;\n  }\n  return true;",
        times: 1,
    },
    Patch {
        text: "  nb_mem_used -= (int64_t)bytes;",
        with: "  NB_MEM_SUB(nb_mem_used, (int64_t)bytes);",
        times: 1,
    },
    // The library's list of live blocks: under a lock while threads run.
    Patch {
        text: "  m->epoch = nb_epoch;\n  m->next = nb_live.next;\n  m->prev = &nb_live;\n  nb_live.next->prev = m;\n  nb_live.next = m;\n",
        with: "  NB_LOCK_SHARED(&nb_live_lock);\n  m->epoch = nb_epoch;\n  m->next = nb_live.next;\n  m->prev = &nb_live;\n  nb_live.next->prev = m;\n  nb_live.next = m;\n  NB_UNLOCK_SHARED(&nb_live_lock);\n",
        times: 1,
    },
    Patch {
        text: "  m->prev->next = m->next;\n  m->next->prev = m->prev;\n",
        with: "  NB_LOCK_SHARED(&nb_live_lock);\n  m->prev->next = m->next;\n  m->next->prev = m->prev;\n  NB_UNLOCK_SHARED(&nb_live_lock);\n",
        times: 1,
    },
    // Failures: one thread reports (see multicore_prelude.c).
    Patch {
        text: "  va_list ap;\n  char msg[2048];\n",
        with: "  NB_FAIL_ENTER();\n  va_list ap;\n  char msg[2048];\n",
        times: 1,
    },
    Patch {
        text: "  if (nb_jmp) longjmp(*nb_jmp, 1);\n  fprintf(stderr, \"Error: %s\\n\", msg);",
        with: "  NB_FAIL_WORKER_JUMP();\n  if (nb_jmp) longjmp(*nb_jmp, 1);\n  fprintf(stderr, \"Error: %s\\n\", msg);",
        times: 1,
    },
    Patch {
        text: "  va_list ap;\n  fflush(stdout);\n",
        with: "  NB_FAIL_ENTER();\n  va_list ap;\n  fflush(stdout);\n",
        times: 1,
    },
    // The executable's help.
    Patch {
        text: "[--memory-limit SIZE] < input\\n\"\n",
        with: "[--memory-limit SIZE] [--num-threads N] [--parallel-from ROWS] < input\\n\"\n             \"  --num-threads N  run parallel levels on N threads (default: the number of cores)\\n\"\n             \"  --parallel-from ROWS  run every parallel level in parallel from ROWS rows on (tests)\\n\"\n",
        times: 1,
    },
];

/// `--num-threads N` beside `--memory-limit`, in the executable's and
/// the server's options (once in the runtime, once more in a server).
const OPTION_PATCH: Patch = Patch {
    text: "    } else if (nb_is_option(a, \"--memory-limit\")) {\n",
    with: "    } else if (nb_is_option(a, \"--num-threads\")) {\n      nb_set_num_threads_option(argv[0], nb_option_value(argc, argv, &i, \"--num-threads\"));\n    } else if (nb_is_option(a, \"--parallel-from\")) {\n      nb_set_parallel_from_option(argv[0], nb_option_value(argc, argv, &i, \"--parallel-from\"));\n    } else if (nb_is_option(a, \"--memory-limit\")) {\n",
    times: 1,
};

/// The C API's thread count (Futhark's multicore backend has it).
const SET_NUM_THREADS_C: &str = "\n/* The number of threads of parallel levels (Futhark's multicore backend):\n * n > 0 threads (at most NB_MAX_THREADS), 0 or less the default (the\n * number of cores). The setting is the library's (the runtime's state is). */\nvoid futhark_context_config_set_num_threads(struct futhark_context_config *cfg, int n) {\n  if (!cfg) return;\n  nb_num_threads_setting = n > 0 ? (n > NB_MAX_THREADS ? NB_MAX_THREADS : n) : 0;\n}\n";

/// Its declaration in the header.
const SET_NUM_THREADS_H: &str =
    "void futhark_context_config_set_num_threads(struct futhark_context_config *cfg, int n);\n";

fn apply(text: &str, patch: &Patch, at_least: bool) -> Result<String, CgenError> {
    let found = text.matches(patch.text).count();
    if found != patch.times && !(at_least && found >= patch.times) {
        return Err(CgenError::internal(&format!(
            "multicore: the runtime has {found} copies of `{}`, not {}",
            patch.text.lines().next().unwrap_or(""),
            patch.times
        )));
    }
    Ok(text.replace(patch.text, patch.with))
}

/// The runtime's inlined helpers that count references (directly or
/// through one another). Multicore C has each twice: as patched (their
/// counts atomic while a region's threads run, a test at every use) and,
/// unpatched, renamed by [`unshared_name`], for the sequential copies of
/// the functions (`nb_seq_fun_N`, run where there is one thread), which
/// so compile to the code of sequential C: the test inlined at every
/// count made gmm's Jacobian's sequential copy 1.4x larger and 4 to 10x
/// slower than sequential C.
const UNSHARED_HELPERS: &[&str] = &[
    "nb_retain",
    "nb_release",
    "nb_make_unique",
    "nb_view_at",
    "nb_subarray",
    "nb_subarray1",
    "nb_row",
];

/// The name of a helper's unshared copy: `nb_release` gives
/// `nb_seq_release`.
fn unshared_name(helper: &str) -> String {
    format!("nb_seq_{}", helper.trim_start_matches("nb_"))
}

/// `c` with every call of a helper of [`UNSHARED_HELPERS`] (its name
/// followed by `(`, not preceded by a letter, digit or `_`) made a call
/// of its unshared copy.
pub(crate) fn call_unshared_helpers(c: &str) -> String {
    let mut out = c.to_string();
    for helper in UNSHARED_HELPERS {
        let call = format!("{helper}(");
        let renamed = format!("{}(", unshared_name(helper));
        let mut result = String::with_capacity(out.len());
        let mut rest = out.as_str();
        while let Some(at) = rest.find(&call) {
            let starts_name = rest[..at]
                .chars()
                .next_back()
                .is_none_or(|ch| !(ch.is_ascii_alphanumeric() || ch == '_'));
            result.push_str(&rest[..at]);
            result.push_str(if starts_name { &renamed } else { &call });
            rest = &rest[at + call.len()..];
        }
        result.push_str(rest);
        out = result;
    }
    out
}

/// The definition of the runtime's function `name` in `runtime`: from
/// the line that starts it (`static …` or `__attribute__ …`, naming it
/// before its first `(`) to its closing `}` at the start of a line. An
/// error unless there is exactly one.
fn definition<'a>(runtime: &'a str, name: &str) -> Result<&'a str, CgenError> {
    let named = format!(" {name}(");
    let mut found = Vec::new();
    let mut at = 0;
    for line in runtime.split_inclusive('\n') {
        let starts = line.starts_with("static ") || line.starts_with("__attribute__");
        if starts && line.contains(&named) && !line.trim_end().ends_with(';') {
            found.push(at);
        }
        at += line.len();
    }
    let [start] = found[..] else {
        return Err(CgenError::internal(&format!(
            "multicore: the runtime has {} definitions of {name}, not 1",
            found.len()
        )));
    };
    let end = runtime[start..]
        .find("\n}\n")
        .ok_or_else(|| CgenError::internal(&format!("multicore: {name} has no end")))?;
    Ok(&runtime[start..start + end + 3])
}

/// The unshared copies of [`UNSHARED_HELPERS`]: their definitions in the
/// unpatched runtime, renamed, calling one another's copies.
fn unshared_helpers() -> Result<String, CgenError> {
    let mut out = String::from(
        "\n/* ---------- multicore: the sequential copies' helpers ---------- */\n/* The runtime's reference-counting helpers as sequential C has them (no\n * atomics, no test): called only by the sequential copies of the\n * functions (nb_seq_fun_N), which run only where there is one thread. */\n",
    );
    for helper in UNSHARED_HELPERS {
        out.push_str(&call_unshared_helpers(definition(
            crate::RUNTIME_C,
            helper,
        )?));
    }
    Ok(out)
}

/// The runtime for multicore C: prelude, patched runtime, the unshared
/// helpers, epilogue.
pub(crate) fn runtime() -> Result<String, CgenError> {
    let mut rt = crate::RUNTIME_C.to_string();
    for patch in RUNTIME_PATCHES {
        rt = apply(&rt, patch, false)?;
    }
    rt = apply(&rt, &OPTION_PATCH, false)?;
    let unshared = unshared_helpers()?;
    Ok(format!("{PRELUDE_C}{rt}{unshared}{EPILOGUE_C}"))
}

/// Turns a generated sequential source (an executable's, or the C API's
/// with or without a server) into multicore C: the runtime replaced by
/// [`runtime`], the server's options patched; with `library`, the C API
/// gets `futhark_context_config_set_num_threads` (before the code
/// generated from the IR).
pub(crate) fn source(sequential: &str, library: bool) -> Result<String, CgenError> {
    let at = sequential
        .find(crate::RUNTIME_C)
        .ok_or_else(|| CgenError::internal("multicore: no runtime in the generated C"))?;
    let rest = &sequential[at + crate::RUNTIME_C.len()..];
    // The server's options (its `main` comes after the runtime).
    let rest = if rest.contains(OPTION_PATCH.text) {
        apply(rest, &OPTION_PATCH, true)?
    } else {
        rest.to_string()
    };
    let mut out = String::with_capacity(sequential.len() + PRELUDE_C.len() + 4096);
    out.push_str(&sequential[..at]);
    out.push_str(&runtime()?);
    if library {
        let marker = "\n/* ---------- generated from the core IR ---------- */\n";
        let split = rest
            .find(marker)
            .ok_or_else(|| CgenError::internal("multicore: no generated code in the C API"))?;
        out.push_str(&rest[..split]);
        out.push_str(SET_NUM_THREADS_C);
        out.push_str(&rest[split..]);
    } else {
        out.push_str(&rest);
    }
    Ok(out)
}

/// The header of the C API for multicore C: with
/// `futhark_context_config_set_num_threads`.
pub(crate) fn header(sequential: &str) -> Result<String, CgenError> {
    let after = "void futhark_context_config_set_memory_limit(struct futhark_context_config *cfg, int64_t bytes);\n";
    if sequential.matches(after).count() != 1 {
        return Err(CgenError::internal(
            "multicore: the header has no futhark_context_config_set_memory_limit",
        ));
    }
    Ok(sequential.replace(after, &format!("{after}{SET_NUM_THREADS_H}")))
}

/// The C compiler's flags for multicore C: OpenMP.
pub(crate) fn compile_flags() -> &'static [&'static str] {
    &["-fopenmp"]
}

/// A clearer message where the C compiler failed for want of OpenMP.
pub(crate) fn explain_compiler_failure(cc: &str, stderr: &str) -> Option<String> {
    let lacks = stderr.contains("omp.h") || stderr.contains("fopenmp");
    lacks.then(|| {
        format!(
            "the C compiler `{cc}` has no OpenMP (`-fopenmp` and omp.h), which multicore C needs: set CC to a compiler with OpenMP, such as gcc"
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_patch_finds_its_text_in_the_runtime() {
        let rt = runtime().unwrap();
        for p in RUNTIME_PATCHES {
            assert!(rt.matches(p.with).count() >= p.times, "{}", p.with);
        }
        assert!(rt.contains("NB_RC_INC(a.mem)"));
        assert!(rt.contains("--num-threads"));
        assert!(rt.starts_with(PRELUDE_C));
        assert!(rt.ends_with(EPILOGUE_C));
    }

    /// A reduction `lower` decided to run in parallel, and a scan it did not.
    const DECIDED: &str = "fun main (xs_0: [?]f64): (f64, [?]f64) = {
  let n_1: i64 = size(xs_0, 0)
  #[seg_red parallel(2)]
  let s_5: f64 = reduce(n_1, \\(a_2: f64, b_3: f64): (f64) -> {
    let c_4: f64 = a_2 - b_3
    in (c_4)
  }, (0.0f64), xs_0)
  #[seg_scan sequential]
  let t_9: [n_1]f64 = scan(n_1, \\(a_6: f64, b_7: f64): (f64) -> {
    let c_8: f64 = a_6 + b_7
    in (c_8)
  }, (0.0f64), xs_0)
  in (s_5, t_9)
}

entry main = main (params [1], results [1, 1])
";

    #[test]
    fn only_multicore_c_runs_the_decided_levels_in_parallel() {
        let prog = nabla_ir::parse_program(DECIDED).unwrap();
        nabla_ir::validate_program(&prog).unwrap();
        let locate = |_| String::new();
        let seq = crate::generate_c_partial_for(&prog, &locate, crate::Target::Sequential).unwrap();
        let par = crate::generate_c_partial_for(&prog, &locate, crate::Target::Multicore).unwrap();
        assert!(!seq.source.contains("#pragma omp"));
        // One region, entered only where the width, the thread count and
        // the nesting allow it; else the sequential copy runs.
        assert_eq!(
            par.source.matches("nb_regions_started++;").count(),
            1,
            "{}",
            par.source
        );
        assert!(
            par.source.contains("int64_t t2 = ((int64_t)v1);\n")
                && par.source.contains("int t3 = nb_parallel(t2, 2);\n")
                && par.source.contains("static nb_level t1;\n"),
            "{}",
            par.source
        );
        // Measured where eligible: the site's level chooses, and is told
        // the time per row.
        assert!(
            par.source
                .contains("int64_t t4 = t3 ? nb_level_start(&t1, &t3) : 0;\n")
                && par
                    .source
                    .contains("if (t4) nb_level_end(&t1, t3, t4, t2);\n"),
            "{}",
            par.source
        );
        // Each thread has its own accumulator, element and result,
        // declared in the region from copies made before it; the input
        // array is shared through a copy in a block around the region,
        // so the function's own variables never have their address taken.
        let region = &par.source[par.source.find("nb_regions_started++;").unwrap()..];
        let before = &par.source[..par.source.find("nb_regions_started++;").unwrap()];
        // The accumulator starts from the neutral element set before the
        // region; the element and the result start as at the top.
        assert!(region.contains("double v2 = nb_in_v2;"), "{}", par.source);
        assert!(before.contains("double nb_in_v2 = v2;"), "{}", par.source);
        for v in ["v3", "v4", "v5"] {
            assert!(
                region.contains(&format!("double {v} = 0;")),
                "{v}: {}",
                par.source
            );
            assert!(!par.source.contains(&format!("nb_in_{v}")));
        }
        assert!(!par.source.contains("firstprivate"));
        assert!(
            before.contains("nb_arr nb_sh_v0 = v0;\n")
                && before.contains("{\n            nb_arr v0 = nb_sh_v0;\n"),
            "{}",
            par.source
        );
        assert!(region.contains("nb_sh_v0 = v0;\n") && region.contains("v0 = nb_sh_v0;\n"));
        // The sequential copy is sequential C's reduction, line for line
        // (up to the numbers of temporaries and the indentation).
        let seq_lines = without_temporary_numbers(&seq.source);
        let par_lines = without_temporary_numbers(&par.source);
        let first = seq_lines
            .iter()
            .position(|l| l.contains("\"reduce\""))
            .unwrap();
        let reduction = &seq_lines[first - 2..first + 11];
        assert_eq!(reduction.last().map(String::as_str), Some("}"));
        let choice = par_lines
            .iter()
            .position(|l| l.starts_with("int t = nb_parallel("))
            .unwrap();
        let at = choice
            + par_lines[choice..]
                .iter()
                .position(|l| l == "} else {")
                .expect("a sequential copy");
        assert_eq!(&par_lines[at + 1..at + 14], reduction, "{}", par.source);
    }

    /// The lines of `c`, trimmed, with the numbers of temporaries (`t12`)
    /// dropped.
    fn without_temporary_numbers(c: &str) -> Vec<String> {
        c.lines()
            .map(|line| {
                let mut out = String::new();
                let mut previous = ' ';
                let mut chars = line.trim().chars().peekable();
                while let Some(ch) = chars.next() {
                    out.push(ch);
                    let starts_name = !(previous.is_alphanumeric() || previous == '_');
                    if ch == 't' && starts_name && chars.peek().is_some_and(char::is_ascii_digit) {
                        while chars.peek().is_some_and(char::is_ascii_digit) {
                            chars.next();
                        }
                    }
                    previous = ch;
                }
                out
            })
            .collect()
    }

    #[test]
    fn the_multicore_library_has_the_thread_count() {
        let prog = nabla_ir::parse_program(DECIDED).unwrap();
        let locate = |_| String::new();
        let lib =
            crate::generate_library_for(&prog, &locate, "prog", true, crate::Target::Multicore)
                .unwrap();
        assert!(lib
            .header
            .contains("futhark_context_config_set_num_threads"));
        assert!(lib
            .source
            .contains("void futhark_context_config_set_num_threads("));
        assert!(lib.manifest.contains("\"backend\": \"multicore\""));
        // The executable's options and the server's.
        assert_eq!(
            lib.source
                .matches("nb_is_option(a, \"--num-threads\")")
                .count(),
            2
        );
    }

    #[test]
    fn a_compiler_without_openmp_is_named() {
        let m = explain_compiler_failure("clang", "x.c:3:10: fatal error: 'omp.h' file not found")
            .unwrap();
        assert!(m.contains("`clang` has no OpenMP"), "{m}");
        assert!(explain_compiler_failure("gcc", "x.c:3: error: expected ';'").is_none());
    }

    #[test]
    fn the_unshared_helpers_count_without_atomics() {
        let rt = runtime().unwrap();
        let start = rt
            .find("multicore: the sequential copies' helpers")
            .unwrap();
        let end = rt.find("multicore: after the runtime").unwrap();
        let helpers = &rt[start..end];
        for helper in UNSHARED_HELPERS {
            let copy = format!(" {}(", unshared_name(helper));
            assert_eq!(
                helpers
                    .lines()
                    .filter(|l| l.starts_with("static ") || l.starts_with("__attribute__"))
                    .filter(|l| l.contains(&copy))
                    .count(),
                1,
                "{helper}"
            );
        }
        // No test of the threads, no atomic, and the copies call copies.
        assert!(!helpers.contains("NB_RC_") && !helpers.contains("__atomic"));
        assert!(helpers.contains("if (a->mem && --a->mem->rc == 0) nb_free_mem(a->mem);"));
        assert!(helpers.contains("nb_seq_view_at("), "{helpers}");
        assert!(!helpers.contains(" nb_view_at("), "{helpers}");
    }

    #[test]
    fn only_calls_of_the_helpers_are_renamed() {
        let c = "nb_release(&v1); nb_subarray1(&a, l, &b, 2, 8, 0, 1); nb_row(&r, &a, 2, 8, j, 0);\nmy_nb_release(&x); nb_release_all(&y); nb_rows(z);";
        assert_eq!(
            call_unshared_helpers(c),
            "nb_seq_release(&v1); nb_seq_subarray1(&a, l, &b, 2, 8, 0, 1); nb_seq_row(&r, &a, 2, 8, j, 0);\nmy_nb_release(&x); nb_release_all(&y); nb_rows(z);"
        );
    }

    #[test]
    fn a_helper_not_in_the_runtime_is_an_error() {
        let e = definition(crate::RUNTIME_C, "nb_no_such_helper").unwrap_err();
        assert!(e.to_string().contains("0 definitions"), "{e}");
    }

    #[test]
    fn a_missing_text_is_an_error() {
        let p = Patch {
            text: "no such text",
            with: "",
            times: 1,
        };
        let e = apply("runtime", &p, false).unwrap_err();
        assert!(e.to_string().contains("0 copies"), "{e}");
    }
}
