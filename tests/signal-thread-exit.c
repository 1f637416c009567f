// SPDX-License-Identifier: MIT
/*
 * A thread exits (pthread_exit) while another thread of the process
 * sleeps in read() on the object: the reader goes on sleeping and reads
 * the next signal sent to the process; the signal that was pending for
 * the exited thread alone went with it.  Also when the thread that exits
 * is the main thread: the process lives on in the reader, which reads a
 * signal sent by the parent and then ends the process.
 */
#include "lib/signal.h"

#include <stdatomic.h>

PT_BUDGET(60);

static int fd;
static atomic_int r_tid, x_tid;
static int to_x[2];
static struct pollfs_siginfo got;
static atomic_int done;

static void *reader(void *unused)
{
	struct pollfs_siginfo psi;

	(void)unused;
	r_tid = ps_gettid();
	CHECK_EQ(ps_read_one(fd, &psi), 1);
	got = psi;
	done = 1;
	return NULL;
}

static void *exiter(void *unused)
{
	(void)unused;
	x_tid = ps_gettid();
	ps_wait_post(to_x[0]);
	pthread_exit(NULL);
}

static char task_state(pid_t pid, pid_t tid)
{
	char path[64], text[512], *p;
	ssize_t n;
	int f;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", (int)pid,
		 (int)tid);
	f = open(path, O_RDONLY | O_CLOEXEC);
	if (f < 0)
		return 'X';	/* gone */
	n = read(f, text, sizeof(text) - 1);
	close(f);
	if (n <= 0)
		return 'X';
	text[n] = 0;
	p = strrchr(text, ')');
	return p && p[1] == ' ' ? p[2] : '?';
}

/* In a child, after its main thread exited: the parent's signal. */
static void *child_reader(void *unused)
{
	struct pollfs_siginfo psi;

	(void)unused;
	r_tid = ps_gettid();
	CHECK_EQ(ps_read_one(fd, &psi), 1);
	ps_check_sig(&psi, SIGUSR1, SI_USER);
	CHECK_EQ(psi.psi_pid, getppid());
	exit(0);
}

/* In a child: the main thread exits while the reader sleeps. */
__attribute__((noreturn)) static void main_exits(void)
{
	pthread_t t;

	CHECK_EQ(pthread_create(&t, NULL, child_reader, NULL), 0);
	while (!r_tid)
		pt_sleep_ms(1);
	ps_wait_in_read(r_tid);
	pthread_exit(NULL);
}

int main(void)
{
	uint64_t mask = ps_bit(SIGUSR1) | ps_bit(SIGUSR2);
	pthread_t r, x;
	pid_t child;
	int64_t end;
	int status;

	ps_block(mask);
	CHECK_SYS(pipe2(to_x, O_CLOEXEC));
	fd = ps_signal(mask, 0);

	/* another thread exits, with a signal of its own pending */
	CHECK_EQ(pthread_create(&x, NULL, exiter, NULL), 0);
	CHECK_EQ(pthread_create(&r, NULL, reader, NULL), 0);
	while (!r_tid || !x_tid)
		pt_sleep_ms(1);
	ps_wait_in_read(r_tid);
	CHECK_SYS(ps_tgkill(getpid(), x_tid, SIGUSR2));
	ps_post(to_x[1]);
	ps_join(x);
	pt_sleep_ms(50);
	ps_wait_in_read(r_tid);
	CHECK_EQ(done, 0);
	CHECK_SYS(kill(getpid(), SIGUSR1));
	ps_join(r);
	ps_check_sig(&got, SIGUSR1, SI_USER);
	CHECK_SYS(fcntl(fd, F_SETFL, O_NONBLOCK));
	ps_expect_empty(fd);
	CHECK_SYS(fcntl(fd, F_SETFL, 0));

	/* the main thread exits; the parent then signals the reader */
	child = fork();
	CHECK(child >= 0);
	if (child == 0) {
		alarm(0);
		r_tid = 0;
		memset(&got, 0, sizeof(got));
		main_exits();
	}
	end = pt_mono() + MS(PT_WAIT_MS);
	while (task_state(child, child) != 'Z') {
		if (pt_mono() > end) {
			kill(child, SIGKILL);
			FAIL("the child's main thread did not exit (state %c)",
			     task_state(child, child));
		}
		pt_sleep_ms(1);
	}
	CHECK_SYS(kill(child, SIGUSR1));
	status = ps_wait_child(child, PT_WAIT_MS);
	ps_check_exit0(status);
	CHECK_SYS(close(fd));
	return PT_PASS;
}
