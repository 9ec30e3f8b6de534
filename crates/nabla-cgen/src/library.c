/* nabla library runtime: Futhark's C API over the generic runtime (runtime.c
 * compiled with NB_LIBRARY). Included after runtime.c in `--library` and
 * `--server` output; the generated part adds the type table (nb_types) and
 * one thin typed wrapper per API function.
 *
 * Values: an array object (`struct futhark_T_Rd`) is an nb_arr owning one
 * reference to its block, so results may share blocks with inputs and
 * `free` is a reference-count decrement. An opaque object holds its flat
 * components (nb_flat: an array, or a scalar's bytes). Every API function
 * that can fail runs protected: nb_fail longjmps back, the blocks that the
 * call allocated are freed, the message goes to the context's error and the
 * function returns 2 (program error) or 3 (out of memory). */

struct futhark_context_config {
  int debugging, profiling, logging;
  char *cache_file;
  bool memory_limit_set;
  int64_t memory_limit;
};

struct futhark_context {
  char *error;
  int profiling;
};

enum { NB_KIND_PRIM, NB_KIND_ARRAY, NB_KIND_OPAQUE };

/* A field of an opaque record (or tuple): its name, type (index in
 * nb_types) and the flat components it covers. */
typedef struct nb_field_info {
  const char *name;
  int type;
  int start, len;
} nb_field_info;

/* One type of the API: a primitive (index = its NB_ type code), an array of
 * primitives, or an opaque type with `nflat` components. */
typedef struct nb_type_info {
  const char *name;  /* Futhark's name: f64, [][]i32, or the opaque's name */
  int kind;
  int elem, rank;    /* primitives and arrays */
  int nflat;         /* opaque: components and their types */
  const int *flat_elem, *flat_rank;
  int nfields;       /* records/tuples: fields; -1 otherwise */
  const nb_field_info *fields;
} nb_type_info;

typedef struct nb_flat {
  nb_arr arr;
  uint64_t scalar; /* a scalar's bytes (little-endian, memcpy'd) */
} nb_flat;

typedef struct nb_array_obj {
  nb_arr arr;
} nb_array_obj;

typedef struct nb_opaque_obj {
  const nb_type_info *type;
  nb_flat *v;
} nb_opaque_obj;

static int64_t nb_epoch_counter;

static void nb_set_error(struct futhark_context *ctx, const char *msg) {
  size_t old = ctx->error ? strlen(ctx->error) : 0;
  char *e = (char *)realloc(ctx->error, old + strlen(msg) + 1);
  if (!e) return;
  memcpy(e + old, msg, strlen(msg) + 1);
  ctx->error = e;
}

/* Starts a protected call: nb_fail jumps to *jb. Returns the call's epoch. */
static int64_t nb_enter(jmp_buf *jb) {
  nb_jmp = jb;
  nb_fail_code = 2;
  nb_epoch = ++nb_epoch_counter;
  return nb_epoch;
}

static void nb_leave(void) {
  nb_jmp = NULL;
  nb_epoch = 0;
}

/* After a failure in the protected call of `epoch`: frees the blocks it
 * allocated and the reader's buffer, records the message; the error code. */
static int nb_failed(struct futhark_context *ctx, int64_t epoch) {
  nb_mem *m = nb_live.next;
  while (m != &nb_live) {
    nb_mem *next = m->next;
    if (m->epoch == epoch) nb_free_block(m);
    m = next;
  }
  nb_elems_reset(&nb_text_elems);
  nb_leave();
  nb_set_error(ctx, nb_fail_message ? nb_fail_message : "Error: out of memory\n");
  free(nb_fail_message);
  nb_fail_message = NULL;
  return nb_fail_code;
}

/* ---------- configuration and context ---------- */

struct futhark_context_config *futhark_context_config_new(void) {
  return (struct futhark_context_config *)calloc(1, sizeof(struct futhark_context_config));
}

void futhark_context_config_free(struct futhark_context_config *cfg) {
  if (!cfg) return;
  free(cfg->cache_file);
  free(cfg);
}

void futhark_context_config_set_debugging(struct futhark_context_config *cfg, int flag) {
  cfg->debugging = flag;
}

void futhark_context_config_set_profiling(struct futhark_context_config *cfg, int flag) {
  cfg->profiling = flag;
}

void futhark_context_config_set_logging(struct futhark_context_config *cfg, int flag) {
  cfg->logging = flag;
}

void futhark_context_config_set_cache_file(struct futhark_context_config *cfg, const char *f) {
  free(cfg->cache_file);
  cfg->cache_file = f ? strdup(f) : NULL;
}

/* The memory limit of the contexts made from `cfg` (see runtime.c's
 * "the memory limit"): `bytes` > 0 the limit, 0 no limit, < 0 the default
 * (three quarters of the physical memory, at most `ulimit -v`).
 * Allocations past it fail with error code 3 and "out of memory: N bytes
 * for ...". The limit is the library's (the runtime's state is): the
 * context made last sets it. */
void futhark_context_config_set_memory_limit(struct futhark_context_config *cfg, int64_t bytes) {
  if (!cfg) return;
  cfg->memory_limit_set = true;
  cfg->memory_limit = bytes;
}

int futhark_context_config_set_tuning_param(struct futhark_context_config *cfg,
                                            const char *param_name, size_t new_value) {
  (void)cfg, (void)param_name, (void)new_value;
  return 1; /* the sequential backend has no tuning parameters */
}

int futhark_get_tuning_param_count(void) { return 0; }
const char *futhark_get_tuning_param_name(int i) {
  (void)i;
  return NULL;
}
const char *futhark_get_tuning_param_class(int i) {
  (void)i;
  return NULL;
}

struct futhark_context *futhark_context_new(struct futhark_context_config *cfg) {
  struct futhark_context *ctx = (struct futhark_context *)calloc(1, sizeof(struct futhark_context));
  if (ctx && cfg) ctx->profiling = cfg->profiling;
  if (ctx && cfg && cfg->memory_limit_set) nb_mem_limit = cfg->memory_limit < 0 ? -1 : cfg->memory_limit;
  return ctx;
}

void futhark_context_free(struct futhark_context *ctx) {
  if (!ctx) return;
  free(ctx->error);
  free(ctx);
  nb_drain_free_lists();
}

int futhark_context_sync(struct futhark_context *ctx) {
  (void)ctx;
  return 0;
}

char *futhark_context_get_error(struct futhark_context *ctx) {
  char *e = ctx->error;
  ctx->error = NULL;
  return e;
}

int futhark_context_clear_caches(struct futhark_context *ctx) {
  (void)ctx;
  return 0;
}

char *futhark_context_report(struct futhark_context *ctx) {
  (void)ctx;
  return strdup("{\"memory\":{},\"events\":[]}");
}

void futhark_context_pause_profiling(struct futhark_context *ctx) { ctx->profiling = 0; }
void futhark_context_unpause_profiling(struct futhark_context *ctx) { ctx->profiling = 1; }

/* ---------- arrays ---------- */

static void *nb_array_new(struct futhark_context *ctx, const nb_type_info *ti, const void *data,
                          const int64_t *shape) {
  if (!data) {
    /* NULL is data enough for an empty array. */
    bool empty = false;
    for (int k = 0; k < ti->rank; k++) empty |= shape[k] == 0;
    if (!empty) {
      nb_set_error(ctx, "Error: the data pointer of a new array is NULL\n");
      return NULL;
    }
  }
  nb_array_obj *o = (nb_array_obj *)malloc(sizeof(nb_array_obj));
  if (!o) {
    nb_set_error(ctx, "Error: out of memory\n");
    return NULL;
  }
  jmp_buf jb;
  int64_t ep = nb_enter(&jb);
  if (setjmp(jb)) {
    free(o);
    nb_failed(ctx, ep);
    return NULL;
  }
  o->arr = nb_alloc(ti->rank, shape, nb_type_sizes[ti->elem], "");
  nb_leave();
  size_t bytes = (size_t)nb_count(shape, ti->rank) * nb_type_sizes[ti->elem];
  if (bytes) memcpy(o->arr.data, data, bytes);
  return o;
}

/* A new array object owning `a` (which is moved in); NULL when out of memory. */
static nb_array_obj *nb_array_wrap(nb_arr a) {
  nb_array_obj *o = (nb_array_obj *)malloc(sizeof(nb_array_obj));
  if (!o) {
    nb_release(&a);
    return NULL;
  }
  o->arr = a;
  return o;
}

static int nb_array_free(struct futhark_context *ctx, void *obj) {
  (void)ctx;
  nb_array_obj *o = (nb_array_obj *)obj;
  if (!o) return 0;
  nb_release(&o->arr);
  free(o);
  return 0;
}

static int nb_array_values(struct futhark_context *ctx, const nb_type_info *ti, const void *obj,
                           void *out) {
  const nb_array_obj *o = (const nb_array_obj *)obj;
  if (!o) {
    nb_set_error(ctx, "Error: the array passed to values is NULL\n");
    return 1;
  }
  size_t bytes = (size_t)nb_count(o->arr.shape, ti->rank) * nb_type_sizes[ti->elem];
  if (bytes && !out) {
    nb_set_error(ctx, "Error: the destination passed to values is NULL\n");
    return 1;
  }
  if (bytes) memcpy(out, o->arr.data, bytes);
  return 0;
}

static int nb_array_index(struct futhark_context *ctx, const nb_type_info *ti, void *out,
                          const void *obj, const int64_t *is) {
  const nb_array_obj *o = (const nb_array_obj *)obj;
  if (!o || !out) {
    nb_set_error(ctx, o ? "Error: the destination passed to index is NULL\n"
                        : "Error: the array passed to index is NULL\n");
    return 1;
  }
  int64_t pos = 0;
  for (int k = 0; k < ti->rank; k++) {
    if (is[k] < 0 || is[k] >= o->arr.shape[k]) {
      nb_set_error(ctx, "Error: index out of bounds\n");
      return 2;
    }
    pos = pos * o->arr.shape[k] + is[k];
  }
  memcpy(out, o->arr.data + (size_t)pos * nb_type_sizes[ti->elem], nb_type_sizes[ti->elem]);
  return 0;
}

/* ---------- opaques ---------- */

static nb_opaque_obj *nb_opaque_alloc(const nb_type_info *ti) {
  nb_opaque_obj *o = (nb_opaque_obj *)malloc(sizeof(nb_opaque_obj));
  if (!o) return NULL;
  o->type = ti;
  o->v = (nb_flat *)calloc(ti->nflat ? (size_t)ti->nflat : 1, sizeof(nb_flat));
  if (!o->v) {
    free(o);
    return NULL;
  }
  return o;
}

static int nb_opaque_free(struct futhark_context *ctx, void *obj) {
  (void)ctx;
  nb_opaque_obj *o = (nb_opaque_obj *)obj;
  if (!o) return 0;
  for (int i = 0; i < o->type->nflat; i++) nb_release(&o->v[i].arr);
  free(o->v);
  free(o);
  return 0;
}

/* The bytes one component takes in the binary value format. */
static size_t nb_flat_stored_size(int elem, int rank, const nb_flat *f) {
  int64_t n = rank ? nb_count(f->arr.shape, rank) : 1;
  return 7 + (size_t)rank * 8 + (size_t)n * nb_type_sizes[elem];
}

static unsigned char *nb_put_flat_binary(unsigned char *p, int elem, int rank, const nb_flat *f) {
  *p++ = 'b';
  *p++ = 2;
  *p++ = (unsigned char)rank;
  memcpy(p, nb_binary_tags[elem], 4);
  p += 4;
  for (int k = 0; k < rank; k++) {
    uint64_t d = (uint64_t)f->arr.shape[k];
    memcpy(p, &d, 8);
    p += 8;
  }
  size_t bytes = rank ? (size_t)nb_count(f->arr.shape, rank) * nb_type_sizes[elem]
                      : nb_type_sizes[elem];
  if (bytes) memcpy(p, rank ? (const void *)f->arr.data : (const void *)&f->scalar, bytes);
  return p + bytes;
}

static int nb_opaque_store(struct futhark_context *ctx, const void *obj, void **p, size_t *n) {
  const nb_opaque_obj *o = (const nb_opaque_obj *)obj;
  if (!o) {
    nb_set_error(ctx, "Error: the object passed to store is NULL\n");
    return 1;
  }
  const nb_type_info *ti = o->type;
  size_t total = 0;
  for (int i = 0; i < ti->nflat; i++)
    total += nb_flat_stored_size(ti->flat_elem[i], ti->flat_rank[i], &o->v[i]);
  if (n) *n = total;
  if (!p) return 0;
  if (!*p) {
    *p = malloc(total ? total : 1);
    if (!*p) {
      nb_set_error(ctx, "Error: out of memory\n");
      return 3;
    }
  }
  unsigned char *q = (unsigned char *)*p;
  for (int i = 0; i < ti->nflat; i++)
    q = nb_put_flat_binary(q, ti->flat_elem[i], ti->flat_rank[i], &o->v[i]);
  return 0;
}

/* Reads the components of an opaque from `r` into `o` (fresh); protected
 * by the caller. */
static void nb_opaque_read(nb_opaque_obj *o, nb_reader *r) {
  const nb_type_info *ti = o->type;
  for (int i = 0; i < ti->nflat; i++) {
    nb_arr a = {0};
    nb_read_value(r, ti->flat_elem[i], ti->flat_rank[i], &o->v[i].scalar, &a);
    o->v[i].arr = a;
  }
}

/* The length of the stored components of `ti` at p (binary format); 0 when
 * the header of a component does not match, or when the sizes it gives
 * overflow (no value that large can be stored). */
static size_t nb_opaque_stored_length(const nb_type_info *ti, const unsigned char *p) {
  size_t off = 0;
  for (int i = 0; i < ti->nflat; i++) {
    int elem = ti->flat_elem[i], rank = ti->flat_rank[i];
    const unsigned char *h = p + off;
    if (h[0] != 'b' || h[1] != 2 || h[2] != rank || memcmp(h + 3, nb_binary_tags[elem], 4) != 0)
      return 0;
    uint64_t n = 1, bytes;
    bool empty = false, overflow = false;
    for (int k = 0; k < rank; k++) {
      uint64_t d;
      memcpy(&d, h + 7 + 8 * k, 8);
      if ((int64_t)d < 0) return 0;
      /* A zero dimension empties the array, whatever the others are. */
      if (d == 0) empty = true;
      else if (!overflow) overflow = __builtin_mul_overflow(n, d, &n);
    }
    if (empty) n = 0;
    else if (overflow) return 0;
    if (__builtin_mul_overflow(n, (uint64_t)nb_type_sizes[elem], &bytes) || bytes > SIZE_MAX ||
        __builtin_add_overflow(off, 7 + (size_t)rank * 8 + (size_t)bytes, &off))
      return 0;
  }
  return off;
}

static void *nb_opaque_restore(struct futhark_context *ctx, const nb_type_info *ti,
                               const void *p) {
  if (!p) {
    nb_set_error(ctx, "Error: the data passed to restore is NULL\n");
    return NULL;
  }
  size_t len = nb_opaque_stored_length(ti, (const unsigned char *)p);
  if (len == 0 && ti->nflat > 0) {
    nb_set_error(ctx, "Error: cannot restore an opaque value: the data does not have its type\n");
    return NULL;
  }
  nb_reader r = {(const unsigned char *)p, len, 0};
  nb_opaque_obj *o = nb_opaque_alloc(ti);
  if (!o) {
    nb_set_error(ctx, "Error: out of memory\n");
    return NULL;
  }
  jmp_buf jb;
  int64_t ep = nb_enter(&jb);
  if (setjmp(jb)) {
    /* Its arrays were allocated by this call: nb_failed frees them. */
    free(o->v);
    free(o);
    nb_failed(ctx, ep);
    return NULL;
  }
  nb_opaque_read(o, &r);
  nb_leave();
  return o;
}

/* Field `f` of `obj` into `out`: the scalar, a new array object or a new
 * opaque object. */
static int nb_opaque_project(struct futhark_context *ctx, const nb_type_info *types, void *out,
                             const void *obj, int f) {
  const nb_opaque_obj *o = (const nb_opaque_obj *)obj;
  if (!o || !out) {
    nb_set_error(ctx, o ? "Error: the destination passed to project is NULL\n"
                        : "Error: the object passed to project is NULL\n");
    return 1;
  }
  const nb_field_info *fi = &o->type->fields[f];
  const nb_type_info *ft = &types[fi->type];
  if (ft->kind == NB_KIND_PRIM) {
    memcpy(out, &o->v[fi->start].scalar, nb_type_sizes[ft->elem]);
    return 0;
  }
  if (ft->kind == NB_KIND_ARRAY) {
    nb_array_obj *a = nb_array_wrap(nb_retain(o->v[fi->start].arr));
    if (!a) {
      nb_set_error(ctx, "Error: out of memory\n");
      return 3;
    }
    *(void **)out = a;
    return 0;
  }
  nb_opaque_obj *r = nb_opaque_alloc(ft);
  if (!r) {
    nb_set_error(ctx, "Error: out of memory\n");
    return 3;
  }
  for (int i = 0; i < fi->len; i++) {
    r->v[i] = o->v[fi->start + i];
    nb_retain(r->v[i].arr);
  }
  *(void **)out = r;
  return 0;
}

/* A new record of type ti from its fields: pointers to the scalars, or the
 * array/opaque objects. */
static int nb_opaque_new(struct futhark_context *ctx, const nb_type_info *types,
                         const nb_type_info *ti, void **out, const void *const *fields) {
  if (!out) {
    nb_set_error(ctx, "Error: the destination of the new record is NULL\n");
    return 1;
  }
  nb_opaque_obj *r = nb_opaque_alloc(ti);
  if (!r) {
    nb_set_error(ctx, "Error: out of memory\n");
    return 3;
  }
  for (int f = 0; f < ti->nfields; f++) {
    const nb_field_info *fi = &ti->fields[f];
    const nb_type_info *ft = &types[fi->type];
    if (!fields[f] && ft->kind != NB_KIND_PRIM) {
      nb_opaque_free(ctx, r);
      nb_set_error(ctx, "Error: a field of the new record is NULL\n");
      return 1;
    }
    if (ft->kind == NB_KIND_PRIM) {
      memcpy(&r->v[fi->start].scalar, fields[f], nb_type_sizes[ft->elem]);
    } else if (ft->kind == NB_KIND_ARRAY) {
      r->v[fi->start].arr = nb_retain(((const nb_array_obj *)fields[f])->arr);
    } else {
      const nb_opaque_obj *src = (const nb_opaque_obj *)fields[f];
      if (src->type != ft) {
        nb_opaque_free(ctx, r);
        nb_set_error(ctx, "Error: a field of the new record has the wrong type\n");
        return 1;
      }
      for (int i = 0; i < fi->len; i++) {
        r->v[fi->start + i] = src->v[i];
        nb_retain(src->v[i].arr);
      }
    }
  }
  *out = r;
  return 0;
}

/* An entry point for the server: its name, input and output types (indices
 * in nb_types) and uniqueness, the tuple of its results (-1 for one result)
 * and a caller taking pointers to the arguments (scalars' bytes or the
 * objects) and to the results' storage. */
typedef struct nb_entry_info {
  const char *name;
  int nin;
  const int *in_types;
  const bool *in_unique;
  int nout;
  const int *out_types;
  const bool *out_unique;
  int tuple_type;
  int (*call)(struct futhark_context *ctx, void *const *outs, void *const *ins);
} nb_entry_info;
