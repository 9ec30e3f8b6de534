/* Drives the C API of prog.fut (nabla c --library): arrays, scalars, tuple
 * results, records in and out, store/restore, a run-time error. Exits
 * non-zero with a message on the first failed check. */
#include "prog.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures = 0;
#define CHECK(c)                                                      \
  do {                                                                \
    if (!(c)) {                                                       \
      fprintf(stderr, "check failed at line %d: %s\n", __LINE__, #c); \
      failures++;                                                     \
    }                                                                 \
  } while (0)

int main(void) {
  struct futhark_context_config *cfg = futhark_context_config_new();
  futhark_context_config_set_debugging(cfg, 0);
  futhark_context_config_set_profiling(cfg, 0);
  futhark_context_config_set_logging(cfg, 0);
  futhark_context_config_set_cache_file(cfg, "unused.cache");
  struct futhark_context *ctx = futhark_context_new(cfg);
  CHECK(ctx != NULL);
  CHECK(futhark_context_get_error(ctx) == NULL);

  /* scalar result from an array */
  double xs_data[4] = {1.0, 2.0, 3.5, -0.5};
  struct futhark_f64_1d *xs = futhark_new_f64_1d(ctx, xs_data, 4);
  CHECK(xs != NULL);
  CHECK(futhark_shape_f64_1d(ctx, xs)[0] == 4);
  double s = 0;
  CHECK(futhark_entry_sum(ctx, &s, xs) == 0);
  CHECK(futhark_context_sync(ctx) == 0);
  CHECK(s == 6.0);

  /* array result from a consumed array; the input keeps its values */
  struct futhark_f64_1d *ys = NULL;
  CHECK(futhark_entry_scale(ctx, &ys, 2.0, xs) == 0);
  double ys_data[4];
  CHECK(futhark_values_f64_1d(ctx, ys, ys_data) == 0);
  CHECK(ys_data[0] == 2.0 && ys_data[2] == 7.0 && ys_data[3] == -1.0);
  double y2 = 0;
  CHECK(futhark_index_f64_1d(ctx, &y2, ys, 2) == 0 && y2 == 7.0);
  CHECK(futhark_index_f64_1d(ctx, &y2, ys, 4) == 2);
  char *err = futhark_context_get_error(ctx);
  CHECK(err != NULL);
  free(err);

  /* tuple result: two out-parameters */
  int64_t n1 = 0;
  struct futhark_i32_1d *is = NULL;
  CHECK(futhark_entry_count_up(ctx, &n1, &is, 3) == 0);
  CHECK(n1 == 4);
  CHECK(futhark_shape_i32_1d(ctx, is)[0] == 3);
  int32_t is_data[3];
  CHECK(futhark_values_i32_1d(ctx, is, is_data) == 0);
  CHECK(is_data[0] == 0 && is_data[1] == 1 && is_data[2] == 2);

  /* record out, record in, project, new */
  struct futhark_opaque_point *p = NULL;
  CHECK(futhark_entry_mk(ctx, &p, 3.0, 4.0) == 0);
  double nrm = 0;
  CHECK(futhark_entry_norm(ctx, &nrm, p) == 0);
  CHECK(nrm == 5.0);
  struct futhark_opaque_point *q = NULL;
  CHECK(futhark_entry_swap(ctx, &q, p) == 0);
  double qx = 0, qy = 0;
  CHECK(futhark_project_opaque_point_x(ctx, &qx, q) == 0);
  CHECK(futhark_project_opaque_point_y(ctx, &qy, q) == 0);
  CHECK(qx == 4.0 && qy == 3.0);
  struct futhark_opaque_point *r = NULL;
  CHECK(futhark_new_opaque_point(ctx, &r, 6.0, 8.0) == 0);
  CHECK(futhark_entry_norm(ctx, &nrm, r) == 0 && nrm == 10.0);

  /* store/restore round trip: components in the binary value format */
  void *bytes = NULL;
  size_t nbytes = 0;
  CHECK(futhark_store_opaque_point(ctx, q, &bytes, &nbytes) == 0);
  CHECK(nbytes == 2 * (7 + 8));
  CHECK(memcmp(bytes, "b\002\000 f64", 7) == 0);
  struct futhark_opaque_point *q2 = futhark_restore_opaque_point(ctx, bytes);
  CHECK(q2 != NULL);
  double q2x = 0;
  CHECK(futhark_project_opaque_point_x(ctx, &q2x, q2) == 0 && q2x == 4.0);
  free(bytes);
  /* restoring bytes of the wrong type fails */
  unsigned char bad[16] = {'b', 2, 0, ' ', 'i', '3', '2', 0};
  CHECK(futhark_restore_opaque_point(ctx, bad) == NULL);
  err = futhark_context_get_error(ctx);
  CHECK(err != NULL);
  free(err);

  /* 2-d bool result */
  struct futhark_bool_2d *fl = NULL;
  CHECK(futhark_entry_flags(ctx, &fl, 3) == 0);
  const int64_t *sh = futhark_shape_bool_2d(ctx, fl);
  CHECK(sh[0] == 3 && sh[1] == 2);
  bool fl_data[6];
  CHECK(futhark_values_bool_2d(ctx, fl, fl_data) == 0);
  CHECK(fl_data[0] && !fl_data[1] && !fl_data[2] && fl_data[3]);

  /* run-time error: index out of bounds (program error, code 2) */
  int32_t g = 0;
  CHECK(futhark_entry_get(ctx, &g, is, 1) == 0 && g == 1);
  CHECK(futhark_entry_get(ctx, &g, is, 7) == 2);
  err = futhark_context_get_error(ctx);
  CHECK(err != NULL);
  if (err) {
    CHECK(strstr(err, "Error: Index [7] out of bounds for array of shape [3]") != NULL);
    CHECK(strstr(err, "\nat ") != NULL && strstr(err, "prog.fut:") != NULL);
    free(err);
  }
  CHECK(futhark_context_get_error(ctx) == NULL);
  /* sizes that differ: a program error too; the inputs stay usable */
  double zs_data[3] = {1, 2, 3};
  struct futhark_f64_1d *zs = futhark_new_f64_1d(ctx, zs_data, 3);
  double d = 0;
  CHECK(futhark_entry_dot(ctx, &d, xs, zs) == 2);
  err = futhark_context_get_error(ctx);
  CHECK(err != NULL && strcmp(err, "Error: entry point arguments have invalid sizes\n") == 0);
  free(err);
  CHECK(futhark_entry_sized(ctx, &d, 3, xs) == 2);
  err = futhark_context_get_error(ctx);
  CHECK(err != NULL && strstr(err, "invalid sizes") != NULL);
  free(err);
  CHECK(futhark_entry_sized(ctx, &d, 3, zs) == 0 && d == 6.0);
  /* out of memory (2^41 bytes): code 3 */
  struct futhark_f64_1d *big = NULL;
  CHECK(futhark_entry_zeros(ctx, &big, (int64_t)1 << 38) == 3);
  CHECK(big == NULL);
  err = futhark_context_get_error(ctx);
  CHECK(err != NULL && strstr(err, "out of memory") != NULL);
  free(err);
  CHECK(futhark_entry_zeros(ctx, &big, 2) == 0);
  CHECK(futhark_shape_f64_1d(ctx, big)[0] == 2);
  CHECK(futhark_free_f64_1d(ctx, big) == 0);
  CHECK(futhark_entry_dot(ctx, &d, xs, xs) == 0);
  CHECK(d == 1.0 + 4.0 + 12.25 + 0.25);
  /* a negative size: NULL and an error */
  CHECK(futhark_new_f64_1d(ctx, xs_data, -1) == NULL);
  err = futhark_context_get_error(ctx);
  CHECK(err != NULL);
  free(err);

  char *report = futhark_context_report(ctx);
  CHECK(report != NULL && report[0] == '{');
  free(report);
  futhark_context_pause_profiling(ctx);
  futhark_context_unpause_profiling(ctx);
  CHECK(futhark_context_clear_caches(ctx) == 0);

  CHECK(futhark_free_f64_1d(ctx, xs) == 0);
  CHECK(futhark_free_f64_1d(ctx, ys) == 0);
  CHECK(futhark_free_f64_1d(ctx, zs) == 0);
  CHECK(futhark_free_i32_1d(ctx, is) == 0);
  CHECK(futhark_free_bool_2d(ctx, fl) == 0);
  CHECK(futhark_free_opaque_point(ctx, p) == 0);
  CHECK(futhark_free_opaque_point(ctx, q) == 0);
  CHECK(futhark_free_opaque_point(ctx, q2) == 0);
  CHECK(futhark_free_opaque_point(ctx, r) == 0);
  futhark_context_free(ctx);
  futhark_context_config_free(cfg);
  if (failures) {
    fprintf(stderr, "%d checks failed\n", failures);
    return 1;
  }
  printf("all checks passed\n");
  return 0;
}
