// SPDX-License-Identifier: GPL-2.0
/*
 * The signal object: reads the signals of a mask as records.
 *
 * It follows signalfd: a read dequeues from the reading thread's pending
 * signals, its own first and then its process's, so the object belongs
 * to no task and means "my signals" for whoever reads or polls it.  It
 * waits on the reader's sighand->signalfd_wqh, which the kernel wakes
 * for every signal it queues (signalfd_notify()) and clears with
 * wake_up_pollfree() before the sighand is freed.  A write of a new
 * 64-bit mask replaces the old one at once.
 */

#include <linux/pollfs.h>
#include <linux/sched/signal.h>
#include <linux/signal.h>

#include "core.h"
#include "compat.h"
#include "ksyms.h"

#ifndef CONFIG_SIGNALFD
#error "pollfs signal objects need CONFIG_SIGNALFD: signalfd_notify() wakes them"
#endif

struct pollfs_signal_ctx {
	struct pollfs_object obj;
	atomic64_t mask;	/* bit (signo - 1): signal signo is read */
};

static struct pollfs_signal_ctx *to_signal(struct pollfs_object *obj)
{
	return container_of(obj, struct pollfs_signal_ctx, obj);
}

/* Only the task itself replaces its sighand (at exec): stable here. */
static struct sighand_struct *pollfs_sighand(void)
{
	return rcu_dereference_protected(current->sighand, 1);
}

static u64 pollfs_signal_mask_clean(u64 mask)
{
	return mask & ~(BIT_ULL(SIGKILL - 1) | BIT_ULL(SIGSTOP - 1));
}

/* The signals the object does not read, as dequeue_signal() takes them. */
static void pollfs_signal_blocked(struct pollfs_signal_ctx *s, sigset_t *set)
{
	u64 mask = atomic64_read(&s->mask);

	sigemptyset(set);
	set->sig[0] = mask;
	if (_NSIG_WORDS > 1)
		set->sig[1] = mask >> 32;
	signotset(set);
}

static bool pollfs_signal_pending(struct sigpending *pending,
				  const sigset_t *blocked)
{
	sigset_t ready;

	sigandnsets(&ready, &pending->signal, blocked);
	return !sigisemptyset(&ready);
}

/* The fields and meaning of struct signalfd_siginfo. */
static void pollfs_signal_fill(struct pollfs_siginfo *psi,
			       const kernel_siginfo_t *info)
{
	memset(psi, 0, sizeof(*psi));
	psi->psi_signo = info->si_signo;
	psi->psi_errno = info->si_errno;
	psi->psi_code = info->si_code;

	switch (pollfs_call(siginfo_layout)(info->si_signo, info->si_code)) {
	case SIL_KILL:
		psi->psi_pid = info->si_pid;
		psi->psi_uid = info->si_uid;
		break;
	case SIL_TIMER:
		psi->psi_tid = info->si_tid;
		psi->psi_overrun = info->si_overrun;
		psi->psi_ptr = (__force unsigned long)info->si_ptr;
		psi->psi_int = info->si_int;
		break;
	case SIL_POLL:
		psi->psi_band = info->si_band;
		psi->psi_fd = info->si_fd;
		break;
	case SIL_FAULT:
	case SIL_FAULT_BNDERR:
	case SIL_FAULT_PKUERR:
	case SIL_FAULT_PERF_EVENT:
		psi->psi_addr = (__force unsigned long)info->si_addr;
		break;
	case SIL_FAULT_TRAPNO:
		psi->psi_addr = (__force unsigned long)info->si_addr;
		psi->psi_trapno = info->si_trapno;
		break;
	case SIL_FAULT_MCEERR:
		psi->psi_addr = (__force unsigned long)info->si_addr;
		psi->psi_addr_lsb = info->si_addr_lsb;
		break;
	case SIL_CHLD:
		psi->psi_pid = info->si_pid;
		psi->psi_uid = info->si_uid;
		psi->psi_status = info->si_status;
		psi->psi_utime = info->si_utime;
		psi->psi_stime = info->si_stime;
		break;
	case SIL_RT:
		psi->psi_pid = info->si_pid;
		psi->psi_uid = info->si_uid;
		psi->psi_ptr = (__force unsigned long)info->si_ptr;
		psi->psi_int = info->si_int;
		break;
	case SIL_SYS:
		psi->psi_call_addr = (__force unsigned long)info->si_call_addr;
		psi->psi_syscall = info->si_syscall;
		psi->psi_arch = info->si_arch;
		break;
	}
}

static int pollfs_signal_pop(struct pollfs_object *obj, void *rec, bool nowait)
{
	struct sighand_struct *sighand = pollfs_sighand();
	kernel_siginfo_t info;
	enum pid_type type;
	sigset_t blocked;
	int signo;

	pollfs_signal_blocked(to_signal(obj), &blocked);
	spin_lock_irq(&sighand->siglock);
	signo = pollfs_dequeue_signal(&blocked, &info, &type);
	spin_unlock_irq(&sighand->siglock);
	if (!signo)
		return -EAGAIN;
	pollfs_signal_fill(rec, &info);
	return 1;
}

static int pollfs_signal_apply(struct pollfs_object *obj, const void *rec)
{
	struct pollfs_signal_ctx *s = to_signal(obj);

	atomic64_set(&s->mask, pollfs_signal_mask_clean(*(const u64 *)rec));
	/* Readers blocked in this process look again, with the new mask. */
	wake_up(&pollfs_sighand()->signalfd_wqh);
	return 0;
}

static ssize_t pollfs_signal_write(struct pollfs_object *obj,
				   struct iov_iter *from, size_t nrec)
{
	return pollfs_write_each(obj, from, nrec, sizeof(u64),
				 pollfs_signal_apply);
}

static __poll_t pollfs_signal_poll(struct pollfs_object *obj)
{
	struct sighand_struct *sighand = pollfs_sighand();
	sigset_t blocked;
	bool ready;

	pollfs_signal_blocked(to_signal(obj), &blocked);
	spin_lock_irq(&sighand->siglock);
	ready = pollfs_signal_pending(&current->pending, &blocked) ||
		pollfs_signal_pending(&current->signal->shared_pending,
				      &blocked);
	spin_unlock_irq(&sighand->siglock);
	return ready ? EPOLLIN : 0;
}

static wait_queue_head_t *pollfs_signal_waitq(struct pollfs_object *obj)
{
	return &pollfs_sighand()->signalfd_wqh;
}

static void pollfs_signal_show_fdinfo(struct seq_file *m,
				      struct pollfs_object *obj)
{
	seq_printf(m, "mask: %#018llx\n",
		   (u64)atomic64_read(&to_signal(obj)->mask));
}

static int pollfs_signal_setup(struct pollfs_object *obj, const void *arg)
{
	const struct pollfs_signal_open *open = arg;

	atomic64_set(&to_signal(obj)->mask,
		     pollfs_signal_mask_clean(open->mask));
	return 0;
}

static_assert(sizeof(struct pollfs_siginfo) == 128);
static_assert(_NSIG <= 64);

const struct pollfs_kind pollfs_signal_kind = {
	.name		= "[signal]",
	POLLFS_OBJECT(struct pollfs_signal_ctx),
	POLLFS_OPEN(struct pollfs_signal_open),
	.setup		= pollfs_signal_setup,
	.read_size	= sizeof(struct pollfs_siginfo),
	.write_size	= sizeof(u64),
	.read		= pollfs_signal_pop,
	.write		= pollfs_signal_write,
	.poll		= pollfs_signal_poll,
	.waitq		= pollfs_signal_waitq,
	.show_fdinfo	= pollfs_signal_show_fdinfo,
};
