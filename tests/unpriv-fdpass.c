// SPDX-License-Identifier: MIT
/*
 * A pollfs descriptor passed to another process, of another user, over
 * a UNIX socket gives it nothing of the sender's.  The receiver is uid
 * 65534 when the test runs as root (the same user otherwise).  What
 * "nothing of the sender's" means is each kind's: the checks of every
 * kind of tests/lib/kinds.c that holds something of the process that
 * made it (its entry's passing: a signal object reads its reader's
 * signals, a futex object waits in its armer's memory, an AIO object
 * follows its maker's context), each a TEST, passing the descriptors
 * it needs to a receiver of its own.
 */
#include "lib/futex.h"		/* fx_fork() */
#include "lib/kinds.h"

#include <stdio.h>
#include <sys/socket.h>
#include <sys/wait.h>

PT_BUDGET(60);

typedef void receiver_fn(const int *fds, const struct pt_pass_msg *m);

struct receiver {
	int sock;
	pid_t pid;
};

/*
 * Forks the receiver before the sender makes anything it passes: the
 * receiver shares none of it but through the socket.  It becomes nobody,
 * takes the descriptors, runs fn, closes them and says it is done.
 */
static struct receiver receiver_start(receiver_fn *fn)
{
	struct receiver r;
	struct pt_pass_msg m;
	int sv[2], fds[PT_PASS_FDS];
	char ok = 1;

	CHECK_SYS(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv));
	r.pid = fx_fork();
	if (r.pid == 0) {
		close(sv[0]);
		if (geteuid() == 0)
			pt_become_nobody();
		CHECK_EQ(pt_recv_fds(sv[1], fds, PT_PASS_FDS, &m, sizeof(m)),
			 m.nfds);
		pt_diag("receiver: pid %d uid %d got %d of the sender's "
			"(pid %d) descriptors", (int)getpid(), (int)getuid(),
			m.nfds, (int)m.sender);
		fn(fds, &m);
		for (int i = 0; i < m.nfds; i++)
			CHECK_SYS(close(fds[i]));
		CHECK_EQ(write(sv[1], &ok, 1), 1);
		_exit(PT_PASS);
	}
	close(sv[1]);
	r.sock = sv[0];
	return r;
}

/* Passes the descriptors and waits for the receiver to pass its checks. */
static void receiver_run(struct receiver r, const int *fds,
			 struct pt_pass_msg *m)
{
	int status;
	char c;

	m->sender = getpid();
	pt_send_fds(r.sock, fds, m->nfds, m, sizeof(*m));
	if (read(r.sock, &c, 1) != 1)
		pt_diag("the receiver ended without reporting");
	CHECK_EQ(waitpid(r.pid, &status, 0), r.pid);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != PT_PASS)
		FAIL("receiver: status %#x", status);
	CHECK_SYS(close(r.sock));
}

static void check_passing(const void *arg)
{
	const struct pt_passing *p = arg;
	struct receiver r = receiver_start(p->receive);
	struct pt_pass_msg m;
	int fds[PT_PASS_FDS];

	memset(&m, 0, sizeof(m));
	p->send(fds, &m);
	CHECK_RANGE(m.nfds, 1, PT_PASS_FDS);
	receiver_run(r, fds, &m);
	p->kept(fds, &m);
}

int main(void)
{
	char name[64];

	if (geteuid() != 0)
		pt_diag("not root: the receiver runs as uid %d too",
			(int)getuid());
	pt_for_each_kind(k) {
		if (!k->passing) {
			pt_diag("%s: an object holds nothing of the process "
				"that made it", k->name);
			continue;
		}
		for (const struct pt_passing *p = k->passing; p->name; p++) {
			snprintf(name, sizeof(name), "%s-%s", k->name, p->name);
			pt_add_test_arg(name, check_passing, p);
		}
	}
	return pt_run_tests();
}
