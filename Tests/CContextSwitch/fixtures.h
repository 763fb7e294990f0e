// Fiber entries and shared-stack jobs that several files of the C test use (fixtures.c).

#ifndef COVENANT_TEST_FIXTURES_H
#define COVENANT_TEST_FIXTURES_H

#include "harness.h"

// MARK: - Dedicated fibers

// Adds 1 to counter_sum and suspends, `(intptr_t)argument` times.
extern int counter_sum;
void counter_entry(void *argument);

// Recurses 150 levels of 1 KiB frames (>= 150 KiB on a 256 KiB stack); recursion_result is 300
// when the frames were intact.
extern int recursion_result;
void recursion_entry(void *argument);

// Returns at once.
void nothing_entry(void *argument);

// MARK: - Shared-stack jobs

// Parking hooks of the tests: a parked fiber's argument is a shared_job_t, handed back on a
// lock-protected ready list.
typedef struct shared_job {
  cov_fiber_t *fiber;
  struct shared_job *next_ready;
  int id;
  int depth;              // bytes of padding between the entry and the suspension
  int rounds;             // suspensions before the entry returns
  int done;               // rounds completed
  int work;               // busy iterations after each resume (to make threads overlap)
  int corrupted;          // frames found changed after a resume
  _Atomic int parks, unparks;
  void *own_local;        // address of a local in its frames (valid for the fiber itself)
} shared_job_t;

void test_park(void *argument);
void test_unpark(void *argument);
shared_job_t *take_ready(void);

// A job's entry: suspends `rounds` times with `depth` bytes of its own frames below, checking
// after every resume that those frames (and a pointer into them) are what it left.
void shared_entry(void *argument);

// The minimum number of stacks the next make_shared asks of its group (0: the group's own).
extern size_t group_minimum;

// A shared fiber of the group of `key` running `job`; NULL if it could not be made.
cov_fiber_t *make_shared(const void *key, shared_job_t *job, int id, int depth, int rounds);

// Lazy eviction and groups keeping `minimum` stacks for what follows; returns the eviction
// setting to restore.
int lazy_groups(size_t minimum);

// A fiber that resumes nested_job's fiber, which is bound to the stack it runs on itself:
// stores the status of that resume (COV_FIBER_PARKED) in `*(int *)argument`, then suspends.
extern shared_job_t nested_job;
void nesting_entry(void *argument);

#endif
