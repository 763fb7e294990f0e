// Groups of shared stacks (stack_group.c): what the fiber layer needs beyond the public API
// (CCoroutineContext.h, section 4).

#ifndef COVENANT_STACK_GROUP_H
#define COVENANT_STACK_GROUP_H

#include "cov_internal.h"
#include "fiber_record.h"

// Sets the group's minimum number of stacks (0: leave it).
COV_HIDDEN void cov_group_set_min(cov_stack_group_t *group, size_t min_stacks);
// Makes sure the group has a stack; 0 or an errno value.
COV_HIDDEN int cov_group_ensure_stack(cov_stack_group_t *group);
// Chooses the stack a new fiber of the group is bound to (never NULL once ensure_stack passed).
COV_HIDDEN cov_shared_stack_t *cov_group_bind(cov_stack_group_t *group);

COV_HIDDEN void cov_stack_group_fork(cov_fork_phase_t phase);

#endif
