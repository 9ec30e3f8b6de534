/* ---------- recursion: stack checks ---------- */
/* The program has recursive functions. Each entry point notes the lowest
 * address its calls may use on the stack (which grows downwards on every
 * platform the backend targets), and each recursive function compares the
 * address of one of its locals with it: a recursion too deep for the
 * stack stops the program with an error instead of crashing it. The room
 * is the stack size limit (`ulimit -s`; 8 MiB where there is none) less a
 * quarter of it, at most 1 MiB, for the code that is not recursive. The
 * check is a comparison, so the C compiler still turns recursions into
 * loops where it can. (A library called on a thread with a smaller stack
 * than that limit is not protected.) */
#include <sys/resource.h>
static _Thread_local uintptr_t nb_stack_floor;

static size_t nb_stack_room(void) {
  static size_t room;
  if (!room) {
    size_t limit = (size_t)8 << 20;
    struct rlimit rl;
    if (getrlimit(RLIMIT_STACK, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
        rl.rlim_cur >= ((rlim_t)64 << 10))
      limit = (size_t)rl.rlim_cur;
    size_t margin = limit / 4 < ((size_t)1 << 20) ? limit / 4 : ((size_t)1 << 20);
    room = limit - margin;
  }
  return room;
}

static void nb_stack_start(uintptr_t base) {
  size_t room = nb_stack_room();
  nb_stack_floor = base > room ? base - room : 0;
}

/* Whether the stack really is below the floor, by this function's own
 * frame: the local the check compares may live elsewhere (on
 * AddressSanitizer's fake stack, for one). */
__attribute__((noinline, cold)) static bool nb_stack_exhausted(void) {
  return (uintptr_t)__builtin_frame_address(0) < nb_stack_floor;
}

__attribute__((noinline, cold, noreturn)) static void
nb_stack_overflow(const char *loc, const char *name) {
  nb_fail(loc,
          "stack overflow: the recursion of %s is too deep (its calls may use %zu bytes of "
          "stack; see `ulimit -s`)",
          name, nb_stack_room());
}

#define NB_STACK_START() nb_stack_start((uintptr_t)__builtin_frame_address(0))
#define NB_STACK_CHECK(loc, name)                                                             \
  do {                                                                                        \
    char nb_probe_;                                                                           \
    if ((uintptr_t)&nb_probe_ < nb_stack_floor && nb_stack_exhausted())                     \
      nb_stack_overflow(loc, name);                                                           \
  } while (0)
