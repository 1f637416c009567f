// SPDX-License-Identifier: MIT
/*
 * 100,000 expirations of a 10 us periodic timer streamed through its
 * ring (contract 1.2): nothing lost or counted twice.  A ring-fed
 * periodic timer re-arms itself from its expiry and writes a record at
 * most every 50 us, each counting exactly the periods since its
 * previous record; the consumer takes them with no system call but
 * poll when the ring is empty, and read(2) when they wait in the object
 * (the ring full, the flag set).  Checked:
 *  - every record counts at least one expiration, has the period as its
 *    interval and at most the 50 us floor and a period to go;
 *  - never early: after each take, the expirations counted are at most
 *    the periods begun since the start;
 *  - at the end the consumer stops taking: the ring fills, the flag is
 *    set, the timer stops with its count waiting in the object; one
 *    read(2) then returns the ring's records and the object's, whose
 *    count a read brings up to date, so that the sum of every
 *    expiration of the run equals the periods begun by that read: at
 *    least those before it started, at most those before it returned
 *    (the guest's lag is the read's own duration);
 *  - the ring is used again after the read.
 */
#include "lib/timer.h"
#include "lib/ring.h"

PT_BUDGET(90);

#define TARGET		100000
#define PERIOD		US(10)
#define ENTRIES		1024
#define BATCH		256
/* A ring-fed timer's next expiry is at least this far (pollfs(7)). */
#define RING_MIN	US(50)

static int64_t start;

/* Periods begun by @t: expiries at start, start + PERIOD, ... <= t. */
static uint64_t periods_by(int64_t t)
{
	return t < start ? 0 : (uint64_t)((t - start) / PERIOD) + 1;
}

static void check_record(const struct pollfs_timer_event *ev, uint64_t seq)
{
	if (ev->expirations < 1 || pt_ts_ns(&ev->interval) != PERIOD ||
	    ev->remaining.tv_sec < 0 || ev->remaining.tv_nsec < 0 ||
	    pt_ts_ns(&ev->remaining) > PERIOD + RING_MIN)
		FAIL("record %llu: expirations %llu remaining %lld.%09lld "
		     "interval %lld.%09lld", (unsigned long long)seq,
		     (unsigned long long)ev->expirations,
		     (long long)ev->remaining.tv_sec,
		     (long long)ev->remaining.tv_nsec,
		     (long long)ev->interval.tv_sec,
		     (long long)ev->interval.tv_nsec);
}

TEST(stream_100000)
{
	static struct pollfs_timer_event buf[ENTRIES + 16];
	uint64_t total = 0, records = 0, polls = 0, reads = 0;
	int fd = tmr_new(POLLFS_NONBLOCK);
	struct rg_ring ring;
	int64_t t0, t1;
	ssize_t r;

	rg_setup(&ring, fd, ENTRIES, RG_TIMER_REC);
	start = pt_mono() + MS(5);
	tmr_arm(fd, CLOCK_MONOTONIC, POLLFS_TIMER_ABSTIME, start, PERIOD);
	while (total < TARGET) {
		size_t n = rg_take(&ring, buf, BATCH);

		if (!n && rg_overflow(&ring)) {
			/* the ring filled: the rest waits in the object */
			r = pt_read_nb(fd, buf, sizeof(buf));
			if (r > 0 && r % TMR_EVENT_SIZE == 0) {
				n = (size_t)r / TMR_EVENT_SIZE;
				reads++;
			} else if (r >= 0 || errno != EAGAIN) {
				FAIL("read with the flag set: %zd, errno %d "
				     "(%s)", r, errno, strerror(errno));
			}
		}
		if (!n) {
			polls++;
			if (!pt_poll_in(fd, PT_WAIT_MS))
				FAIL("no record for %d ms after %llu "
				     "expirations", PT_WAIT_MS,
				     (unsigned long long)total);
			continue;
		}
		for (size_t i = 0; i < n; i++) {
			check_record(&buf[i], records++);
			total += buf[i].expirations;
		}
		if (total > periods_by(pt_mono()))
			FAIL("%llu expirations counted, only %llu periods "
			     "begun", (unsigned long long)total,
			     (unsigned long long)periods_by(pt_mono()));
	}
	pt_diag("%llu expirations in %llu records, %llu polls, %llu reads "
		"(overflow)", (unsigned long long)total,
		(unsigned long long)records, (unsigned long long)polls,
		(unsigned long long)reads);

	/* Stop taking: the ring fills, the count waits in the object. */
	rg_wait_overflow(&ring);
	CHECK_EQ(rg_ready(&ring), ENTRIES);
	t0 = pt_mono();
	r = read(fd, buf, sizeof(buf));
	t1 = pt_mono();
	if (r <= 0 || r % TMR_EVENT_SIZE)
		FAIL("the read that drains: %zd, errno %d (%s)", r, errno,
		     strerror(errno));
	/* the ring's, then the object's: more than the ring held */
	CHECK((size_t)r / TMR_EVENT_SIZE > ENTRIES);
	for (ssize_t i = 0; i < r / TMR_EVENT_SIZE; i++) {
		check_record(&buf[i], records++);
		total += buf[i].expirations;
	}
	pt_diag("the end: %llu expirations; periods begun %llu before the "
		"read, %llu after it (%lld us)", (unsigned long long)total,
		(unsigned long long)periods_by(t0),
		(unsigned long long)periods_by(t1), (long long)(t1 - t0) / 1000);
	CHECK_RANGE(total, periods_by(t0), periods_by(t1));
	CHECK(!rg_overflow(&ring));

	/* restarted by the read, into the ring again */
	rg_wait_ready(&ring, 1);
	CHECK(!rg_overflow(&ring));
	tmr_disarm(fd);
	rg_unmap(&ring);
	CHECK_SYS(close(fd));
}

int main(void)
{
	return pt_run_tests();
}
