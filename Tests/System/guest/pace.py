"""How fast the guest runs now, against the host it is emulated on, so the system test's deadlines allow for a
loaded host without hiding a real failure: each bound is multiplied by the guest's speed factor, never relaxed
when the host is idle.

    pace.py host              seconds one unit of work takes on this machine at best: the least of many short
                              runs, so other programs running here do not count (run.sh, before each boot)
    pace.py guest SECONDS     "FACTOR RATIO UNIT": the guest's speed factor, 1 to MAXIMUM_FACTOR: how much longer
                              one unit takes in the guest now (UNIT seconds, RATIO times SECONDS, the host's best)
                              than SECONDS times SLOWDOWN, software emulation's own slowdown on an idle host
                              (stage.sh, as the guest starts; run.sh and the scenarios scale their bounds by it)

The work is pure Python arithmetic: it measures the CPU the guest gets, which is what a loaded host takes away.
"""
import sys
import time

UNIT = 100_000  # iterations: about 5 ms natively, a few hundred ms under software emulation
# What one unit takes in the guest over what it takes natively on an idle host (QEMU TCG). On the 2-core Debian 12
# machine of issue 21, with others' builds on both cores (load average 5 to 9), the five guests of two runs gave
# 10.0 to 24.5 (factors 1.25 to 3.07); no idle host was to be had, so this is taken below the least of them: an
# idle host gets a factor of 1, or a little more, never less.
SLOWDOWN = 8.0
# A host this much slower than idle is beyond what the test allows for: its bounds stop growing there, so a guest
# that hangs still fails in bounded time.
MAXIMUM_FACTOR = 6.0


def unit():
    started = time.perf_counter()
    total = 0
    for number in range(UNIT):
        total += number * number
    return time.perf_counter() - started


def main(arguments):
    if arguments[:1] == ["host"]:
        print("%.6f" % min(unit() for _ in range(40)))
    elif len(arguments) == 2 and arguments[0] == "guest":
        host = float(arguments[1])
        # The mean of several units: the speed the guest has over a few seconds, preemptions included.
        guest = sum(unit() for _ in range(8)) / 8
        ratio = guest / host
        print("%.2f %.1f %.4f" % (min(MAXIMUM_FACTOR, max(1.0, ratio / SLOWDOWN)), ratio, guest))
    else:
        sys.exit("usage: pace.py host | pace.py guest HOST_SECONDS")


if __name__ == "__main__":
    main(sys.argv[1:])
