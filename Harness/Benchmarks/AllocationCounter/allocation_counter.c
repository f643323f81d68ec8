// Counts the calls to the C allocator of the process it is preloaded into, for the benchmark's
// allocations per request: a count, not a time, so it is the same on a busy machine.
//
//   LD_PRELOAD=.build/allocation-counter.so PROGRAM
//
// Every malloc, calloc, realloc, posix_memalign, aligned_alloc, memalign and valloc adds one (free
// adds nothing), then goes to glibc's own allocator. The program reads the count through
// `convey_allocation_count`, found with dlsym(RTLD_DEFAULT, ...), so a program run without the
// counter simply reports no allocations. Each thread's own count is kept too, for the first
// `THREAD_SLOTS` threads the process starts, and read by thread id with
// `convey_allocation_count_of_thread` (the benchmark reads its event loop's).
//
// Not a SwiftPM target: scripts/build-allocation-counter compiles it with the system C compiler.
#define _GNU_SOURCE
#include <errno.h>
#include <stdatomic.h>
#include <stddef.h>
#include <sys/syscall.h>
#include <unistd.h>

extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t count, size_t size);
extern void *__libc_realloc(void *pointer, size_t size);
extern void *__libc_memalign(size_t alignment, size_t size);

#define THREAD_SLOTS 4096

static _Atomic unsigned long long allocations;

/// One thread's count: written by that thread only, read by any.
struct thread_slot {
    _Atomic int tid;
    _Atomic unsigned long long count;
};

static struct thread_slot slots[THREAD_SLOTS];
static _Atomic int slots_taken;
/// The calling thread's slot; NULL until its first allocation, and for threads beyond the slots.
static __thread struct thread_slot *own_slot __attribute__((tls_model("initial-exec")));
static __thread int own_slot_tried __attribute__((tls_model("initial-exec")));

static inline void counted(void) {
    atomic_fetch_add_explicit(&allocations, 1, memory_order_relaxed);
    if (!own_slot_tried) {
        own_slot_tried = 1;
        int index = atomic_fetch_add_explicit(&slots_taken, 1, memory_order_relaxed);
        if (index < THREAD_SLOTS) {
            own_slot = &slots[index];
            atomic_store_explicit(&own_slot->tid, (int)syscall(SYS_gettid), memory_order_release);
        }
    }
    if (own_slot != NULL) atomic_fetch_add_explicit(&own_slot->count, 1, memory_order_relaxed);
}

/// How many allocations the process has made so far.
unsigned long long convey_allocation_count(void) { return atomic_load_explicit(&allocations, memory_order_relaxed); }

/// How many allocations the thread `tid` of this process has made so far; 0 for a thread not counted.
unsigned long long convey_allocation_count_of_thread(int tid) {
    int taken = atomic_load_explicit(&slots_taken, memory_order_relaxed);
    if (taken > THREAD_SLOTS) taken = THREAD_SLOTS;
    unsigned long long total = 0;
    // Thread ids may be reused by the kernel: a later thread's count adds to an earlier one's.
    for (int index = 0; index < taken; index++) {
        if (atomic_load_explicit(&slots[index].tid, memory_order_acquire) == tid) {
            total += atomic_load_explicit(&slots[index].count, memory_order_relaxed);
        }
    }
    return total;
}

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
