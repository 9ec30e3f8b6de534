//! The run-time choice between a parallel level's two copies
//! (`nb_level_start`, `nb_level_end` in `multicore_prelude.c`), driven
//! with made-up times: the prelude compiled with a `main` that tells each
//! timed execution how long it took (by moving its start time back), so
//! the choice is deterministic. Needs `cc` (or `$CC`) with OpenMP.

use std::process::Command;

const PRELUDE_C: &str = include_str!("../src/multicore_prelude.c");

/// Runs five eligible executions of one level whose parallel copy takes
/// `parallel_ns` and sequential copy `sequential_ns` per execution (of
/// 1000 rows), with `--parallel-from` set to `parallel_from`. Returns,
/// per execution, which copy ran and whether it was timed (`P`/`S`,
/// lower case when untimed), then the choice.
fn choices(parallel_ns: i64, sequential_ns: i64, parallel_from: i64) -> String {
    let main = format!(
        r#"
int main(void) {{
  nb_level level = {{0}};
  nb_parallel_from = {parallel_from};
  for (int i = 0; i < 5; i++) {{
    int parallel = 1;
    int64_t start = nb_level_start(&level, &parallel);
    putchar(start ? (parallel ? 'P' : 'S') : (parallel ? 'p' : 's'));
    if (start) nb_level_end(&level, parallel, start - (parallel ? {parallel_ns} : {sequential_ns}), 1000);
  }}
  printf(" %d\n", level.parallel);
  return 0;
}}
"#
    );
    let dir = std::env::temp_dir().join(format!(
        "nabla-level-choice-{}-{parallel_ns}-{sequential_ns}-{parallel_from}",
        std::process::id()
    ));
    std::fs::create_dir_all(&dir).expect("a directory");
    let c = dir.join("choice.c");
    std::fs::write(&c, format!("{PRELUDE_C}{main}")).expect("write the C file");
    let exe = dir.join("choice");
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".to_string());
    let status = Command::new(&cc)
        .args(["-fopenmp", "-O1"])
        .arg(&c)
        .arg("-o")
        .arg(&exe)
        .status()
        .expect("run the C compiler");
    assert!(status.success(), "{cc} failed on {}", c.display());
    let out = Command::new(&exe).output().expect("run the test");
    let _ = std::fs::remove_dir_all(&dir);
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

#[test]
fn a_level_keeps_its_parallel_copy_where_that_was_faster() {
    // Warm-up in parallel (untimed), one timed run of each, then parallel
    // untimed from then on.
    assert_eq!(choices(100_000_000, 200_000_000, 0), "pSPpp 1");
}

#[test]
fn a_level_runs_sequentially_where_its_parallel_copy_was_slower() {
    assert_eq!(choices(300_000_000, 200_000_000, 0), "pSPss 0");
    // Parallel must be clearly faster (5 %), not about as fast.
    assert_eq!(choices(195_000_000, 200_000_000, 0), "pSPss 0");
}

#[test]
fn parallel_from_always_runs_the_parallel_copy_untimed() {
    assert_eq!(choices(300_000_000, 200_000_000, 2), "ppppp 0");
}
