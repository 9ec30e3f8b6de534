/* What an OpenMP parallel region costs on this machine, after sequential
 * work of a given length (how `nabla multicore`'s levels alternate with
 * the sequential code between them). Measures lower's PARALLEL_WORK
 * (crates/nabla-opt/src/lower.rs).
 *
 *   gcc -O2 -fopenmp bench/region_cost.c -o /tmp/region_cost && /tmp/region_cost
 *   OMP_WAIT_POLICY=active /tmp/region_cost
 *
 * For each gap, the time of `reps` rounds of (sequential work; an empty
 * region on 2 threads) minus that of the sequential work alone, per round. */
#include <omp.h>
#include <stdio.h>

static volatile double sink;

static void work(long n) {
  double s = 0;
  for (long i = 0; i < n; i++) s += (double)i * 0.5;
  sink = s;
}

int main(void) {
  const long gaps[] = {0, 1000, 10000, 100000, 1000000};
  const int reps = 2000;
  for (int g = 0; g < 5; g++) {
    double t0 = omp_get_wtime();
    for (int r = 0; r < reps; r++) work(gaps[g]);
    double alone = omp_get_wtime() - t0;
    t0 = omp_get_wtime();
    for (int r = 0; r < reps; r++) {
      work(gaps[g]);
#pragma omp parallel num_threads(2)
      { sink = omp_get_thread_num(); }
    }
    double with_regions = omp_get_wtime() - t0;
    printf("after %8.1f us of sequential work: a region costs %7.2f us\n", 1e6 * alone / reps,
           1e6 * (with_regions - alone) / reps);
  }
  return 0;
}
