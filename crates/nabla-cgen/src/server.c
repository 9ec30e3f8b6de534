/* nabla server: Futhark's server protocol over the C API (library.c and the
 * generated type and entry tables). One command per line on stdin, words
 * split at spaces ("double quotes" group); every reply ends with `%%% OK`,
 * a failing command prints `%%% FAILURE` and the message first. */

typedef struct nb_var {
  char *name;
  int type;
  void *obj;       /* array and opaque objects */
  uint64_t scalar; /* primitives */
} nb_var;

static nb_var *nb_vars;
static int nb_nvars, nb_capvars;
static struct futhark_context *nb_ctx;

__attribute__((format(printf, 1, 2))) static void nb_failure(const char *fmt, ...) {
  va_list ap;
  printf("%%%%%% FAILURE\n");
  va_start(ap, fmt);
  vprintf(fmt, ap);
  va_end(ap);
  printf("\n");
}

/* The context's error as a failure. */
static void nb_failure_ctx(void) {
  char *e = futhark_context_get_error(nb_ctx);
  size_t n = e ? strlen(e) : 0;
  while (n > 0 && e[n - 1] == '\n') e[--n] = 0;
  nb_failure("%s", e ? e : "unknown error");
  free(e);
}

static nb_var *nb_find_var(const char *name) {
  for (int i = 0; i < nb_nvars; i++)
    if (strcmp(nb_vars[i].name, name) == 0) return &nb_vars[i];
  return NULL;
}

static int nb_find_type(const char *name) {
  for (int i = 0; i < nb_num_types; i++)
    if (strcmp(nb_types[i].name, name) == 0) return i;
  return -1;
}

static const nb_entry_info *nb_find_entry(const char *name) {
  for (int i = 0; i < nb_num_entries; i++)
    if (strcmp(nb_entries[i].name, name) == 0) return &nb_entries[i];
  return NULL;
}

static void nb_free_obj(int type, void *obj) {
  if (!obj) return;
  if (nb_types[type].kind == NB_KIND_ARRAY) nb_array_free(nb_ctx, obj);
  else if (nb_types[type].kind == NB_KIND_OPAQUE) nb_opaque_free(nb_ctx, obj);
}

static void nb_add_var(const char *name, int type, void *obj, uint64_t scalar) {
  if (nb_nvars == nb_capvars) {
    int cap = nb_capvars ? 2 * nb_capvars : 16;
    nb_var *vs = (nb_var *)realloc(nb_vars, (size_t)cap * sizeof(nb_var));
    if (!vs) {
      fprintf(stderr, "nabla server: out of memory\n");
      exit(1);
    }
    nb_vars = vs;
    nb_capvars = cap;
  }
  nb_var *v = &nb_vars[nb_nvars++];
  v->name = strdup(name);
  v->type = type;
  v->obj = obj;
  v->scalar = scalar;
}

static void nb_remove_var(nb_var *v) {
  nb_free_obj(v->type, v->obj);
  free(v->name);
  *v = nb_vars[--nb_nvars];
}

/* A pointer to the value as the API passes it: the scalar's bytes or the object. */
static void *nb_var_arg(nb_var *v) {
  return nb_types[v->type].kind == NB_KIND_PRIM ? (void *)&v->scalar : v->obj;
}

static bool nb_check_new_name(const char *name) {
  if (nb_find_var(name)) {
    nb_failure("Variable already exists: %s", name);
    return false;
  }
  return true;
}

static nb_var *nb_get_var(const char *name) {
  nb_var *v = nb_find_var(name);
  if (!v) nb_failure("Unknown variable: %s", name);
  return v;
}

static int nb_get_type(const char *name) {
  int t = nb_find_type(name);
  if (t < 0) nb_failure("Unknown type: %s", name);
  return t;
}

static void nb_cmd_call(char **w, int n) {
  if (n < 2) {
    nb_failure("Usage: call ENTRY OUT... IN...");
    return;
  }
  const nb_entry_info *e = nb_find_entry(w[1]);
  if (!e) {
    nb_failure("Unknown entry point: %s", w[1]);
    return;
  }
  int args = n - 2, nouts;
  if (e->nout == 0 && (args == e->nin || args == 1 + e->nin)) nouts = args - e->nin;
  else if (args == 1 + e->nin) nouts = 1;
  else if (args == e->nout + e->nin) nouts = e->nout;
  else {
    nb_failure("Invalid argument count for %s: expected %d outputs and %d inputs", e->name, e->nout,
               e->nin);
    return;
  }
  char **outs = w + 2, **ins = w + 2 + nouts;
  for (int i = 0; i < nouts; i++) {
    if (!nb_check_new_name(outs[i])) return;
    for (int j = 0; j < i; j++)
      if (strcmp(outs[i], outs[j]) == 0) {
        nb_failure("Output variable given twice: %s", outs[i]);
        return;
      }
  }
  void *in_args[e->nin + 1];
  for (int i = 0; i < e->nin; i++) {
    nb_var *v = nb_get_var(ins[i]);
    if (!v) return;
    if (v->type != e->in_types[i]) {
      nb_failure("Input %d (%s) has type %s, but entry point %s expects %s", i, ins[i],
                 nb_types[v->type].name, e->name, nb_types[e->in_types[i]].name);
      return;
    }
    in_args[i] = nb_var_arg(v);
  }
  uint64_t scal[e->nout + 1];
  void *objs[e->nout + 1];
  void *out_args[e->nout + 1];
  for (int i = 0; i < e->nout; i++) {
    scal[i] = 0;
    objs[i] = NULL;
    out_args[i] = nb_types[e->out_types[i]].kind == NB_KIND_PRIM ? (void *)&scal[i] : (void *)&objs[i];
  }
  int64_t t0 = nb_now_us();
  int rc = e->call(nb_ctx, out_args, in_args);
  if (rc == 0) rc = futhark_context_sync(nb_ctx);
  int64_t t1 = nb_now_us();
  if (rc != 0) {
    nb_failure_ctx();
    return;
  }
  printf("runtime: %" PRId64 "\n", t1 - t0);
  if (e->nout == 0) return; /* no results: the output name stays unbound */
  if (nouts == e->nout) {
    for (int i = 0; i < e->nout; i++) nb_add_var(outs[i], e->out_types[i], objs[i], scal[i]);
    return;
  }
  /* One name for several results: their tuple. */
  const void *fields[e->nout + 1];
  for (int i = 0; i < e->nout; i++) fields[i] = objs[i] ? objs[i] : (const void *)&scal[i];
  void *tuple = NULL;
  rc = nb_opaque_new(nb_ctx, nb_types, &nb_types[e->tuple_type], &tuple, fields);
  for (int i = 0; i < e->nout; i++) nb_free_obj(e->out_types[i], objs[i]);
  if (rc != 0) {
    nb_failure_ctx();
    return;
  }
  nb_add_var(outs[0], e->tuple_type, tuple, 0);
}

static void nb_cmd_restore(char **w, int n) {
  if (n < 2 || n % 2 != 0) {
    nb_failure("Usage: restore FILE (VAR TYPE)...");
    return;
  }
  int m = (n - 2) / 2;
  int *types = (int *)malloc(((size_t)m + 1) * sizeof(int));
  if (!types) {
    nb_failure("Out of memory");
    return;
  }
  bool ok = true;
  for (int i = 0; i < m && ok; i++) {
    ok = nb_check_new_name(w[2 + 2 * i]);
    if (ok) types[i] = nb_get_type(w[3 + 2 * i]);
    ok = ok && types[i] >= 0;
  }
  if (!ok) {
    free(types);
    return;
  }
  FILE *f = fopen(w[1], "rb");
  if (!f) {
    nb_failure("Failed to open %s: %s", w[1], strerror(errno));
    free(types);
    return;
  }
  size_t len = 0, cap = 0;
  unsigned char *buf = nb_try_read_all(f, &len, &cap);
  fclose(f);
  nb_var *tmp = buf ? (nb_var *)calloc((size_t)m + 1, sizeof(nb_var)) : NULL;
  if (!tmp) {
    nb_counted_free(buf, cap);
    free(types);
    nb_failure("Out of memory: %zu bytes for the file %s", len * 2, w[1]);
    return;
  }
  nb_reader r = {buf, len, 0};
  jmp_buf jb;
  int64_t ep = nb_enter(&jb);
  if (setjmp(jb)) {
    /* The blocks read so far belong to this epoch: nb_failed frees them. */
    for (int i = 0; i < m; i++) {
      if (!tmp[i].obj) continue;
      if (nb_types[types[i]].kind == NB_KIND_OPAQUE) free(((nb_opaque_obj *)tmp[i].obj)->v);
      free(tmp[i].obj);
    }
    free(tmp);
    free(types);
    nb_counted_free(buf, cap);
    nb_failed(nb_ctx, ep);
    nb_failure_ctx();
    return;
  }
  for (int i = 0; i < m; i++) {
    const nb_type_info *ti = &nb_types[types[i]];
    if (ti->kind == NB_KIND_PRIM) {
      nb_read_value(&r, ti->elem, 0, &tmp[i].scalar, NULL);
    } else if (ti->kind == NB_KIND_ARRAY) {
      nb_array_obj *o = (nb_array_obj *)calloc(1, sizeof(nb_array_obj));
      if (!o) nb_fail("", "out of memory");
      tmp[i].obj = o;
      nb_read_value(&r, ti->elem, ti->rank, NULL, &o->arr);
    } else {
      nb_opaque_obj *o = nb_opaque_alloc(ti);
      if (!o) nb_fail("", "out of memory");
      tmp[i].obj = o;
      nb_opaque_read(o, &r);
    }
  }
  nb_skip_ws(&r);
  if (r.pos < r.len) nb_fail("", "Expected EOF after reading values");
  nb_leave();
  for (int i = 0; i < m; i++) nb_add_var(w[2 + 2 * i], types[i], tmp[i].obj, tmp[i].scalar);
  free(tmp);
  free(types);
  nb_counted_free(buf, cap);
}

static bool nb_write_flat(FILE *f, int elem, int rank, const nb_flat *x) {
  size_t n = nb_flat_stored_size(elem, rank, x);
  unsigned char *b = (unsigned char *)malloc(n);
  if (!b) return false;
  nb_put_flat_binary(b, elem, rank, x);
  bool ok = fwrite(b, 1, n, f) == n;
  free(b);
  return ok;
}

static void nb_cmd_store(char **w, int n) {
  if (n < 2) {
    nb_failure("Usage: store FILE VAR...");
    return;
  }
  for (int i = 2; i < n; i++)
    if (!nb_get_var(w[i])) return;
  FILE *f = fopen(w[1], "wb");
  if (!f) {
    nb_failure("Failed to open %s: %s", w[1], strerror(errno));
    return;
  }
  bool ok = true;
  for (int i = 2; i < n && ok; i++) {
    nb_var *v = nb_find_var(w[i]);
    const nb_type_info *ti = &nb_types[v->type];
    if (ti->kind == NB_KIND_PRIM) {
      nb_flat x = {{0}, v->scalar};
      ok = nb_write_flat(f, ti->elem, 0, &x);
    } else if (ti->kind == NB_KIND_ARRAY) {
      nb_flat x = {((nb_array_obj *)v->obj)->arr, 0};
      ok = nb_write_flat(f, ti->elem, ti->rank, &x);
    } else {
      nb_opaque_obj *o = (nb_opaque_obj *)v->obj;
      for (int k = 0; k < ti->nflat && ok; k++)
        ok = nb_write_flat(f, ti->flat_elem[k], ti->flat_rank[k], &o->v[k]);
    }
  }
  if (fclose(f) != 0) ok = false;
  if (!ok) nb_failure("Failed to write %s", w[1]);
}

static void nb_cmd_project(char **w, int n) {
  if (n != 4) {
    nb_failure("Usage: project TO FROM FIELD");
    return;
  }
  if (!nb_check_new_name(w[1])) return;
  nb_var *v = nb_get_var(w[2]);
  if (!v) return;
  const nb_type_info *ti = &nb_types[v->type];
  for (int f = 0; f < ti->nfields; f++) {
    if (strcmp(ti->fields[f].name, w[3]) != 0) continue;
    int ft = ti->fields[f].type;
    uint64_t scalar = 0;
    void *obj = NULL;
    int rc = nb_opaque_project(nb_ctx, nb_types, nb_types[ft].kind == NB_KIND_PRIM ? (void *)&scalar : (void *)&obj, v->obj, f);
    if (rc != 0) {
      nb_failure_ctx();
      return;
    }
    nb_add_var(w[1], ft, obj, scalar);
    return;
  }
  nb_failure("Type %s has no field %s", ti->name, w[3]);
}

static void nb_cmd_new(char **w, int n) {
  if (n < 3) {
    nb_failure("Usage: new VAR TYPE FIELD...");
    return;
  }
  if (!nb_check_new_name(w[1])) return;
  int t = nb_get_type(w[2]);
  if (t < 0) return;
  const nb_type_info *ti = &nb_types[t];
  if (ti->nfields < 0) {
    nb_failure("Type %s is not a record", ti->name);
    return;
  }
  if (n - 3 != ti->nfields) {
    nb_failure("Type %s has %d fields, but %d values were given", ti->name, ti->nfields, n - 3);
    return;
  }
  const void *fields[ti->nfields + 1];
  for (int f = 0; f < ti->nfields; f++) {
    nb_var *v = nb_get_var(w[3 + f]);
    if (!v) return;
    if (v->type != ti->fields[f].type) {
      nb_failure("Field %s has type %s, but %s has type %s", ti->fields[f].name,
                 nb_types[ti->fields[f].type].name, w[3 + f], nb_types[v->type].name);
      return;
    }
    fields[f] = nb_var_arg(v);
  }
  void *obj = NULL;
  if (nb_opaque_new(nb_ctx, nb_types, ti, &obj, fields) != 0) {
    nb_failure_ctx();
    return;
  }
  nb_add_var(w[1], t, obj, 0);
}

static void nb_command(char **w, int n) {
  const char *c = w[0];
  if (strcmp(c, "call") == 0) {
    nb_cmd_call(w, n);
  } else if (strcmp(c, "restore") == 0) {
    nb_cmd_restore(w, n);
  } else if (strcmp(c, "store") == 0) {
    nb_cmd_store(w, n);
  } else if (strcmp(c, "free") == 0) {
    for (int i = 1; i < n; i++)
      if (!nb_get_var(w[i])) return;
    for (int i = 1; i < n; i++) {
      nb_var *v = nb_find_var(w[i]);
      if (v) nb_remove_var(v);
    }
  } else if (strcmp(c, "rename") == 0 && n == 3) {
    nb_var *v = nb_get_var(w[1]);
    if (!v || (strcmp(w[1], w[2]) != 0 && !nb_check_new_name(w[2]))) return;
    char *name = strdup(w[2]);
    free(v->name);
    v->name = name;
  } else if (strcmp(c, "entry_points") == 0) {
    for (int i = 0; i < nb_num_entries; i++) printf("%s\n", nb_entries[i].name);
  } else if (strcmp(c, "types") == 0) {
    for (int i = 0; i < nb_num_types; i++)
      if (nb_types[i].kind != NB_KIND_PRIM) printf("%s\n", nb_types[i].name);
  } else if ((strcmp(c, "inputs") == 0 || strcmp(c, "output") == 0 || strcmp(c, "outputs") == 0 ||
              strcmp(c, "tuning_params") == 0 || strcmp(c, "attributes") == 0) &&
             n == 2) {
    const nb_entry_info *e = nb_find_entry(w[1]);
    if (!e) {
      nb_failure("Unknown entry point: %s", w[1]);
      return;
    }
    if (strcmp(c, "inputs") == 0) {
      for (int i = 0; i < e->nin; i++)
        printf("%s%s\n", e->in_unique[i] ? "*" : "", nb_types[e->in_types[i]].name);
    } else if (strcmp(c, "outputs") == 0) {
      for (int i = 0; i < e->nout; i++)
        printf("%s%s\n", e->out_unique[i] ? "*" : "", nb_types[e->out_types[i]].name);
    } else if (strcmp(c, "output") == 0) {
      if (e->nout == 1) printf("%s%s\n", e->out_unique[0] ? "*" : "", nb_types[e->out_types[0]].name);
      else if (e->nout > 1) printf("%s\n", nb_types[e->tuple_type].name);
    }
  } else if (strcmp(c, "kind") == 0 && n == 2) {
    int t = nb_get_type(w[1]);
    if (t < 0) return;
    const nb_type_info *ti = &nb_types[t];
    printf("%s\n", ti->kind == NB_KIND_PRIM    ? "primitive"
                   : ti->kind == NB_KIND_ARRAY ? "array"
                   : ti->nfields >= 0          ? "record"
                                               : "opaque");
  } else if (strcmp(c, "type") == 0 && n == 2) {
    nb_var *v = nb_get_var(w[1]);
    if (v) printf("%s\n", nb_types[v->type].name);
  } else if (strcmp(c, "fields") == 0 && n == 2) {
    int t = nb_get_type(w[1]);
    if (t < 0) return;
    if (nb_types[t].nfields < 0) {
      nb_failure("Type %s is not a record", w[1]);
      return;
    }
    for (int f = 0; f < nb_types[t].nfields; f++)
      printf("%s %s\n", nb_types[t].fields[f].name, nb_types[nb_types[t].fields[f].type].name);
  } else if (strcmp(c, "project") == 0) {
    nb_cmd_project(w, n);
  } else if (strcmp(c, "new") == 0) {
    nb_cmd_new(w, n);
  } else if ((strcmp(c, "rank") == 0 || strcmp(c, "elemtype") == 0) && n == 2) {
    int t = nb_get_type(w[1]);
    if (t < 0) return;
    if (nb_types[t].kind != NB_KIND_ARRAY) {
      nb_failure("Type %s is not an array type", w[1]);
      return;
    }
    if (c[0] == 'r') printf("%d\n", nb_types[t].rank);
    else printf("%s\n", nb_type_names[nb_types[t].elem]);
  } else if (strcmp(c, "shape") == 0 && n == 2) {
    nb_var *v = nb_get_var(w[1]);
    if (!v) return;
    if (nb_types[v->type].kind != NB_KIND_ARRAY) {
      nb_failure("Variable %s is not an array", w[1]);
      return;
    }
    for (int k = 0; k < nb_types[v->type].rank; k++)
      printf("%" PRId64 "\n", ((nb_array_obj *)v->obj)->arr.shape[k]);
  } else if (strcmp(c, "clear") == 0) {
    futhark_context_clear_caches(nb_ctx);
  } else if (strcmp(c, "report") == 0) {
    char *r = futhark_context_report(nb_ctx);
    printf("%s\n", r ? r : "{}");
    free(r);
  } else if (strcmp(c, "pause_profiling") == 0) {
    futhark_context_pause_profiling(nb_ctx);
  } else if (strcmp(c, "unpause_profiling") == 0) {
    futhark_context_unpause_profiling(nb_ctx);
  } else if (strcmp(c, "set_tuning_param") == 0 && n == 3) {
    nb_failure("Unknown tuning parameter: %s", w[1]);
  } else if (strcmp(c, "tuning_param_class") == 0 && n == 2) {
    nb_failure("Unknown tuning parameter: %s", w[1]);
  } else {
    nb_failure("Unknown command or wrong number of arguments: %s", c);
  }
}

/* Splits `line` into words in place (spaces; "quoted" words); the count.
 * `w` has room for every word: at most one per two bytes of the line, and
 * one more. */
static int nb_split(char *line, char **w) {
  int n = 0;
  char *p = line;
  for (;;) {
    while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n') p++;
    if (!*p) return n;
    if (*p == '"') {
      char *q = ++p;
      w[n++] = q;
      while (*p && *p != '"') p++;
    } else {
      w[n++] = p;
      while (*p && *p != ' ' && *p != '\t' && *p != '\r' && *p != '\n') p++;
    }
    if (!*p) return n;
    *p++ = 0;
  }
}

static int nb_server_main(int argc, char **argv) {
  nb_tune_malloc();
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
      printf("usage: %s [-D] [-L] [-P] [--param NAME=VALUE] [--tuning FILE] [--cache-file FILE] "
             "[--print-params] [--memory-limit SIZE]\n(Futhark's server protocol on stdin/stdout)\n"
             "  --memory-limit SIZE  refuse allocations past SIZE bytes in all (K, M, G, T "
             "suffixes; 0: no limit; default: 3/4 of the physical memory, at most ulimit -v)\n",
             argv[0]);
      return 0;
    } else if (nb_is_option(a, "--memory-limit")) {
      nb_set_memory_limit_option(argv[0], nb_option_value(argc, argv, &i, "--memory-limit"));
    } else if (strcmp(a, "--tuning") == 0 || strcmp(a, "--cache-file") == 0 ||
               strcmp(a, "--param") == 0) {
      if (++i >= argc) {
        fprintf(stderr, "%s: %s needs an argument\n", argv[0], a);
        return 2;
      }
    } else if (strcmp(a, "-D") != 0 && strcmp(a, "-L") != 0 && strcmp(a, "-P") != 0 &&
               strcmp(a, "--debugging") != 0 && strcmp(a, "--log") != 0 &&
               strcmp(a, "--profile") != 0 && strcmp(a, "--print-params") != 0 &&
               strncmp(a, "--param=", 8) != 0 && strncmp(a, "--tuning=", 9) != 0 &&
               strncmp(a, "--cache-file=", 13) != 0) {
      fprintf(stderr, "%s: unknown option %s\n", argv[0], a);
      return 2;
    }
  }
  struct futhark_context_config *cfg = futhark_context_config_new();
  nb_ctx = cfg ? futhark_context_new(cfg) : NULL;
  if (!nb_ctx) {
    fprintf(stderr, "%s: cannot create a context\n", argv[0]);
    return 1;
  }
  printf("%%%%%% OK\n");
  fflush(stdout);
  char *line = NULL;
  size_t cap = 0;
  ssize_t got;
  char **w = NULL;
  size_t wcap = 0;
  while ((got = getline(&line, &cap, stdin)) >= 0) {
    /* Any number of words: the array grows with the line. */
    size_t need = (size_t)got / 2 + 2;
    if (need > INT_MAX) {
      nb_failure("The command has too many words");
      printf("%%%%%% OK\n");
      fflush(stdout);
      continue;
    }
    if (need > wcap) {
      char **nw = (char **)realloc(w, need * sizeof(char *));
      if (!nw) {
        nb_failure("Out of memory: the command has too many words");
        printf("%%%%%% OK\n");
        fflush(stdout);
        continue;
      }
      w = nw;
      wcap = need;
    }
    int n = nb_split(line, w);
    if (n > 0) nb_command(w, n);
    printf("%%%%%% OK\n");
    fflush(stdout);
  }
  free(w);
  free(line);
  while (nb_nvars > 0) nb_remove_var(&nb_vars[nb_nvars - 1]);
  free(nb_vars);
  futhark_context_free(nb_ctx);
  futhark_context_config_free(cfg);
  return 0;
}
