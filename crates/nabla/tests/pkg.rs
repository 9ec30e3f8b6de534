//! `nabla pkg` against local git repositories: git's `url.…insteadOf`
//! (in a private global config) sends `https://github.com/test/…` to
//! repositories made here, so nothing touches the network.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn scratch(name: &str) -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("pkg-{name}"));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// The environment every git and nabla call here runs in.
fn with_env(cmd: &mut Command, root: &Path) {
    cmd.env("GIT_CONFIG_GLOBAL", root.join("gitconfig"))
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_NAME", "nabla tests")
        .env("GIT_AUTHOR_EMAIL", "tests@example.org")
        .env("GIT_COMMITTER_NAME", "nabla tests")
        .env("GIT_COMMITTER_EMAIL", "tests@example.org");
}

fn git(root: &Path, dir: &Path, args: &[&str]) {
    let mut cmd = Command::new("git");
    with_env(&mut cmd, root);
    let o = cmd.arg("-C").arg(dir).args(args).output().expect("run git");
    assert!(
        o.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}

fn nabla(root: &Path, dir: &Path, args: &[&str]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_nabla"));
    with_env(&mut cmd, root);
    cmd.current_dir(dir).args(args).output().expect("run nabla")
}

fn ok(o: &Output) -> String {
    assert!(
        o.status.success(),
        "failed: {}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Commits `files` (path, text) to the repository of package `path` under
/// `root/repos/` and tags the commit `tag`.
fn release(root: &Path, path: &str, files: &[(&str, &str)], tag: &str) {
    let repo = root.join("repos").join(path);
    if !repo.join(".git").exists() {
        std::fs::create_dir_all(&repo).unwrap();
        git(root, &repo, &["init", "-q", "-b", "main"]);
    }
    for (f, text) in files {
        let p = repo.join(f);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    git(root, &repo, &["add", "-A"]);
    git(root, &repo, &["commit", "-q", "-m", tag]);
    git(root, &repo, &["tag", tag]);
}

fn setup(name: &str) -> PathBuf {
    let root = scratch(name);
    std::fs::write(
        root.join("gitconfig"),
        format!(
            "[url \"file://{}/repos/\"]\n\tinsteadOf = https://\n",
            root.display()
        ),
    )
    .unwrap();
    // alpha: 0.1.0, 0.2.0 and 1.0.0; beta 0.1.0 needs alpha ≥ 0.2.0.
    for (v, k) in [("v0.1.0", 1), ("v0.2.0", 2), ("v1.0.0", 3)] {
        release(
            &root,
            "github.com/test/alpha",
            &[
                (
                    "futhark.pkg",
                    "package github.com/test/alpha\n\nrequire {\n}\n",
                ),
                (
                    "lib/github.com/test/alpha/alpha.fut",
                    &format!("def alpha_version : i32 = {k}\n"),
                ),
            ],
            v,
        );
    }
    let alpha_020 = String::from_utf8(
        Command::new("git")
            .arg("-C")
            .arg(root.join("repos/github.com/test/alpha"))
            .args(["rev-list", "-n", "1", "v0.2.0"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    release(
        &root,
        "github.com/test/beta",
        &[
            (
                "futhark.pkg",
                &format!(
                    "package github.com/test/beta\n\nrequire {{\n  github.com/test/alpha 0.2.0 #{}\n}}\n",
                    alpha_020.trim()
                ),
            ),
            (
                "lib/github.com/test/beta/beta.fut",
                "import \"../alpha/alpha\"\ndef beta (x: i32) : i32 = x * 10 + alpha_version\n",
            ),
        ],
        "v0.1.0",
    );
    let proj = root.join("proj");
    std::fs::create_dir_all(&proj).unwrap();
    root
}

#[test]
fn init_add_sync_and_import() {
    let root = setup("flow");
    let proj = root.join("proj");
    let out = ok(&nabla(&root, &proj, &["pkg", "init", "github.com/me/proj"]));
    assert!(out.contains("Created futhark.pkg"), "{out}");
    assert!(proj.join("lib/github.com/me/proj").is_dir());
    std::fs::write(
        proj.join("lib/github.com/me/proj/own.fut"),
        "def own = 5i32\n",
    )
    .unwrap();
    // A second init is refused.
    assert!(!nabla(&root, &proj, &["pkg", "init", "github.com/me/proj"])
        .status
        .success());

    // alpha pinned at 0.1.0 by us, beta needs 0.2.0: minimal version
    // selection takes 0.2.0 (not the newest, 1.0.0).
    ok(&nabla(
        &root,
        &proj,
        &["pkg", "add", "github.com/test/alpha", "0.1.0"],
    ));
    let out = ok(&nabla(
        &root,
        &proj,
        &["pkg", "add", "github.com/test/beta"],
    ));
    assert!(out.contains("Added github.com/test/beta 0.1.0."), "{out}");
    let manifest = std::fs::read_to_string(proj.join("futhark.pkg")).unwrap();
    assert!(
        manifest.starts_with(
            "package github.com/me/proj\n\nrequire {\n  github.com/test/alpha 0.1.0 #"
        ),
        "{manifest}"
    );
    let out = ok(&nabla(&root, &proj, &["pkg", "sync"]));
    assert!(
        out.contains("github.com/test/alpha 0.2.0") && out.contains("github.com/test/beta 0.1.0"),
        "{out}"
    );
    assert_eq!(
        std::fs::read_to_string(proj.join("lib/github.com/test/alpha/alpha.fut")).unwrap(),
        "def alpha_version : i32 = 2\n"
    );
    // The project's own directory survives; no scratch directories remain.
    assert!(proj.join("lib/github.com/me/proj/own.fut").is_file());
    assert!(!proj.join("lib~new").exists() && !proj.join("lib~old").exists());

    // A program imports the packages as Futhark lays them out.
    std::fs::write(
        proj.join("main.fut"),
        "import \"lib/github.com/test/beta/beta\"\nimport \"lib/github.com/me/proj/own\"\n\
         def main (x: i32) : i32 = beta x + own\n",
    )
    .unwrap();
    let mut run = Command::new(env!("CARGO_BIN_EXE_nabla"));
    run.current_dir(&proj).args(["run", "main.fut"]);
    let o = {
        use std::io::Write;
        let mut child = run
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        child.stdin.take().unwrap().write_all(b"4").unwrap();
        child.wait_with_output().unwrap()
    };
    assert_eq!(ok(&o).trim(), "47i32");

    // upgrade: alpha to 1.0.0 (newest of majors 0 and 1); sync follows.
    let out = ok(&nabla(&root, &proj, &["pkg", "upgrade"]));
    assert!(
        out.contains("Upgraded github.com/test/alpha 0.1.0 => 1.0.0."),
        "{out}"
    );
    ok(&nabla(&root, &proj, &["pkg", "sync"]));
    assert_eq!(
        std::fs::read_to_string(proj.join("lib/github.com/test/alpha/alpha.fut")).unwrap(),
        "def alpha_version : i32 = 3\n"
    );

    // remove: beta goes from the manifest and, after sync, from lib/.
    ok(&nabla(
        &root,
        &proj,
        &["pkg", "remove", "github.com/test/beta"],
    ));
    ok(&nabla(&root, &proj, &["pkg", "sync"]));
    assert!(!proj.join("lib/github.com/test/beta").exists());
    assert!(proj.join("lib/github.com/test/alpha/alpha.fut").is_file());
    let o = nabla(&root, &proj, &["pkg", "remove", "github.com/test/beta"]);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("is not required"));
}

#[test]
fn bad_versions_and_moved_tags_are_errors() {
    let root = setup("errors");
    let proj = root.join("proj");
    ok(&nabla(&root, &proj, &["pkg", "init", "github.com/me/proj"]));
    let o = nabla(
        &root,
        &proj,
        &["pkg", "add", "github.com/test/alpha", "0.9.0"],
    );
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("has no version 0.9.0"));
    let o = nabla(&root, &proj, &["pkg", "add", "github.com/test/nothere"]);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("cannot fetch github.com/test/nothere"));
    // A tag that moved after `add` is refused by `sync`.
    ok(&nabla(
        &root,
        &proj,
        &["pkg", "add", "github.com/test/alpha", "0.1.0"],
    ));
    let repo = root.join("repos/github.com/test/alpha");
    git(&root, &repo, &["tag", "-f", "v0.1.0", "v1.0.0"]);
    let o = nabla(&root, &proj, &["pkg", "sync"]);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("tag v0.1.0 is now"));
    // A malformed manifest names its line.
    std::fs::write(proj.join("futhark.pkg"), "require {\n  nonsense\n}\n").unwrap();
    let o = nabla(&root, &proj, &["pkg", "sync"]);
    assert!(String::from_utf8_lossy(&o.stderr).contains("futhark.pkg:2"));
}
