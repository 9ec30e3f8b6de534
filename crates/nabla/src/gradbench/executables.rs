//! The eval programs as executables (`nabla gradbench`'s default backend):
//! each program is compiled to C as `nabla c` does, and the C to an
//! executable kept in a cache folder, so that a later session does not run
//! the C compiler again.
//!
//! Cache folder: `$NABLA_CACHE_DIR`, else `$XDG_CACHE_HOME/nabla`, else
//! `$HOME/.cache/nabla`; the executables lie in its `gradbench/` folder as
//! `<eval>-<key>` (with the C file beside, `<eval>-<key>.c`). The key is a
//! 128-bit FNV-1a hash of nabla's version, the C compiler (`$CC`) and its
//! flags (`$CFLAGS`), and the generated C text — which already reflects the
//! program's sources with their imports, the pipeline and the runtime
//! (`runtime.c` is part of it), so two different programs or compilers
//! never share a key. The front end still runs at every `define`; only the
//! C compiler (the slow part) is saved.
//!
//! An executable is written under a temporary name and renamed into place,
//! so that concurrent sessions never see a half-written one.

use crate::cbackend::{c_source, Executable};
use crate::driver::Compiled;
use std::path::{Path, PathBuf};

/// The environment variable that names the cache folder.
pub const CACHE_DIR_VAR: &str = "NABLA_CACHE_DIR";

/// The cache folder (see the module docs for the search order). Errors:
/// none of the variables is set.
pub fn cache_dir() -> Result<PathBuf, String> {
    let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
    if let Some(d) = var(CACHE_DIR_VAR) {
        return Ok(PathBuf::from(d));
    }
    if let Some(d) = var("XDG_CACHE_HOME") {
        return Ok(PathBuf::from(d).join("nabla"));
    }
    if let Some(d) = var("HOME") {
        return Ok(PathBuf::from(d).join(".cache").join("nabla"));
    }
    Err(format!(
        "no cache folder for the executables: set {CACHE_DIR_VAR}, XDG_CACHE_HOME or HOME"
    ))
}

/// 128-bit FNV-1a over `parts`, each followed by a 0xff separator byte
/// (which cannot occur in UTF-8 text, so the parts cannot run together).
fn fnv1a_128(parts: &[&[u8]]) -> u128 {
    const OFFSET: u128 = 0x6c62272e07bb014262b821756295c58d;
    const PRIME: u128 = 0x0000000001000000000000000000013b;
    let mut h = OFFSET;
    for part in parts {
        for &b in part.iter().chain(std::iter::once(&0xffu8)) {
            h ^= b as u128;
            h = h.wrapping_mul(PRIME);
        }
    }
    h
}

/// The cache key of a C program: see the module docs.
pub fn cache_key(c_text: &str) -> String {
    let env = |name: &str| std::env::var(name).unwrap_or_default();
    let cc = env("CC");
    let cflags = std::env::var("CFLAGS").unwrap_or_else(|_| nabla_cgen::DEFAULT_CFLAGS.into());
    let h = fnv1a_128(&[
        env!("CARGO_PKG_VERSION").as_bytes(),
        cc.as_bytes(),
        cflags.as_bytes(),
        c_text.as_bytes(),
    ]);
    format!("{h:032x}")
}

/// An eval's executable.
#[derive(Clone, Debug)]
pub struct CachedExecutable {
    /// The executable (its time limit is set per run by the caller).
    pub executable: Executable,
    /// Whether it was found in the cache (`false`: it was just compiled).
    pub from_cache: bool,
}

/// The executable of eval `module`'s compiled program, from the cache
/// folder `cache` or compiled into it. Every entry in `needed` must be
/// supported by the C backend. Errors: an entry the backend cannot compile,
/// a C compiler failure, or a cache folder that cannot be written.
pub fn executable(
    compiled: &Compiled,
    module: &str,
    needed: &[String],
    cache: &Path,
) -> Result<CachedExecutable, String> {
    let prog = c_source(compiled).map_err(|e| format!("cannot compile {module} to C: {e}"))?;
    for (name, why) in &prog.unsupported_entries {
        if needed.contains(name) {
            return Err(format!(
                "the C backend cannot compile entry point {name} of {module}: {why} (`nabla gradbench --backend=interp` runs it in the interpreter)"
            ));
        }
    }
    let dir = cache.join("gradbench");
    let exe = dir.join(format!("{module}-{}", cache_key(&prog.source)));
    if exe.is_file() {
        return Ok(CachedExecutable {
            executable: Executable::new(exe),
            from_cache: true,
        });
    }
    std::fs::create_dir_all(&dir)
        .map_err(|e| format!("cannot create the cache folder {}: {e}", dir.display()))?;
    let temp = dir.join(format!(
        ".{module}-{}-{}.tmp",
        std::process::id(),
        super::programs::unique()
    ));
    let temp_c = temp.with_extension("c");
    let result = (|| {
        std::fs::write(&temp_c, &prog.source)
            .map_err(|e| format!("cannot write {}: {e}", temp_c.display()))?;
        nabla_cgen::compile_c_for(&temp_c, &temp, compiled.target).map_err(|e| e.to_string())?;
        std::fs::rename(&temp_c, exe.with_extension("c"))
            .map_err(|e| format!("cannot write {}: {e}", exe.with_extension("c").display()))?;
        std::fs::rename(&temp, &exe).map_err(|e| format!("cannot write {}: {e}", exe.display()))
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&temp);
        let _ = std::fs::remove_file(&temp_c);
    }
    result?;
    Ok(CachedExecutable {
        executable: Executable::new(exe),
        from_cache: false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_key_depends_on_every_part() {
        assert_ne!(fnv1a_128(&[b"ab", b"c"]), fnv1a_128(&[b"a", b"bc"]));
        assert_ne!(fnv1a_128(&[b"x"]), fnv1a_128(&[b"y"]));
        assert_eq!(fnv1a_128(&[b"x"]), fnv1a_128(&[b"x"]));
        assert_ne!(cache_key("int main;"), cache_key("int main; "));
        assert_eq!(cache_key("int main;").len(), 32);
    }
}
