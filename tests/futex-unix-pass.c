// SPDX-License-Identifier: MIT
/*
 * An object passed to another process over a UNIX socket (SCM_RIGHTS)
 * is the same object there.  Armed private by the sender, the receiver's
 * private (or shared) wakes of the same address count nothing; the
 * sender's wake fires it, and the receiver reads the record.  Re-armed
 * by the receiver on its own word, its wake counts it and the sender's
 * does not.  Armed shared, the receiver's shared wake counts it.
 */
#include "lib/futex.h"

#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>

PT_BUDGET(50);

static uint32_t word = 0x51;
static uint32_t *shm;
static int sk[2];

static int receiver(void)
{
	int fd = pt_recv_fd(sk[1], NULL, 0);

	pt_expect_fd_link(fd, "pollfs:[futex]");

	/* the sender's private wait: not ours to wake */
	fx_expect_armed(fd);
	CHECK_EQ(word, 0x51);
	CHECK_EQ(fx_wake(&word, INT_MAX, FX_PRIVATE), 0);
	CHECK_EQ(fx_wake(&word, INT_MAX, FX_SHARED), 0);
	fx_expect_armed(fd);
	pt_send_byte(sk[1], 's');
	/* the sender wakes it; we read the record */
	pt_wait_readable(fd, PT_WAIT_MS);
	fx_expect_rec(fd, &word, 0x51, FX_PRIVATE);

	/* re-armed here on our word */
	word = 0x52;
	fx_arm(fd, &word, 0x52, FX_PRIVATE);
	pt_send_byte(sk[1], 's');
	pt_recv_byte(sk[1]);
	fx_expect_armed(fd);
	CHECK_EQ(fx_wake(&word, INT_MAX, FX_PRIVATE), 1);
	fx_expect_rec(fd, &word, 0x52, FX_PRIVATE);
	pt_send_byte(sk[1], 's');

	/* shared: our wake of the shared word counts it */
	pt_recv_byte(sk[1]);
	CHECK_EQ(fx_wake(&shm[3], INT_MAX, FX_SHARED), 1);
	pt_send_byte(sk[1], 's');
	CHECK_SYS(close(fd));
	return PT_PASS;
}

int main(void)
{
	int fd, status;
	pid_t pid;

	shm = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(shm != MAP_FAILED);
	CHECK_SYS(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sk));
	/* the receiver forks before the object exists: it gets it only
	 * through the socket */
	pid = fx_fork();
	if (pid == 0) {
		_exit(receiver());
	}

	fd = fx_new(POLLFS_NONBLOCK);
	fx_arm(fd, &word, 0x51, FX_PRIVATE);
	pt_send_fd(sk[0], fd, NULL, 0);
	pt_recv_byte(sk[0]);
	fx_expect_armed(fd);
	CHECK_EQ(fx_wake(&word, INT_MAX, FX_PRIVATE), 1);

	/* the receiver re-armed on its word */
	pt_recv_byte(sk[0]);
	CHECK_EQ(word, 0x51);
	fx_expect_armed(fd);
	CHECK_EQ(fx_wake(&word, INT_MAX, FX_PRIVATE), 0);
	fx_expect_armed(fd);
	pt_send_byte(sk[0], 's');

	/* shared, woken by the receiver */
	pt_recv_byte(sk[0]);
	fx_expect_unarmed(fd);
	fx_arm(fd, &shm[3], 0, FX_SHARED);
	pt_send_byte(sk[0], 's');
	pt_recv_byte(sk[0]);
	fx_expect_rec(fd, &shm[3], 0, FX_SHARED);

	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK(WIFEXITED(status));
	CHECK_EQ(WEXITSTATUS(status), PT_PASS);
	CHECK_SYS(close(fd));
	return PT_PASS;
}
