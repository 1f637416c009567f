// SPDX-License-Identifier: MIT
/*
 * The signal of a POSIX timer (timer_create with SIGEV_SIGNAL) is read
 * with psi_code SI_TIMER, the kernel's timer id in psi_tid, the overrun
 * count in psi_overrun and the sigev_value in psi_int and psi_ptr; psi_pid
 * and psi_uid are zero.  Reading it re-arms a periodic timer, as the
 * kernel's dequeue does.
 */
#include "lib/signal.h"

PT_BUDGET(60);

/* The raw system calls: the kernel's timer id, not glibc's timer_t. */
static int ktimer_create(clockid_t clk, struct sigevent *sev)
{
	int id = -1;

	CHECK_SYS(syscall(SYS_timer_create, clk, sev, &id));
	CHECK(id >= 0);
	return id;
}

static void ktimer_set(int id, int64_t value, int64_t interval)
{
	struct itimerspec its;

	its.it_value.tv_sec = value / NSEC_PER_SEC;
	its.it_value.tv_nsec = value % NSEC_PER_SEC;
	its.it_interval.tv_sec = interval / NSEC_PER_SEC;
	its.it_interval.tv_nsec = interval % NSEC_PER_SEC;
	CHECK_SYS(syscall(SYS_timer_settime, id, 0, &its, NULL));
}

static void check_timer(const struct pollfs_siginfo *psi, int sig, int id,
			union sigval v)
{
	ps_check_sig(psi, sig, SI_TIMER);
	CHECK_EQ(psi->psi_tid, id);
	CHECK_EQ(psi->psi_int, v.sival_int);
	CHECK_EQ(psi->psi_ptr, (uint64_t)(uintptr_t)v.sival_ptr);
	CHECK_EQ(psi->psi_pid, 0);
	CHECK_EQ(psi->psi_uid, 0);
}

int main(void)
{
	int sig1 = SIGRTMIN + 4, sig2 = SIGRTMIN + 5;
	struct pollfs_siginfo psi;
	struct sigevent sev;
	union sigval v1, v2;
	int fd, id1, id2;
	int64_t t0;

	ps_block(ps_bit(sig1) | ps_bit(sig2));
	fd = ps_signal(ps_bit(sig1) | ps_bit(sig2), POLLFS_NONBLOCK);

	memset(&v1, 0, sizeof(v1));
	v1.sival_ptr = (void *)(uintptr_t)0x1122334455667788ULL;
	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = SIGEV_SIGNAL;
	sev.sigev_signo = sig1;
	sev.sigev_value = v1;
	id1 = ktimer_create(CLOCK_MONOTONIC, &sev);

	memset(&v2, 0, sizeof(v2));
	v2.sival_int = 77;
	sev.sigev_signo = sig2;
	sev.sigev_value = v2;
	id2 = ktimer_create(CLOCK_MONOTONIC, &sev);
	CHECK(id1 != id2);

	/* one-shot: no overrun, and the signal is not early */
	ps_expect_empty(fd);
	t0 = pt_mono();
	ktimer_set(id1, MS(20), 0);
	pt_wait_readable(fd, PT_WAIT_MS);
	CHECK(pt_mono() - t0 >= MS(20));
	CHECK_EQ(ps_read_one(fd, &psi), 1);
	check_timer(&psi, sig1, id1, v1);
	CHECK_EQ(psi.psi_int, v1.sival_int);
	CHECK_EQ(psi.psi_ptr, 0x1122334455667788ULL);
	CHECK_EQ(psi.psi_overrun, 0);
	ps_expect_empty(fd);

	/* the other timer, the other value */
	ktimer_set(id2, MS(1), 0);
	pt_wait_readable(fd, PT_WAIT_MS);
	CHECK_EQ(ps_read_one(fd, &psi), 1);
	check_timer(&psi, sig2, id2, v2);
	CHECK_EQ(psi.psi_int, 77);
	CHECK_EQ(psi.psi_overrun, 0);
	ps_expect_empty(fd);

	/* periodic, 1 ms, left unread for 100 ms after the first expiry:
	 * one record, whose overrun counts the expiries missed meanwhile */
	ktimer_set(id1, MS(1), MS(1));
	pt_wait_readable(fd, PT_WAIT_MS);
	pt_sleep_ms(100);
	CHECK_EQ(ps_read_one(fd, &psi), 1);
	check_timer(&psi, sig1, id1, v1);
	pt_diag("overrun after 100 ms of a 1 ms timer: %u", psi.psi_overrun);
	CHECK_RANGE(psi.psi_overrun, 50, 100000);
	/* the read re-armed it: it signals again */
	pt_wait_readable(fd, PT_WAIT_MS);
	CHECK_EQ(ps_read_one(fd, &psi), 1);
	check_timer(&psi, sig1, id1, v1);
	ktimer_set(id1, 0, 0);
	CHECK_SYS(syscall(SYS_timer_delete, id1));
	CHECK_SYS(syscall(SYS_timer_delete, id2));
	CHECK_SYS(close(fd));
	return PT_PASS;
}
