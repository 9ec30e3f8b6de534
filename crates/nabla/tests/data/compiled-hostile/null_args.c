/* The C API refuses NULL pointers (and sizes past the memory limit) with
 * an error code and a message, never a crash. Prints one line per case:
 * the code (or whether NULL came back) and the first line of the error. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sums.h"

static void report(struct futhark_context *ctx, const char *what, long code) {
  char *e = futhark_context_get_error(ctx);
  if (e) {
    char *nl = strchr(e, '\n');
    if (nl) *nl = 0;
  }
  printf("%s: %ld: %s\n", what, code, e ? e : "(no error)");
  free(e);
}

int main(void) {
  struct futhark_context_config *cfg = futhark_context_config_new();
  futhark_context_config_set_memory_limit(cfg, 64 << 20);
  struct futhark_context *ctx = futhark_context_new(cfg);
  double xs[3] = {1, 2, 3}, out = 0;
  struct futhark_f64_1d *a = futhark_new_f64_1d(ctx, xs, 3);
  struct futhark_f64_1d *r = NULL;
  report(ctx, "input", futhark_entry_dot(ctx, &out, NULL, a));
  report(ctx, "output", futhark_entry_dot(ctx, NULL, a, a));
  report(ctx, "new", futhark_new_f64_1d(ctx, NULL, 3) == NULL);
  struct futhark_f64_1d *e = futhark_new_f64_1d(ctx, NULL, 0);
  report(ctx, "new empty", e == NULL);
  futhark_free_f64_1d(ctx, e);
  report(ctx, "values", futhark_values_f64_1d(ctx, a, NULL));
  report(ctx, "values of NULL", futhark_values_f64_1d(ctx, NULL, xs));
  report(ctx, "shape", futhark_shape_f64_1d(ctx, NULL) == NULL);
  report(ctx, "index", futhark_index_f64_1d(ctx, NULL, a, 0));
  /* Past the limit of 64 MiB: error code 3, and the context still works. */
  report(ctx, "limit", futhark_entry_ones(ctx, &r, 100000000));
  report(ctx, "within", futhark_entry_ones(ctx, &r, 1000));
  report(ctx, "shape after", futhark_shape_f64_1d(ctx, r)[0]);
  report(ctx, "dot", futhark_entry_dot(ctx, &out, a, a));
  printf("dot = %g\n", out);
  futhark_free_f64_1d(ctx, r);
  futhark_free_f64_1d(ctx, a);
  futhark_context_free(ctx);
  futhark_context_config_free(cfg);
  return 0;
}
