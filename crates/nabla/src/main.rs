//! The command line and its subcommands: `run`, `c`, `multicore`, `eval`, `repl`,
//! `dataset`, `check`, `dump-ir`, `passes`, `test`, `bench`, `script`,
//! `literate`, `fmt`, `doc`, `gradbench`, `adbench`, `lsp`, `pkg`.

use clap::{Args, Parser, Subcommand};
use nabla::{CompileOptions, Pipeline, StopAfter};
use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;

/// A compiler and interpreter for a subset of Futhark.
#[derive(Parser, Debug)]
#[command(name = "nabla", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// Which passes run after elaboration, and whether the IR is validated.
#[derive(Args, Debug)]
struct PipelineArgs {
    /// Run these passes, in order, instead of the default pipeline: names
    /// separated by commas (`nabla passes` lists them); `--passes=` runs none.
    #[arg(long = "passes", value_name = "NAMES", value_parser = parse_pipeline)]
    passes: Option<Pipeline>,
    /// Validate the IR after elaboration and after every pass (always on in
    /// debug builds).
    #[arg(long = "validate")]
    validate: bool,
    /// How `jvp`/`vjp` are differentiated: `static` (the default: the `ad`
    /// pass compiles them away into ordinary IR, a `map` of a `jvp` at one
    /// primal point — `jmp` — for all its seeds at once; a construct
    /// without a static rule is left to the dynamic AD; `vector` is another
    /// name for it) or `dynamic` (the interpreter differentiates while it
    /// runs; the oracle of the static AD) or `per-seed` (static, with one
    /// `jvp` per seed of a `jmp`: the `ad-per-seed` pass).
    #[arg(long = "ad", value_enum, default_value_t = AdMode::Static)]
    ad: AdMode,
}

/// `nabla c` and `nabla multicore`.
#[derive(Args, Debug)]
struct CArgs {
    /// The program's main file.
    file: PathBuf,
    /// The executable to write (default: the file without `.fut`); with
    /// `--library`, the files' common prefix.
    #[arg(short = 'o', value_name = "OUT")]
    out: Option<PathBuf>,
    /// Write the C file only; do not run the C compiler.
    #[arg(long = "only-c")]
    only_c: bool,
    /// Write a library with Futhark's C API: `OUT.c`, `OUT.h` and the
    /// manifest `OUT.json` (not compiled).
    #[arg(long = "library", conflicts_with = "server")]
    library: bool,
    /// Build a server executable (Futhark's server protocol on stdin/stdout).
    #[arg(long = "server")]
    server: bool,
    #[command(flatten)]
    pipeline: PipelineArgs,
}

/// `nabla test --backend`, `nabla gradbench --backend`, `nabla bench --backend`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum BackendArg {
    Interp,
    C,
    /// Multicore C (as `nabla multicore`).
    Multicore,
}

/// See [`PipelineArgs::ad`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum AdMode {
    Dynamic,
    #[value(alias = "vector")]
    Static,
    PerSeed,
}

impl PipelineArgs {
    fn compile_options(self) -> CompileOptions {
        let pipeline = match (self.passes, self.ad) {
            (Some(p), _) => p,
            (None, AdMode::Dynamic) => Pipeline::dynamic_ad(),
            (None, AdMode::Static) => Pipeline::default_pipeline(),
            (None, AdMode::PerSeed) => Pipeline::per_seed_ad(),
        };
        CompileOptions::new(pipeline).validating(self.validate || cfg!(debug_assertions))
    }
}

impl PipelineArgs {
    /// The options for `backend`: the interpreter's, sequential C's or
    /// multicore C's.
    fn backend_options(self, backend: BackendArg) -> CompileOptions {
        match backend {
            BackendArg::Interp => self.compile_options(),
            BackendArg::C => self.c_backend_options(),
            BackendArg::Multicore => self
                .c_backend_options()
                .for_target(nabla_cgen::Target::Multicore),
        }
    }

    /// The options for the C backend: `--passes` when given, otherwise the
    /// pipeline with static AD (the C backend cannot run `jvp`/`vjp`).
    fn c_backend_options(self) -> CompileOptions {
        let pipeline = match (self.passes, self.ad) {
            (Some(p), _) => p,
            (None, AdMode::PerSeed) => Pipeline::per_seed_ad(),
            (None, _) => Pipeline::default_pipeline(),
        };
        CompileOptions::new(pipeline).validating(self.validate || cfg!(debug_assertions))
    }
}

fn parse_pipeline(list: &str) -> Result<Pipeline, String> {
    Pipeline::parse(list).map_err(|e| e.to_string())
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Run an entry point: arguments from stdin (text or binary values),
    /// results on stdout in the textual value format, one per line.
    Run {
        /// The program's main file.
        file: PathBuf,
        /// The entry point to run.
        #[arg(
            short = 'e',
            long = "entry",
            visible_alias = "entry-point",
            default_value = "main"
        )]
        entry: String,
        /// Print the results in Futhark's binary value format.
        #[arg(short = 'b', long = "binary-output")]
        binary_output: bool,
        #[command(flatten)]
        pipeline: PipelineArgs,
    },
    /// Compile a program to C and the C to an executable (like `futhark c`):
    /// `prog.fut` gives `prog.c` and the executable `prog` beside it. The
    /// executable reads the entry point's arguments from stdin; options
    /// `-e ENTRY`, `-r RUNS`, `-t FILE`, `-b`, `-n`. `CC` and `CFLAGS`
    /// choose the C compiler and its flags. `--library` writes Futhark's C
    /// API instead (`OUT.c`, `OUT.h`, `OUT.json`); `--server` builds an
    /// executable speaking Futhark's server protocol.
    C(CArgs),
    /// Compile a program to multicore C (like `futhark multicore`): as
    /// `nabla c`, but the levels that the `lower` pass decides to run in
    /// parallel (`nabla dump-ir --after=lower` shows them) run on all cores,
    /// with OpenMP (`CC` defaults to gcc, which has it). Executables also
    /// take `--num-threads N` (default: the number of cores); the C API has
    /// `futhark_context_config_set_num_threads`.
    Multicore(CArgs),
    /// Evaluate expressions with the interpreter and print their values
    /// (like `futhark eval`), in the context of FILE's definitions when
    /// `-f FILE` is given, one value per line.
    Eval {
        /// Evaluate the expressions in the context of this file.
        #[arg(short = 'f', long = "file", value_name = "FILE")]
        file: Option<PathBuf>,
        /// The expressions, e.g. `'map (+1) (iota 3)'`.
        #[arg(required = true, value_name = "EXPR")]
        exprs: Vec<String>,
        #[command(flatten)]
        pipeline: PipelineArgs,
    },
    /// An interactive session (like `futhark repl`): expressions are
    /// evaluated and printed, declarations (`def`, `let`, `type`, …) are
    /// added; `:help` lists the commands (`:load`, `:type`, `:quit`, …).
    /// Reads lines from standard input when it is not a terminal.
    Repl {
        /// A program whose definitions are in scope (as after `:load`).
        file: Option<PathBuf>,
        #[command(flatten)]
        pipeline: PipelineArgs,
    },
    /// Generate random values of given types, e.g. `-g [100][100]f32`, in
    /// the textual or (`-b`) binary value format (like `futhark dataset`;
    /// `nabla dataset --help` lists the options).
    #[command(disable_help_flag = true)]
    Dataset {
        /// Options, in order: `-g TYPE`, `-s SEED`, `--T-bounds=MIN:MAX`,
        /// `-b`, `--text`, `-t`, …
        #[arg(allow_hyphen_values = true, trailing_var_arg = true, num_args = 0..)]
        args: Vec<String>,
    },
    /// Type-check a program (prints nothing when it is fine).
    Check {
        /// The program's main file.
        file: PathBuf,
    },
    /// Print the core IR of a program (after the whole pipeline, or after
    /// one pass).
    DumpIr {
        /// The program's main file.
        #[arg(required_unless_present = "list_passes")]
        file: Option<PathBuf>,
        /// Print the IR after the first run of this pass instead (`elab` or
        /// `none`: straight after elaboration).
        #[arg(long = "after", value_name = "NAME", value_parser = StopAfter::parse)]
        after: Option<StopAfter>,
        /// List the passes (as `nabla passes` does) and exit.
        #[arg(long = "list-passes")]
        list_passes: bool,
        /// The IR for this backend: `interp`, `c` (static AD) or
        /// `multicore` (static AD with the parallel forms of reverse rules).
        #[arg(long = "backend", value_enum, default_value_t = BackendArg::Interp)]
        backend: BackendArg,
        #[command(flatten)]
        pipeline: PipelineArgs,
    },
    /// List the passes `--passes` and `--after` accept, and the default pipeline.
    Passes,
    /// Run the test blocks of `.fut` files (directories are searched recursively).
    Test {
        /// Files and directories.
        #[arg(required = true)]
        paths: Vec<PathBuf>,
        /// How many files to test at once (default: the number of cores).
        #[arg(short = 'j', long = "jobs")]
        jobs: Option<usize>,
        /// Time limit per file in seconds (0: none).
        #[arg(long = "timeout", default_value_t = 600)]
        timeout: u64,
        /// What runs the datasets: `interp` (the interpreter) or `c`
        /// (executables made by `nabla c`, with static AD; programs it does
        /// not support are reported as skipped).
        #[arg(long = "backend", value_enum, default_value_t = BackendArg::Interp)]
        backend: BackendArg,
        #[command(flatten)]
        pipeline: PipelineArgs,
    },
    /// Time a program's entry points on the datasets of its test blocks
    /// (like `futhark bench`): one warm-up run, then RUNS timed runs each.
    Bench {
        /// The program's main file.
        file: PathBuf,
        /// What runs the program: `c` (an executable made as by `nabla c`)
        /// or `interp` (the interpreter).
        #[arg(long = "backend", value_enum, default_value_t = BackendArg::C)]
        backend: BackendArg,
        /// Timed runs per entry point and dataset.
        #[arg(short = 'r', long = "runs", default_value_t = 10)]
        runs: u64,
        /// Only this entry point.
        #[arg(short = 'e', long = "entry-point")]
        entry: Option<String>,
        /// Also write the timings to this file, in `futhark bench`'s JSON
        /// layout.
        #[arg(long = "json", value_name = "FILE")]
        json: Option<PathBuf>,
        #[command(flatten)]
        pipeline: PipelineArgs,
    },
    /// Evaluate a FutharkScript expression (calls of the program's entry
    /// points, literals, tuples, records, `let`, `$loaddata` …) and print
    /// its value (like `futhark script`).
    Script {
        /// The program's main file.
        file: PathBuf,
        /// The expression, e.g. `'f (g 3) [1, 2]'`.
        #[arg(value_name = "EXPR")]
        expr: Option<String>,
        /// Evaluate this expression (in order, with `-f`; only the last
        /// one's value is printed).
        #[arg(short = 'e', long = "expression", value_name = "EXP")]
        expressions: Vec<String>,
        /// Evaluate the expression in this file.
        #[arg(short = 'f', long = "file", value_name = "FILE")]
        files: Vec<PathBuf>,
        /// Print the value in the binary value format (a primitive or an
        /// array of primitives only).
        #[arg(short = 'b', long = "binary")]
        binary: bool,
        /// What runs the entry points: `c` (an executable made as by `nabla
        /// c`; programs it does not support run in the interpreter) or
        /// `interp` (the interpreter).
        #[arg(long = "backend", value_enum, default_value_t = BackendArg::C)]
        backend: BackendArg,
        /// Report what is evaluated on stderr.
        #[arg(short = 'v', long = "verbose")]
        verbose: bool,
        #[command(flatten)]
        pipeline: PipelineArgs,
    },
    /// Run the `-- >` directives of a program and write it as Markdown
    /// (like `futhark literate`): `prog.fut` gives `prog.md`, with comments
    /// as text, code in code blocks, results, and images (`:img`,
    /// `:plot2d`, `:gnuplot`) in `prog-img/`.
    Literate {
        /// The program's main file.
        file: PathBuf,
        /// The Markdown file to write (images go to its name without the
        /// extension, plus `-img/`).
        #[arg(short = 'o', long = "output", value_name = "FILE")]
        output: Option<PathBuf>,
        /// Stop at the first failing directive and write no file (otherwise
        /// a failure is shown after its directive, and the exit status is 1).
        #[arg(long = "stop-on-error")]
        stop_on_error: bool,
        /// What runs the entry points: `c` (an executable made as by `nabla
        /// c`; programs it does not support run in the interpreter) or
        /// `interp` (the interpreter).
        #[arg(long = "backend", value_enum, default_value_t = BackendArg::C)]
        backend: BackendArg,
        /// Report each directive on stderr as it runs.
        #[arg(short = 'v', long = "verbose")]
        verbose: bool,
        #[command(flatten)]
        pipeline: PipelineArgs,
    },
    /// Act as a GradBench tool: protocol messages on stdin, one JSON
    /// response per line on stdout (programs in `gradbench/`).
    Gradbench {
        /// Time limit of one evaluation (all its runs) in seconds; an
        /// evaluation that exceeds it is stopped and answered with `success:
        /// false`, and the session goes on. Default: 60 with executables
        /// (the largest workloads of GradBench's evals take a few seconds),
        /// 600 with the interpreter; 0: none.
        #[arg(long = "eval-timeout", value_name = "SECONDS")]
        eval_timeout: Option<u64>,
        /// What runs the programs: `c` (executables made as by `nabla c`,
        /// with static AD, cached in `$NABLA_CACHE_DIR`, else
        /// `$XDG_CACHE_HOME/nabla`, else `~/.cache/nabla`) or `interp` (the
        /// interpreter).
        #[arg(long = "backend", value_enum, default_value_t = BackendArg::C)]
        backend: BackendArg,
        #[command(flatten)]
        pipeline: PipelineArgs,
    },
    /// Run objective and gradient of an ADBench input file (gmm, lstm, ba,
    /// hand) and print the results as JSON.
    Adbench {
        /// The problem: gmm, lstm, ba or hand.
        problem: String,
        /// The ADBench text file.
        file: PathBuf,
    },
    /// A Language Server Protocol server on standard input and output
    /// (like `futhark lsp`, for editors): diagnostics as documents are
    /// opened and changed, the type under the cursor on hover, and go to
    /// definition.
    Lsp,
    /// Reformat Futhark programs in place (like `futhark fmt`); with no
    /// files, format standard input to standard output. Comments are kept;
    /// expressions written on one line stay on one line.
    Fmt {
        /// Only check that the files are formatted: name those that are not
        /// and exit with status 1.
        #[arg(long = "check")]
        check: bool,
        /// The `.fut` files to format.
        files: Vec<PathBuf>,
    },
    /// Write HTML documentation of the `.fut` files in a directory (like
    /// `futhark doc`): each file's public definitions, types, module types
    /// and modules with their `-- |` comments (Markdown), and an index.
    Doc {
        /// The package directory.
        dir: PathBuf,
        /// The directory to write the HTML to.
        #[arg(short = 'o', value_name = "OUTDIR")]
        output: PathBuf,
        /// Report each file on stderr.
        #[arg(short = 'v', long = "verbose")]
        verbose: bool,
    },
    /// Manage the packages of the project in the current directory
    /// (Futhark's `futhark.pkg`; packages go to `lib/`).
    Pkg {
        #[command(subcommand)]
        action: PkgAction,
    },
}

/// `nabla pkg` subcommands (those of `futhark pkg`).
#[derive(Subcommand, Debug)]
enum PkgAction {
    /// Create `futhark.pkg` for package PATH (e.g. github.com/user/repo).
    Init { package: String },
    /// Require a package, at VERSION or its newest version.
    Add {
        package: String,
        version: Option<String>,
    },
    /// Stop requiring a package.
    Remove { package: String },
    /// Fetch the required packages (minimal version selection) into `lib/`.
    Sync,
    /// Require the newest version of every required package.
    Upgrade,
}

/// Internal errors (bugs) are reported in one line, never with a backtrace.
fn install_panic_hook() {
    std::panic::set_hook(Box::new(|info| {
        let msg = if let Some(s) = info.payload().downcast_ref::<&str>() {
            s.to_string()
        } else if let Some(s) = info.payload().downcast_ref::<String>() {
            s.clone()
        } else {
            "unknown panic".to_string()
        };
        // Inside `nabla test`, panics are caught and reported per dataset.
        if std::env::var_os("NABLA_QUIET_PANICS").is_none() {
            let loc = info
                .location()
                .map(|l| format!(" ({}:{})", l.file(), l.line()))
                .unwrap_or_default();
            eprintln!("internal compiler error: {msg}{loc}");
        }
    }));
}

fn run(cli: Cli) -> ExitCode {
    match cli.command {
        Command::Run {
            file,
            entry,
            binary_output,
            pipeline,
        } => {
            let compiled = match nabla::compile_with(&file, &pipeline.compile_options()) {
                Ok(c) => c,
                Err(e) => {
                    eprintln!("{e}");
                    return ExitCode::FAILURE;
                }
            };
            let mut input = Vec::new();
            if let Err(e) = std::io::stdin().read_to_end(&mut input) {
                eprintln!("error: cannot read standard input: {e}");
                return ExitCode::FAILURE;
            }
            let cancel = interrupt_flag();
            match compiled.run_on_input_cancellable(&entry, &input, &cancel) {
                Ok(results) => {
                    let mut out = Vec::new();
                    if binary_output {
                        for v in &results {
                            nabla_values::write_value_binary(v, &mut out);
                        }
                    } else {
                        out.extend_from_slice(compiled.show_results(&entry, &results).as_bytes());
                    }
                    let mut stdout = std::io::stdout().lock();
                    if stdout.write_all(&out).and_then(|_| stdout.flush()).is_err() {
                        return ExitCode::FAILURE;
                    }
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    eprintln!("{e}");
                    if cancel.reason() == Some(nabla_interp::CancelReason::Interrupted) {
                        // The conventional status of a process stopped by SIGINT.
                        return ExitCode::from(130);
                    }
                    ExitCode::FAILURE
                }
            }
        }
        Command::C(args) => compile_c(args, nabla_cgen::Target::Sequential),
        Command::Multicore(args) => compile_c(args, nabla_cgen::Target::Multicore),
        Command::Eval {
            file,
            exprs,
            pipeline,
        } => eval(file, &exprs, pipeline.compile_options()),
        Command::Repl { file, pipeline } => nabla::repl::run(file, pipeline.compile_options()),
        Command::Dataset { args } => {
            let stdin = || {
                let mut input = Vec::new();
                std::io::stdin().read_to_end(&mut input).map(|_| input)
            };
            let mut out = std::io::BufWriter::new(std::io::stdout().lock());
            match nabla::dataset::run(&args, stdin, &mut out).and_then(|()| {
                out.flush()
                    .map_err(|e| format!("cannot write the output: {e}"))
            }) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("error: {e}");
                    ExitCode::FAILURE
                }
            }
        }
        Command::Check { file } => match nabla::check(&file) {
            Ok(checked) => {
                if !checked.warnings.is_empty() {
                    eprintln!(
                        "{}",
                        nabla_syntax::diag::render_all(&checked.warnings, &checked.sources)
                    );
                }
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("{e}");
                ExitCode::FAILURE
            }
        },
        Command::DumpIr {
            file,
            after,
            list_passes,
            backend,
            pipeline,
        } => {
            if list_passes {
                return print_passes();
            }
            let Some(file) = file else {
                eprintln!("error: no file given");
                return ExitCode::FAILURE;
            };
            let mut opts = pipeline.backend_options(backend);
            if let Some(stop) = after {
                opts = opts.stopping_after(stop);
            }
            match nabla::compile_with(&file, &opts) {
                Ok(c) => {
                    print!("{}", c.dump_ir());
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    eprintln!("{e}");
                    ExitCode::FAILURE
                }
            }
        }
        Command::Passes => print_passes(),
        Command::Test {
            paths,
            jobs,
            timeout,
            backend,
            pipeline,
        } => {
            std::env::set_var("NABLA_QUIET_PANICS", "1");
            let jobs = jobs.unwrap_or_else(|| {
                std::thread::available_parallelism()
                    .map(|n| n.get())
                    .unwrap_or(1)
            });
            let opts = nabla::testrunner::TestOptions {
                jobs: jobs.max(1),
                timeout: (timeout > 0).then(|| std::time::Duration::from_secs(timeout)),
                compile: pipeline.backend_options(backend),
                backend: match backend {
                    BackendArg::Interp => nabla::testrunner::Backend::Interpreter,
                    BackendArg::C | BackendArg::Multicore => nabla::testrunner::Backend::C,
                },
                run_args: Vec::new(),
            };
            let report = nabla::testrunner::run_tests(&paths, &opts);
            for s in &report.skips {
                println!("{s}");
            }
            for f in &report.failures {
                println!("{f}");
            }
            if report.skipped > 0 {
                println!(
                    "{} passed, {} failed, {} skipped",
                    report.passed, report.failed, report.skipped
                );
            } else {
                println!("{} passed, {} failed", report.passed, report.failed);
            }
            if report.failed == 0 {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            }
        }
        Command::Gradbench {
            eval_timeout,
            backend,
            pipeline,
        } => gradbench(
            pipeline.backend_options(backend),
            match backend {
                BackendArg::Interp => nabla::gradbench::Backend::Interp,
                BackendArg::C | BackendArg::Multicore => {
                    nabla::gradbench::Backend::C { cache_dir: None }
                }
            },
            eval_timeout,
        ),
        Command::Bench {
            file,
            backend,
            runs,
            entry,
            json,
            pipeline,
        } => bench(
            &file,
            backend,
            runs,
            entry.as_deref(),
            json.as_deref(),
            pipeline,
        ),
        Command::Script {
            file,
            expr,
            expressions,
            files,
            binary,
            backend,
            verbose,
            pipeline,
        } => script_command(
            &file,
            expr,
            &expressions,
            &files,
            binary,
            backend,
            verbose,
            pipeline,
        ),
        Command::Literate {
            file,
            output,
            stop_on_error,
            backend,
            verbose,
            pipeline,
        } => literate_command(
            &file,
            nabla::literate::LiterateOptions {
                output,
                stop_on_error,
                verbose,
            },
            backend,
            pipeline,
        ),
        Command::Adbench { problem, file } => adbench(&problem, &file),
        Command::Pkg { action } => pkg(action),
        Command::Fmt { check, files } => ExitCode::from(nabla::fmt::run(&files, check) as u8),
        Command::Doc {
            dir,
            output,
            verbose,
        } => ExitCode::from(nabla::doc::run(&dir, &output, verbose) as u8),
        Command::Lsp => match nabla::lsp::serve() {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("nabla lsp: {e}");
                ExitCode::FAILURE
            }
        },
    }
}

/// `nabla c`: the program (with static AD, unless `--passes` says
/// otherwise) to C, and the C to an executable.
/// What `nabla c` builds.
#[derive(Clone, Copy, PartialEq, Eq)]
enum CMode {
    Executable,
    Library,
    Server,
}

fn compile_c(args: CArgs, target: nabla_cgen::Target) -> ExitCode {
    let CArgs {
        file,
        out,
        only_c,
        library,
        server,
        pipeline,
    } = args;
    let file = file.as_path();
    let mode = if library {
        CMode::Library
    } else if server {
        CMode::Server
    } else {
        CMode::Executable
    };
    let opts = pipeline.c_backend_options().for_target(target);
    let compiled = match nabla::compile_with(file, &opts) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::FAILURE;
        }
    };
    let exe = out.unwrap_or_else(|| file.with_extension(""));
    if exe == file {
        eprintln!("error: the output would overwrite the source file; give -o");
        return ExitCode::FAILURE;
    }
    let result = if mode != CMode::Executable {
        nabla::cbackend::build_library(&compiled, &exe, mode == CMode::Server, only_c)
    } else if only_c {
        nabla::cbackend::c_source(&compiled).and_then(|prog| {
            std::fs::write(exe.with_extension("c"), prog.source)
                .map(|()| prog.unsupported_entries)
                .map_err(|e| {
                    nabla_cgen::CgenError::compiler(format!("cannot write the C file: {e}"))
                })
        })
    } else {
        nabla::cbackend::build_executable(&compiled, &exe)
    };
    match result {
        Ok(left_out) => {
            for (name, why) in left_out {
                eprintln!("warning: entry point {name} left out: {why}");
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

/// A flag that Ctrl-C sets (the interpreter then stops with "interrupted"
/// at its next loop iteration or SOAC element); a second Ctrl-C ends the
/// process at once.
fn interrupt_flag() -> nabla_interp::Cancel {
    let cancel = nabla_interp::Cancel::new();
    let flag = cancel.clone();
    let installed = ctrlc::set_handler(move || {
        if flag.reason().is_some() {
            eprintln!("interrupted");
            std::process::exit(130);
        }
        flag.cancel(nabla_interp::CancelReason::Interrupted);
    });
    if installed.is_err() {
        eprintln!("warning: cannot install the Ctrl-C handler");
    }
    cancel
}

/// `nabla eval`: each expression's value on a line of its own; the first
/// error ends the command.
fn eval(file: Option<PathBuf>, exprs: &[String], options: CompileOptions) -> ExitCode {
    let mut session = nabla::interactive::Session::new(options);
    if let Err(e) = session.load(file) {
        eprintln!("{e}");
        return ExitCode::FAILURE;
    }
    let cancel = interrupt_flag();
    let mut stdout = std::io::stdout().lock();
    for e in exprs {
        match session.eval(e, &cancel) {
            Ok(text) => {
                if writeln!(stdout, "{text}").is_err() {
                    return ExitCode::FAILURE;
                }
            }
            Err(msg) => {
                eprintln!("{msg}");
                if cancel.reason() == Some(nabla_interp::CancelReason::Interrupted) {
                    return ExitCode::from(130);
                }
                return ExitCode::FAILURE;
            }
        }
    }
    ExitCode::SUCCESS
}

/// `nabla passes`: one line per registered pass, then the named pipelines,
/// the default first.
fn print_passes() -> ExitCode {
    let passes = nabla_opt::registered_passes();
    let width = passes.iter().map(|p| p.name.len()).max().unwrap_or(0);
    let mut out = String::new();
    for p in passes {
        out.push_str(&format!("{:width$}  {}\n", p.name, p.description));
    }
    out.push('\n');
    for p in nabla_opt::PIPELINES {
        let pipeline = Pipeline::named(p.name).expect("a registered pipeline");
        if p.name == nabla_opt::DEFAULT_PIPELINE {
            out.push_str(&format!("default pipeline: {}\n", pipeline.describe()));
        } else {
            out.push_str(&format!("with --ad={}: {}\n", p.name, pipeline.describe()));
        }
    }
    print!("{out}");
    ExitCode::SUCCESS
}

/// `nabla gradbench`: serves the protocol on stdin/stdout, each
/// evaluation limited to `eval_timeout_seconds` (0: no limit; `None`: the
/// backend's default, [`nabla::gradbench::Backend::default_eval_time_limit`]).
fn gradbench(
    options: CompileOptions,
    backend: nabla::gradbench::Backend,
    eval_timeout_seconds: Option<u64>,
) -> ExitCode {
    let stdin = std::io::stdin();
    let programs = nabla::gradbench::programs::Programs::new().compiled_with(options);
    let mut session = nabla::gradbench::Session::with_programs(programs).with_backend(backend);
    if let Some(seconds) = eval_timeout_seconds {
        session =
            session.with_time_limit((seconds > 0).then(|| std::time::Duration::from_secs(seconds)));
    }
    match nabla::gradbench::protocol::serve_with(session, stdin.lock(), std::io::stdout().lock()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("nabla gradbench: {e}");
            ExitCode::FAILURE
        }
    }
}

fn pkg(action: PkgAction) -> ExitCode {
    use nabla::pkg;
    let dir = std::path::Path::new(".");
    let r = match &action {
        PkgAction::Init { package } => pkg::init(dir, package),
        PkgAction::Add { package, version } => pkg::add(dir, package, version.as_deref()),
        PkgAction::Remove { package } => pkg::remove(dir, package),
        PkgAction::Sync => pkg::sync(dir),
        PkgAction::Upgrade => pkg::upgrade(dir),
    };
    match r {
        Ok(message) => {
            println!("{message}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

/// `nabla bench`: one line per entry point and dataset (see
/// `nabla::bench`), and the JSON file when asked for.
fn bench(
    file: &std::path::Path,
    backend: BackendArg,
    runs: u64,
    entry: Option<&str>,
    json: Option<&std::path::Path>,
    pipeline: PipelineArgs,
) -> ExitCode {
    let options = pipeline.backend_options(backend);
    let backend = match backend {
        BackendArg::Interp => nabla::bench::BenchBackend::Interp,
        BackendArg::C | BackendArg::Multicore => nabla::bench::BenchBackend::C,
    };
    let runs = runs.clamp(1, 1_000_000);
    let mut print = |m: &nabla::bench::Measurement| println!("{}", m.line());
    match nabla::bench::bench(file, &options, backend, runs, entry, &mut print) {
        Ok(ms) => {
            if let Some(j) = json {
                let text = nabla::bench::to_json(&ms).to_string();
                if let Err(e) = std::fs::write(j, text + "\n") {
                    eprintln!("error: cannot write {}: {e}", j.display());
                    return ExitCode::FAILURE;
                }
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn adbench(problem: &str, file: &std::path::Path) -> ExitCode {
    match nabla::gradbench::adbench::run(problem, file) {
        Ok(j) => {
            println!("{j}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn main() -> ExitCode {
    install_panic_hook();
    let cli = Cli::parse();
    // Deeply nested programs need a deep stack in the front end and the interpreter.
    let worker = std::thread::Builder::new()
        .stack_size(nabla::testrunner::runner::STACK_SIZE)
        .spawn(move || run(cli));
    match worker.map(|h| h.join()) {
        Ok(Ok(code)) => code,
        _ => ExitCode::FAILURE,
    }
}

/// The compiled program of `nabla script`/`nabla literate`, or the error
/// already reported.
fn script_runner(
    file: &std::path::Path,
    backend: BackendArg,
    pipeline: PipelineArgs,
) -> Option<nabla::literate::ScriptRunner> {
    let opts = pipeline.backend_options(backend);
    let backend = match backend {
        BackendArg::Interp => nabla::literate::ScriptBackend::Interp,
        BackendArg::C | BackendArg::Multicore => nabla::literate::ScriptBackend::C,
    };
    match nabla::literate::ScriptRunner::new(file, &opts, backend, &mut |n| eprintln!("{n}")) {
        Ok(r) => Some(r),
        Err(e) => {
            eprintln!("{e}");
            None
        }
    }
}

/// `nabla script`.
#[allow(clippy::too_many_arguments)]
fn script_command(
    file: &std::path::Path,
    expr: Option<String>,
    expressions: &[String],
    files: &[PathBuf],
    binary: bool,
    backend: BackendArg,
    verbose: bool,
    pipeline: PipelineArgs,
) -> ExitCode {
    // The expressions in order: `-e`, then `-f`, then the positional one.
    let mut scripts: Vec<(String, String)> = expressions
        .iter()
        .map(|e| ("<expression>".to_string(), e.clone()))
        .collect();
    for f in files {
        match std::fs::read_to_string(f) {
            Ok(t) => scripts.push((f.display().to_string(), t)),
            Err(e) => {
                eprintln!("error: cannot read {}: {e}", f.display());
                return ExitCode::FAILURE;
            }
        }
    }
    if let Some(e) = expr {
        scripts.push(("<expression>".to_string(), e));
    }
    if scripts.is_empty() {
        eprintln!("error: no expression given (EXPR, -e EXP or -f FILE)");
        return ExitCode::FAILURE;
    }
    // Parse everything first: a syntax error costs no compilation.
    let mut parsed = Vec::new();
    for (origin, text) in &scripts {
        match nabla::script::parse(text) {
            Ok(e) => parsed.push(e),
            Err(e) => {
                eprintln!("error: {}", e.render(text, origin));
                return ExitCode::FAILURE;
            }
        }
    }
    let Some(runner) = script_runner(file, backend, pipeline) else {
        return ExitCode::FAILURE;
    };
    let mut last = None;
    for ((origin, text), e) in scripts.iter().zip(&parsed) {
        if verbose {
            eprintln!("Evaluating: {}", text.trim());
        }
        match runner.eval(e) {
            Ok(v) => last = Some(v),
            Err(err) => {
                eprintln!("error: {}", err.render(text, origin));
                return ExitCode::FAILURE;
            }
        }
    }
    let Some(v) = last else {
        return ExitCode::FAILURE;
    };
    let mut out = Vec::new();
    if binary {
        match v.as_value() {
            Some(v) => nabla_values::write_value_binary(&v, &mut out),
            None => {
                eprintln!(
                    "error: binary output needs a primitive or an array of primitives, not {}",
                    v.to_text()
                );
                return ExitCode::FAILURE;
            }
        }
    } else {
        out.extend_from_slice(v.to_text().as_bytes());
        out.push(b'\n');
    }
    let mut stdout = std::io::stdout().lock();
    if stdout.write_all(&out).and_then(|_| stdout.flush()).is_err() {
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}

/// `nabla literate`.
fn literate_command(
    file: &std::path::Path,
    opts: nabla::literate::LiterateOptions,
    backend: BackendArg,
    pipeline: PipelineArgs,
) -> ExitCode {
    let source = match std::fs::read_to_string(file) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: cannot read {}: {e}", file.display());
            return ExitCode::FAILURE;
        }
    };
    let Some(runner) = script_runner(file, backend, pipeline) else {
        return ExitCode::FAILURE;
    };
    match nabla::literate::literate(&runner, file, &source, &opts) {
        Ok(report) => {
            for f in &report.failures {
                eprintln!("{f}");
            }
            if report.failures.is_empty() {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            }
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
