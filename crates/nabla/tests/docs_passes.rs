//! The documents agree with the code: the pass lists of `ARCHITECTURE.md`
//! and `tests/ir/README.md` are the registered passes
//! (`nabla_opt::PASSES`), `ARCHITECTURE.md`'s pipelines are
//! `nabla_opt::PIPELINES`, and the subcommands that `ARCHITECTURE.md` and
//! the first lines of `main.rs`'s docs name are those of `nabla --help`.
//!
//! Each list sits in a document between `<!-- NAME -->` and
//! `<!-- /NAME -->` marker lines, one entry per line: a pass is the first
//! `` `…` `` of its line, a pipeline is `` `name`: `stages` ``, and a line
//! of the command list names its commands before its colon.

use nabla_opt::registry::Stage;
use std::path::PathBuf;
use std::process::Command;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn read(path: &str) -> String {
    std::fs::read_to_string(root().join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The lines between `<!-- name -->` and `<!-- /name -->` in `doc`.
fn marked<'a>(doc: &'a str, path: &str, name: &str) -> Vec<&'a str> {
    let open = format!("<!-- {name} -->");
    let close = format!("<!-- /{name} -->");
    let mut lines = doc.lines().skip_while(|l| l.trim() != open);
    assert!(lines.next().is_some(), "{path}: no `{open}` line");
    let block: Vec<&str> = lines.take_while(|l| l.trim() != close).collect();
    assert!(
        doc.lines().any(|l| l.trim() == close),
        "{path}: no `{close}` line"
    );
    block
}

/// The first `` `…` `` of each line that has one.
fn first_code_spans<'a>(lines: &[&'a str]) -> Vec<&'a str> {
    lines
        .iter()
        .filter_map(|l| {
            let start = l.find('`')? + 1;
            let len = l[start..].find('`')?;
            Some(&l[start..start + len])
        })
        .collect()
}

#[test]
fn documented_passes_are_the_registered_passes() {
    let registered = nabla_opt::pass_names();
    for path in ["ARCHITECTURE.md", "tests/ir/README.md"] {
        let doc = read(path);
        let listed = first_code_spans(&marked(&doc, path, "passes"));
        assert_eq!(
            listed, registered,
            "{path}: the pass list differs from nabla_opt::PASSES"
        );
    }
}

/// A pipeline in the notation of `ARCHITECTURE.md`: stages separated by
/// `, `, a repeated group as `repeat(a, b)`.
fn notation(stages: &[Stage]) -> String {
    stages
        .iter()
        .map(|s| match s {
            Stage::Once(n) => n.to_string(),
            Stage::Repeat(ns) => format!("repeat({})", ns.join(", ")),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

#[test]
fn documented_pipelines_are_the_registered_pipelines() {
    let path = "ARCHITECTURE.md";
    let doc = read(path);
    let block = marked(&doc, path, "pipelines");
    let expected: Vec<String> = nabla_opt::PIPELINES
        .iter()
        .map(|p| format!("`{}`: `{}`", p.name, notation(p.stages)))
        .collect();
    let listed: Vec<String> = block
        .iter()
        .filter(|l| l.contains('`'))
        .map(|l| l.trim_start_matches(['-', ' ']).trim().to_string())
        .map(|l| match l.find(" — ") {
            Some(i) => l[..i].to_string(),
            None => l,
        })
        .collect();
    assert_eq!(
        listed, expected,
        "{path}: the pipelines differ from nabla_opt::PIPELINES"
    );
}

/// The subcommands `nabla --help` lists, without `help`.
fn help_commands() -> Vec<String> {
    let out = Command::new(env!("CARGO_BIN_EXE_nabla"))
        .arg("--help")
        .output()
        .expect("nabla runs");
    assert!(out.status.success());
    let help = String::from_utf8(out.stdout).unwrap();
    let commands: Vec<String> = help
        .lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| *c != "help")
        .map(str::to_string)
        .collect();
    assert!(commands.len() > 10, "{help}");
    commands
}

#[test]
fn documented_commands_are_the_cli_commands() {
    let mut commands = help_commands();
    commands.sort();

    let path = "ARCHITECTURE.md";
    let doc = read(path);
    // A line names one or more commands before its colon: `- `a`, `b`: …`.
    let mut listed: Vec<String> = marked(&doc, path, "commands")
        .iter()
        .filter_map(|l| l.find("`:").map(|i| &l[..i + 1]))
        .flat_map(|head| head.split('`').skip(1).step_by(2))
        .map(str::to_string)
        .collect();
    listed.sort();
    assert_eq!(listed, commands, "{path}: the command list differs");

    // The first paragraph of `main.rs`'s docs names every command.
    let path = "crates/nabla/src/main.rs";
    let main = read(path);
    let intro: String = main
        .lines()
        .take_while(|l| l.starts_with("//!") && l.trim() != "//!")
        .collect::<Vec<_>>()
        .join(" ");
    let mut named: Vec<String> = intro
        .split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect();
    named.sort();
    assert_eq!(named, commands, "{path}: the first doc lines' command list");
}

/// The nabla crates in the `[dependencies]` of `crates/NAME/Cargo.toml`.
fn cargo_dependencies(name: &str) -> Vec<String> {
    let path = if name == "nabla" {
        "crates/nabla/Cargo.toml".to_string()
    } else {
        format!("crates/{name}/Cargo.toml")
    };
    let toml = read(&path);
    let mut deps: Vec<String> = toml
        .lines()
        .skip_while(|l| l.trim() != "[dependencies]")
        .skip(1)
        .take_while(|l| !l.starts_with('['))
        .filter_map(|l| l.split(['=', ' ', '.']).next())
        .filter(|d| *d == "nabla" || d.starts_with("nabla-"))
        .map(str::to_string)
        .collect();
    deps.sort();
    deps
}

#[test]
fn documented_crate_dependencies_are_the_cargo_dependencies() {
    let path = "ARCHITECTURE.md";
    let doc = read(path);
    let mut sections = 0;
    let lines: Vec<&str> = doc.lines().collect();
    for (i, line) in lines.iter().enumerate() {
        let Some(name) = line
            .strip_prefix("### `")
            .and_then(|l| l.strip_suffix('`'))
            .filter(|n| n.starts_with("nabla"))
        else {
            continue;
        };
        sections += 1;
        // The paragraph that starts with `Uses: `, up to the blank line.
        let section: Vec<&str> = lines[i + 1..]
            .iter()
            .take_while(|l| !l.starts_with("### "))
            .copied()
            .collect();
        let start = section
            .iter()
            .position(|l| l.starts_with("Uses: "))
            .unwrap_or_else(|| panic!("{path}: no `Uses:` line for {name}"));
        let uses = section[start..]
            .iter()
            .take_while(|l| !l.trim().is_empty())
            .copied()
            .collect::<Vec<_>>()
            .join(" ");
        // The crates named in code spans (`nabla-ir`).
        let mut listed: Vec<String> = uses
            .split('`')
            .skip(1)
            .step_by(2)
            .filter(|n| n.starts_with("nabla"))
            .map(str::to_string)
            .collect();
        listed.sort();
        assert_eq!(
            listed,
            cargo_dependencies(name),
            "{path}: the `Uses:` line of {name}"
        );
    }
    let crates = std::fs::read_dir(root().join("crates")).unwrap().count();
    assert_eq!(sections, crates, "{path}: one section per crate");
}
