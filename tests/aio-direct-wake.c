// SPDX-License-Identifier: MIT
/*
 * Which completions wake the AIO object through an irq_work, counted in
 * /proc/interrupts (the IRQ work interrupts): a read or write
 * completion wakes the object's pollers directly, as an IOCB_FLAG_RESFD
 * eventfd is signalled, with no irq_work; an IOCB_CMD_POLL completed
 * inside the wake-up of the queue it polls (a pipe's, here) goes through
 * one each.  Both still wake an epoll_wait on the object, once each.
 * On PREEMPT_RT nothing is woken directly: every completion goes
 * through the irq_work.
 */
#include "lib/aio.h"

#include <sys/epoll.h>

PT_BUDGET(120);

#define ROUNDS 200

/*
 * The irq_work interrupts of every CPU so far, or -1 if none are counted:
 * the line of /proc/interrupts that says "IRQ work interrupts" (x86's
 * IWI, arm64's IPI5).
 */
static long long irq_work_interrupts(void)
{
	char line[4096], *p, *end;
	long long sum = -1, total;
	FILE *f = fopen("/proc/interrupts", "re");

	if (!f)
		FAIL("/proc/interrupts: %s", strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		p = strchr(line, ':');
		if (!p)
			continue;
		total = 0;
		for (p++;; p = end) {
			long long n = strtoll(p, &end, 10);

			if (end == p)
				break;
			total += n;
		}
		if (!strncmp(p + strspn(p, " "), "IRQ work interrupts", 19))
			sum = total;
	}
	fclose(f);
	return sum;
}

int main(void)
{
	struct epoll_event e = { .events = EPOLLIN | EPOLLET };
	static char data[64];
	long long before, rw_irq_works, poll_irq_works;
	struct iocb cb, *cbp = &cb;
	aio_context_t ctx;
	int fd, ep, file, pipefd[2];
	char c;

	if (irq_work_interrupts() < 0)
		pt_skip("/proc/interrupts counts no irq_work interrupts here");
	ctx = ax_setup(8);
	fd = ax_fd(ctx, POLLFS_NONBLOCK);
	ep = CHECK_SYS(epoll_create1(EPOLL_CLOEXEC));
	CHECK_SYS(epoll_ctl(ep, EPOLL_CTL_ADD, fd, &e));
	file = ax_tmpfile("/tmp", 0);
	CHECK_SYS(pipe2(pipefd, O_CLOEXEC | O_NONBLOCK));

	before = irq_work_interrupts();
	for (int i = 0; i < ROUNDS; i++) {
		ax_prep_pwrite(&cb, file, data, sizeof(data), 0, i);
		ax_submit(ctx, 1, &cbp);
		ax_expect_woken(ep, fd, ctx, PT_WAIT_MS, "write", i);
	}
	rw_irq_works = irq_work_interrupts() - before;

	before = irq_work_interrupts();
	for (int i = 0; i < ROUNDS; i++) {
		ax_prep_poll(&cb, pipefd[0], POLLIN, i);
		ax_submit(ctx, 1, &cbp);
		CHECK_SYS(write(pipefd[1], "x", 1));
		ax_expect_woken(ep, fd, ctx, PT_WAIT_MS, "poll", i);
		CHECK_EQ(CHECK_SYS(read(pipefd[0], &c, 1)), 1);
	}
	poll_irq_works = irq_work_interrupts() - before;

	pt_diag("irq_work interrupts: %lld in %d writes, %lld in %d polls",
		rw_irq_works, ROUNDS, poll_irq_works, ROUNDS);
	/* Others in the guest raise a few in the meantime, never hundreds. */
	if (pt_kernel_rt())
		CHECK(rw_irq_works >= ROUNDS / 2);
	else
		CHECK(rw_irq_works < ROUNDS / 4);
	CHECK(poll_irq_works >= ROUNDS / 2);

	close(pipefd[0]);
	close(pipefd[1]);
	close(file);
	close(ep);
	close(fd);
	ax_destroy(ctx);
	return 0;
}
