// Fiber entries and shared-stack jobs that several files of the C test use (fixtures.h).

#include "fixtures.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

// MARK: - Dedicated fibers

int counter_sum;

void counter_entry(void *argument) {
  intptr_t n = (intptr_t)argument;
  for (intptr_t i = 0; i < n; i++) {
    counter_sum += 1;
    cov_fiber_suspend();
  }
}

static int deep_recursion(int depth) {
  volatile char frame[1024];
  frame[0] = (char)depth;
  frame[sizeof frame - 1] = (char)depth;
  if (depth == 0) return frame[0] + frame[sizeof frame - 1];
  return deep_recursion(depth - 1) + (frame[0] == (char)depth) + (frame[1023] == (char)depth);
}

int recursion_result;

void recursion_entry(void *argument) {
  (void)argument;
  recursion_result = deep_recursion(150);  // >= 150 KiB of frames on a 256 KiB stack
}

void nothing_entry(void *argument) { (void)argument; }

// MARK: - Shared-stack jobs

static pthread_mutex_t ready_lock = PTHREAD_MUTEX_INITIALIZER;
static shared_job_t *ready_head;

void test_park(void *argument) {
  shared_job_t *job = argument;
  atomic_fetch_add(&job->parks, 1);
}

void test_unpark(void *argument) {
  shared_job_t *job = argument;
  atomic_fetch_add(&job->unparks, 1);
  pthread_mutex_lock(&ready_lock);
  job->next_ready = ready_head;
  ready_head = job;
  pthread_mutex_unlock(&ready_lock);
}

shared_job_t *take_ready(void) {
  pthread_mutex_lock(&ready_lock);
  shared_job_t *job = ready_head;
  if (job) ready_head = job->next_ready;
  pthread_mutex_unlock(&ready_lock);
  return job;
}

static __attribute__((noinline)) void remember_local(shared_job_t *job, volatile long *local) {
  job->own_local = (void *)local;
}

// Suspends `rounds` times with `depth` bytes of its own frames below, checking after every
// resume that those frames (and a pointer into them) are what it left.
static __attribute__((noinline)) void shared_rounds(shared_job_t *job, int depth) {
  if (depth > 0) {
    volatile unsigned char pad[256];
    for (int i = 0; i < 256; i++) pad[i] = (unsigned char)(job->id + i + depth);
    shared_rounds(job, depth - 256);
    for (int i = 0; i < 256; i++)
      if (pad[i] != (unsigned char)(job->id + i + depth)) job->corrupted++;
    return;
  }
  volatile long local = 1000L * job->id;
  remember_local(job, &local);  // cleared before the frame ends
  for (int round = 0; round < job->rounds; round++) {
    cov_fiber_suspend();
    if (local != 1000L * job->id + round || job->own_local != (void *)&local ||
        *(volatile long *)job->own_local != local)
      job->corrupted++;
    local += 1;
    job->done++;
    for (int i = 0; i < job->work; i++) __asm__ volatile("" ::: "memory");
  }
  job->own_local = NULL;  // the frame ends here
}

void shared_entry(void *argument) {
  shared_job_t *job = argument;
  shared_rounds(job, job->depth);
}

size_t group_minimum;

cov_fiber_t *make_shared(const void *key, shared_job_t *job, int id, int depth,
                                int rounds) {
  memset(job, 0, sizeof *job);
  job->id = id;
  job->depth = depth;
  job->rounds = rounds;
  job->fiber = cov_fiber_create_shared(cov_stack_group(key), group_minimum, shared_entry, job);
  return job->fiber;
}

int lazy_groups(size_t minimum) {
  group_minimum = minimum;
  int eager = cov_shared_stacks_eager_eviction();
  cov_shared_stacks_set_eager_eviction(0);
  return eager;
}

shared_job_t nested_job;

void nesting_entry(void *argument) {
  // Running on the stack that nested_job's fiber is bound to: resuming it must park it.
  int *status = argument;
  *status = cov_fiber_resume(nested_job.fiber);
  cov_fiber_suspend();
}

