
/* ---------- multicore: after the runtime ---------- */
#ifdef NB_LIBRARY
/* A thread of a parallel level failed: in a thread of an enclosing level,
 * that thread fails; else the call fails with the kept message. */
__attribute__((noreturn)) static void nb_par_rethrow(void) {
  if (nb_worker_jmp) longjmp(*nb_worker_jmp, 1);
  __atomic_store_n(&nb_par_failed, 0, __ATOMIC_RELEASE);
  if (nb_jmp) longjmp(*nb_jmp, 1);
  abort();
}
#define NB_PAR_END()                                                                           \
  do {                                                                                         \
    if (__atomic_load_n(&nb_par_failed, __ATOMIC_ACQUIRE)) nb_par_rethrow();                   \
  } while (0)
#else
#define NB_PAR_END() ((void)0)
#endif
