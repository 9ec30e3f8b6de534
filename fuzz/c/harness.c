/* libFuzzer target for the compiled runtime: the generated C value reader
 * (text and binary values, as `restore` and executables read them) and the
 * server's command parser and commands, under AddressSanitizer and
 * UndefinedBehaviorSanitizer.
 *
 * Built by fuzz/c/run.sh: `nabla c --server fuzz/c/prog.fut --only-c`
 * writes the server for prog.fut, which this file includes with NB_NO_MAIN
 * (the generated `main` left out), so that it can call the server's static
 * functions: nb_split (the command line's words) and nb_command (a
 * command, `restore` reading values with nb_read_value and
 * nb_opaque_read).
 *
 * One input is one server session:
 *   COMMAND LINES [NUL FILE]
 * The bytes before the first NUL are command lines, run in order as the
 * server runs its stdin (words split by nb_split, then nb_command); the
 * bytes after it are the contents of the one file the session can read.
 * The file name of `restore FILE ...` is replaced by that file (an
 * in-memory file), and that of `store FILE ...` by /dev/null, so that no
 * input reads or writes a file of the machine. Every variable is freed at
 * the end of the input.
 *
 * The executables' value reader is the same function (nb_read_value) with
 * `exit` in place of the library's longjmp on failure; the server's
 * protected variant is the one a fuzzer can run in-process.
 *
 * NB_FUZZ_SHOW=1 in the environment keeps the server's replies on stdout
 * (to read what a reproducer does); otherwise they go to /dev/null. */

#define NB_NO_MAIN 1
#include "prog.c"

#include <sys/mman.h>
#include <unistd.h>

/* The memory limit of the fuzzed context: small, so that hostile sizes
 * meet it long before AddressSanitizer's own allocation limits. */
#define NB_FUZZ_MEMORY_LIMIT (256 << 20)

/* The in-memory file that `restore` reads, and its path. */
static int nb_fuzz_file = -1;
static char nb_fuzz_file_path[64];
/* The fuzzed context's configuration (kept for the whole run). */
static struct futhark_context_config *nb_fuzz_config;

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc, (void)argv;
  const char *show = getenv("NB_FUZZ_SHOW");
  if (!(show && strcmp(show, "1") == 0) && !freopen("/dev/null", "w", stdout)) abort();
  nb_fuzz_file = memfd_create("nabla-fuzz-restore", 0);
  if (nb_fuzz_file < 0) abort();
  snprintf(nb_fuzz_file_path, sizeof nb_fuzz_file_path, "/proc/self/fd/%d", nb_fuzz_file);
  nb_fuzz_config = futhark_context_config_new();
  if (!nb_fuzz_config) abort();
  futhark_context_config_set_memory_limit(nb_fuzz_config, NB_FUZZ_MEMORY_LIMIT);
  nb_ctx = futhark_context_new(nb_fuzz_config);
  if (!nb_ctx) abort();
  return 0;
}

/* Makes the in-memory file hold exactly `data`. */
static void nb_fuzz_set_file(const uint8_t *data, size_t size) {
  if (ftruncate(nb_fuzz_file, 0) != 0) abort();
  size_t done = 0;
  while (done < size) {
    ssize_t k = pwrite(nb_fuzz_file, data + done, size - done, (off_t)done);
    if (k <= 0) abort();
    done += (size_t)k;
  }
}

/* Runs one command line (a NUL-terminated copy) as the server does. */
static void nb_fuzz_command(char *line, size_t length) {
  char **w = (char **)malloc((length / 2 + 2) * sizeof(char *));
  if (!w) abort();
  int n = nb_split(line, w);
  if (n > 0) {
    if (n >= 2 && strcmp(w[0], "restore") == 0) w[1] = nb_fuzz_file_path;
    if (n >= 2 && strcmp(w[0], "store") == 0) w[1] = (char *)"/dev/null";
    nb_command(w, n);
  }
  free(w);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const uint8_t *nul = (const uint8_t *)memchr(data, 0, size);
  size_t commands = nul ? (size_t)(nul - data) : size;
  if (nul) nb_fuzz_set_file(nul + 1, size - commands - 1);
  else nb_fuzz_set_file(NULL, 0);
  size_t at = 0;
  while (at < commands) {
    const uint8_t *end = (const uint8_t *)memchr(data + at, '\n', commands - at);
    size_t length = end ? (size_t)(end - (data + at)) : commands - at;
    char *line = (char *)malloc(length + 1);
    if (!line) abort();
    memcpy(line, data + at, length);
    line[length] = 0;
    nb_fuzz_command(line, length);
    free(line);
    at += length + 1;
  }
  while (nb_nvars > 0) nb_remove_var(&nb_vars[nb_nvars - 1]);
  fflush(stdout);
  /* With every variable freed, nothing is counted against the limit: a
   * count left over is memory the runtime lost track of. */
  if (nb_mem_used != 0) {
    fprintf(stderr, "nabla fuzz: %" PRId64 " bytes still counted after the session\n", nb_mem_used);
    abort();
  }
  return 0;
}
