/* ---------- multicore: OpenMP (before the runtime) ---------- */
/* `nabla multicore`: the runtime is the sequential one with its shared
 * state made safe for threads (multicore.rs patches it: atomic reference
 * counts and memory counter, a lock around the library's list of live
 * blocks, failures on worker threads), and each parallel level of the
 * program is an OpenMP region (func.rs's open_parallel): its rows split
 * into one contiguous chunk per thread, in thread order. */
#include <errno.h>
#include <omp.h>
#include <time.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#define NB_MULTICORE 1
/* The most threads a parallel level uses (the size of the per-thread
 * partial results of a reduction). */
#define NB_MAX_THREADS 256
/* Whether threads of a parallel level run now: set by the calling thread
 * just before a level's region starts and cleared just after it ends
 * (func.rs's open_parallel and close_parallel; nested levels start no
 * region). The shared state is updated atomically (or under a lock) only
 * then: sequential code, one thread, pays for no atomic instruction
 * (gmm's Jacobian, one thread: 1.6x the time of sequential C with atomic
 * reference counts everywhere). */
static int nb_threads_running;
#define NB_SHARED __builtin_expect(nb_threads_running, 0)
/* Which thread of which region owns a block: a block allocated by a
 * thread of a running region carries that thread's tag (nb_alloc stamps
 * nb_my_owner into its header), and only that thread can reach it until
 * the region ends: a row's results are copied into the level's result,
 * and partial results and accumulator copies are combined after the
 * region. Its counts need no atomics then. Every region gets new tags
 * (nb_regions_started counts them, NB_OWNER_ENTER makes the thread's tag
 * from it at the region's start), so a block from before the region,
 * which the region's threads may share, never carries a running thread's
 * tag. ht's Jacobian, vertex map in parallel with every count atomic: 28 %
 * more CPU time per row than its sequential copy (perf). */
static uint64_t nb_regions_started;
static _Thread_local uint64_t nb_my_owner;
#define NB_OWNER_ENTER()                                                                       \
  (nb_my_owner = nb_regions_started << 9 | (uint64_t)(omp_get_thread_num() + 1))
#ifdef NB_REPORT_THREADS
/* -DNB_REPORT_THREADS (tests): reference counts made while a region's
 * threads ran, and how many of them were atomic (printed at exit). */
static long nb_region_counts, nb_region_atomic_counts;
static inline int nb_note_count(int atomic) {
  if (NB_SHARED) {
    __atomic_fetch_add(&nb_region_counts, 1, __ATOMIC_RELAXED);
    if (atomic) __atomic_fetch_add(&nb_region_atomic_counts, 1, __ATOMIC_RELAXED);
  }
  return atomic;
}
#define NB_ATOMIC_RC(m) nb_note_count(NB_SHARED && (m)->owner != nb_my_owner)
#else
#define NB_ATOMIC_RC(m) (NB_SHARED && (m)->owner != nb_my_owner)
#endif
#define NB_RC_INC(m)                                                                           \
  (NB_ATOMIC_RC(m) ? (void)__atomic_fetch_add(&(m)->rc, 1, __ATOMIC_RELAXED) : (void)((m)->rc++))
#define NB_RC_DEC_IS_ZERO(m)                                                                   \
  (NB_ATOMIC_RC(m) ? __atomic_sub_fetch(&(m)->rc, 1, __ATOMIC_ACQ_REL) == 0 : --(m)->rc == 0)
#define NB_RC_GET(m) (NB_ATOMIC_RC(m) ? __atomic_load_n(&(m)->rc, __ATOMIC_ACQUIRE) : (m)->rc)
#define NB_MEM_ADD(counter, bytes)                                                             \
  (NB_SHARED ? __atomic_add_fetch(&(counter), (bytes), __ATOMIC_RELAXED)                       \
             : ((counter) += (bytes)))
#define NB_MEM_SUB(counter, bytes)                                                             \
  (NB_SHARED ? (void)__atomic_sub_fetch(&(counter), (bytes), __ATOMIC_RELAXED)                 \
             : (void)((counter) -= (bytes)))

/* --num-threads / futhark_context_config_set_num_threads; 0: OpenMP's
 * default (OMP_NUM_THREADS, else the number of cores). */
static int nb_num_threads_setting;

/* --parallel-from ROWS: every parallel level runs in parallel from ROWS
 * rows on, instead of from the width `lower` decided (for tests, which
 * run small inputs); 0: the decided widths. */
static int64_t nb_parallel_from;

static inline int nb_threads(void) {
  int n = nb_num_threads_setting > 0 ? nb_num_threads_setting : omp_get_max_threads();
  return n < 1 ? 1 : n > NB_MAX_THREADS ? NB_MAX_THREADS : n;
}

/* Whether a parallel level of `rows` rows, parallel from `min_width` rows
 * on, runs its parallel copy here: wide enough, on more than one thread,
 * and not inside another parallel level (nested levels run in their
 * thread). Else its sequential copy runs, the code of `nabla c`. */
static inline int nb_parallel(int64_t rows, int64_t min_width) {
  return rows >= (nb_parallel_from > 0 ? nb_parallel_from : min_width) && nb_threads() > 1 &&
         !omp_in_parallel();
}

/* Which copy of a parallel level runs, chosen by measuring both where the
 * level is eligible (nb_parallel). A parallel copy can be slower than the
 * sequential one although `lower` estimated enough work: its rows may be
 * bound by memory bandwidth, or count references to blocks both threads
 * share; on a virtual machine, waking the other thread can cost more than
 * the level's work (bench/region_cost.c). So each level (one static
 * nb_level per site) runs its first eligible execution in parallel
 * untimed (it starts the threads and warms the caches), then times the
 * next NB_LEVEL_PROBES - 1 per row, sequential and parallel alternately,
 * and from then on keeps the parallel copy only where its best time per
 * row is below NB_LEVEL_MARGIN of the sequential copy's best. Every
 * NB_LEVEL_RECHECK-th execution after that (and the first of a call that
 * runs the parallel C again: nb_level_epoch) times the copy not chosen
 * once more and chooses again: one slow probe (another process took the
 * core) could make a level keep the wrong copy for good (in a GradBench
 * run, gmm's Jacobian most likely did: 18 ms a call instead of 9.5). Few
 * probes, because a benchmark's first runs are probes too. Futhark's
 * multicore scheduler likewise times its segmented operations to decide
 * how to run them. Only the thread that runs no region enters a level
 * eligibly, so the counts need no atomics. --parallel-from (tests) always
 * takes the parallel copy. Floating-point results may differ between the
 * executions of the two copies (reassociation, README). */
#define NB_LEVEL_PROBES 5
#define NB_LEVEL_RECHECK 64
#define NB_LEVEL_MARGIN 0.95
typedef struct {
  double best[2]; /* the best time per row in ns: [sequential, parallel]; 0: none yet */
  int probes;     /* eligible executions so far, up to NB_LEVEL_PROBES */
  int parallel;   /* the choice, once probes == NB_LEVEL_PROBES */
  int since;      /* executions since the choice was last checked */
  uint64_t epoch; /* nb_level_epoch when it was last checked */
} nb_level;
/* Counts the calls of entry points that run their parallel C again after
 * quiet calls (NB_QUIET_CALLS): there, every level checks its choice at
 * its first execution. A level that runs once a call and chose its
 * sequential copy makes its entry point's calls quiet, so it would
 * otherwise run (and count towards NB_LEVEL_RECHECK) once every
 * NB_RECHECK_CALLS calls only. */
static uint64_t nb_level_epoch;

static inline int64_t nb_level_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec + 1;
}

/* An eligible execution of level `l` starts: sets *parallel to the copy
 * to run; returns the start time where it is to be timed, else 0. */
static inline int64_t nb_level_start(nb_level *l, int *parallel) {
  if (nb_parallel_from > 0) return 0;
  if (l->probes >= NB_LEVEL_PROBES) {
    if (++l->since < NB_LEVEL_RECHECK && l->epoch == nb_level_epoch) {
      *parallel = l->parallel;
      return 0;
    }
    l->since = 0;
    l->epoch = nb_level_epoch;
    *parallel = !l->parallel;
    return nb_level_now();
  }
  *parallel = l->probes % 2 == 0;
  if (l->probes == 0) {
    l->probes = 1;
    return 0;
  }
  return nb_level_now();
}

/* A timed execution of level `l` over `rows` rows, started at `start`,
 * ran its parallel copy (or not): records its time per row, and once the
 * probes are done, chooses (again). */
static inline void nb_level_end(nb_level *l, int parallel, int64_t start, int64_t rows) {
  double per_row = (double)(nb_level_now() - start) / (double)(rows > 0 ? rows : 1);
  if (l->best[parallel] == 0 || per_row < l->best[parallel]) l->best[parallel] = per_row;
  if (l->probes < NB_LEVEL_PROBES) l->probes++;
  if (l->probes == NB_LEVEL_PROBES) l->parallel = l->best[1] < NB_LEVEL_MARGIN * l->best[0];
}

/* An entry point whose calls run no parallel region (every level below
 * its width, or measured slower in parallel: nb_level) runs its
 * sequential C instead (nb_seq_fun_N, the code of `nabla c`, which GCC
 * optimises better than a function that holds regions: lstm's Jacobian,
 * which never runs one, took 6 % longer in nb_fun_N): from the moment
 * NB_QUIET_CALLS calls in a row ran none, but every NB_RECHECK_CALLS-th
 * call runs the parallel C again, where a level that has become wide
 * enough can start its regions (a call that started none left
 * nb_regions_started as it was). */
#define NB_QUIET_CALLS 2
#define NB_RECHECK_CALLS 16

/* This thread's rows of from..to: one contiguous chunk per thread, the
 * first `n % threads` chunks one row longer. */
static inline void nb_par_chunk(int64_t from, int64_t to, int64_t *lo, int64_t *hi) {
  int64_t n = to > from ? to - from : 0;
  int64_t t = omp_get_thread_num(), nt = omp_get_num_threads();
  int64_t q = n / nt, r = n % nt;
  *lo = from + t * q + (t < r ? t : r);
  *hi = *lo + q + (t < r ? 1 : 0);
}

static void nb_set_parallel_from_option(const char *prog, const char *v) {
  char *end;
  errno = 0;
  long long n = strtoll(v, &end, 10);
  if (end == v || *end || errno || n < 1) {
    fprintf(stderr, "%s: --parallel-from needs a positive number of rows, not '%s'\n", prog, v);
    exit(2);
  }
  nb_parallel_from = (int64_t)n;
}

static void nb_set_num_threads_option(const char *prog, const char *v) {
  char *end;
  errno = 0;
  long n = strtol(v, &end, 10);
  if (end == v || *end || errno || n < 1 || n > NB_MAX_THREADS) {
    fprintf(stderr, "%s: --num-threads needs a number of threads from 1 to %d, not '%s'\n", prog,
            NB_MAX_THREADS, v);
    exit(2);
  }
  nb_num_threads_setting = (int)n;
}

/* A spin lock for short critical sections. */
static void nb_lock(int *l) {
  while (__atomic_exchange_n(l, 1, __ATOMIC_ACQUIRE))
    while (__atomic_load_n(l, __ATOMIC_RELAXED)) {
    }
}
static void nb_unlock(int *l) { __atomic_store_n(l, 0, __ATOMIC_RELEASE); }
#define NB_LOCK_SHARED(l)                                                                      \
  do {                                                                                         \
    if (NB_SHARED) nb_lock(l);                                                                 \
  } while (0)
#define NB_UNLOCK_SHARED(l)                                                                    \
  do {                                                                                         \
    if (NB_SHARED) nb_unlock(l);                                                               \
  } while (0)
static int nb_live_lock;

#ifdef NB_LIBRARY
/* Library: a failure on a thread of a parallel level longjmps to that
 * thread's own NB_WORKER_BEGIN (never across threads); the first failure's
 * message is kept, and the level fails on the calling thread at NB_PAR_END. */
static int nb_fail_lock;
static int nb_par_failed;
static _Thread_local jmp_buf *nb_worker_jmp;
#define NB_WORKER_BEGIN                                                                        \
  {                                                                                            \
    NB_OWNER_ENTER();                                                                          \
    jmp_buf nb_worker_buf_;                                                                    \
    jmp_buf *nb_worker_outer_ = nb_worker_jmp;                                                 \
    nb_worker_jmp = &nb_worker_buf_;                                                           \
    if (!setjmp(nb_worker_buf_)) {
#define NB_WORKER_END                                                                          \
  }                                                                                            \
  nb_worker_jmp = nb_worker_outer_;                                                            \
  }
#define NB_FAIL_ENTER()                                                                        \
  do {                                                                                         \
    if (nb_worker_jmp) {                                                                       \
      nb_lock(&nb_fail_lock);                                                                  \
      if (__atomic_load_n(&nb_par_failed, __ATOMIC_ACQUIRE)) {                                 \
        nb_unlock(&nb_fail_lock);                                                              \
        longjmp(*nb_worker_jmp, 1);                                                            \
      }                                                                                        \
    }                                                                                          \
  } while (0)
#define NB_FAIL_WORKER_JUMP()                                                                  \
  do {                                                                                         \
    if (nb_worker_jmp) {                                                                       \
      __atomic_store_n(&nb_par_failed, 1, __ATOMIC_RELEASE);                                   \
      nb_unlock(&nb_fail_lock);                                                                \
      longjmp(*nb_worker_jmp, 1);                                                              \
    }                                                                                          \
  } while (0)
#else
/* Executable: the first failing thread reports and exits; a second one
 * waits for the exit. */
static int nb_failing;
#define NB_WORKER_BEGIN {NB_OWNER_ENTER();
#define NB_WORKER_END }
#define NB_FAIL_ENTER()                                                                        \
  do {                                                                                         \
    if (__atomic_exchange_n(&nb_failing, 1, __ATOMIC_ACQ_REL))                                 \
      for (;;) pause();                                                                        \
  } while (0)
#endif

#ifdef NB_REPORT_THREADS
/* -DNB_REPORT_THREADS (tests): the most threads a parallel level ran on,
 * printed on stderr at exit (none where every level ran its sequential
 * copy). */
static int nb_most_threads;
/* Calls of entry points on more than one thread, and those of them that
 * ran the sequential C (NB_QUIET_CALLS). */
static long nb_entry_calls, nb_sequential_entry_calls, nb_parallel_copies;
static void nb_report_threads(void) {
  if (nb_most_threads == 0)
    fprintf(stderr, "nabla: every level ran its sequential copy\n");
  else
    fprintf(stderr, "nabla: parallel levels ran on up to %d threads\n", nb_most_threads);
  fprintf(stderr, "nabla: %ld of %ld calls on threads ran the sequential C\n",
          nb_sequential_entry_calls, nb_entry_calls);
  fprintf(stderr, "nabla: %ld reference counts in regions, %ld of them atomic\n",
          nb_region_counts, nb_region_atomic_counts);
  fprintf(stderr, "nabla: %ld large copies on threads\n", nb_parallel_copies);
}
#define NB_NOTE_ENTRY_CALL(sequential) (nb_entry_calls++, nb_sequential_entry_calls += (sequential))
#define NB_NOTE_PARALLEL_COPY() (nb_parallel_copies++)
#define NB_NOTE_THREADS()                                                                      \
  do {                                                                                         \
    int nb_n_ = omp_get_num_threads();                                                         \
    int nb_m_ = __atomic_load_n(&nb_most_threads, __ATOMIC_RELAXED);                           \
    while (nb_n_ > nb_m_ && !__atomic_compare_exchange_n(&nb_most_threads, &nb_m_, nb_n_, 0,   \
                                                         __ATOMIC_RELAXED, __ATOMIC_RELAXED)) { \
    }                                                                                          \
  } while (0)
#else
#define NB_NOTE_THREADS() ((void)0)
#define NB_NOTE_ENTRY_CALL(sequential) ((void)0)
#define NB_NOTE_PARALLEL_COPY() ((void)0)
#endif

/* A large copy of bytes outside parallel levels (the pieces of a
 * concatenation, a copy of an array) is split into one contiguous chunk
 * per thread, each a multiple of 64 bytes, from NB_PARALLEL_COPY_BYTES
 * on: one thread copies 1 MiB in about 130 us here, far longer than
 * starting the threads takes. ba's Jacobian ends in two concatenations of
 * 8.7 MB each, which one thread copied in 2.3 ms while the other waited
 * (on 2 threads: 9.2 -> 7.6 ms). NB_REPORT_THREADS counts these copies. */
#define NB_PARALLEL_COPY_BYTES ((size_t)1 << 20)
static void nb_copy_bytes(char *dst, const char *src, size_t bytes) {
  if (bytes < NB_PARALLEL_COPY_BYTES || !nb_parallel((int64_t)bytes, 1)) {
    memcpy(dst, src, bytes);
    return;
  }
  NB_NOTE_PARALLEL_COPY();
#pragma omp parallel num_threads(nb_threads())
  {
    int64_t lo, hi; /* this thread's 64-byte lines */
    nb_par_chunk(0, (int64_t)((bytes + 63) / 64), &lo, &hi);
    size_t from = (size_t)lo * 64, to = (size_t)hi * 64 < bytes ? (size_t)hi * 64 : bytes;
    if (from < to) memcpy(dst + from, src + from, to - from);
  }
}

/* Parallelism nested in a parallel level runs in its thread. */
__attribute__((constructor)) static void nb_multicore_init(void) {
  omp_set_max_active_levels(1);
#ifdef NB_REPORT_THREADS
  atexit(nb_report_threads);
#endif
}

