//! The run-time choice between a parallel level's two copies
//! (`nb_level_start`, `nb_level_end` in `multicore_prelude.c`), driven
//! with made-up times: the prelude compiled with a `main` that tells each
//! timed execution how long it took (by moving its start time back), so
//! the choice is deterministic. Needs `cc` (or `$CC`) with OpenMP.

use std::process::Command;

const PRELUDE_C: &str = include_str!("../src/multicore_prelude.c");

/// Runs `executions` eligible executions of one level (of 1000 rows each)
/// with `--parallel-from` set to `parallel_from`. The k-th timed execution
/// of the parallel copy takes `parallel_ns[k]` (the last value from then
/// on), of the sequential copy `sequential_ns[k]`; `epoch_at` lists the
/// executions before which an entry point's call runs its parallel C
/// again after quiet calls (nb_level_epoch). Returns, per execution,
/// which copy ran and whether it was timed (`P`/`S`, lower case when
/// untimed), then the choice.
fn choices(
    executions: usize,
    parallel_ns: &[i64],
    sequential_ns: &[i64],
    parallel_from: i64,
    epoch_at: &[usize],
) -> String {
    let list = |xs: &[i64]| {
        xs.iter()
            .map(|x| x.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let epochs = epoch_at
        .iter()
        .map(|e| format!("i == {e}"))
        .chain(std::iter::once("0".to_string()))
        .collect::<Vec<_>>()
        .join(" || ");
    let main = format!(
        r#"
int main(void) {{
  nb_level level = {{0}};
  const int64_t times[2][{n}] = {{{{{seq}}}, {{{par}}}}};
  const int counts[2] = {{{seq_n}, {par_n}}};
  int timed[2] = {{0, 0}};
  nb_parallel_from = {parallel_from};
  for (int i = 0; i < {executions}; i++) {{
    if ({epochs}) nb_level_epoch++;
    int parallel = 1;
    int64_t start = nb_level_start(&level, &parallel);
    putchar(start ? (parallel ? 'P' : 'S') : (parallel ? 'p' : 's'));
    if (start) {{
      int k = timed[parallel] < counts[parallel] ? timed[parallel] : counts[parallel] - 1;
      timed[parallel]++;
      nb_level_end(&level, parallel, start - times[parallel][k], 1000);
    }}
  }}
  printf(" %d\n", level.parallel);
  return 0;
}}
"#,
        n = parallel_ns.len().max(sequential_ns.len()),
        seq = list(sequential_ns),
        par = list(parallel_ns),
        seq_n = sequential_ns.len(),
        par_n = parallel_ns.len(),
    );
    let dir = std::env::temp_dir().join(format!(
        "nabla-level-choice-{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos())
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

const MS: i64 = 1_000_000;

#[test]
fn a_level_keeps_its_parallel_copy_where_that_was_faster() {
    // Warm-up in parallel (untimed), two timed runs of each copy, then
    // parallel untimed from then on.
    assert_eq!(choices(8, &[100 * MS], &[200 * MS], 0, &[]), "pSPSPppp 1");
}

#[test]
fn a_level_runs_sequentially_where_its_parallel_copy_was_slower() {
    assert_eq!(choices(8, &[300 * MS], &[200 * MS], 0, &[]), "pSPSPsss 0");
    // Parallel must be clearly faster (5 %), not about as fast.
    assert_eq!(choices(8, &[195 * MS], &[200 * MS], 0, &[]), "pSPSPsss 0");
}

#[test]
fn one_slow_probe_does_not_decide() {
    // The first timed parallel run was disturbed; the second was not.
    assert_eq!(
        choices(8, &[900 * MS, 100 * MS], &[200 * MS], 0, &[]),
        "pSPSPppp 1"
    );
}

#[test]
fn the_copy_not_chosen_is_timed_again_every_64th_execution() {
    // Both parallel probes were slow; from the recheck on, the parallel
    // copy is faster, and the level switches to it.
    let expected = format!("pSPSP{}P{} 1", "s".repeat(63), "p".repeat(4));
    assert_eq!(
        choices(
            5 + 64 + 4,
            &[900 * MS, 900 * MS, 100 * MS],
            &[200 * MS],
            0,
            &[]
        ),
        expected
    );
    // Where it is still slower, the level stays sequential.
    let expected = format!("pSPSP{}P{} 0", "s".repeat(63), "s".repeat(4));
    assert_eq!(
        choices(5 + 64 + 4, &[900 * MS], &[200 * MS], 0, &[]),
        expected
    );
}

#[test]
fn a_call_that_runs_the_parallel_c_again_checks_the_choice_at_once() {
    // An entry point's call runs its parallel C again (nb_level_epoch)
    // before the 8th execution: that one times the parallel copy.
    assert_eq!(
        choices(10, &[900 * MS, 900 * MS, 100 * MS], &[200 * MS], 0, &[7]),
        "pSPSPssPpp 1"
    );
}

#[test]
fn parallel_from_always_runs_the_parallel_copy_untimed() {
    assert_eq!(choices(5, &[300 * MS], &[200 * MS], 2, &[]), "ppppp 0");
}
