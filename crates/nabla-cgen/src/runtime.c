/* nabla C runtime: included verbatim at the top of every generated program.
 *
 * Arrays are reference-counted, row-major, contiguous blocks (`nb_arr`: the
 * block, a pointer to the first element and the shape). A variable of the
 * generated code owns one reference; views (rows, reshapes, contiguous
 * slices) share the block. Scalar operators mirror nabla-prim's semantics
 * (Futhark's): wrapping integers, Futhark's division rounding, shifts,
 * conversions. Run-time errors print a message and exit with status 1;
 * with NB_LIBRARY defined (library and server mode) they longjmp to the
 * protected call instead (see nb_fail). */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/resource.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

#define NB_MAX_RANK 8

/* For executables and servers (not libraries: the host owns malloc's
 * settings): glibc serves blocks above 128 KiB with a fresh mmap and
 * returns freed memory at the heap's top to the system, so a loop that
 * allocates and frees a large array per iteration pays page faults for
 * every page of it, every time. Up to 32 MiB (glibc's limit) blocks come
 * from the heap, and up to 1 GiB of free memory stays with the process. */
__attribute__((unused)) static void nb_tune_malloc(void) {
#if defined(__GLIBC__) && defined(M_MMAP_THRESHOLD) && defined(M_TRIM_THRESHOLD)
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
#endif
}

/* f16 is C's _Float16 where the compiler has it (gcc >= 12, clang >= 15).
 * Older clang (14, Debian 12's) has only the storage type __fp16: its
 * arithmetic promotes to float (every f16 operation is computed in float
 * and rounded anyway, as nabla-prim does), but it cannot be a parameter
 * (nb_f16_arg is float there: it holds every f16 value exactly), and its
 * conversion from double is wrong (clang 14 on x86-64 gives the bits
 * 0x0001), so nb_f16_of_f64 rounds to float to odd first, which rounds to
 * f16 like one rounding from double. Programs without f16 compile with
 * neither. */
#if defined(__FLT16_MANT_DIG__)
#define NB_HAVE_F16 1
typedef _Float16 nb_f16;
typedef _Float16 nb_f16_arg;
#define nb_f16_of_f64(x) ((nb_f16)(double)(x))
#elif defined(__clang__)
#define NB_HAVE_F16 1
typedef __fp16 nb_f16;
typedef float nb_f16_arg;
/* x rounded to float, toward zero with the lowest bit set where inexact
 * ("round to odd"): two extra bits, so rounding it to f16 is exact to the
 * one rounding of x. */
static inline float nb_f32_round_to_odd(double x) {
  float f = (float)x;
  if ((double)f != x && x == x) {
    uint32_t u;
    memcpy(&u, &f, 4);
    if (fabs((double)f) > fabs(x)) u -= 1;
    u |= 1;
    memcpy(&f, &u, 4);
  }
  return f;
}
#define nb_f16_of_f64(x) ((nb_f16)nb_f32_round_to_odd((double)(x)))
#endif

#ifdef NB_LIBRARY
/* In library and server mode every live block is on a doubly linked list,
 * stamped with the call (epoch) that allocated it, so that a failing call
 * can free what it allocated (see nb_fail). Not thread-safe: one call at a
 * time per process. */
typedef struct nb_mem {
  int64_t rc;
  int64_t epoch;
  struct nb_mem *prev, *next;
  int64_t pad; /* the block's size class (see nb_free_lists), or minus its size in bytes */
  int64_t unused; /* keeps the data 16-byte aligned */
} nb_mem;
static nb_mem nb_live = {0, 0, &nb_live, &nb_live, 0, 0};
static int64_t nb_epoch;
/* A recycled block leaves the list when it goes to its free list and
 * joins it again, with the current epoch, when it is reused. */
#else
typedef struct nb_mem {
  int64_t rc;
  int64_t pad; /* the block's size class (see nb_free_lists), or minus its size in bytes */
} nb_mem;
#endif

/* Small blocks are recycled: a released block of at most
 * NB_SMALL_CLASSES * 16 bytes goes to the (per-thread) free list of its size
 * class (bytes rounded up to 16; the link lies in the data), which nb_alloc
 * takes from before calling malloc (in every mode; a library context
 * returns them to malloc when it is freed). -DNB_NO_RECYCLE turns this off
 * (for memory checkers). */
#define NB_SMALL_CLASSES 64
#ifndef NB_NO_RECYCLE
static _Thread_local nb_mem *nb_free_lists[NB_SMALL_CLASSES + 1];
#endif

typedef struct nb_arr {
  nb_mem *mem;
  char *data;
  int64_t shape[NB_MAX_RANK];
} nb_arr;

static const nb_arr nb_empty_arr;

#ifdef NB_LIBRARY
#include <setjmp.h>
/* Where nb_fail jumps (set by a protected call, NULL outside one), the
 * failure's message ("Error: …\nat FILE:LINE:COL\n", malloc'd) and code
 * (2: program error, 3: out of memory). */
static jmp_buf *nb_jmp;
static char *nb_fail_message;
static int nb_fail_code = 2;

__attribute__((noreturn, format(printf, 2, 3))) static void
nb_fail(const char *loc, const char *fmt, ...) {
  va_list ap;
  char msg[2048];
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  size_t cap = strlen(msg) + (loc ? strlen(loc) : 0) + 32;
  free(nb_fail_message);
  nb_fail_message = (char *)malloc(cap);
  if (nb_fail_message) {
    if (loc && *loc) snprintf(nb_fail_message, cap, "Error: %s\nat %s\n", msg, loc);
    else snprintf(nb_fail_message, cap, "Error: %s\n", msg);
  }
  if (nb_jmp) longjmp(*nb_jmp, 1);
  fprintf(stderr, "Error: %s\n", msg);
  abort();
}
#else
__attribute__((noreturn, format(printf, 2, 3))) static void
nb_fail(const char *loc, const char *fmt, ...) {
  va_list ap;
  fflush(stdout);
  fprintf(stderr, "Error: ");
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fprintf(stderr, "\n");
  if (loc && *loc) fprintf(stderr, "at %s\n", loc);
  exit(1);
}
#endif

/* ---------- memory ---------- */

/* The number of elements of an array of this shape. Multiplied as
 * unsigned (wrapping, so never undefined): the product of the dimensions
 * of an allocated array is either below 2^63 or 0 (a zero dimension makes
 * the wrapped product 0 too, whatever the others are). */
static int64_t nb_count(const int64_t *shape, int rank) {
  uint64_t n = 1;
  for (int k = 0; k < rank; k++) n *= (uint64_t)shape[k];
  return (int64_t)n;
}

/* ---------- the memory limit ----------
 * Every block the runtime allocates (arrays, the input buffer, the text
 * reader's elements) counts against a limit, so that an absurd size fails
 * at once with "out of memory: N bytes for ..." (status 1 in executables,
 * error code 3 in the C API) instead of paging the machine until the
 * kernel's out-of-memory killer ends the process (Linux overcommits: a
 * malloc that succeeds is no promise). The limit is set by
 * `--memory-limit SIZE` (executables, servers) or
 * futhark_context_config_set_memory_limit (libraries); by default it is
 * three quarters of the physical memory (sysconf), at most the
 * address-space limit (`ulimit -v`), and 0 means none. It
 * is one limit for the whole runtime (like its other state: per process,
 * or per loaded library). */
static int64_t nb_mem_limit = -1; /* bytes; 0: none; -1: the default, not yet computed */
static int64_t nb_mem_used;       /* bytes counted now (not atomic: one call at a time) */

/* Three quarters of the physical memory, at most the address-space limit
 * (`ulimit -v`); 0 (no limit) where neither is known. */
static int64_t nb_default_memory_limit(void) {
  __int128 b = 0;
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  if (pages > 0 && page > 0) b = (__int128)pages * page / 4 * 3;
  struct rlimit rl;
  if (getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
      (b == 0 || (__int128)rl.rlim_cur < b))
    b = (__int128)rl.rlim_cur;
  return b > (__int128)INT64_MAX ? INT64_MAX : (int64_t)b;
}

static int64_t nb_memory_limit(void) {
  if (nb_mem_limit < 0) nb_mem_limit = nb_default_memory_limit();
  return nb_mem_limit;
}

/* Counts `bytes` against the limit: false (nothing counted) when they do
 * not fit under it. */
static bool nb_mem_take(size_t bytes) {
  int64_t lim = nb_memory_limit();
  if (lim > 0 && (bytes > (uint64_t)lim || nb_mem_used > lim - (int64_t)bytes)) return false;
  nb_mem_used += (int64_t)bytes;
  return true;
}

static void nb_mem_give(size_t bytes) {
  nb_mem_used -= (int64_t)bytes;
}

/* Fails with "out of memory: N bytes for WHAT" (error code 3 in the C API). */
__attribute__((noreturn)) static void nb_oom(const char *loc, size_t bytes, const char *what) {
#ifdef NB_LIBRARY
  nb_fail_code = 3;
#endif
  int64_t lim = nb_memory_limit();
  if (lim > 0)
    nb_fail(loc, "out of memory: %zu bytes for %s (%" PRId64 " bytes in use, the memory limit is %" PRId64 " bytes)",
            bytes, what, nb_mem_used, lim);
  nb_fail(loc, "out of memory: %zu bytes for %s", bytes, what);
}

/* malloc/realloc counted against the limit (`old`: the bytes the block
 * had); they fail through nb_oom. */
static void *nb_counted_realloc(void *p, size_t old, size_t bytes, const char *loc, const char *what) {
  if (bytes > old && !nb_mem_take(bytes - old)) nb_oom(loc, bytes, what);
  void *q = realloc(p, bytes ? bytes : 1);
  if (!q) {
    if (bytes > old) nb_mem_give(bytes - old);
    nb_oom(loc, bytes, what);
  }
  if (bytes < old) nb_mem_give(old - bytes);
  return q;
}

static void nb_counted_free(void *p, size_t bytes) {
  if (!p) return;
  free(p);
  nb_mem_give(bytes);
}

/* Parses a memory size: digits with an optional K, M, G or T suffix
 * (powers of 1024). False for anything else or a size past 2^63. */
static bool nb_parse_size(const char *s, int64_t *out) {
  if (!*s) return false;
  uint64_t v = 0;
  const char *p = s;
  for (; *p >= '0' && *p <= '9'; p++) {
    if (v > (UINT64_MAX - 9) / 10) return false;
    v = v * 10 + (uint64_t)(*p - '0');
  }
  if (p == s) return false;
  int shift = 0;
  switch (*p) {
  case 0: break;
  case 'k': case 'K': shift = 10; p++; break;
  case 'm': case 'M': shift = 20; p++; break;
  case 'g': case 'G': shift = 30; p++; break;
  case 't': case 'T': shift = 40; p++; break;
  default: return false;
  }
  if (*p) return false;
  if (v > ((uint64_t)INT64_MAX >> shift)) return false;
  *out = (int64_t)(v << shift);
  return true;
}

/* Library mode: puts a block on the live list, stamped with the current
 * call; nb_unlink takes it off. No-ops otherwise. */
static inline void nb_link(nb_mem *m) {
#ifdef NB_LIBRARY
  m->epoch = nb_epoch;
  m->next = nb_live.next;
  m->prev = &nb_live;
  nb_live.next->prev = m;
  nb_live.next = m;
#else
  (void)m;
#endif
}

static inline void nb_unlink(nb_mem *m) {
#ifdef NB_LIBRARY
  m->prev->next = m->next;
  m->next->prev = m->prev;
#else
  (void)m;
#endif
}

/* Describes an array's shape for an out-of-memory message. */
static void nb_shape_what(char *buf, size_t cap, int rank, const int64_t *shape, size_t elem) {
  int at = snprintf(buf, cap, "an array of shape ");
  for (int k = 0; k < rank && at > 0 && (size_t)at < cap; k++)
    at += snprintf(buf + at, cap - (size_t)at, "[%" PRId64 "]", shape[k]);
  if (at > 0 && (size_t)at < cap) snprintf(buf + at, cap - (size_t)at, " (%zu-byte elements)", elem);
}

__attribute__((noreturn, cold, noinline)) static void nb_alloc_oom(const char *loc, int rank, const int64_t *shape,
                                                                 size_t elem, size_t bytes) {
  char what[640];
  nb_shape_what(what, sizeof what, rank, shape, elem);
  if (bytes == 0) {
#ifdef NB_LIBRARY
    nb_fail_code = 3;
#endif
    nb_fail(loc, "out of memory: more than %" PRId64 " bytes for %s", INT64_MAX, what);
  }
  nb_oom(loc, bytes, what);
}

/* Allocates an array of `rank` dimensions `shape` of `elem`-byte elements:
 * every case (see nb_alloc for the common one). */
__attribute__((noinline)) static nb_arr nb_alloc_any(int rank, const int64_t *shape, size_t elem,
                                                    const char *loc) {
  nb_arr a;
  /* Any zero dimension makes the array empty (0 bytes), whatever the
   * others are: look for one before multiplying. */
  bool empty = false;
  for (int k = 0; k < rank; k++) {
    if (shape[k] < 0) nb_fail(loc, "negative array size %" PRId64, shape[k]);
    empty |= shape[k] == 0;
  }
  int64_t nbytes = 0;
  if (!empty) {
    nbytes = (int64_t)elem;
    for (int k = 0; k < rank; k++)
      if (__builtin_mul_overflow(nbytes, shape[k], &nbytes)) nb_alloc_oom(loc, rank, shape, elem, 0);
  }
  for (int k = 0; k < NB_MAX_RANK; k++) a.shape[k] = k < rank ? shape[k] : 0;
  size_t bytes = (size_t)nbytes;
#ifndef NB_NO_RECYCLE
  if (bytes <= NB_SMALL_CLASSES * 16) {
    size_t cls = bytes ? (bytes + 15) / 16 : 1;
    a.mem = nb_free_lists[cls];
    if (a.mem) {
      memcpy(&nb_free_lists[cls], a.mem + 1, sizeof nb_free_lists[0]);
    } else {
      size_t total = sizeof(nb_mem) + cls * 16;
      if (!nb_mem_take(total)) nb_alloc_oom(loc, rank, shape, elem, bytes);
      a.mem = (nb_mem *)malloc(total);
      if (!a.mem) {
        nb_mem_give(total);
        nb_alloc_oom(loc, rank, shape, elem, bytes);
      }
    }
    a.mem->rc = 1;
    a.mem->pad = (int64_t)cls;
    nb_link(a.mem);
    a.data = (char *)(a.mem + 1);
    return a;
  }
#endif
  size_t total = sizeof(nb_mem) + (bytes ? bytes : 1);
  if (!nb_mem_take(total)) nb_alloc_oom(loc, rank, shape, elem, bytes);
  a.mem = (nb_mem *)malloc(total);
  if (!a.mem) {
    nb_mem_give(total);
    nb_alloc_oom(loc, rank, shape, elem, bytes);
  }
  a.mem->rc = 1;
  a.mem->pad = -(int64_t)bytes;
  nb_link(a.mem);
  a.data = (char *)(a.mem + 1);
  return a;
}

/* nb_alloc_any, with the common case of inner loops inline: a small,
 * non-empty array whose size class has a recycled block (a free list's
 * first), built in the caller's variable. Returned from a function that
 * is not inlined, the 80-byte result was copied out of the stack, and
 * that copy was most of the time ba's Jacobian spent allocating. Paired
 * runs of GradBench's Jacobians (ms, c / multicore on 2 threads), before
 * and after: gmm 17.8 -> 15.3 / 9.37 -> 8.41, ba 13.2 -> 10.9 / 7.73 ->
 * 7.12, ht 1.62 -> 1.50 / 1.20 -> 1.11, lstm 11.5 -> 10.6 / 11.5 -> 10.8.
 * Plain `inline`: GCC's choice; forced inline everywhere (always_inline),
 * multicore gmm got slower (10.3 ms), its function of both copies of each
 * level grown past GCC's limits. */
#ifdef NB_ALLOC_OUT_OF_LINE
/* A program of many allocation sites (ALLOCATION_SITES_INLINED in
 * lib.rs): compiled faster without the fast path at each. */
#define NB_ALLOC_INLINE __attribute__((noinline))
#else
#define NB_ALLOC_INLINE inline
#endif
static NB_ALLOC_INLINE nb_arr nb_alloc(int rank, const int64_t *shape, size_t elem, const char *loc) {
#ifndef NB_NO_RECYCLE
  int64_t nbytes = (int64_t)elem;
  bool small = true;
  for (int k = 0; k < rank; k++) {
    small &= shape[k] > 0;
    small &= !__builtin_mul_overflow(nbytes, shape[k], &nbytes);
  }
  small &= (size_t)nbytes <= NB_SMALL_CLASSES * 16;
  if (__builtin_expect(small, 1)) {
    size_t cls = ((size_t)nbytes + 15) / 16;
    if (__builtin_expect(nb_free_lists[cls] != NULL, 1)) {
      nb_arr a;
      a.mem = nb_free_lists[cls];
      memcpy(&nb_free_lists[cls], a.mem + 1, sizeof nb_free_lists[0]);
      a.mem->rc = 1;
      a.mem->pad = (int64_t)cls;
      nb_link(a.mem);
      a.data = (char *)(a.mem + 1);
      for (int k = 0; k < NB_MAX_RANK; k++) a.shape[k] = k < rank ? shape[k] : 0;
      return a;
    }
  }
#endif
  return nb_alloc_any(rank, shape, elem, loc);
}

static inline nb_arr nb_retain(nb_arr a) {
  if (a.mem) a.mem->rc++;
  return a;
}

/* Frees a block (off the live list in library mode). */
/* The bytes a block counts against the memory limit (its `pad`: the size
 * class, or minus its size). */
static inline size_t nb_block_bytes(const nb_mem *m) {
  return sizeof(nb_mem) + (m->pad > 0 ? (size_t)m->pad * 16 : m->pad < 0 ? (size_t)-m->pad : 1);
}

static void nb_free_block(nb_mem *m) {
  nb_unlink(m);
  nb_mem_give(nb_block_bytes(m));
  free(m);
}

/* Frees (or recycles) a block whose last reference went away. */
__attribute__((noinline)) static void nb_free_mem(nb_mem *m) {
#ifndef NB_NO_RECYCLE
  int64_t cls = m->pad;
  if (cls > 0) {
    nb_unlink(m);
    memcpy(m + 1, &nb_free_lists[cls], sizeof nb_free_lists[0]);
    nb_free_lists[cls] = m;
    return;
  }
#endif
  nb_free_block(m);
}

/* Returns the blocks waiting on this thread's free lists to malloc (when a
 * library context is freed). */
__attribute__((unused)) static void nb_drain_free_lists(void) {
#ifndef NB_NO_RECYCLE
  for (int cls = 0; cls <= NB_SMALL_CLASSES; cls++) {
    while (nb_free_lists[cls]) {
      nb_mem *m = nb_free_lists[cls];
      memcpy(&nb_free_lists[cls], m + 1, sizeof nb_free_lists[0]);
      nb_mem_give(nb_block_bytes(m));
      free(m);
    }
  }
#endif
}

/* Drops `*a`'s reference (inlined: in inner loops most releases are of
 * borrowed views or shared blocks, a test and a decrement). */
__attribute__((always_inline)) static inline void nb_release(nb_arr *a) {
  if (a->mem && --a->mem->rc == 0) nb_free_mem(a->mem);
  a->mem = NULL;
  a->data = NULL;
}

/* Takes the reference out of `*a` (which becomes empty). */
static inline nb_arr nb_move(nb_arr *a) {
  nb_arr r = *a;
  a->mem = NULL;
  a->data = NULL;
  return r;
}

static nb_arr nb_copy(const nb_arr *a, int rank, size_t elem) {
  nb_arr r = nb_alloc(rank, a->shape, elem, "");
  memcpy(r.data, a->data, (size_t)nb_count(a->shape, rank) * elem);
  return r;
}

#ifdef NB_COUNT_COPIES
/* Debugging aid (-DNB_COUNT_COPIES): how many consumptions had to copy. */
static int64_t nb_copies, nb_copied_bytes;
__attribute__((destructor)) static void nb_report_copies(void) {
  fprintf(stderr, "nabla: %" PRId64 " copies on consumption (%" PRId64 " bytes)\n", nb_copies,
          nb_copied_bytes);
}
#endif

/* Makes `*a` the only reference to its block (copying when shared). */
static inline void nb_make_unique(nb_arr *a, int rank, size_t elem) {
  if (a->mem && a->mem->rc == 1) return;
#ifdef NB_COUNT_COPIES
  nb_copies++;
  nb_copied_bytes += nb_count(a->shape, rank) * (int64_t)elem;
#endif
  nb_arr c = nb_copy(a, rank, elem);
  nb_release(a);
  *a = c;
}

/* ---------- messages ---------- */

static void nb_show_shape(char *buf, size_t cap, const int64_t *shape, int rank) {
  size_t len = 0;
  buf[0] = 0;
  for (int k = 0; k < rank && len < cap; k++)
    len += (size_t)snprintf(buf + len, cap - len, "[%" PRId64 "]", shape[k]);
}

/* One index specification: kind 0 = fixed (a), kind 1 = slice (a = start,
 * b = len, c = stride). */
typedef struct nb_ix {
  int kind;
  int64_t a, b, c;
} nb_ix;

static void nb_show_indices(char *buf, size_t cap, const nb_ix *ix, int n) {
  size_t len = 0;
  len += (size_t)snprintf(buf, cap, "[");
  for (int k = 0; k < n && len < cap; k++) {
    if (k > 0) len += (size_t)snprintf(buf + len, cap - len, ", ");
    if (ix[k].kind == 0) {
      len += (size_t)snprintf(buf + len, cap - len, "%" PRId64, ix[k].a);
    } else {
      __int128 end = (__int128)ix[k].a + (__int128)ix[k].b * ix[k].c;
      int64_t e = end > INT64_MAX ? INT64_MAX : end < INT64_MIN ? INT64_MIN : (int64_t)end;
      if (ix[k].c == 1)
        len += (size_t)snprintf(buf + len, cap - len, "%" PRId64 ":%" PRId64, ix[k].a, e);
      else
        len += (size_t)snprintf(buf + len, cap - len, "%" PRId64 ":%" PRId64 ":%" PRId64,
                                ix[k].a, e, ix[k].c);
    }
  }
  if (len < cap) snprintf(buf + len, cap - len, "]");
}

__attribute__((noreturn)) static void nb_oob(const char *loc, const nb_ix *ix, int n,
                                             const int64_t *shape, int rank) {
  char is[512], sh[512];
  nb_show_indices(is, sizeof is, ix, n);
  nb_show_shape(sh, sizeof sh, shape, rank);
  nb_fail(loc, "Index %s out of bounds for array of shape %s.", is, sh);
}

/* The out-of-bounds failure of nb_pos and nb_subarray (kept out of line so
 * that the fast paths inline into loops). */
__attribute__((noreturn, cold, noinline)) static void
nb_fixed_oob(const char *loc, const int64_t *is, int n, const int64_t *shape, int rank) {
  nb_ix ix[NB_MAX_RANK];
  for (int j = 0; j < n; j++) ix[j].kind = 0, ix[j].a = is[j];
  nb_oob(loc, ix, n, shape, rank);
}

/* Scalar index a[i0, i1, …] (all fixed, as many as the rank): the flat position. */
__attribute__((always_inline)) static inline int64_t nb_pos(const char *loc, const nb_arr *a,
                                                           int rank, const int64_t *is) {
  int64_t p = 0;
  for (int k = 0; k < rank; k++) {
    if (__builtin_expect((uint64_t)is[k] >= (uint64_t)a->shape[k], 0))
      nb_fixed_oob(loc, is, rank, a->shape, rank);
    p = p * a->shape[k] + is[k];
  }
  return p;
}

/* nb_fixed_oob for at most three indices passed by value (so that the
 * fast paths below keep their indices in registers). */
__attribute__((noreturn, cold, noinline)) static void
nb_fixed_oob3(const char *loc, int n, int64_t i0, int64_t i1, int64_t i2, const int64_t *shape,
              int rank) {
  int64_t is[3] = {i0, i1, i2};
  nb_fixed_oob(loc, is, n, shape, rank);
}

/* nb_pos for arrays of rank 1, 2 and 3. */
__attribute__((always_inline)) static inline int64_t nb_pos1(const char *loc, const nb_arr *a,
                                                            int64_t i0) {
  if (__builtin_expect((uint64_t)i0 >= (uint64_t)a->shape[0], 0))
    nb_fixed_oob3(loc, 1, i0, 0, 0, a->shape, 1);
  return i0;
}

__attribute__((always_inline)) static inline int64_t nb_pos2(const char *loc, const nb_arr *a,
                                                            int64_t i0, int64_t i1) {
  if (__builtin_expect(
          ((uint64_t)i0 >= (uint64_t)a->shape[0]) | ((uint64_t)i1 >= (uint64_t)a->shape[1]), 0))
    nb_fixed_oob3(loc, 2, i0, i1, 0, a->shape, 2);
  return i0 * a->shape[1] + i1;
}

__attribute__((always_inline)) static inline int64_t nb_pos3(const char *loc, const nb_arr *a,
                                                            int64_t i0, int64_t i1, int64_t i2) {
  if (__builtin_expect(((uint64_t)i0 >= (uint64_t)a->shape[0]) |
                           ((uint64_t)i1 >= (uint64_t)a->shape[1]) |
                           ((uint64_t)i2 >= (uint64_t)a->shape[2]),
                       0))
    nb_fixed_oob3(loc, 3, i0, i1, i2, a->shape, 3);
  return (i0 * a->shape[1] + i1) * a->shape[2] + i2;
}

/* The flat position of an index proven in bounds at compile time
 * (nabla_ir::bounds): no check. With NB_VERIFY_PROOFS defined (the
 * validating pipelines of the tests), the check stays and a failure names
 * the proof as wrong; nb_proof(ok, loc) is that check for other code. */
#ifdef NB_VERIFY_PROOFS
#define NB_PROOF_LOC(loc) "internal error: an index proven in bounds is out of bounds at " loc
#define nb_in1(loc, a, i0) nb_pos1(NB_PROOF_LOC(loc), a, i0)
#define nb_in2(loc, a, i0, i1) nb_pos2(NB_PROOF_LOC(loc), a, i0, i1)
#define nb_in3(loc, a, i0, i1, i2) nb_pos3(NB_PROOF_LOC(loc), a, i0, i1, i2)
#define nb_in(loc, a, rank, is) nb_pos(NB_PROOF_LOC(loc), a, rank, is)
#define nb_proof(ok, loc)                                                                          \
  do {                                                                                             \
    if (!(ok)) nb_fail(loc, "internal error: an index proven in bounds is out of bounds");        \
  } while (0)
#else
#define nb_in1(loc, a, i0) ((void)(a), (int64_t)(i0))
#define nb_in2(loc, a, i0, i1) ((int64_t)(i0) * (a)->shape[1] + (int64_t)(i1))
#define nb_in3(loc, a, i0, i1, i2)                                                                 \
  (((int64_t)(i0) * (a)->shape[1] + (int64_t)(i1)) * (a)->shape[2] + (int64_t)(i2))
__attribute__((always_inline)) static inline int64_t nb_in_(const nb_arr *a, int rank,
                                                           const int64_t *is) {
  int64_t p = 0;
  for (int k = 0; k < rank; k++) p = p * a->shape[k] + is[k];
  return p;
}
#define nb_in(loc, a, rank, is) nb_in_(a, rank, is)
#define nb_proof(ok, loc) ((void)0)
#endif

/* *r = the view of `a` (of rank `rank`) whose first element is at row
 * position p of its first n dimensions (see nb_subarray). */
__attribute__((always_inline)) static inline void nb_view_at(nb_arr *restrict r,
                                                            const nb_arr *restrict a, int rank,
                                                            size_t elem, int n, int64_t p,
                                                            int borrow) {
  int64_t inner = 1;
#pragma GCC unroll 8
  for (int k = 0; k < NB_MAX_RANK; k++) {
    int64_t d = k + n < rank ? a->shape[k + n] : 0;
    r->shape[k] = d;
    if (k + n < rank) inner *= d;
  }
  r->mem = borrow ? NULL : a->mem;
  if (r->mem) r->mem->rc++;
  r->data = a->data + (size_t)(p * inner) * elem;
}

/* *r = a[is[0], ..., is[n-1]] with 0 < n < rank: a view of the row (no
 * copy; the fast path of nb_index for fixed indices). `*r` holds no
 * reference before. `borrow`: the view takes no reference (mem NULL; the
 * code generator has shown that `a`'s block outlives it, see borrow.rs).
 * Always inlined and writing through `r`, so that with the constant rank
 * and n of a call site the checks and the shape copy unroll into direct
 * stores (an 80-byte view returned by value is built in a temporary and
 * block-copied, or stalls on store forwarding). */
__attribute__((always_inline)) static inline void nb_subarray(nb_arr *restrict r, const char *loc,
                                                             const nb_arr *restrict a, int rank,
                                                             size_t elem, int n, const int64_t *is,
                                                             int borrow) {
  int64_t p = 0;
  for (int k = 0; k < n; k++) {
    if (__builtin_expect((uint64_t)is[k] >= (uint64_t)a->shape[k], 0))
      nb_fixed_oob(loc, is, n, a->shape, rank);
    p = p * a->shape[k] + is[k];
  }
  nb_view_at(r, a, rank, elem, n, p, borrow);
}

/* nb_subarray with one index, passed by value. */
__attribute__((always_inline)) static inline void nb_subarray1(nb_arr *restrict r, const char *loc,
                                                              const nb_arr *restrict a, int rank,
                                                              size_t elem, int64_t i0,
                                                              int borrow) {
  if (__builtin_expect((uint64_t)i0 >= (uint64_t)a->shape[0], 0))
    nb_fixed_oob3(loc, 1, i0, 0, 0, a->shape, rank);
  nb_view_at(r, a, rank, elem, 1, i0, borrow);
}

static void nb_check_eq_sizes(const char *loc, const char *msg, int n, const int64_t *ns) {
  for (int k = 1; k < n; k++) {
    if (ns[k] != ns[0]) {
      char buf[1024];
      size_t len = 0;
      buf[0] = 0;
      for (int j = 0; j < n && len < sizeof buf; j++)
        len += (size_t)snprintf(buf + len, sizeof buf - len, "%s%" PRId64, j ? ", " : "", ns[j]);
      nb_fail(loc, "size error: %s (sizes %s differ)", msg, buf);
    }
  }
}

static void nb_check_same_shape(const char *loc, const char *what, const int64_t *a,
                                const int64_t *b, int rank) {
  for (int k = 0; k < rank; k++) {
    if (a[k] != b[k]) {
      char x[512], y[512];
      nb_show_shape(x, sizeof x, a, rank);
      nb_show_shape(y, sizeof y, b, rank);
      nb_fail(loc, "size error: %s %s and %s", what, x, y);
    }
  }
}

/* ---------- indexing ---------- */

/* Checks indices against the shape (Futhark's bounds rules). */
static void nb_check_region(const char *loc, const nb_arr *a, int rank, const nb_ix *ix, int n) {
  for (int k = 0; k < n; k++) {
    int64_t d = a->shape[k];
    if (ix[k].kind == 0) {
      if (ix[k].a < 0 || ix[k].a >= d) nb_oob(loc, ix, n, a->shape, rank);
    } else {
      int64_t start = ix[k].a, len = ix[k].b, stride = ix[k].c;
      if (len < 0) nb_oob(loc, ix, n, a->shape, rank);
      if (len > 0) {
        __int128 last = (__int128)start + (__int128)(len - 1) * stride;
        if (start < 0 || start >= d || last < 0 || last >= d) nb_oob(loc, ix, n, a->shape, rank);
      } else if (start < -1 || start > d || (start == -1 && stride >= 0)) {
        /* An empty slice may start one past either end in its direction
         * (`xs[::-1]` of an empty array starts at -1), as in the
         * interpreter. */
        nb_oob(loc, ix, n, a->shape, rank);
      }
    }
  }
}

/* Visits the flat positions of the region selected by `ix` (row-major order
 * of the result), in runs of `run` consecutive elements. */
static void nb_region_walk(const nb_arr *a, int rank, const nb_ix *ix, int n,
                           void (*f)(void *, int64_t, int64_t), void *cx) {
  int64_t stride[NB_MAX_RANK];
  int64_t s = 1;
  for (int k = rank - 1; k >= 0; k--) {
    stride[k] = s;
    s *= a->shape[k];
  }
  int64_t run = n == 0 ? s : stride[n - 1];
  /* odometer over the n index positions */
  int64_t cnt[NB_MAX_RANK], lim[NB_MAX_RANK];
  for (int k = 0; k < n; k++) {
    cnt[k] = 0;
    lim[k] = ix[k].kind == 0 ? 1 : ix[k].b;
    if (lim[k] == 0) return;
  }
  for (;;) {
    int64_t p = 0;
    for (int k = 0; k < n; k++) {
      int64_t i = ix[k].kind == 0 ? ix[k].a : ix[k].a + cnt[k] * ix[k].c;
      p += i * stride[k];
    }
    f(cx, p, run);
    int k = n - 1;
    while (k >= 0) {
      if (++cnt[k] < lim[k]) break;
      cnt[k] = 0;
      k--;
    }
    if (k < 0) return;
  }
}

typedef struct nb_copy_cx {
  char *dst;
  const char *src;
  size_t elem;
  int64_t done;
  int scalar_src;
} nb_copy_cx;

static void nb_gather_run(void *p, int64_t pos, int64_t run) {
  nb_copy_cx *c = (nb_copy_cx *)p;
  memcpy(c->dst + (size_t)c->done * c->elem, c->src + (size_t)pos * c->elem, (size_t)run * c->elem);
  c->done += run;
}

static void nb_scatter_run(void *p, int64_t pos, int64_t run) {
  nb_copy_cx *c = (nb_copy_cx *)p;
  if (c->scalar_src) {
    for (int64_t k = 0; k < run; k++)
      memcpy(c->dst + (size_t)(pos + k) * c->elem, c->src, c->elem);
  } else {
    memmove(c->dst + (size_t)pos * c->elem, c->src + (size_t)c->done * c->elem, (size_t)run * c->elem);
  }
  c->done += run;
}

/* a[ix] for an array result: a view when the region is contiguous (a prefix
 * of fixed indices, then at most one stride-1 slice), else a fresh copy. */
static nb_arr nb_index(const char *loc, const nb_arr *a, int rank, size_t elem, const nb_ix *ix,
                       int n) {
  nb_check_region(loc, a, rank, ix, n);
  nb_arr r;
  int out_rank = 0;
  for (int k = 0; k < n; k++)
    if (ix[k].kind == 1) r.shape[out_rank++] = ix[k].b;
  for (int k = n; k < rank; k++) r.shape[out_rank++] = a->shape[k];
  for (int k = out_rank; k < NB_MAX_RANK; k++) r.shape[k] = 0;
  int nfix = 0;
  while (nfix < n && ix[nfix].kind == 0) nfix++;
  bool contiguous = nfix == n || (nfix == n - 1 && (ix[nfix].c == 1 || ix[nfix].b <= 1));
  if (contiguous) {
    int64_t stride = 1, off = 0;
    for (int k = rank - 1; k >= 0; k--) {
      if (k < n) off += ix[k].a * stride;
      stride *= a->shape[k];
    }
    r.mem = a->mem;
    if (r.mem) r.mem->rc++;
    r.data = a->data + (size_t)off * elem;
    return r;
  }
  nb_arr out = nb_alloc(out_rank, r.shape, elem, loc);
  nb_copy_cx c = {out.data, a->data, elem, 0, 0};
  nb_region_walk(a, rank, ix, n, nb_gather_run, &c);
  return out;
}

/* a with [ix] = value (in place; `a` must be unique): `src` points to a
 * scalar (src_rank 0) or the elements of an array of shape `src_shape`. */
static void nb_update(const char *loc, nb_arr *a, int rank, size_t elem, const nb_ix *ix, int n,
                      const void *src, const int64_t *src_shape, int src_rank) {
  nb_check_region(loc, a, rank, ix, n);
  int64_t shape[NB_MAX_RANK];
  int out_rank = 0;
  for (int k = 0; k < n; k++)
    if (ix[k].kind == 1) shape[out_rank++] = ix[k].b;
  for (int k = n; k < rank; k++) shape[out_rank++] = a->shape[k];
  bool ok = out_rank == src_rank;
  for (int k = 0; ok && k < out_rank; k++) ok = shape[k] == src_shape[k];
  if (!ok) {
    char x[512], y[512];
    nb_show_shape(x, sizeof x, src_shape, src_rank);
    nb_show_shape(y, sizeof y, shape, out_rank);
    nb_fail(loc, "size error: cannot write a value of shape %s into a slice of shape %s", x, y);
  }
  nb_copy_cx c = {a->data, (const char *)src, elem, 0, src_rank == 0};
  nb_region_walk(a, rank, ix, n, nb_scatter_run, &c);
}

static nb_arr nb_reshape(const char *loc, const nb_arr *a, int rank, int new_rank,
                         const int64_t *shape) {
  int64_t have = nb_count(a->shape, rank);
  __int128 want = 1;
  bool bad = false;
  for (int k = 0; k < new_rank; k++) {
    if (shape[k] < 0) bad = true;
    want *= shape[k];
    if (want > INT64_MAX) bad = true;
  }
  if (bad || want != have) {
    char x[512], y[512];
    nb_show_shape(x, sizeof x, a->shape, rank);
    nb_show_shape(y, sizeof y, shape, new_rank);
    nb_fail(loc, "size error: cannot reshape an array of shape %s to shape %s", x, y);
  }
  nb_arr r = nb_retain(*a);
  for (int k = 0; k < NB_MAX_RANK; k++) r.shape[k] = k < new_rank ? shape[k] : 0;
  return r;
}

static nb_arr nb_rearrange(const nb_arr *a, int rank, size_t elem, const int *perm) {
  int64_t shape[NB_MAX_RANK], in_stride[NB_MAX_RANK];
  int64_t s = 1;
  for (int k = rank - 1; k >= 0; k--) {
    in_stride[k] = s;
    s *= a->shape[k];
  }
  for (int k = 0; k < rank; k++) shape[k] = a->shape[perm[k]];
  nb_arr r = nb_alloc(rank, shape, elem, "");
  int64_t n = nb_count(shape, rank);
  if (n == 0) return r;
  /* One run of the result's innermost dimension at a time: a strided
   * read of the input (`step` elements apart), with a copy of constant
   * size for the common element sizes. */
  int64_t inner = shape[rank - 1], step = in_stride[perm[rank - 1]];
  int64_t cnt[NB_MAX_RANK] = {0};
  for (int64_t j = 0; j < n; j += inner) {
    int64_t p = 0;
    for (int k = 0; k < rank - 1; k++) p += cnt[k] * in_stride[perm[k]];
    char *out = r.data + (size_t)j * elem;
    const char *in = a->data + (size_t)p * elem;
    switch (elem) {
    case 8:
      for (int64_t q = 0; q < inner; q++) memcpy(out + q * 8, in + q * step * 8, 8);
      break;
    case 4:
      for (int64_t q = 0; q < inner; q++) memcpy(out + q * 4, in + q * step * 4, 4);
      break;
    case 2:
      for (int64_t q = 0; q < inner; q++) memcpy(out + q * 2, in + q * step * 2, 2);
      break;
    case 1:
      for (int64_t q = 0; q < inner; q++) out[q] = in[q * step];
      break;
    default:
      for (int64_t q = 0; q < inner; q++)
        memcpy(out + (size_t)q * elem, in + (size_t)(q * step) * elem, elem);
    }
    for (int k = rank - 2; k >= 0; k--) {
      if (++cnt[k] < shape[k]) break;
      cnt[k] = 0;
    }
  }
  return r;
}

static nb_arr nb_concat(const char *loc, int rank, size_t elem, int n, const nb_arr *xs) {
  int64_t shape[NB_MAX_RANK];
  for (int k = 0; k < rank; k++) shape[k] = xs[0].shape[k];
  shape[0] = 0;
  for (int j = 0; j < n; j++) {
    for (int k = 1; k < rank; k++) {
      if (xs[j].shape[k] != xs[0].shape[k]) {
        char x[512], y[512];
        nb_show_shape(x, sizeof x, xs[0].shape, rank);
        nb_show_shape(y, sizeof y, xs[j].shape, rank);
        nb_fail(loc, "size error: cannot concatenate arrays of shapes %s and %s", x, y);
      }
    }
    if (__builtin_add_overflow(shape[0], xs[j].shape[0], &shape[0]))
      nb_fail(loc, "size error: the concatenation has more than %" PRId64 " rows", INT64_MAX);
  }
  nb_arr r = nb_alloc(rank, shape, elem, loc);
  size_t off = 0;
  for (int j = 0; j < n; j++) {
    size_t bytes = (size_t)nb_count(xs[j].shape, rank) * elem;
    if (bytes) memcpy(r.data + off, xs[j].data, bytes);
    off += bytes;
  }
  return r;
}

/* Rows permuted: row i of the result is row src(i) of `a`; mode 0 = rotate by r, 1 = reverse. */
static nb_arr nb_permute_rows(const nb_arr *a, int rank, size_t elem, int mode, int64_t r) {
  nb_arr out = nb_alloc(rank, a->shape, elem, "");
  int64_t n = a->shape[0];
  size_t row = (size_t)nb_count(a->shape + 1, rank - 1) * elem;
  int64_t rot = 0;
  if (mode == 0 && n > 0) {
    rot = r % n;
    if (rot < 0) rot += n;
  }
  for (int64_t i = 0; row && i < n; i++) {
    int64_t src = mode == 0 ? (i + rot) % n : n - 1 - i;
    memcpy(out.data + (size_t)i * row, a->data + (size_t)src * row, row);
  }
  return out;
}

static nb_arr nb_replicate(const char *loc, int64_t n, int rank, size_t elem, const void *x,
                           const int64_t *x_shape, int x_rank) {
  if (n < 0) nb_fail(loc, "replicate: negative size %" PRId64, n);
  int64_t shape[NB_MAX_RANK];
  shape[0] = n;
  for (int k = 0; k < x_rank; k++) shape[k + 1] = x_shape[k];
  nb_arr r = nb_alloc(rank, shape, elem, loc);
  size_t row = (size_t)nb_count(x_shape, x_rank) * elem;
  /* Rows of 0 bytes: nothing to fill (n may be huge). */
  if (row)
    for (int64_t i = 0; i < n; i++) memcpy(r.data + (size_t)i * row, x, row);
  return r;
}

/* The array's shape must have `rank` dimensions with outer size `w` (SOAC inputs). */
static inline void nb_check_width(const char *loc, const char *what, const char *name,
                                  const nb_arr *a, int64_t w) {
  if (a->shape[0] != w)
    nb_fail(loc, "size error: %s: input array %s has outer size %" PRId64 ", but the width is %" PRId64,
            what, name, a->shape[0], w);
}

/* ---------- scalar operators ---------- */

/* min/max of floats as C's fmin/fmax (a NaN operand gives the other one),
   inline: the libm calls cost more than the comparison on hot paths. */
/* Futhark's min and max: a NaN operand loses to a number. Written as a
 * select of the hardware's min (which returns y when either is NaN) and a
 * NaN test of y, which compile without branches (vminsd, vcmpunordsd,
 * vblendvpd): with `x < y || y != y` GCC branched on data, which mispredicts
 * in a reduction that takes a running minimum. */
#define NB_FLOAT_MIN_MAX(T, S)                                                                \
  static inline T nb_fmin##S(T x, T y) {                                                     \
    T m = x < y ? x : y;                                                                     \
    return y != y ? x : m;                                                                   \
  }                                                                                          \
  static inline T nb_fmax##S(T x, T y) {                                                     \
    T m = x > y ? x : y;                                                                     \
    return y != y ? x : m;                                                                   \
  }
NB_FLOAT_MIN_MAX(double, 64)
NB_FLOAT_MIN_MAX(float, 32)

#define NB_INT_OPS(T, U, S, BITS, SIGNED)                                                     \
  /* Arithmetic in uint64_t: no promotion to (signed) int, so no overflow. */              \
  static inline T nb_add_##S(T x, T y) { return (T)((uint64_t)(U)x + (uint64_t)(U)y); }      \
  static inline T nb_sub_##S(T x, T y) { return (T)((uint64_t)(U)x - (uint64_t)(U)y); }      \
  static inline T nb_mul_##S(T x, T y) { return (T)((uint64_t)(U)x * (uint64_t)(U)y); }      \
  static inline T nb_neg_##S(T x) { return (T)((uint64_t)0 - (uint64_t)(U)x); }              \
  static inline T nb_pow_##S(T x, T y) {                                                     \
    uint64_t b = (U)x, r = 1;                                                                \
    U e = (U)y;                                                                              \
    while (e != 0) {                                                                         \
      if (e & 1) r = (U)(r * b);                                                             \
      e >>= 1;                                                                               \
      b = (U)(b * b);                                                                        \
    }                                                                                        \
    return (T)r;                                                                             \
  }                                                                                          \
  static inline T nb_shl_##S(T x, T y) { return (U)y >= BITS ? 0 : (T)((uint64_t)(U)x << (U)y); } \
  static inline T nb_lshr_##S(T x, T y) { return (U)y >= BITS ? 0 : (T)((U)x >> (U)y); }     \
  static inline int32_t nb_popc_##S(T x) { return __builtin_popcountll((uint64_t)(U)x); }    \
  static inline int32_t nb_clz_##S(T x) {                                                    \
    return (U)x == 0 ? BITS : __builtin_clzll((uint64_t)(U)x) - (64 - BITS);                 \
  }                                                                                          \
  static inline int32_t nb_ctz_##S(T x) { return (U)x == 0 ? BITS : __builtin_ctzll((uint64_t)(U)x); } \
  static inline T nb_min_##S(T x, T y) { return x < y ? x : y; }                             \
  static inline T nb_max_##S(T x, T y) { return x < y ? y : x; }

NB_INT_OPS(int8_t, uint8_t, i8, 8, 1)
NB_INT_OPS(int16_t, uint16_t, i16, 16, 1)
NB_INT_OPS(int32_t, uint32_t, i32, 32, 1)
NB_INT_OPS(int64_t, uint64_t, i64, 64, 1)
NB_INT_OPS(uint8_t, uint8_t, u8, 8, 0)
NB_INT_OPS(uint16_t, uint16_t, u16, 16, 0)
NB_INT_OPS(uint32_t, uint32_t, u32, 32, 0)
NB_INT_OPS(uint64_t, uint64_t, u64, 64, 0)

__attribute__((noreturn, cold)) static void nb_div_zero(const char *loc) {
  nb_fail(loc, "division by zero");
}

#define NB_SIGNED_OPS(T, U, S, BITS, MIN)                                                     \
  static inline T nb_quot_##S(T x, T y, const char *loc) {                                   \
    if (y == 0) nb_div_zero(loc);                                                            \
    if (y == -1) return nb_neg_##S(x);                                                       \
    return (T)(x / y);                                                                       \
  }                                                                                          \
  static inline T nb_rem_##S(T x, T y, const char *loc) {                                    \
    if (y == 0) nb_div_zero(loc);                                                            \
    if (y == -1) return 0;                                                                   \
    return (T)(x % y);                                                                       \
  }                                                                                          \
  static inline T nb_div_##S(T x, T y, const char *loc) {                                    \
    T q = nb_quot_##S(x, y, loc);                                                            \
    T r = nb_rem_##S(x, y, loc);                                                             \
    return (r != 0 && ((r < 0) != (y < 0))) ? (T)(q - 1) : q;                                \
  }                                                                                          \
  static inline T nb_mod_##S(T x, T y, const char *loc) {                                    \
    T r = nb_rem_##S(x, y, loc);                                                             \
    return (r != 0 && ((r < 0) != (y < 0))) ? (T)(r + y) : r;                                \
  }                                                                                          \
  static inline T nb_ashr_##S(T x, T y) {                                                    \
    if ((U)y >= BITS) return x < 0 ? -1 : 0;                                                 \
    return (T)(x >> (U)y);                                                                   \
  }                                                                                          \
  static inline T nb_abs_##S(T x) { return x < 0 ? nb_neg_##S(x) : x; }                      \
  static inline T nb_sgn_##S(T x) { return (T)((x > 0) - (x < 0)); }

NB_SIGNED_OPS(int8_t, uint8_t, i8, 8, INT8_MIN)
NB_SIGNED_OPS(int16_t, uint16_t, i16, 16, INT16_MIN)
NB_SIGNED_OPS(int32_t, uint32_t, i32, 32, INT32_MIN)
NB_SIGNED_OPS(int64_t, uint64_t, i64, 64, INT64_MIN)

#define NB_UNSIGNED_OPS(T, S, BITS)                                                           \
  static inline T nb_quot_##S(T x, T y, const char *loc) {                                   \
    if (y == 0) nb_div_zero(loc);                                                            \
    return (T)(x / y);                                                                       \
  }                                                                                          \
  static inline T nb_rem_##S(T x, T y, const char *loc) {                                    \
    if (y == 0) nb_div_zero(loc);                                                            \
    return (T)(x % y);                                                                       \
  }                                                                                          \
  static inline T nb_div_##S(T x, T y, const char *loc) { return nb_quot_##S(x, y, loc); }  \
  static inline T nb_mod_##S(T x, T y, const char *loc) { return nb_rem_##S(x, y, loc); }   \
  static inline T nb_ashr_##S(T x, T y) { return nb_lshr_##S(x, y); }                        \
  static inline T nb_abs_##S(T x) { return x; }                                              \
  static inline T nb_sgn_##S(T x) { return (T)(x != 0); }

NB_UNSIGNED_OPS(uint8_t, u8, 8)
NB_UNSIGNED_OPS(uint16_t, u16, 16)
NB_UNSIGNED_OPS(uint32_t, u32, 32)
NB_UNSIGNED_OPS(uint64_t, u64, 64)

static inline double nb_sgn_f64(double x) { return isnan(x) ? x : (double)((x > 0) - (x < 0)); }
static inline float nb_sgn_f32(float x) { return isnan(x) ? x : (float)((x > 0) - (x < 0)); }

#ifdef NB_HAVE_F16
static inline nb_f16_arg nb_f16_from_bits(uint16_t b) {
  nb_f16 x;
  memcpy(&x, &b, 2);
  return x;
}
static inline uint16_t nb_f16_to_bits(nb_f16_arg v) {
  nb_f16 x = (nb_f16)v;
  uint16_t b;
  memcpy(&b, &x, 2);
  return b;
}
#endif
static inline double nb_f64_from_bits(uint64_t b) {
  double x;
  memcpy(&x, &b, 8);
  return x;
}
static inline float nb_f32_from_bits(uint32_t b) {
  float x;
  memcpy(&x, &b, 4);
  return x;
}
static inline uint64_t nb_f64_to_bits(double x) {
  uint64_t b;
  memcpy(&b, &x, 8);
  return b;
}
static inline uint32_t nb_f32_to_bits(float x) {
  uint32_t b;
  memcpy(&b, &x, 4);
  return b;
}

/* Float → integer: truncation, NaN/inf → 0, out of range wraps modulo 2^64. */
static inline uint64_t nb_f64_to_u64_wrapping(double x) {
  if (!isfinite(x)) return 0;
  double t = trunc(x);
  if (fabs(t) < 9223372036854775808.0) return (uint64_t)(int64_t)t;
  uint64_t bits = nb_f64_to_bits(t);
  int64_t e = (int64_t)((bits >> 52) & 0x7ff) - 1075;
  uint64_t m = (bits & ((1ULL << 52) - 1)) | (1ULL << 52);
  uint64_t mag = e >= 64 ? 0 : m << e;
  return t < 0.0 ? (uint64_t)0 - mag : mag;
}

/* ψ⁽ⁿ⁾(x) for n = 0 (digamma) and n = 1 (trigamma): recurrence above 12,
 * then the asymptotic series; reflection for digamma at negative x. */
static double nb_polygamma(int n, double x) {
  if (isnan(x) || (x <= 0.0 && x == floor(x))) return NAN;
  if (n == 0 && x < 0.0) return nb_polygamma(0, 1.0 - x) - M_PI / tan(M_PI * x);
  if (x == INFINITY) return n == 0 ? INFINITY : 0.0;
  if (x < -1e6) return NAN;
  static const double bern[8] = {1.0 / 6.0,  -1.0 / 30.0, 1.0 / 42.0, -1.0 / 30.0,
                                 5.0 / 66.0, -691.0 / 2730.0, 7.0 / 6.0, -3617.0 / 510.0};
  double fact_n = n == 0 ? 1.0 : 1.0;
  double sign = n % 2 == 0 ? -1.0 : 1.0;
  double shifted = 0.0;
  while (x < 12.0) {
    shifted += sign * fact_n / pow(x, n + 1.0);
    x += 1.0;
  }
  double s;
  if (n == 0) {
    s = log(x) - 0.5 / x;
    for (int k = 0; k < 8; k++) {
      double k2 = 2.0 * (k + 1.0);
      s -= bern[k] / (k2 * pow(x, k2));
    }
    return s + shifted;
  }
  /* n == 1: 1/x + 1/(2x²) + Σ B_2k / x^(2k+1) */
  s = 1.0 / x + 1.0 / (2.0 * x * x);
  for (int k = 0; k < 8; k++) {
    double k2 = 2.0 * (k + 1.0);
    s += bern[k] / pow(x, k2 + 1.0);
  }
  return s + shifted;
}

/* ---------- value input ---------- */

typedef struct nb_reader {
  const unsigned char *buf;
  size_t len, pos;
} nb_reader;

enum { NB_I8, NB_I16, NB_I32, NB_I64, NB_U8, NB_U16, NB_U32, NB_U64, NB_F16, NB_F32, NB_F64, NB_BOOL };
static const char *const nb_type_names[] = {"i8",  "i16", "i32", "i64", "u8",  "u16",
                                            "u32", "u64", "f16", "f32", "f64", "bool"};
static const char *const nb_binary_tags[] = {"  i8", " i16", " i32", " i64", "  u8", " u16",
                                             " u32", " u64", " f16", " f32", " f64", "bool"};
static const size_t nb_type_sizes[] = {1, 2, 4, 8, 1, 2, 4, 8, 2, 4, 8, 1};

__attribute__((noreturn)) static void nb_input_error(nb_reader *r, const char *msg) {
  size_t line = 1, col = 1;
  for (size_t i = 0; i < r->pos && i < r->len; i++) {
    if (r->buf[i] == '\n') line++, col = 1;
    else col++;
  }
  nb_fail("", "cannot read input: %zu:%zu: %s", line, col, msg);
}

static void nb_skip_ws(nb_reader *r) {
  for (;;) {
    while (r->pos < r->len && (r->buf[r->pos] == ' ' || r->buf[r->pos] == '\t' ||
                               r->buf[r->pos] == '\n' || r->buf[r->pos] == '\r'))
      r->pos++;
    if (r->pos + 1 < r->len && r->buf[r->pos] == '-' && r->buf[r->pos + 1] == '-') {
      while (r->pos < r->len && r->buf[r->pos] != '\n') r->pos++;
      continue;
    }
    return;
  }
}

static bool nb_is_word(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '.';
}

static bool nb_accept(nb_reader *r, const char *s) {
  size_t n = strlen(s);
  if (r->pos + n <= r->len && memcmp(r->buf + r->pos, s, n) == 0) {
    r->pos += n;
    return true;
  }
  return false;
}

/* A growing buffer of elements (counted against the memory limit). */
typedef struct nb_elems {
  char *data;
  size_t n, cap, elem;
} nb_elems;

static void nb_elems_reset(nb_elems *e) {
  nb_counted_free(e->data, e->cap * e->elem);
  e->data = NULL;
  e->n = e->cap = 0;
}

static void nb_push(nb_elems *e, const void *x) {
  if (e->n == e->cap) {
    size_t cap = e->cap ? e->cap * 2 : 64, bytes;
    if (__builtin_mul_overflow(cap, e->elem, &bytes)) nb_oom("", SIZE_MAX, "the input's elements");
    e->data = (char *)nb_counted_realloc(e->data, e->cap * e->elem, bytes, "", "the input's elements");
    e->cap = cap;
  }
  memcpy(e->data + e->n * e->elem, x, e->elem);
  e->n++;
}

/* Reads one scalar literal of type t into out. */
static void nb_read_scalar(nb_reader *r, int t, void *out) {
  nb_skip_ws(r);
  size_t start = r->pos;
  while (r->pos < r->len && (nb_is_word(r->buf[r->pos]) || r->buf[r->pos] == '-' ||
                             r->buf[r->pos] == '+'))
    r->pos++;
  size_t n = r->pos - start;
  if (n == 0 || n > 400) nb_input_error(r, "expected a value");
  char tok[512];
  size_t m = 0;
  for (size_t i = 0; i < n; i++)
    if (r->buf[start + i] != '_') tok[m++] = (char)r->buf[start + i];
  tok[m] = 0;
  if (t == NB_BOOL) {
    bool b;
    if (strcmp(tok, "true") == 0) b = true;
    else if (strcmp(tok, "false") == 0) b = false;
    else nb_input_error(r, "expected a bool");
    memcpy(out, &b, 1);
    return;
  }
  /* strip a type suffix */
  const char *want = nb_type_names[t];
  size_t wl = strlen(want);
  bool is_float_t = t == NB_F32 || t == NB_F64 || t == NB_F16;
  char *suffix = NULL;
  for (int k = 0; k < 12; k++) {
    size_t kl = strlen(nb_type_names[k]);
    if (m > kl && strcmp(tok + m - kl, nb_type_names[k]) == 0 && k != NB_BOOL) {
      char before = tok[m - kl - 1];
      if ((before >= '0' && before <= '9') || before == '.') {
        /* "0x1f32" would be ambiguous; hex literals take no float suffix */
        suffix = tok + m - kl;
        break;
      }
    }
  }
  if (suffix) {
    if (strcmp(suffix, want) != 0) {
      char msg[128];
      snprintf(msg, sizeof msg, "expected a value of type %s, got %s", want, suffix);
      nb_input_error(r, msg);
    }
    *suffix = 0;
    (void)wl;
  }
  if (is_float_t) {
    double x;
    const char *s = tok;
    bool neg = false;
    if (*s == '-') neg = true, s++;
    if (strcmp(s, "f64.nan") == 0 || strcmp(s, "f32.nan") == 0 || strcmp(s, "f16.nan") == 0) {
      if (strncmp(s, want, 3) != 0) nb_input_error(r, "float of another type");
      x = NAN;
    } else if (strcmp(s, "f64.inf") == 0 || strcmp(s, "f32.inf") == 0 || strcmp(s, "f16.inf") == 0) {
      if (strncmp(s, want, 3) != 0) nb_input_error(r, "float of another type");
      x = neg ? -INFINITY : INFINITY;
    } else {
      char *end;
      errno = 0;
      if (t == NB_F32) {
        float f = strtof(tok, &end);
        if (*end || end == tok) nb_input_error(r, "bad float literal");
        memcpy(out, &f, 4);
        return;
      }
      x = strtod(tok, &end);
      if (*end || end == tok) nb_input_error(r, "bad float literal");
    }
    if (t == NB_F32) {
      float f = (float)x;
      memcpy(out, &f, 4);
    } else if (t == NB_F64) {
      memcpy(out, &x, 8);
    } else {
#ifdef NB_HAVE_F16
      nb_f16 h = nb_f16_of_f64(x); /* via f64, as nabla-values reads f16 */
      memcpy(out, &h, 2);
#else
      nb_input_error(r, "f16 needs a C compiler with _Float16 or __fp16");
#endif
    }
    return;
  }
  /* integers: decimal, 0x, 0b, optional sign */
  const char *s = tok;
  bool neg = false;
  if (*s == '-') neg = true, s++;
  else if (*s == '+') s++;
  int base = 10;
  if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) base = 16, s += 2;
  else if (s[0] == '0' && (s[1] == 'b' || s[1] == 'B')) base = 2, s += 2;
  if (!*s) nb_input_error(r, "bad integer literal");
  unsigned __int128 v = 0;
  for (; *s; s++) {
    int d;
    if (*s >= '0' && *s <= '9') d = *s - '0';
    else if (*s >= 'a' && *s <= 'f') d = *s - 'a' + 10;
    else if (*s >= 'A' && *s <= 'F') d = *s - 'A' + 10;
    else nb_input_error(r, "bad integer literal");
    if (d >= base) nb_input_error(r, "bad integer literal");
    v = v * base + d;
    if (v > ((unsigned __int128)1 << 70)) nb_input_error(r, "integer literal out of range");
  }
  int bits = (int)nb_type_sizes[t] * 8;
  unsigned __int128 lim_pos = ((unsigned __int128)1 << bits) - 1;
  unsigned __int128 lim_neg = (unsigned __int128)1 << (bits - 1);
  if ((!neg && v > lim_pos) || (neg && v > lim_neg)) nb_input_error(r, "integer literal out of range");
  uint64_t u = (uint64_t)v;
  if (neg) u = (uint64_t)0 - u;
  memcpy(out, &u, nb_type_sizes[t]); /* little-endian: the low bytes */
}

static int nb_read_dims(nb_reader *r, int64_t *shape, int rank, int t) {
  /* after "empty(": [d]…type ")". A dimension is an integer literal, read
   * within the input (the buffer has no terminating NUL: strtoll could read
   * past its end) and refused past 2^63 - 1, as nabla-values does. */
  for (int k = 0; k < rank; k++) {
    nb_skip_ws(r);
    if (!nb_accept(r, "[")) nb_input_error(r, "expected [ in empty()");
    int64_t d;
    nb_read_scalar(r, NB_I64, &d);
    if (d < 0) nb_input_error(r, "bad dimension");
    shape[k] = d;
    nb_skip_ws(r);
    if (!nb_accept(r, "]")) nb_input_error(r, "expected ] in empty()");
  }
  nb_skip_ws(r);
  if (!nb_accept(r, nb_type_names[t])) nb_input_error(r, "empty(): wrong element type or rank");
  nb_skip_ws(r);
  if (!nb_accept(r, ")")) nb_input_error(r, "expected ) after empty(");
  return 0;
}

/* Reads a textual array of the given rank: nested brackets, regular. */
static void nb_read_text_array(nb_reader *r, int t, int rank, int depth, int64_t *shape,
                               bool *seen, nb_elems *e) {
  nb_skip_ws(r);
  if (nb_accept(r, "empty(")) {
    int64_t sh[NB_MAX_RANK];
    nb_read_dims(r, sh, rank - depth, t);
    int64_t cnt = nb_count(sh, rank - depth);
    if (cnt != 0) nb_input_error(r, "empty() with no zero dimension");
    for (int k = depth; k < rank; k++) {
      if (seen[k] && shape[k] != sh[k - depth]) nb_input_error(r, "irregular array");
      shape[k] = sh[k - depth];
      seen[k] = true;
    }
    return;
  }
  if (depth == rank) {
    char x[8];
    nb_read_scalar(r, t, x);
    nb_push(e, x);
    return;
  }
  if (!nb_accept(r, "[")) nb_input_error(r, "expected [");
  int64_t n = 0;
  nb_skip_ws(r);
  if (!nb_accept(r, "]")) {
    for (;;) {
      nb_read_text_array(r, t, rank, depth + 1, shape, seen, e);
      n++;
      nb_skip_ws(r);
      if (nb_accept(r, ",")) {
        nb_skip_ws(r);
        if (nb_accept(r, "]")) break;
        continue;
      }
      if (nb_accept(r, "]")) break;
      nb_input_error(r, "expected , or ]");
    }
  } else if (depth + 1 < rank) {
    for (int k = depth + 1; k < rank; k++)
      if (!seen[k]) shape[k] = 0, seen[k] = true;
  }
  if (seen[depth] && shape[depth] != n) nb_input_error(r, "irregular array");
  shape[depth] = n;
  seen[depth] = true;
}

static void nb_read_binary_header(nb_reader *r, int t, int rank, int64_t *shape) {
  if (r->pos + 7 > r->len) nb_input_error(r, "truncated binary value");
  int version = r->buf[r->pos + 1];
  int got_rank = r->buf[r->pos + 2];
  if (version != 2) nb_input_error(r, "unsupported binary format version");
  if (got_rank != rank || memcmp(r->buf + r->pos + 3, nb_binary_tags[t], 4) != 0) {
    char msg[128];
    snprintf(msg, sizeof msg, "binary value does not have the expected type (rank %d %s)", rank,
             nb_type_names[t]);
    nb_input_error(r, msg);
  }
  r->pos += 7;
  for (int k = 0; k < rank; k++) {
    if (r->pos + 8 > r->len) nb_input_error(r, "truncated binary value");
    uint64_t d;
    memcpy(&d, r->buf + r->pos, 8);
    if ((int64_t)d < 0) nb_input_error(r, "bad binary dimension");
    shape[k] = (int64_t)d;
    r->pos += 8;
  }
}

/* The text reader's element buffer: static, so that a failure's cleanup
 * can free it (library mode). */
static nb_elems nb_text_elems;

/* Reads one value of element type t and rank; arrays go to *arr, scalars to scalar. */
static void nb_read_value(nb_reader *r, int t, int rank, void *scalar, nb_arr *arr) {
  nb_skip_ws(r);
  if (r->pos >= r->len) nb_input_error(r, "expected a value, found the end of the input");
  size_t elem = nb_type_sizes[t];
  if (r->buf[r->pos] == 'b' && r->pos + 1 < r->len && r->buf[r->pos + 1] == 2) {
    int64_t shape[NB_MAX_RANK];
    nb_read_binary_header(r, t, rank, shape);
    int64_t n = rank ? nb_count(shape, rank) : 1;
    if ((__int128)n * elem > (__int128)(r->len - r->pos)) nb_input_error(r, "truncated binary value");
    if (rank == 0) {
      memcpy(scalar, r->buf + r->pos, elem);
    } else {
      *arr = nb_alloc(rank, shape, elem, "");
      memcpy(arr->data, r->buf + r->pos, (size_t)n * elem);
    }
    if (t == NB_BOOL) {
      char *p = rank ? arr->data : (char *)scalar;
      for (int64_t i = 0; i < n; i++) p[i] = p[i] != 0;
    }
    r->pos += (size_t)n * elem;
    return;
  }
  if (rank == 0) {
    nb_read_scalar(r, t, scalar);
    return;
  }
  int64_t shape[NB_MAX_RANK] = {0};
  bool seen[NB_MAX_RANK] = {0};
  nb_elems *e = &nb_text_elems;
  nb_elems_reset(e);
  e->elem = elem;
  nb_read_text_array(r, t, rank, 0, shape, seen, e);
  if ((int64_t)e->n != nb_count(shape, rank)) nb_input_error(r, "irregular array");
  *arr = nb_alloc(rank, shape, elem, "");
  if (e->n) memcpy(arr->data, e->data, e->n * elem);
  nb_elems_reset(e);
}

static void nb_read_end(nb_reader *r) {
  nb_skip_ws(r);
  if (r->pos < r->len) nb_input_error(r, "more values than the entry point takes");
}

/* All of `f`, in a buffer counted against the memory limit: its length
 * in *len and its capacity (for nb_counted_free) in *cap_out. NULL, with
 * nothing allocated or counted, when it does not fit. */
static unsigned char *nb_try_read_all(FILE *f, size_t *len, size_t *cap_out) {
  size_t cap = 1 << 16, n = 0;
  if (!nb_mem_take(cap)) return NULL;
  unsigned char *b = (unsigned char *)malloc(cap);
  if (!b) {
    nb_mem_give(cap);
    return NULL;
  }
  for (;;) {
    size_t got = fread(b + n, 1, cap - n, f);
    n += got;
    if (n < cap) break;
    bool taken = cap <= SIZE_MAX / 2 && nb_mem_take(cap);
    unsigned char *grown = taken ? (unsigned char *)realloc(b, cap * 2) : NULL;
    if (!grown) {
      if (taken) nb_mem_give(cap);
      nb_counted_free(b, cap);
      *len = n;
      return NULL;
    }
    b = grown;
    cap *= 2;
  }
  *len = n;
  *cap_out = cap;
  return b;
}

/* nb_try_read_all, failing with "out of memory" when the input does not fit. */
static unsigned char *nb_read_all(FILE *f, size_t *len, size_t *cap_out) {
  unsigned char *b = nb_try_read_all(f, len, cap_out);
  if (!b) nb_oom("", *len * 2, "the input");
  return b;
}

/* ---------- value output ---------- */

/* Shortest round-tripping digits, laid out as Haskell's show (nabla-values' printer). */
static void nb_put_float(FILE *o, double x, bool is_f32, const char *suffix) {
  if (isnan(x)) {
    fprintf(o, "%s.nan", suffix);
    return;
  }
  if (isinf(x)) {
    fprintf(o, "%s%s.inf", x < 0 ? "-" : "", suffix);
    return;
  }
  char buf[64];
  int prec;
  for (prec = 1; prec <= 17; prec++) {
    snprintf(buf, sizeof buf, "%.*e", prec - 1, x);
    if (is_f32) {
      if (strtof(buf, NULL) == (float)x) break;
    } else if (strtod(buf, NULL) == x) {
      break;
    }
  }
  /* buf = [-]d.ddde[+-]xx */
  const char *s = buf;
  if (*s == '-') {
    fputc('-', o);
    s++;
  }
  char digits[32];
  int nd = 0;
  const char *p = s;
  for (; *p && *p != 'e'; p++)
    if (*p != '.') digits[nd++] = *p;
  while (nd > 1 && digits[nd - 1] == '0') nd--;
  digits[nd] = 0;
  long e10 = strtol(p + 1, NULL, 10);
  if (nd == 1 && digits[0] == '0') {
    fprintf(o, "0.0%s", suffix);
    return;
  }
  long e = e10 + 1;
  if (e >= 0 && e <= 7) {
    if (e == 0) {
      fprintf(o, "0.%s", digits);
    } else if (nd <= e) {
      fputs(digits, o);
      for (long k = nd; k < e; k++) fputc('0', o);
      fputs(".0", o);
    } else {
      fprintf(o, "%.*s.%s", (int)e, digits, digits + e);
    }
  } else {
    fprintf(o, "%c.%s", digits[0], nd > 1 ? digits + 1 : "0");
    fprintf(o, "e%ld", e - 1);
  }
  fputs(suffix, o);
}

static void nb_put_scalar(FILE *o, int t, const void *p) {
  switch (t) {
  case NB_I8: fprintf(o, "%di8", *(const int8_t *)p); break;
  case NB_I16: fprintf(o, "%di16", *(const int16_t *)p); break;
  case NB_I32: fprintf(o, "%" PRId32 "i32", *(const int32_t *)p); break;
  case NB_I64: fprintf(o, "%" PRId64 "i64", *(const int64_t *)p); break;
  case NB_U8: fprintf(o, "%uu8", *(const uint8_t *)p); break;
  case NB_U16: fprintf(o, "%uu16", *(const uint16_t *)p); break;
  case NB_U32: fprintf(o, "%" PRIu32 "u32", *(const uint32_t *)p); break;
  case NB_U64: fprintf(o, "%" PRIu64 "u64", *(const uint64_t *)p); break;
#ifdef NB_HAVE_F16
  case NB_F16: nb_put_float(o, (float)*(const nb_f16 *)p, true, "f16"); break;
#endif
  case NB_F32: nb_put_float(o, *(const float *)p, true, "f32"); break;
  case NB_F64: nb_put_float(o, *(const double *)p, false, "f64"); break;
  case NB_BOOL: fputs(*(const bool *)p ? "true" : "false", o); break;
  default: break;
  }
}

static void nb_put_nested(FILE *o, int t, const int64_t *shape, int rank, const char *data,
                          size_t elem) {
  if (rank == 0) {
    nb_put_scalar(o, t, data);
    return;
  }
  size_t row = (size_t)nb_count(shape + 1, rank - 1) * elem;
  fputc('[', o);
  for (int64_t i = 0; i < shape[0]; i++) {
    if (i > 0) fputs(", ", o);
    nb_put_nested(o, t, shape + 1, rank - 1, data + (size_t)i * row, elem);
  }
  fputc(']', o);
}

static void nb_put_value(FILE *o, int t, int rank, const void *scalar, const nb_arr *a,
                         bool binary) {
  size_t elem = nb_type_sizes[t];
  if (binary) {
    fputc('b', o);
    fputc(2, o);
    fputc(rank, o);
    fputs(nb_binary_tags[t], o);
    for (int k = 0; k < rank; k++) fwrite(&a->shape[k], 8, 1, o);
    if (rank == 0) fwrite(scalar, elem, 1, o);
    else fwrite(a->data, elem, (size_t)nb_count(a->shape, rank), o);
    return;
  }
  if (rank == 0) {
    nb_put_scalar(o, t, scalar);
  } else if (nb_count(a->shape, rank) == 0) {
    fputs("empty(", o);
    for (int k = 0; k < rank; k++) fprintf(o, "[%" PRId64 "]", a->shape[k]);
    fprintf(o, "%s)", nb_type_names[t]);
  } else {
    nb_put_nested(o, t, a->shape, rank, a->data, elem);
  }
  fputc('\n', o);
}

/* ---------- command line ---------- */

typedef struct nb_options {
  const char *entry;
  int runs; /* 0: one untimed-warm-up-free run */
  const char *timing_file;
  bool binary;
  bool no_output;
} nb_options;

/* The value of option `name` at argv[*i] ("--name=VALUE" in `a` itself, or
 * the next word); exits with status 2 when there is none. */
static const char *nb_option_value(int argc, char **argv, int *i, const char *name) {
  const char *a = argv[*i];
  size_t n = strlen(name);
  if (strncmp(a, name, n) == 0 && a[n] == '=') return a + n + 1;
  if (*i + 1 >= argc) {
    fprintf(stderr, "%s: option %s needs a value\n", argv[0], a);
    exit(2);
  }
  return argv[++*i];
}

/* Whether `a` is option `name`, alone or as "name=VALUE" (long options). */
static bool nb_is_option(const char *a, const char *name) {
  size_t n = strlen(name);
  return strncmp(a, name, n) == 0 && (a[n] == 0 || (name[1] == '-' && a[n] == '='));
}

/* `--memory-limit SIZE`'s value (see nb_parse_size; 0: no limit); exits
 * with status 2 when it is not a size. */
static void nb_set_memory_limit_option(const char *prog, const char *v) {
  int64_t lim;
  if (!nb_parse_size(v, &lim)) {
    fprintf(stderr,
            "%s: --memory-limit needs a size in bytes (digits, optionally followed by K, M, G or "
            "T; 0: no limit), not '%s'\n",
            prog, v);
    exit(2);
  }
  nb_mem_limit = lim;
}

static void nb_parse_options(int argc, char **argv, nb_options *o) {
  o->entry = "main";
  o->runs = 0;
  o->timing_file = NULL;
  o->binary = false;
  o->no_output = false;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (nb_is_option(a, "-e") || nb_is_option(a, "--entry-point")) {
      o->entry = nb_option_value(argc, argv, &i, "--entry-point");
    } else if (nb_is_option(a, "-r") || nb_is_option(a, "--runs")) {
      const char *v = nb_option_value(argc, argv, &i, "--runs");
      char *end;
      errno = 0;
      long runs = strtol(v, &end, 10);
      if (end == v || *end || errno || runs < 1 || runs > 1000000000L) {
        fprintf(stderr, "%s: -r needs a positive number of runs (at most 10^9), not '%s'\n",
                argv[0], v);
        exit(2);
      }
      o->runs = (int)runs;
    } else if (nb_is_option(a, "-t") || nb_is_option(a, "--write-runtime-to")) {
      o->timing_file = nb_option_value(argc, argv, &i, "--write-runtime-to");
    } else if (nb_is_option(a, "--memory-limit")) {
      nb_set_memory_limit_option(argv[0], nb_option_value(argc, argv, &i, "--memory-limit"));
    } else if (strcmp(a, "-b") == 0 || strcmp(a, "--binary-output") == 0) {
      o->binary = true;
    } else if (strcmp(a, "-n") == 0 || strcmp(a, "--no-print-result") == 0) {
      o->no_output = true;
    } else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
      printf("usage: %s [-e ENTRY] [-r RUNS] [-t FILE] [-b] [-n] [--memory-limit SIZE] < input\n"
             "  --memory-limit SIZE  refuse allocations past SIZE bytes in all (K, M, G, T "
             "suffixes; 0: no limit; default: 3/4 of the physical memory, at most ulimit -v)\n",
             argv[0]);
      exit(0);
    } else {
      fprintf(stderr, "%s: unknown option %s\n", argv[0], a);
      exit(2);
    }
  }
}

static int64_t nb_now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* *r = row j of an array (a view; `*r` holds no reference before;
 * `borrow` as for nb_subarray; always inlined, see nb_subarray). */
__attribute__((always_inline)) static inline void nb_row(nb_arr *restrict r,
                                                        const nb_arr *restrict a, int rank,
                                                        size_t elem, int64_t j, int borrow) {
  r->mem = borrow ? NULL : a->mem;
  if (r->mem) r->mem->rc++;
  int64_t row = 1;
#pragma GCC unroll 8
  for (int k = 1; k < rank; k++) row *= a->shape[k];
  r->data = a->data + (size_t)(j * row) * elem;
#pragma GCC unroll 8
  for (int k = 0; k < NB_MAX_RANK; k++) r->shape[k] = k + 1 < rank ? a->shape[k + 1] : 0;
}

/* Allocates the result of a SOAC from its first row (shape [w] ++ row shape). */
static inline nb_arr nb_alloc_rows(const char *loc, int64_t w, int row_rank, const int64_t *row_shape,
                                   size_t elem) {
  int64_t shape[NB_MAX_RANK];
  shape[0] = w;
  for (int k = 0; k < row_rank; k++) shape[k + 1] = row_shape[k];
  return nb_alloc(row_rank + 1, shape, elem, loc);
}

/* Stores row j of a SOAC result: `row` must have the shape of the result's rows. */
static inline void nb_store_row(const char *loc, nb_arr *out, int row_rank, size_t elem, int64_t j,
                                const nb_arr *row) {
  for (int k = 0; k < row_rank; k++) {
    if (row->shape[k] != out->shape[k + 1]) {
      char x[512], y[512];
      nb_show_shape(x, sizeof x, out->shape + 1, row_rank);
      nb_show_shape(y, sizeof y, row->shape, row_rank);
      nb_fail(loc, "size error: irregular array: rows of shapes %s and %s", x, y);
    }
  }
  size_t bytes = (size_t)nb_count(row->shape, row_rank) * elem;
  if (bytes) memmove(out->data + (size_t)j * bytes, row->data, bytes);
}
