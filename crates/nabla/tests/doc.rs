//! `nabla doc DIR -o OUTDIR` on a small package: pages name the public
//! definitions with their heads and include their rendered doc comments.

use std::process::Command;

#[test]
fn documents_a_small_package() {
    let dir = std::env::temp_dir().join(format!("nabla-doc-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let pkg = dir.join("pkg");
    std::fs::create_dir_all(pkg.join("sub")).unwrap();
    std::fs::write(
        pkg.join("vec.fut"),
        "-- | Small vectors.\n\n\
         -- | A point in the *plane*.\n\
         type point = {x: f64, y: f64}\n\n\
         -- | Adds two points.\n\
         -- Componentwise, with `+`.\n\
         def add (a: point) (b: point) : point = {x = a.x + b.x, y = a.y + b.y}\n\n\
         -- | Not shown.\n\
         local def secret = 1i32\n\n\
         -- | Things with a size.\n\
         module type sized = {\n  type t\n  val size : t -> i64\n}\n\n\
         -- | Sizes of points.\n\
         module points = {\n  type t = point\n  -- | Always two.\n  def size (_: t) = 2i64\n}\n",
    )
    .unwrap();
    std::fs::write(pkg.join("sub/tests.fut"), "-- | ignore\n\ndef main = 0\n").unwrap();
    std::fs::write(
        pkg.join("sub/util.fut"),
        "def twice 'a (f: a -> a) (x: a) = f (f x)\n",
    )
    .unwrap();
    let out = dir.join("out");
    let o = Command::new(env!("CARGO_BIN_EXE_nabla"))
        .arg("doc")
        .arg(&pkg)
        .arg("-o")
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let index = std::fs::read_to_string(out.join("index.html")).unwrap();
    assert!(index.contains("href=\"vec.html\""), "{index}");
    assert!(index.contains("href=\"sub/util.html\""), "{index}");
    assert!(index.contains("Small vectors."), "{index}");
    assert!(!index.contains("tests"), "ignored file listed: {index}");
    assert!(!out.join("sub/tests.html").exists());
    let vec = std::fs::read_to_string(out.join("vec.html")).unwrap();
    for want in [
        "type point = {x: f64, y: f64}",
        "A point in the <em>plane</em>.",
        "def add (a: point) (b: point) : point",
        "Adds two points.\nComponentwise, with <code>+</code>.",
        "module type sized",
        "val size : t -&gt; i64",
        "module points",
        "id=\"points.size\"",
        "Always two.",
    ] {
        assert!(vec.contains(want), "missing {want:?} in:\n{vec}");
    }
    assert!(!vec.contains("secret"), "{vec}");
    let util = std::fs::read_to_string(out.join("sub/util.html")).unwrap();
    assert!(
        util.contains("def twice 'a (f: a -&gt; a) (x: a)"),
        "{util}"
    );
    assert!(util.contains("href=\"../index.html\""), "{util}");
    // A package with a file that does not parse: an error, the rest documented.
    std::fs::write(pkg.join("bad.fut"), "def = 1\n").unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_nabla"))
        .arg("doc")
        .arg(&pkg)
        .arg("-o")
        .arg(&out)
        .output()
        .unwrap();
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("bad.fut:1:"));
    std::fs::remove_dir_all(&dir).ok();
}

/// Runs `nabla doc PKG -o OUT`.
fn doc(pkg: &std::path::Path, out: &std::path::Path) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_nabla"))
        .arg("doc")
        .arg(pkg)
        .arg("-o")
        .arg(out)
        .output()
        .unwrap()
}

#[test]
fn type_errors_are_reported_as_futhark_doc_does() {
    // Futhark's `futhark doc` type-checks the package; so does `nabla doc`:
    // a type error in a file (here one that is also imported, and one in a
    // file left out with `ignore`) is reported with its location and the
    // status is 1, and the documentation is written all the same.
    let dir = std::env::temp_dir().join(format!("nabla-doc-types-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let pkg = dir.join("pkg");
    std::fs::create_dir_all(&pkg).unwrap();
    std::fs::write(
        pkg.join("a.fut"),
        "module b = import \"b\"\n\n-- | Twice b's one.\ndef two = b.one + b.one\n",
    )
    .unwrap();
    std::fs::write(pkg.join("b.fut"), "-- | One.\ndef one : i32 = 1\n").unwrap();
    let out = dir.join("out");
    let o = doc(&pkg, &out);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));

    std::fs::write(pkg.join("b.fut"), "-- | One.\ndef one : i32 = true\n").unwrap();
    std::fs::write(
        pkg.join("tests.fut"),
        "-- | ignore\n\ndef main (x: i32) : bool = x\n",
    )
    .unwrap();
    let o = doc(&pkg, &out);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("b.fut:2:"), "{stderr}");
    assert!(stderr.contains("tests.fut:3:"), "{stderr}");
    // b.fut's error is reported once, though a.fut imports it.
    assert_eq!(stderr.matches("b.fut:2:").count(), 1, "{stderr}");
    let b = std::fs::read_to_string(out.join("b.html")).unwrap();
    assert!(b.contains("def one : i32"), "{b}");
    std::fs::remove_dir_all(&dir).ok();
}
