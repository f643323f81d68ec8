// Counts the calls to the C allocator of the process it is preloaded into, for the benchmark's
// allocations per request: a count, not a time, so it is the same on a busy machine.
//
//   LD_PRELOAD=.build/allocation-counter.so PROGRAM
//
// Every malloc, calloc, realloc, posix_memalign, aligned_alloc, memalign and valloc adds one (free
// adds nothing), then goes to glibc's own allocator. The program reads the count through
// `convey_allocation_count`, found with dlsym(RTLD_DEFAULT, ...), so a program run without the
// counter simply reports no allocations.
//
// Not a SwiftPM target: scripts/build-allocation-counter compiles it with the system C compiler.
#define _GNU_SOURCE
#include <errno.h>
#include <stdatomic.h>
#include <stddef.h>
#include <unistd.h>

extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t count, size_t size);
extern void *__libc_realloc(void *pointer, size_t size);
extern void *__libc_memalign(size_t alignment, size_t size);

static _Atomic unsigned long long allocations;

static inline void counted(void) { atomic_fetch_add_explicit(&allocations, 1, memory_order_relaxed); }

/// How many allocations the process has made so far.
unsigned long long convey_allocation_count(void) { return atomic_load_explicit(&allocations, memory_order_relaxed); }

void *malloc(size_t size) { counted(); return __libc_malloc(size); }
void *calloc(size_t count, size_t size) { counted(); return __libc_calloc(count, size); }
void *realloc(void *pointer, size_t size) { counted(); return __libc_realloc(pointer, size); }
void *memalign(size_t alignment, size_t size) { counted(); return __libc_memalign(alignment, size); }
void *aligned_alloc(size_t alignment, size_t size) { counted(); return __libc_memalign(alignment, size); }
void *valloc(size_t size) { counted(); return __libc_memalign((size_t)sysconf(_SC_PAGESIZE), size); }

int posix_memalign(void **result, size_t alignment, size_t size) {
    counted();
    if (alignment % sizeof(void *) != 0 || (alignment & (alignment - 1)) != 0) return EINVAL;
    void *memory = __libc_memalign(alignment, size);
    if (memory == NULL) return ENOMEM;
    *result = memory;
    return 0;
}
