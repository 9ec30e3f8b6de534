//! Locating and compiling the eval programs (`gradbench/<eval>.fut`).
//!
//! Search order for the directory holding them: the environment variable
//! `NABLA_GRADBENCH_DIR`; a `gradbench/` folder in an ancestor of the
//! executable's directory (the repository, for `target/*/nabla`); the
//! compile-time `CARGO_MANIFEST_DIR/../../gradbench`; and finally copies
//! embedded in the binary (`include_str!`), written to a temporary folder.

use crate::driver::{compile_with, CompileOptions, Compiled};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// Every program file, embedded in the binary: `(file name, source)`.
/// Besides one file per eval, `argmin.fut` holds the solver that
/// `particle.fut` and `saddle.fut` import.
pub const EMBEDDED: &[(&str, &str)] = &[
    (
        "argmin.fut",
        include_str!("../../../../gradbench/argmin.fut"),
    ),
    ("hello.fut", include_str!("../../../../gradbench/hello.fut")),
    ("llsq.fut", include_str!("../../../../gradbench/llsq.fut")),
    ("lse.fut", include_str!("../../../../gradbench/lse.fut")),
    ("det.fut", include_str!("../../../../gradbench/det.fut")),
    ("ode.fut", include_str!("../../../../gradbench/ode.fut")),
    ("gmm.fut", include_str!("../../../../gradbench/gmm.fut")),
    (
        "kmeans.fut",
        include_str!("../../../../gradbench/kmeans.fut"),
    ),
    ("lstm.fut", include_str!("../../../../gradbench/lstm.fut")),
    ("ba.fut", include_str!("../../../../gradbench/ba.fut")),
    ("ht.fut", include_str!("../../../../gradbench/ht.fut")),
    (
        "particle.fut",
        include_str!("../../../../gradbench/particle.fut"),
    ),
    (
        "saddle.fut",
        include_str!("../../../../gradbench/saddle.fut"),
    ),
];

/// Whether `dir` holds every program file.
fn complete(dir: &Path) -> bool {
    EMBEDDED.iter().all(|(name, _)| dir.join(name).is_file())
}

/// The directory of the eval programs on disk, if one is found (see the
/// module docs for the search order).
pub fn find_program_dir() -> Option<PathBuf> {
    if let Some(d) = std::env::var_os("NABLA_GRADBENCH_DIR") {
        let d = PathBuf::from(d);
        if complete(&d) {
            return Some(d);
        }
    }
    if let Ok(exe) = std::env::current_exe() {
        for anc in exe.ancestors().skip(1) {
            let d = anc.join("gradbench");
            if complete(&d) {
                return Some(d);
            }
        }
    }
    let d = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../gradbench");
    complete(&d).then_some(d)
}

/// The eval programs, compiled on first use and cached.
pub struct Programs {
    dir: Option<PathBuf>,
    /// A temporary folder holding the embedded copies (removed on drop).
    temp: Option<PathBuf>,
    cache: HashMap<String, Compiled>,
    /// How the programs are compiled (the default pipeline unless set).
    options: CompileOptions,
}

impl Default for Programs {
    fn default() -> Self {
        Programs::new()
    }
}

impl Programs {
    /// Programs from the directory found by [`find_program_dir`], else
    /// from the embedded copies.
    pub fn new() -> Programs {
        Programs {
            dir: find_program_dir(),
            temp: None,
            cache: HashMap::new(),
            options: CompileOptions::default(),
        }
    }

    /// The same programs, compiled with `options` (e.g. static AD).
    pub fn compiled_with(mut self, options: CompileOptions) -> Programs {
        self.options = options;
        self.cache.clear();
        self
    }

    /// Programs from the embedded copies only.
    pub fn embedded() -> Programs {
        Programs {
            dir: None,
            temp: None,
            cache: HashMap::new(),
            options: CompileOptions::default(),
        }
    }

    /// The directory the programs are read from (writing the embedded
    /// copies to a temporary folder when no directory was found).
    fn dir(&mut self) -> Result<PathBuf, String> {
        if let Some(d) = &self.dir {
            return Ok(d.clone());
        }
        let d = std::env::temp_dir().join(format!(
            "nabla-gradbench-{}-{}",
            std::process::id(),
            unique()
        ));
        std::fs::create_dir_all(&d).map_err(|e| format!("cannot create {}: {e}", d.display()))?;
        for (name, src) in EMBEDDED {
            std::fs::write(d.join(name), src)
                .map_err(|e| format!("cannot write {}: {e}", d.join(name).display()))?;
        }
        self.temp = Some(d.clone());
        self.dir = Some(d.clone());
        Ok(d)
    }

    /// The compiled program of eval `module` (compiling it on first use).
    /// Errors: no such eval, or its program does not compile.
    pub fn get(&mut self, module: &str) -> Result<&Compiled, String> {
        if !crate::gradbench::EVALS.contains(&module) {
            return Err(format!("unknown module {module:?}"));
        }
        if !self.cache.contains_key(module) {
            let path = self.dir()?.join(format!("{module}.fut"));
            let c = compile_with(&path, &self.options)
                .map_err(|e| format!("cannot compile {}: {}", path.display(), e.summary))?;
            self.cache.insert(module.to_string(), c);
        }
        Ok(&self.cache[module])
    }
}

impl Drop for Programs {
    fn drop(&mut self) {
        if let Some(t) = &self.temp {
            let _ = std::fs::remove_dir_all(t);
        }
    }
}

/// A per-process counter, so that two embedded copies never share a folder.
pub(crate) fn unique() -> usize {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static N: AtomicUsize = AtomicUsize::new(0);
    N.fetch_add(1, Ordering::Relaxed)
}
