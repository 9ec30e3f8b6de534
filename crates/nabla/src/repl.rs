//! `nabla repl` (as `futhark repl`): the prompt, its commands, and the
//! debugger of `#[break]` breakpoints and new NaNs (`:nanbreak`).
//!
//! A line is a command (`:name ARG`, a unique prefix of the name will do),
//! a declaration or an expression ([`crate::interactive::Session`] checks
//! and evaluates them). When an evaluation reaches a `#[break] e`
//! expression, it stops before `e`: the REPL prints where, the call stack,
//! and the variables in scope, and reads lines at a prompt of its own, where
//! expressions see those variables (and the program's names). An empty line
//! continues; `:unbreak` continues and skips that breakpoint from then on;
//! `:frame N` shows the variables of stack frame N (the callers' frames
//! have their function's parameters); `:nanbreak` toggles stopping where an
//! operator makes a NaN from operands that are not NaNs. Breakpoints do not
//! nest: evaluations at a breakpoint's prompt do not stop.

use crate::interactive::{is_breakpoint, is_result_function, LineKind, Session, SessionDebugger};
use crate::CompileOptions;
use nabla_interp::{Cancel, CancelReason, StackFrame, StopReason};
use nabla_syntax::{SourceMap, Span};
use std::path::PathBuf;
use std::process::ExitCode;

/// The REPL's commands: name, argument, what it does.
const REPL_COMMANDS: [(&str, &str, &str); 9] = [
    (
        "load",
        "FILE",
        "Load a program (replacing the loaded one and the declarations entered so far); without FILE, load the loaded one again.",
    ),
    ("type", "EXPR", "Show the type of an expression."),
    (
        "unbreak",
        "",
        "At a breakpoint: continue, and skip this breakpoint from now on.",
    ),
    (
        "nanbreak",
        "",
        "Toggle stopping where an operator makes a NaN from operands that are not NaNs.",
    ),
    (
        "frame",
        "N",
        "At a breakpoint: show the variables of stack frame N (0 is the breakpoint's).",
    ),
    ("pwd", "", "Print the current working directory."),
    ("cd", "DIR", "Change the current working directory."),
    ("help", "", "Print this list of commands."),
    ("quit", "", "Leave the REPL (so does end of input, Ctrl-D)."),
];

/// What the REPL does after a line.
enum ReplStep {
    Continue,
    Quit,
}

/// Where lines come from: the line editor on a terminal (with prompts and
/// a history), standard input line by line otherwise (without prompts).
enum Input {
    Editor(Box<rustyline::DefaultEditor>),
    Stdin,
}

impl Input {
    /// The next line; `None` at the end of input (or on an error, which is
    /// reported).
    fn read(&mut self, prompt: &str) -> Option<String> {
        match self {
            Input::Stdin => {
                let mut line = String::new();
                match std::io::stdin().read_line(&mut line) {
                    Ok(0) | Err(_) => None,
                    Ok(_) => Some(line.trim_end_matches(['\n', '\r']).to_string()),
                }
            }
            Input::Editor(editor) => loop {
                match editor.readline(prompt) {
                    Ok(line) => {
                        if !line.trim().is_empty() {
                            let _ = editor.add_history_entry(line.as_str());
                        }
                        return Some(line);
                    }
                    Err(rustyline::error::ReadlineError::Interrupted) => continue,
                    Err(rustyline::error::ReadlineError::Eof) => return None,
                    Err(e) => {
                        eprintln!("error: {e}");
                        return None;
                    }
                }
            },
        }
    }
}

/// What the debugger keeps between evaluations: the breakpoints skipped
/// (`:unbreak`, by file and position, so that they survive recompiling)
/// and whether new NaNs stop a run.
#[derive(Default)]
struct BreakSettings {
    skipped: Vec<(PathBuf, u32, u32)>,
    nan_break: bool,
}

/// The lines, the count in the prompt and the debugger's settings.
struct Prompt {
    input: Input,
    count: usize,
    settings: BreakSettings,
    cancel: Cancel,
}

/// `nabla repl`: with line editing and history on a terminal, otherwise
/// reading standard input line by line (without prompts).
pub fn run(file: Option<PathBuf>, options: CompileOptions) -> ExitCode {
    use std::io::IsTerminal;
    let mut session = Session::new(options);
    if let Some(f) = file {
        if let Err(e) = session.load(Some(f)) {
            eprintln!("{e}");
        }
    }
    // Ctrl-C during an evaluation stops it (at the prompt, the line editor
    // handles Ctrl-C itself).
    let cancel = Cancel::new();
    let flag = cancel.clone();
    if ctrlc::set_handler(move || flag.cancel(CancelReason::Interrupted)).is_err() {
        eprintln!("warning: cannot install the Ctrl-C handler");
    }
    let terminal = std::io::stdin().is_terminal();
    let input = if terminal {
        match rustyline::DefaultEditor::new() {
            Ok(e) => Input::Editor(Box::new(e)),
            Err(e) => {
                eprintln!("error: cannot start the line editor: {e}");
                return ExitCode::FAILURE;
            }
        }
    } else {
        Input::Stdin
    };
    let mut prompt = Prompt {
        input,
        count: 0,
        settings: BreakSettings::default(),
        cancel,
    };
    if terminal {
        println!(
            "nabla {} — a Futhark REPL. Type :help for a list of commands.",
            env!("CARGO_PKG_VERSION")
        );
    }
    while let Some(line) = prompt.input.read(&format!("[{}]> ", prompt.count)) {
        if line.trim().is_empty() {
            continue;
        }
        prompt.count += 1;
        if let ReplStep::Quit = repl_line(&mut session, &line, &mut prompt) {
            break;
        }
    }
    if terminal {
        println!("Leaving the nabla REPL.");
    }
    ExitCode::SUCCESS
}

/// The command `line` names (`:name ARG`): its full name and argument, or
/// the message for an unknown or ambiguous one.
fn parse_command(command: &str) -> Result<(&'static str, &str), String> {
    let (name, arg) = command
        .split_once(char::is_whitespace)
        .map_or((command, ""), |(n, a)| (n, a.trim()));
    let matching: Vec<&'static str> = REPL_COMMANDS
        .iter()
        .map(|c| c.0)
        .filter(|c| !name.is_empty() && c.starts_with(name))
        .collect();
    if let Some(exact) = REPL_COMMANDS.iter().find(|c| c.0 == name) {
        return Ok((exact.0, arg));
    }
    match matching.as_slice() {
        [one] => Ok((one, arg)),
        [] => Err(format!(
            "Unknown command `:{name}`; :help lists the commands."
        )),
        several => Err(format!(
            "Ambiguous command `:{name}`: {}.",
            several
                .iter()
                .map(|c| format!(":{c}"))
                .collect::<Vec<_>>()
                .join(", ")
        )),
    }
}

/// One line at the top-level prompt.
fn repl_line(session: &mut Session, line: &str, prompt: &mut Prompt) -> ReplStep {
    let line = line.trim();
    let Some(command) = line.strip_prefix(':') else {
        let result = match Session::classify(line) {
            LineKind::Declaration => session.declare(line).map(|()| None),
            LineKind::Expression => {
                prompt.cancel.reset();
                let cancel = prompt.cancel.clone();
                let session: &Session = session;
                let mut debugger = Debugger { prompt, session };
                session
                    .eval_debugged(line, &cancel, Some(&mut debugger))
                    .map(Some)
            }
        };
        print_result(result);
        return ReplStep::Continue;
    };
    let (name, arg) = match parse_command(command) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("{e}");
            return ReplStep::Continue;
        }
    };
    match name {
        "load" => {
            let file = if arg.is_empty() {
                match session.file() {
                    Some(f) => f.to_path_buf(),
                    None => {
                        eprintln!("No file given and no file loaded.");
                        return ReplStep::Continue;
                    }
                }
            } else {
                PathBuf::from(arg)
            };
            match session.load(Some(file.clone())) {
                Ok(()) => println!("Loaded {}.", file.display()),
                Err(e) => eprintln!("{e}"),
            }
        }
        "unbreak" | "frame" => eprintln!("Not stopped at a breakpoint."),
        "nanbreak" => toggle_nan_break(&mut prompt.settings),
        "quit" => return ReplStep::Quit,
        _ => common_command(session, name, arg),
    }
    ReplStep::Continue
}

/// Prints an evaluation's value (or a declaration's nothing) or its error.
fn print_result(result: Result<Option<String>, String>) {
    match result {
        Ok(Some(text)) => println!("{text}"),
        Ok(None) => {}
        Err(e) => eprintln!("{e}"),
    }
}

/// The commands that work alike at the top level and at a breakpoint.
fn common_command(session: &Session, name: &str, arg: &str) {
    match name {
        "type" if arg.is_empty() => eprintln!("Usage: :type EXPR"),
        "type" => match session.type_of(arg) {
            Ok(t) => println!("{t}"),
            Err(e) => eprintln!("{e}"),
        },
        "pwd" => match std::env::current_dir() {
            Ok(d) => println!("{}", d.display()),
            Err(e) => eprintln!("error: {e}"),
        },
        "cd" if arg.is_empty() => eprintln!("Usage: :cd DIR"),
        "cd" => {
            if let Err(e) = std::env::set_current_dir(arg) {
                eprintln!("error: cannot change to {arg}: {e}");
            }
        }
        "help" => {
            println!("Enter an expression to evaluate it, or a declaration (def, let, type, …) to add it.");
            println!("At a breakpoint, an empty line continues.");
            println!("Commands (a unique prefix will do, e.g. :t for :type):");
            for (name, arg, what) in REPL_COMMANDS {
                let usage = format!(":{name} {arg}");
                println!("  {usage:<12} {what}");
            }
        }
        _ => eprintln!("`:{name}` is not available here."),
    }
}

fn toggle_nan_break(settings: &mut BreakSettings) {
    settings.nan_break = !settings.nan_break;
    if settings.nan_break {
        println!("Now stopping where an operator makes a new NaN.");
    } else {
        println!("No longer stopping at new NaNs.");
    }
}

/// The debugger of one top-level evaluation.
struct Debugger<'a> {
    prompt: &'a mut Prompt,
    session: &'a Session,
}

/// A location as `path:line:column`.
fn place(location: Span, sources: &SourceMap) -> String {
    sources.describe(location)
}

/// The file and position of a location, as `:unbreak` keeps it.
fn location_key(location: Span, sources: &SourceMap) -> Option<(PathBuf, u32, u32)> {
    let file = sources.files.get(location.file.0 as usize)?;
    Some((file.path.clone(), location.start, location.end))
}

impl SessionDebugger for Debugger<'_> {
    fn should_stop(&mut self, reason: StopReason, location: Span, sources: &SourceMap) -> bool {
        match reason {
            StopReason::NewNan => self.prompt.settings.nan_break,
            StopReason::Breakpoint => {
                is_breakpoint(location, sources)
                    && location_key(location, sources)
                        .is_some_and(|k| !self.prompt.settings.skipped.contains(&k))
            }
        }
    }

    fn stopped(&mut self, reason: StopReason, stack: &[StackFrame], sources: &SourceMap) {
        let Some(top) = stack.first() else {
            return;
        };
        let why = match reason {
            StopReason::Breakpoint => "Breakpoint",
            StopReason::NewNan => "NaN produced",
        };
        println!("{why} at {}", place(top.location, sources));
        show_frame(stack, 0, sources);
        println!("<Enter> to continue.");
        let mut frame_session = self.session.with_values(&stack[0].variables);
        loop {
            let prompt_text = format!("[{}]> ", self.prompt.count);
            // The end of input continues (and so every later stop).
            let Some(line) = self.prompt.input.read(&prompt_text) else {
                break;
            };
            self.prompt.count += 1;
            let line = line.trim();
            if line.is_empty() {
                break;
            }
            let Some(command) = line.strip_prefix(':') else {
                let result = match Session::classify(line) {
                    LineKind::Declaration => frame_session.declare(line).map(|()| None),
                    LineKind::Expression => {
                        self.prompt.cancel.reset();
                        frame_session.eval(line, &self.prompt.cancel).map(Some)
                    }
                };
                print_result(result);
                continue;
            };
            let (name, arg) = match parse_command(command) {
                Ok(c) => c,
                Err(e) => {
                    eprintln!("{e}");
                    continue;
                }
            };
            match name {
                "unbreak" => {
                    if let (StopReason::Breakpoint, Some(key)) =
                        (reason, location_key(top.location, sources))
                    {
                        self.prompt.settings.skipped.push(key);
                    }
                    break;
                }
                "frame" => match arg.parse::<usize>() {
                    Ok(n) if n < stack.len() => {
                        frame_session = self.session.with_values(&stack[n].variables);
                        show_frame(stack, n, sources);
                    }
                    _ => eprintln!(
                        "Invalid stack frame `{arg}`: the frames are 0 to {}.",
                        stack.len() - 1
                    ),
                },
                "nanbreak" => toggle_nan_break(&mut self.prompt.settings),
                "load" => eprintln!("Continue (an empty line) before loading a file."),
                // As in Futhark, leaving a breakpoint's prompt continues.
                "quit" => break,
                _ => common_command(&frame_session, name, arg),
            }
        }
        println!("Continuing...");
    }

    fn nan_breaks(&self) -> bool {
        self.prompt.settings.nan_break
    }
}

/// Prints the stack, innermost first, marking frame `current`, and the
/// names of its variables.
fn show_frame(stack: &[StackFrame], current: usize, sources: &SourceMap) {
    for (i, frame) in stack.iter().enumerate() {
        let mark = if i == current { '>' } else { ' ' };
        let function = if is_result_function(&frame.function) {
            "the expression entered"
        } else {
            &frame.function
        };
        println!(
            "{mark}#{i}: {} in {function}",
            place(frame.location, sources)
        );
    }
    let names: Vec<&str> = stack[current]
        .variables
        .iter()
        .map(|(n, _)| n.as_str())
        .collect();
    if names.is_empty() {
        println!("No variables to show in frame #{current}.");
    } else {
        println!("Variables of frame #{current}: {}", names.join(", "));
    }
}
