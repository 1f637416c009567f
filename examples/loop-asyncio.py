#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""pollfs in a Python asyncio loop: loop.add_reader() on a pollfs timer and
on a pollfs futex object armed on a word in shared memory, which another
process wakes with a plain FUTEX_WAKE.

What no stock descriptor does: the armed object is a real waiter on the
shared futex word, counted by FUTEX_WAKE in any process that maps the
memory, with no thread parked in FUTEX_WAIT.

No binding needed: the objects are made with fcntl.ioctl on /dev/pollfs
and their records packed with struct.  Only the futex(2) calls of the
other side, and the word's address, need ctypes.
"""
import asyncio
import ctypes
import fcntl
import mmap
import os
import struct
import time

TICKS = 4   # timer expirations to wait for
RINGS = 3   # FUTEX_WAKEs from the other process


def _iow(nr, size):
    """_IOW(0xB8, nr, size) of <linux/pollfs.h>: the encoding of x86 and
    Arm (powerpc, mips and sparc put the direction bits elsewhere)."""
    return 1 << 30 | size << 16 | 0xB8 << 8 | nr


POLLFS_IOC_TIMER = _iow(2, 8)          # struct pollfs_open: flags, reserved
POLLFS_IOC_FUTEX = _iow(3, 8)
POLLFS_FUTEX_SHARED = 0x1
OPEN = struct.Struct("=II")            # struct pollfs_open
TIMER_SPEC = struct.Struct("=iIqqqq")  # clockid, flags, value, interval
TIMER_EVENT = struct.Struct("=Qqqqq")  # expirations, remaining, interval
FUTEX_EVENT = struct.Struct("=QII")    # addr, val, flags

SYS_futex = {"x86_64": 202, "aarch64": 98}[os.uname().machine]
FUTEX_WAIT, FUTEX_WAKE = 0, 1          # shared: across processes
libc = ctypes.CDLL(None, use_errno=True)


def futex(word, op, val):
    return libc.syscall(ctypes.c_long(SYS_futex),
                        ctypes.c_void_p(ctypes.addressof(word)),
                        ctypes.c_int(op), ctypes.c_int(val), None, None,
                        ctypes.c_int(0))


def create_object(dev, request):
    # A mutable bytearray: fcntl.ioctl then returns what the ioctl
    # returned, the new descriptor.  Given bytes, it would return a copy
    # of the buffer instead, and the descriptor would be lost.
    arg = bytearray(OPEN.pack(os.O_NONBLOCK | os.O_CLOEXEC, 0))
    return fcntl.ioctl(dev, request, arg)


# A MAP_SHARED page, seen by both processes after the fork.
page = mmap.mmap(-1, mmap.PAGESIZE)
bell = ctypes.c_uint32.from_buffer(page, 0)      # the word the object waits on
ack = ctypes.c_uint32.from_buffer(page, 4)       # value last re-armed on
counted = ctypes.c_uint32.from_buffer(page, 8)   # waiters FUTEX_WAKE woke


def ringer():
    """The other process, which knows nothing of pollfs: it rings the bell
    only once the loop has re-armed on the previous value (ack), so that
    every FUTEX_WAKE finds the object waiting, and adds up what FUTEX_WAKE
    says it woke."""
    for i in range(1, RINGS + 1):
        while (seen := ack.value) != i - 1:
            futex(ack, FUTEX_WAIT, seen)
        time.sleep(0.02)
        bell.value = i
        counted.value += futex(bell, FUTEX_WAKE, 1)


def arm(fd, value):
    """A write arms the object; BlockingIOError (EAGAIN) if the word no
    longer holds value."""
    os.write(fd, FUTEX_EVENT.pack(ctypes.addressof(bell), value,
                                  POLLFS_FUTEX_SHARED))


async def watch(timerfd, futexfd):
    loop = asyncio.get_running_loop()
    done = loop.create_future()
    n = {"ticks": 0, "reads": 0, "rings": 0}

    def stop_when_done():
        if n["ticks"] >= TICKS and n["rings"] == RINGS and not done.done():
            done.set_result(None)

    def on_timer():
        # One record holds every expiration since the last read.
        exp, _, rem_ns, _, _ = TIMER_EVENT.unpack(
            os.read(timerfd, TIMER_EVENT.size))
        n["ticks"] += exp
        n["reads"] += 1
        print(f"timer: {exp} expiration(s), next in {rem_ns / 1e6:.1f} ms")
        if n["ticks"] >= TICKS:
            os.write(timerfd, TIMER_SPEC.pack(time.CLOCK_MONOTONIC, 0,
                                              0, 0, 0, 0))
            loop.remove_reader(timerfd)
        stop_when_done()

    def on_futex():
        # Read once: the record the object was armed with comes back and
        # the object is left unarmed.  A second read would fail with
        # EINVAL, not EAGAIN: "read until EAGAIN" is not the pattern here.
        addr, val, _ = FUTEX_EVENT.unpack(os.read(futexfd, FUTEX_EVENT.size))
        n["rings"] += 1
        now = bell.value
        where = "" if addr == ctypes.addressof(bell) else " (wrong address!)"
        print(f"futex: woken, record {{bell, {val}}}{where}, bell now {now}")
        if n["rings"] == RINGS:
            loop.remove_reader(futexfd)
        else:
            # Arm again on the value just seen.  EAGAIN would mean the
            # word moved on meanwhile: then read it and arm again.  The
            # ringer's handshake rules that out here.
            arm(futexfd, now)
        ack.value = now
        futex(ack, FUTEX_WAKE, 1)
        stop_when_done()

    loop.add_reader(timerfd, on_timer)
    loop.add_reader(futexfd, on_futex)
    await done
    return n


def main():
    dev = os.open("/dev/pollfs", os.O_RDWR | os.O_CLOEXEC)
    timerfd = create_object(dev, POLLFS_IOC_TIMER)
    futexfd = create_object(dev, POLLFS_IOC_FUTEX)
    os.close(dev)
    period = 25 * 1000 * 1000
    os.write(timerfd, TIMER_SPEC.pack(time.CLOCK_MONOTONIC, 0,
                                      0, period, 0, period))
    # Armed before the other process starts: no wake comes before the wait.
    arm(futexfd, 0)
    child = os.fork()
    if child == 0:
        ringer()
        os._exit(0)

    n = asyncio.run(watch(timerfd, futexfd))
    _, status = os.waitpid(child, 0)
    if status:
        raise SystemExit(f"ringer process: status {status:#x}")
    os.close(timerfd)
    os.close(futexfd)
    print(f"loop-asyncio: {n['ticks']} timer expirations in {n['reads']} "
          f"reads, {n['rings']} futex wakes, FUTEX_WAKE woke "
          f"{counted.value} waiter(s)")


if __name__ == "__main__":
    main()
