// SPDX-License-Identifier: MIT
/*
 * Process exit with armed objects leaves no waiter: a child that exits
 * (or is killed while asleep in read) with objects armed on shared words
 * leaves nothing a FUTEX_WAKE counts.  A thread that exits leaves the
 * process's object armed.  An object shared with the parent and armed
 * by the child on the child's own (private) word outlives the child's
 * address space safely: the parent's wake of that address counts
 * nothing, and the parent can re-arm and close it.
 */
#include "lib/futex.h"

#include <pthread.h>
#include <sys/mman.h>
#include <sys/wait.h>

PT_BUDGET(50);

static uint32_t *shm;
static uint32_t word = 3;
static int pfd[2];

static void tell_parent(void)
{
	pt_send_byte(pfd[1], 'a');
}

static void wait_child_ready(void)
{
	pt_recv_byte(pfd[0]);
}

static pid_t spawn(void (*fn)(void))
{
	pid_t pid = fx_fork();

	if (pid == 0) {
		fn();
		_exit(PT_PASS);
	}
	return pid;
}

/* exits with one object on shm[0] and a wait-any of 128 on shm[1..] */
static void child_exits(void)
{
	struct pollfs_futex_event evs[128];
	int a = fx_new(0), b = fx_new(0), c = fx_new(0);

	fx_arm(a, &shm[0], 0, FX_SHARED);
	for (int i = 0; i < 128; i++)
		evs[i] = fx_ev(&shm[1 + i], 0, FX_SHARED);
	fx_armv(b, evs, 128);
	fx_arm(c, &word, 3, FX_PRIVATE);
	tell_parent();
	pause();
}

static void child_sleeps_in_read(void)
{
	int a = fx_new(0);

	fx_arm(a, &shm[0], 0, FX_SHARED);
	tell_parent();
	fx_expect_rec(a, &shm[0], 0, FX_SHARED);
	FAIL("woken");
}

static int inherited;

static void child_arms_inherited(void)
{
	word = 1234;	/* the child's own copy */
	fx_arm(inherited, &word, 1234, FX_PRIVATE);
	/* its own wake would count it; it exits without */
}

static void *thread_arms(void *fdp)
{
	fx_arm(*(int *)fdp, &word, 3, FX_PRIVATE);
	return NULL;
}

int main(void)
{
	pthread_t th;
	pid_t pid;
	int fd, status;

	shm = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(shm != MAP_FAILED);
	CHECK_SYS(pipe2(pfd, O_CLOEXEC));

	/* exit (by SIGTERM here: no close, no atexit) */
	pid = spawn(child_exits);
	wait_child_ready();
	CHECK_EQ(kill(pid, SIGTERM), 0);
	status = pt_wait_status(pid);
	CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM);
	for (int i = 0; i < 129; i++)
		CHECK_EQ(fx_wake(&shm[i], INT_MAX, FX_SHARED), 0);

	/* killed in read */
	pid = spawn(child_sleeps_in_read);
	wait_child_ready();
	fx_wait_sleeping(pid, SYS_read);
	CHECK_EQ(kill(pid, SIGKILL), 0);
	status = pt_wait_status(pid);
	CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	CHECK_EQ(fx_wake(&shm[0], INT_MAX, FX_SHARED), 0);

	/* a thread arms the process's object and exits: still armed */
	fd = fx_new(POLLFS_NONBLOCK);
	CHECK_EQ(pthread_create(&th, NULL, thread_arms, &fd), 0);
	CHECK_EQ(pthread_join(th, NULL), 0);
	fx_expect_armed(fd);
	CHECK_EQ(fx_wake(&word, INT_MAX, FX_PRIVATE), 1);
	fx_expect_rec(fd, &word, 3, FX_PRIVATE);

	/* armed by a child on its own word, the child gone */
	inherited = fd;
	pid = spawn(child_arms_inherited);
	status = pt_wait_status(pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == PT_PASS);
	fx_expect_armed(fd);
	CHECK_EQ(fx_wake(&word, INT_MAX, FX_PRIVATE), 0);
	CHECK_EQ(fx_wake(&word, INT_MAX, FX_SHARED), 0);
	fx_expect_armed(fd);
	/* re-armed here, it works */
	fx_arm(fd, &word, 3, FX_PRIVATE);
	CHECK_EQ(fx_wake(&word, INT_MAX, FX_PRIVATE), 1);
	fx_expect_rec(fd, &word, 3, FX_PRIVATE);
	/* again armed by a dead child, then closed */
	pid = spawn(child_arms_inherited);
	pt_wait_status(pid);
	CHECK_SYS(close(fd));
	CHECK_EQ(fx_wake(&word, INT_MAX, FX_PRIVATE), 0);
	return PT_PASS;
}
