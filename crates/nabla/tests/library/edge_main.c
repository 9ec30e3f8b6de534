/* Drives edge.fut's C API (nabla c --library): sum types and arrays of
 * records as opaques (store/restore), nested record projection, f16 as its
 * bits, bool, a three-part tuple result, a unit result. */
#include "edge.h"
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
  struct futhark_context *ctx = futhark_context_new(cfg);

  struct futhark_opaque_shape *s = NULL;
  CHECK(futhark_entry_rect(ctx, &s, 2.0, 3.5) == 0);
  double a = 0;
  CHECK(futhark_entry_area(ctx, &a, s) == 0 && a == 7.0);
  void *bytes = NULL;
  size_t n = 0;
  CHECK(futhark_store_opaque_shape(ctx, s, &bytes, &n) == 0);
  /* tag (i8), circle's f64, rect's two f64: four scalars */
  CHECK(n == 4 * 7 + 1 + 3 * 8);
  struct futhark_opaque_shape *s2 = futhark_restore_opaque_shape(ctx, bytes);
  CHECK(s2 != NULL);
  CHECK(futhark_entry_area(ctx, &a, s2) == 0 && a == 7.0);
  free(bytes);

  struct futhark_opaque_arr_pt *ps = NULL;
  CHECK(futhark_entry_pts(ctx, &ps, 4) == 0);
  float sx = 0;
  CHECK(futhark_entry_sum_x(ctx, &sx, ps) == 0 && sx == 6.0f);

  struct futhark_opaque_seg *sg = NULL;
  CHECK(futhark_entry_mkseg(ctx, &sg, 2.5f) == 0);
  struct futhark_opaque_x_f32_y_f32 *b = NULL;
  CHECK(futhark_project_opaque_seg_b(ctx, &b, sg) == 0);
  float by = 0;
  CHECK(futhark_project_opaque_x_f32_y_f32_y(ctx, &by, b) == 0 && by == 2.5f);
  int8_t tag = 0;
  CHECK(futhark_project_opaque_seg_tag(ctx, &tag, sg) == 0 && tag == 7);

  uint16_t h = 0;
  CHECK(futhark_entry_half(ctx, &h, 0x4000 /* 2.0 */) == 0 && h == 0x3c00 /* 1.0 */);

  uint8_t u = 0;
  bool nb = true;
  struct futhark_u16_1d *us = NULL;
  CHECK(futhark_entry_flip(ctx, &u, &nb, &us, 255, true) == 0);
  CHECK(u == 0 && nb == false);
  uint16_t us_data[3] = {0};
  CHECK(futhark_values_u16_1d(ctx, us, us_data) == 0 && us_data[2] == 3);

  CHECK(futhark_entry_nothing(ctx, 5) == 0);

  futhark_free_opaque_shape(ctx, s);
  futhark_free_opaque_shape(ctx, s2);
  futhark_free_opaque_arr_pt(ctx, ps);
  futhark_free_opaque_seg(ctx, sg);
  futhark_free_opaque_x_f32_y_f32(ctx, b);
  futhark_free_u16_1d(ctx, us);
  futhark_context_free(ctx);
  futhark_context_config_free(cfg);
  if (failures) return 1;
  printf("all checks passed\n");
  return 0;
}
