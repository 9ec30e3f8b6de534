//! `nabla pkg`: Futhark's package manager (`futhark pkg`), reading and
//! writing the same `futhark.pkg` manifest and laying packages out the same
//! way, so that `import "lib/github.com/user/repo/file"` finds them.
//!
//! Facts this follows (`shared/design/futhark-internals.md` §5.2):
//! * a package path is a git-clonable URL without the scheme
//!   (`github.com/user/repo`); major versions 2 and above are written
//!   `github.com/user/repo@2`, and only tags of that major version are
//!   considered;
//! * versions are the repository's tags `vX.Y.Z`;
//! * the manifest `futhark.pkg` has an optional `package PATH` line and a
//!   `require { PATH X.Y.Z #COMMIT … }` block;
//! * dependencies are chosen by *minimal version selection*: for each
//!   package, the highest of the minimum versions required anywhere in the
//!   graph of required versions;
//! * a package repository holds its files under `lib/<package path>/`,
//!   which `sync` copies to `lib/<package path>/` of the project.
//!
//! Repositories are fetched by running `git clone https://<path>` (no other
//! network access). Git's own `url.<base>.insteadOf` configuration
//! redirects that, e.g. to local repositories (which is how the tests run
//! without a network).
//!
//! `sync` builds the new `lib/` in `lib~new/` and swaps it in (keeping
//! `lib~old/` until the swap is done); the project's own directory,
//! `lib/<package path>/` of its `package` line, is carried over unchanged.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The manifest's file name.
pub const MANIFEST: &str = "futhark.pkg";

/// A failure of a `nabla pkg` command (one message, shown as `error: …`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PkgError(pub String);

impl fmt::Display for PkgError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for PkgError {}

fn error<T>(message: impl Into<String>) -> Result<T, PkgError> {
    Err(PkgError(message.into()))
}

/// A semantic version `X.Y.Z` (ordered by major, minor, patch).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Version {
    pub major: u64,
    pub minor: u64,
    pub patch: u64,
}

impl Version {
    /// Parses `X.Y.Z` (three decimal numbers).
    pub fn parse(text: &str) -> Option<Version> {
        let mut parts = text.split('.');
        let mut next = || parts.next().and_then(|p| p.parse::<u64>().ok());
        let v = Version {
            major: next()?,
            minor: next()?,
            patch: next()?,
        };
        if text.split('.').count() != 3 {
            return None;
        }
        Some(v)
    }

    /// Parses a git tag `vX.Y.Z`.
    pub fn from_tag(tag: &str) -> Option<Version> {
        Version::parse(tag.strip_prefix('v')?)
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)
    }
}

/// One line of the `require` block.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Requirement {
    /// The package path, e.g. `github.com/user/repo` or `…/repo@2`.
    pub path: String,
    /// The minimum version.
    pub version: Version,
    /// The commit the version's tag pointed to when it was added (`#HASH`).
    pub commit: Option<String>,
}

/// A `futhark.pkg` manifest.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Manifest {
    /// The `package` line: this project's own package path.
    pub package: Option<String>,
    /// The `require` block, in file order.
    pub requires: Vec<Requirement>,
}

impl Manifest {
    /// Parses a manifest. Comments start with `--`. Errors name the line.
    pub fn parse(text: &str) -> Result<Manifest, PkgError> {
        let mut m = Manifest::default();
        let mut in_require = false;
        let mut seen_require = false;
        for (i, raw) in text.lines().enumerate() {
            let line = raw.split("--").next().unwrap_or("").trim();
            let at = |msg: String| PkgError(format!("{MANIFEST}:{}: {msg}", i + 1));
            if line.is_empty() {
                continue;
            }
            let words: Vec<&str> = line.split_whitespace().collect();
            if in_require {
                if words == ["}"] {
                    in_require = false;
                    continue;
                }
                let (path, version, commit) = match words.as_slice() {
                    [p, v] => (*p, *v, None),
                    [p, v, c] => match c.strip_prefix('#') {
                        Some(h) if !h.is_empty() => (*p, *v, Some(h.to_string())),
                        _ => return Err(at(format!("expected `#COMMIT`, found `{c}`"))),
                    },
                    _ => return Err(at(format!("expected `PATH X.Y.Z #COMMIT`, found `{line}`"))),
                };
                let version = Version::parse(version)
                    .ok_or_else(|| at(format!("`{version}` is not a version X.Y.Z")))?;
                check_path(path).map_err(|e| at(e.0))?;
                m.requires.push(Requirement {
                    path: path.to_string(),
                    version,
                    commit,
                });
                continue;
            }
            match words.as_slice() {
                ["package", p] if m.package.is_none() && !seen_require => {
                    check_path(p).map_err(|e| at(e.0))?;
                    m.package = Some(p.to_string());
                }
                ["require", "{"] if !seen_require => {
                    in_require = true;
                    seen_require = true;
                }
                ["require", "{", "}"] if !seen_require => seen_require = true,
                _ => return Err(at(format!("unexpected `{line}`"))),
            }
        }
        if in_require {
            return error(format!("{MANIFEST}: the `require` block is not closed"));
        }
        Ok(m)
    }

    /// The manifest's text, in the layout `futhark pkg` writes.
    pub fn render(&self) -> String {
        let mut out = String::new();
        if let Some(p) = &self.package {
            out.push_str(&format!("package {p}\n\n"));
        }
        out.push_str("require {\n");
        for r in &self.requires {
            out.push_str(&format!("  {} {}", r.path, r.version));
            if let Some(c) = &r.commit {
                out.push_str(&format!(" #{c}"));
            }
            out.push('\n');
        }
        out.push_str("}\n");
        out
    }

    fn read(dir: &Path) -> Result<Manifest, PkgError> {
        let file = dir.join(MANIFEST);
        let text = std::fs::read_to_string(&file).map_err(|e| {
            PkgError(format!(
                "cannot read {}: {e} (run `nabla pkg init` first?)",
                file.display()
            ))
        })?;
        Manifest::parse(&text)
    }

    fn write(&self, dir: &Path) -> Result<(), PkgError> {
        let file = dir.join(MANIFEST);
        std::fs::write(&file, self.render())
            .map_err(|e| PkgError(format!("cannot write {}: {e}", file.display())))
    }
}

/// Checks that `path` looks like a package path: `host/…` made of safe
/// characters, no `..`, an optional `@N` major-version suffix (N ≥ 2).
fn check_path(path: &str) -> Result<(), PkgError> {
    let (base, major) = split_major(path)?;
    let ok_chars = base
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_' | '/' | '~'));
    let parts: Vec<&str> = base.split('/').collect();
    if !ok_chars
        || parts.len() < 2
        || parts
            .iter()
            .any(|p| p.is_empty() || *p == "." || *p == "..")
        || !parts[0].contains('.')
    {
        return error(format!(
            "`{path}` is not a package path (expected e.g. github.com/user/repo)"
        ));
    }
    if major == Some(0) || major == Some(1) {
        return error(format!(
            "`{path}`: major versions 0 and 1 take no `@` suffix"
        ));
    }
    Ok(())
}

/// `github.com/u/r@2` → (`github.com/u/r`, Some(2)).
fn split_major(path: &str) -> Result<(&str, Option<u64>), PkgError> {
    match path.rsplit_once('@') {
        None => Ok((path, None)),
        Some((base, n)) => match n.parse::<u64>() {
            Ok(n) => Ok((base, Some(n))),
            Err(_) => error(format!("`{path}`: expected a major version after `@`")),
        },
    }
}

/// Whether `v` is a version that package path `path` may take: major
/// `N` for `…@N`, else 0 or 1.
fn major_allowed(path: &str, v: Version) -> bool {
    match split_major(path) {
        Ok((_, Some(n))) => v.major == n,
        Ok((_, None)) => v.major <= 1,
        Err(_) => false,
    }
}

/// The package's directory in `lib/` (its path without the `@N` suffix).
fn lib_dir_of(path: &str) -> &str {
    split_major(path).map(|(b, _)| b).unwrap_or(path)
}

fn git(args: &[&str], dir: Option<&Path>) -> Result<String, PkgError> {
    let mut cmd = Command::new("git");
    if let Some(d) = dir {
        cmd.arg("-C").arg(d);
    }
    cmd.args(args);
    // Never prompt for credentials: fail instead.
    cmd.env("GIT_TERMINAL_PROMPT", "0");
    let out = cmd
        .output()
        .map_err(|e| PkgError(format!("cannot run git: {e}")))?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        return error(format!(
            "git {} failed: {}",
            args.join(" "),
            err.trim().lines().last().unwrap_or("")
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Clones repositories (once each, into a scratch directory removed on
/// drop) and answers questions about their versions.
struct Fetcher {
    scratch: PathBuf,
    clones: BTreeMap<String, PathBuf>,
}

impl Fetcher {
    fn new() -> Result<Fetcher, PkgError> {
        static COUNTER: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = COUNTER.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let scratch = std::env::temp_dir().join(format!("nabla-pkg-{}-{n}", std::process::id()));
        std::fs::create_dir_all(&scratch)
            .map_err(|e| PkgError(format!("cannot create {}: {e}", scratch.display())))?;
        Ok(Fetcher {
            scratch,
            clones: BTreeMap::new(),
        })
    }

    /// The local clone of the package's repository.
    fn clone_of(&mut self, path: &str) -> Result<PathBuf, PkgError> {
        let base = lib_dir_of(path).to_string();
        if let Some(d) = self.clones.get(&base) {
            return Ok(d.clone());
        }
        let dir = self.scratch.join(format!("repo{}", self.clones.len()));
        let url = format!("https://{base}");
        eprintln!("Fetching {url}");
        let dir_text = dir.to_string_lossy().into_owned();
        git(
            &["clone", "--quiet", "--no-checkout", &url, &dir_text],
            None,
        )
        .map_err(|e| PkgError(format!("cannot fetch {path}: {e}")))?;
        self.clones.insert(base, dir.clone());
        Ok(dir)
    }

    /// Every version (tag `vX.Y.Z`) the package may take, with its commit,
    /// oldest first.
    fn versions(&mut self, path: &str) -> Result<Vec<(Version, String)>, PkgError> {
        let dir = self.clone_of(path)?;
        let tags = git(&["tag", "--list", "v*"], Some(&dir))?;
        let mut out = Vec::new();
        for tag in tags.lines().map(str::trim) {
            let Some(v) = Version::from_tag(tag) else {
                continue;
            };
            if !major_allowed(path, v) {
                continue;
            }
            let commit = git(&["rev-list", "-n", "1", tag], Some(&dir))?
                .trim()
                .to_string();
            out.push((v, commit));
        }
        out.sort();
        Ok(out)
    }

    /// The commit of version `v` of the package.
    fn commit_of(&mut self, path: &str, v: Version) -> Result<String, PkgError> {
        self.versions(path)?
            .into_iter()
            .find(|(w, _)| *w == v)
            .map(|(_, c)| c)
            .ok_or_else(|| PkgError(format!("{path} has no version {v} (no tag v{v})")))
    }

    /// The newest version the package may take.
    fn newest(&mut self, path: &str) -> Result<(Version, String), PkgError> {
        self.versions(path)?.pop().ok_or_else(|| {
            PkgError(format!(
                "{path} has no versions (tags vX.Y.Z{})",
                match split_major(path) {
                    Ok((_, Some(n))) => format!(" with major version {n}"),
                    _ => " with major version 0 or 1".to_string(),
                }
            ))
        })
    }

    /// The package's own manifest at `commit` (none: no dependencies).
    fn manifest_at(&mut self, path: &str, commit: &str) -> Result<Manifest, PkgError> {
        let dir = self.clone_of(path)?;
        let spec = format!("{commit}:{MANIFEST}");
        match git(&["show", &spec], Some(&dir)) {
            Ok(text) => {
                Manifest::parse(&text).map_err(|e| PkgError(format!("{path} at {commit}: {e}")))
            }
            Err(_) => Ok(Manifest::default()),
        }
    }

    /// Writes the package's `lib/<path>/` at `commit` into `dest`.
    fn export(&mut self, path: &str, commit: &str, dest: &Path) -> Result<(), PkgError> {
        let dir = self.clone_of(path)?;
        let sub = format!("lib/{}", lib_dir_of(path));
        let listing = git(
            &["ls-tree", "-r", "--name-only", commit, "--", &sub],
            Some(&dir),
        )?;
        let files: Vec<&str> = listing.lines().filter(|l| !l.is_empty()).collect();
        if files.is_empty() {
            return error(format!(
                "{path} at {commit} has no directory {sub}/ (a package keeps its files there)"
            ));
        }
        for f in files {
            let rel = &f[sub.len()..].trim_start_matches('/');
            let target = dest.join(rel);
            if let Some(parent) = target.parent() {
                std::fs::create_dir_all(parent)
                    .map_err(|e| PkgError(format!("cannot create {}: {e}", parent.display())))?;
            }
            let out = Command::new("git")
                .arg("-C")
                .arg(&dir)
                .args(["show", &format!("{commit}:{f}")])
                .output()
                .map_err(|e| PkgError(format!("cannot run git: {e}")))?;
            if !out.status.success() {
                return error(format!("cannot read {f} of {path} at {commit}"));
            }
            std::fs::write(&target, out.stdout)
                .map_err(|e| PkgError(format!("cannot write {}: {e}", target.display())))?;
        }
        Ok(())
    }
}

impl Drop for Fetcher {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.scratch);
    }
}

/// `nabla pkg init PATH`: writes a manifest with `package PATH` and an
/// empty `require` block, and creates `lib/PATH/`. Fails if a manifest
/// exists.
pub fn init(dir: &Path, package: &str) -> Result<String, PkgError> {
    check_path(package)?;
    if dir.join(MANIFEST).exists() {
        return error(format!("{} already exists", dir.join(MANIFEST).display()));
    }
    let m = Manifest {
        package: Some(package.to_string()),
        requires: vec![],
    };
    m.write(dir)?;
    let lib = dir.join("lib").join(lib_dir_of(package));
    std::fs::create_dir_all(&lib)
        .map_err(|e| PkgError(format!("cannot create {}: {e}", lib.display())))?;
    Ok(format!(
        "Created {MANIFEST} and {}/",
        Path::new("lib").join(lib_dir_of(package)).display()
    ))
}

/// `nabla pkg add PATH [X.Y.Z]`: requires the package at that version (the
/// newest allowed one if none is given), recording the tag's commit.
/// Replaces an existing requirement of the same package.
pub fn add(dir: &Path, path: &str, version: Option<&str>) -> Result<String, PkgError> {
    check_path(path)?;
    let mut m = Manifest::read(dir)?;
    let mut fetch = Fetcher::new()?;
    let (v, commit) = match version {
        Some(text) => {
            let v = Version::parse(text)
                .ok_or_else(|| PkgError(format!("`{text}` is not a version X.Y.Z")))?;
            if !major_allowed(path, v) {
                return error(format!(
                    "version {v} does not fit {path} (major versions 2 and above are written PATH@N)"
                ));
            }
            (v, fetch.commit_of(path, v)?)
        }
        None => fetch.newest(path)?,
    };
    let req = Requirement {
        path: path.to_string(),
        version: v,
        commit: Some(commit),
    };
    let message = match m.requires.iter_mut().find(|r| r.path == path) {
        Some(old) => {
            let msg = format!("Replaced {path} {} by {v}.", old.version);
            *old = req;
            msg
        }
        None => {
            m.requires.push(req);
            format!("Added {path} {v}.")
        }
    };
    m.write(dir)?;
    Ok(format!("{message}\nRemember to run `nabla pkg sync`."))
}

/// `nabla pkg remove PATH`: drops the package's requirement.
pub fn remove(dir: &Path, path: &str) -> Result<String, PkgError> {
    let mut m = Manifest::read(dir)?;
    let before = m.requires.len();
    m.requires.retain(|r| r.path != path);
    if m.requires.len() == before {
        return error(format!("{path} is not required in {MANIFEST}"));
    }
    m.write(dir)?;
    Ok(format!("Removed {path}."))
}

/// `nabla pkg upgrade`: every requirement to the newest version of its
/// major version.
pub fn upgrade(dir: &Path) -> Result<String, PkgError> {
    let mut m = Manifest::read(dir)?;
    let mut fetch = Fetcher::new()?;
    let mut lines = Vec::new();
    for r in &mut m.requires {
        let (v, commit) = fetch.newest(&r.path)?;
        if v != r.version || r.commit.as_deref() != Some(commit.as_str()) {
            lines.push(format!("Upgraded {} {} => {v}.", r.path, r.version));
            r.version = v;
            r.commit = Some(commit);
        }
    }
    m.write(dir)?;
    if lines.is_empty() {
        lines.push("Everything is up to date.".into());
    }
    Ok(lines.join("\n"))
}

/// The build list by minimal version selection: each package reachable
/// from the root's requirements at the highest minimum version required
/// of it, with the commit of that version. A root requirement whose
/// recorded commit differs from its tag's is an error (the tag moved).
pub fn solve(root: &Manifest) -> Result<BTreeMap<String, (Version, String)>, PkgError> {
    let mut fetch = Fetcher::new()?;
    solve_with(root, &mut fetch)
}

fn solve_with(
    root: &Manifest,
    fetch: &mut Fetcher,
) -> Result<BTreeMap<String, (Version, String)>, PkgError> {
    let mut chosen: BTreeMap<String, (Version, String)> = BTreeMap::new();
    let mut visited: std::collections::BTreeSet<(String, Version)> = Default::default();
    let mut work: Vec<(Requirement, bool)> =
        root.requires.iter().cloned().map(|r| (r, true)).collect();
    while let Some((req, from_root)) = work.pop() {
        if !major_allowed(&req.path, req.version) {
            return error(format!(
                "{} {}: the version does not fit the path's major version",
                req.path, req.version
            ));
        }
        let commit = fetch.commit_of(&req.path, req.version)?;
        if from_root {
            if let Some(recorded) = &req.commit {
                if *recorded != commit {
                    return error(format!(
                        "{} {}: {MANIFEST} records commit {recorded}, but tag v{} is now {commit}",
                        req.path, req.version, req.version
                    ));
                }
            }
        }
        if !visited.insert((req.path.clone(), req.version)) {
            continue;
        }
        let newer = match chosen.get(&req.path) {
            Some((v, _)) => req.version > *v,
            None => true,
        };
        if newer {
            chosen.insert(req.path.clone(), (req.version, commit.clone()));
        }
        let deps = fetch.manifest_at(&req.path, &commit)?;
        for d in deps.requires {
            work.push((d, false));
        }
    }
    Ok(chosen)
}

/// `nabla pkg sync`: makes `lib/` hold exactly the build list's packages
/// (see the module docs), and the project's own package directory.
pub fn sync(dir: &Path) -> Result<String, PkgError> {
    let m = Manifest::read(dir)?;
    let mut fetch = Fetcher::new()?;
    let chosen = solve_with(&m, &mut fetch)?;
    let lib = dir.join("lib");
    let new = dir.join("lib~new");
    let old = dir.join("lib~old");
    let io = |what: &str, p: &Path, e: std::io::Error| {
        PkgError(format!("cannot {what} {}: {e}", p.display()))
    };
    if new.exists() {
        std::fs::remove_dir_all(&new).map_err(|e| io("remove", &new, e))?;
    }
    std::fs::create_dir_all(&new).map_err(|e| io("create", &new, e))?;
    let mut lines = Vec::new();
    for (path, (v, commit)) in &chosen {
        let dest = new.join(lib_dir_of(path));
        fetch.export(path, commit, &dest)?;
        lines.push(format!("{path} {v}"));
    }
    // The project's own package directory survives the swap.
    if let Some(own) = &m.package {
        let src = lib.join(lib_dir_of(own));
        if src.is_dir() {
            let dest = new.join(lib_dir_of(own));
            copy_dir(&src, &dest)?;
        }
    }
    if old.exists() {
        std::fs::remove_dir_all(&old).map_err(|e| io("remove", &old, e))?;
    }
    if lib.exists() {
        std::fs::rename(&lib, &old).map_err(|e| io("move", &lib, e))?;
    }
    std::fs::rename(&new, &lib).map_err(|e| io("move", &new, e))?;
    if old.exists() {
        std::fs::remove_dir_all(&old).map_err(|e| io("remove", &old, e))?;
    }
    if lines.is_empty() {
        Ok("No packages required.".into())
    } else {
        Ok(format!("Synchronised:\n  {}", lines.join("\n  ")))
    }
}

fn copy_dir(src: &Path, dest: &Path) -> Result<(), PkgError> {
    std::fs::create_dir_all(dest)
        .map_err(|e| PkgError(format!("cannot create {}: {e}", dest.display())))?;
    let entries = std::fs::read_dir(src)
        .map_err(|e| PkgError(format!("cannot read {}: {e}", src.display())))?;
    for entry in entries {
        let entry = entry.map_err(|e| PkgError(format!("cannot read {}: {e}", src.display())))?;
        let from = entry.path();
        let to = dest.join(entry.file_name());
        if from.is_dir() {
            copy_dir(&from, &to)?;
        } else {
            std::fs::copy(&from, &to)
                .map_err(|e| PkgError(format!("cannot copy {}: {e}", from.display())))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn manifest_round_trip() {
        let text = "package github.com/me/proj\n\nrequire {\n  github.com/a/b 1.2.3 #abc123\n  github.com/c/d@2 2.0.0 #def\n}\n";
        let m = Manifest::parse(text).unwrap();
        assert_eq!(m.package.as_deref(), Some("github.com/me/proj"));
        assert_eq!(m.requires.len(), 2);
        assert_eq!(
            m.requires[1].version,
            Version {
                major: 2,
                minor: 0,
                patch: 0
            }
        );
        assert_eq!(m.render(), text);
    }

    #[test]
    fn manifest_errors_name_the_line() {
        let e = Manifest::parse("require {\n  github.com/a/b 1.2 #x\n}\n").unwrap_err();
        assert!(e.0.contains("futhark.pkg:2") && e.0.contains("1.2"), "{e}");
        let e = Manifest::parse("require {\n").unwrap_err();
        assert!(e.0.contains("not closed"), "{e}");
        let e = Manifest::parse("package ../evil\n").unwrap_err();
        assert!(e.0.contains("not a package path"), "{e}");
    }

    #[test]
    fn versions_and_majors() {
        let v = |s| Version::parse(s).unwrap();
        assert!(v("1.10.0") > v("1.9.9"));
        assert_eq!(Version::from_tag("v0.4.1"), Some(v("0.4.1")));
        assert_eq!(Version::from_tag("0.4.1"), None);
        assert_eq!(Version::parse("1.2.3.4"), None);
        assert!(major_allowed("github.com/a/b", v("1.0.0")));
        assert!(!major_allowed("github.com/a/b", v("2.0.0")));
        assert!(major_allowed("github.com/a/b@2", v("2.3.0")));
        assert_eq!(lib_dir_of("github.com/a/b@2"), "github.com/a/b");
    }
}
