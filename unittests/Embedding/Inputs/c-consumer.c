/* A C program of an embedder, built outside the jitlock tree against an
 * installed jitlock with pkg-config (unittests/Embedding/InstallTest.cmake):
 *
 *   cc c-consumer.c $(pkg-config --cflags --libs jitlock)
 *   cc c-consumer.c $(pkg-config --cflags --libs jitlock-static)
 *       threads call the runtime's C functions for every monitor operation,
 *       as an interpreter does;
 *   clang-19 -O2 -fpass-plugin=<plugindir>/JitlockPlugin.so -DJITLOCK_LOWERED
 *       c-consumer.c $(pkg-config --cflags --libs jitlock)
 *       the same code calls the jitlock IR interface instead, and the plugin
 *       lowers it to inline fast paths ahead of time (thread=call), with a
 *       constructor that checks the runtime's layout first;
 *   cc -DJITLOCK_LOWERED c-consumer.c $(pkg-config --cflags --libs jitlock)
 *       the plugin forgotten: it links (the runtime defines the jitlock.*
 *       names weakly) and aborts at the first enter, saying how to lower.
 *
 * Either way: N threads increment one counter under its monitor; the exit
 * status is 0 when the total is exact, and the runtime loaded is the one
 * whose header was compiled in. Prints OK. */
#include <jitlock/jitlock_rt.h>

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

enum { Threads = 4, Iterations = 100000 };

/* An object: the 64-bit header word at offset 0, then a field. */
struct object {
  uint64_t header;
  uint64_t count;
};

static struct object counter = {1, 0}; /* unlocked, no hash */
static int failures;

#ifdef JITLOCK_LOWERED
/* The names of the jitlock IR interface, which C cannot spell. The plugin
 * replaces the calls with inline code that calls the runtime only on its
 * slow paths. */
void jitlock_monitor_enter(void *obj) __asm__("jitlock.monitor.enter");
void jitlock_monitor_exit(void *obj) __asm__("jitlock.monitor.exit");
#define ENTER(self, obj) jitlock_monitor_enter(obj)
#define EXIT(self, obj) jitlock_monitor_exit(obj)
#else
#define ENTER(self, obj) check(jitlock_rt_monitor_enter(self, obj))
#define EXIT(self, obj) check(jitlock_rt_monitor_exit(self, obj))
#endif

static void check(int status) {
  if (status != JITLOCK_OK) {
    fprintf(stderr, "c-consumer: %s\n", jitlock_rt_status_name(status));
    __atomic_add_fetch(&failures, 1, __ATOMIC_RELAXED);
  }
}

static void *worker(void *arg) {
  (void)arg;
  jitlock_thread *self = jitlock_rt_attach();
  (void)self; /* lowered code finds its thread itself */
  for (int i = 0; i < Iterations; ++i) {
    ENTER(self, &counter);
    counter.count += 1; /* only the monitor keeps increments apart */
    EXIT(self, &counter);
  }
  check(jitlock_rt_detach());
  return NULL;
}

int main(void) {
  jitlock_rt_layout layout;
  jitlock_rt_get_layout(&layout);
  if (layout.abi_version != JITLOCK_RT_ABI_VERSION) {
    fprintf(stderr, "c-consumer: runtime ABI %u, header ABI %u\n",
            layout.abi_version, JITLOCK_RT_ABI_VERSION);
    return 1;
  }
  /* The layout was handed out (to this program, and to the lowered code's
   * layout check): a configuration with another one is refused. */
  jitlock_rt_config other;
  jitlock_rt_default_config(&other);
  other.header_offset = 8;
  if (jitlock_rt_configure(&other) != JITLOCK_ESTATE) {
    fprintf(stderr, "c-consumer: a layout change after get_layout was not "
                    "refused\n");
    return 1;
  }
  pthread_t threads[Threads];
  for (int t = 0; t < Threads; ++t)
    if (pthread_create(&threads[t], NULL, worker, NULL) != 0)
      return 1;
  for (int t = 0; t < Threads; ++t)
    pthread_join(threads[t], NULL);
  check(jitlock_rt_shutdown());
  const uint64_t expected = (uint64_t)Threads * Iterations;
  printf("counter = %llu (expected %llu)\n", (unsigned long long)counter.count,
         (unsigned long long)expected);
  if (failures != 0 || counter.count != expected || counter.header != 1)
    return 1;
  printf("OK\n");
  return 0;
}
