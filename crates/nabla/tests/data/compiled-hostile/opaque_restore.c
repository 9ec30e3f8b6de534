/* futhark_restore of an opaque value whose stored dimensions are hostile:
 * a product past 2^64 is refused with an error (it was a signed overflow
 * in nb_opaque_stored_length: undefined behaviour, caught by UBSan), and
 * an empty array with a huge dimension is restored as what it is. Prints
 * one line per case: whether a value came back, the error's first line,
 * and what `rows` says of it. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "opaque_restore.h"

/* The stored form of (7i64, a [d0][d1]f64 array holding `elems` zeros). */
static size_t stored(unsigned char *p, int64_t d0, int64_t d1, size_t elems) {
  size_t n = 0;
  int64_t seven = 7;
  memcpy(p + n, "b\002\000 i64", 7), n += 7;
  memcpy(p + n, &seven, 8), n += 8;
  memcpy(p + n, "b\002\002 f64", 7), n += 7;
  memcpy(p + n, &d0, 8), n += 8;
  memcpy(p + n, &d1, 8), n += 8;
  memset(p + n, 0, elems * 8), n += elems * 8;
  return n;
}

static void restore(struct futhark_context *ctx, const char *what, int64_t d0, int64_t d1,
                    size_t elems) {
  unsigned char buf[256];
  stored(buf, d0, d1, elems);
  struct futhark_opaque_i64_arr_arr_f64 *v = futhark_restore_opaque_i64_arr_arr_f64(ctx, buf);
  char *e = futhark_context_get_error(ctx);
  if (e) {
    char *nl = strchr(e, '\n');
    if (nl) *nl = 0;
  }
  int64_t rows = -1;
  if (v && futhark_entry_rows(ctx, &rows, v) != 0) rows = -2;
  printf("%s: %s: %s: rows %lld\n", what, v ? "value" : "NULL", e ? e : "(no error)",
         (long long)rows);
  free(e);
  if (v) futhark_free_opaque_i64_arr_arr_f64(ctx, v);
}

int main(void) {
  struct futhark_context_config *cfg = futhark_context_config_new();
  futhark_context_config_set_memory_limit(cfg, 64 << 20);
  struct futhark_context *ctx = futhark_context_new(cfg);
  restore(ctx, "2x3", 2, 3, 6);
  restore(ctx, "overflow", INT64_C(1) << 62, 4, 2);
  restore(ctx, "overflow bytes", INT64_C(1) << 61, 1, 2);
  restore(ctx, "empty huge x 0", INT64_C(1) << 62, 0, 0);
  restore(ctx, "empty 0 x huge", 0, INT64_MAX, 0);
  futhark_context_free(ctx);
  futhark_context_config_free(cfg);
  return 0;
}
