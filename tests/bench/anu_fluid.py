#!/usr/bin/env python3
"""What issue 21's goal (worst/L <= 1.5) asks of tests/bench/anu's members.

A fluid model: the load can be split among the members anywhere (no file
sets); each member serves one request at a time in its own service time,
under Poisson arrivals, so it is an M/D/1 queue. For a bound B on every
member's latency (members with 1% of the requests or more), prints the
least request-weighted mean latency L any split reaches, its worst/L and
how busy the fastest member is. docs/bench/anu.md, session 30, reads it.
No I/O but printing; defaults are the bench's (--slowdown 1,3,5,7,9,
--service-us 1000, --load 0.8).
"""
import argparse
import math


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--slowdown", default="1,3,5,7,9", help="members' slowdown factors")
    ap.add_argument("--service-us", type=float, default=1000, help="service time at factor 1")
    ap.add_argument("--load", type=float, default=0.8, help="offered load over the members' capacity")
    ap.add_argument("--bounds", default="10,10.5,11,12,13,14", help="bounds B to try, ms")
    args = ap.parse_args()
    service = [float(f) * args.service_us / 1000 for f in args.slowdown.split(",")]  # ms
    rate = [1000 / s for s in service]  # requests/s each can serve
    offered = args.load * sum(rate)

    def latency(i, lam):  # M/D/1 sojourn time, ms
        busy = lam / rate[i]
        return math.inf if busy >= 1 else service[i] + busy * service[i] / (2 * (1 - busy))

    def rate_at(i, w):  # the arrival rate at which member i's latency is w
        if w <= service[i]:
            return 0.0
        x = 2 * (w - service[i]) / service[i]
        return rate[i] * x / (1 + x)

    def marginal(i, lam, h=1e-3):  # d(lam * latency) / d lam
        return ((lam + h) * latency(i, lam + h) - lam * latency(i, lam)) / h

    def bisect(f, lo, hi, steps=100):  # the x in [lo, hi] where f turns true
        for _ in range(steps):
            mid = (lo + hi) / 2
            lo, hi = (lo, mid) if f(mid) else (mid, hi)
        return hi

    def split(cost, caps):  # each member's load where its marginal cost reaches `cost`
        out = []
        for i, cap in enumerate(caps):
            top = min(cap, rate[i] * (1 - 1e-9))
            if top <= 0 or marginal(i, 0) >= cost:
                out.append(0.0)
            elif marginal(i, top) < cost:
                out.append(top)
            else:
                out.append(bisect(lambda lam: marginal(i, lam) >= cost, 0, top))
        return out

    def report(name, caps):
        if sum(caps) < offered:
            print(f"{name}: no split keeps every member under it")
            return
        loads = split(bisect(lambda c: sum(split(c, caps)) >= offered, 0, 1e6), caps)
        mean = sum(lam * latency(i, lam) for i, lam in enumerate(loads)) / sum(loads)
        worst = max(latency(i, lam) for i, lam in enumerate(loads) if lam >= 0.01 * offered)
        fastest = min(range(len(service)), key=lambda i: service[i])
        print(f"{name}: least L {mean:.2f} ms, worst {worst:.2f} ms, worst/L {worst / mean:.2f}, "
              f"fastest member {loads[fastest] / rate[fastest]:.0%} busy")

    equal = bisect(lambda w: sum(rate_at(i, w) for i in range(len(service))) >= offered, 0, 1e6)
    print(f"{offered:.0f} requests/s offered; all members at one latency: {equal:.2f} ms")
    for b in [float(x) for x in args.bounds.split(",")]:
        report(f"B = {b:g} ms", [rate_at(i, b) for i in range(len(service))])
    report("no bound", [math.inf] * len(service))


if __name__ == "__main__":
    main()
