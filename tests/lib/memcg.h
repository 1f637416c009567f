/* SPDX-License-Identifier: MIT */
/*
 * A memory cgroup for the tests of what pollfs charges to one
 * (memcg-limit, ring-memory): a cgroup of its own under the cgroup2
 * hierarchy, mounted on a temporary directory when none is (the guest
 * has none), with the memory controller, a limit and no swap, and a
 * child process run in it.  Root only; one cgroup per process.
 */
#ifndef POLLFS_TESTS_MEMCG_H
#define POLLFS_TESTS_MEMCG_H

#include "lib.h"

/*
 * Makes the cgroup "pollfs-NAME-PID", its memory.max limit bytes: skips
 * the test unless it runs as root on a kernel with cgroup2 and its
 * memory controller.  Takes the test's fail hook (pt_on_fail), which
 * removes the cgroup and unmounts what was mounted for it.
 */
void pt_memcg_create(const char *name, long limit);
/*
 * Runs fn(arg) in a child moved into the cgroup before fn starts,
 * failing the test unless it returns PT_PASS.  The OOM killer spares
 * the child (oom_score_adj -1000), so that at the limit a charge
 * fails, not the child, and its descriptor limit is raised, so that
 * memory is its limit.  No watchdog of its own: the test's ends it.
 */
void pt_memcg_run(int (*fn)(void *arg), void *arg);
/* A number from a file of the cgroup: the first one, or the one after
 * key at the start of a line ("max " of memory.events); -1 if there is
 * none. */
long pt_memcg_read(const char *file, const char *key);
/* Removes the cgroup, failing the test if it cannot (a task or a charge
 * left in it), and unmounts what was mounted for it. */
void pt_memcg_remove(void);

#endif /* POLLFS_TESTS_MEMCG_H */
