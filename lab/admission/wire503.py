#!/usr/bin/env python3
"""Where a 503's time goes, from a loopback capture: see lab/admission/wire-503.sh, which runs this.

wire503.py CAPTURE OUT GC_LOG

CAPTURE: a pcap of the client <-> gateway traffic (tcpdump -s 96: headers and the first bytes of each payload).
OUT: `weft lab overload`'s output, each line prefixed with its epoch time in seconds ("1764135000.123 lab ...").
GC_LOG: the gateway's -Xlog:gc with the time decoration (pause lines end in "12.345ms").

For each measured step, the time on the wire (kernel timestamps of the capture) from a request's packet to the
first packet of its answer, for 503s and 200s; and how many of the 503s over 50 ms had their request arrive near a
collector's pause (from 50 ms before it starts, so that the pause falls in the 503's time, to 50 ms after it ends)
or in the 600 ms after one (from 50 ms before it to 600 ms after it: the backlog it left), each against the share of
the step's time those windows cover. A 503 on the wire is not delayed by the load generator's own CPU; the client's
503 p99 in the lab's table is.
"""
import collections
import datetime
import re
import struct
import sys

SLOW_MS = 50.0
NEAR_S = 0.050
AFTER_S = 0.600


def pct(xs, p):
    if not xs:
        return float('nan')
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(len(xs) * p / 100))]


def seconds(text):
    """A duration as `weft` prints it (Durations.format: 0, 850us, 250ms, 1.5s, 2m) in seconds."""
    if text == '0':
        return 0.0
    m = re.fullmatch(r'(\d+(?:\.\d+)?)(ns|us|ms|s|m)', text)
    if not m:
        sys.exit(f'wire503: cannot read the duration {text!r}')
    return float(m.group(1)) * {'ns': 1e-9, 'us': 1e-6, 'ms': 1e-3, 's': 1, 'm': 60}[m.group(2)]


def steps(out_path):
    """(start, end, label) of each step's measured part, from the timestamped lab output."""
    found = []
    n = 0
    for line in open(out_path, errors='replace'):
        m = re.match(r'(\d+\.\d+) lab overload: (\S+) at (\S+) = .* offered, (\S+) \+ (\S+) \.\.\.', line)
        if m:
            n += 1
            t, model, factor = float(m.group(1)), m.group(2), m.group(3)
            warm, dur = seconds(m.group(4)), seconds(m.group(5))
            found.append((t + warm, t + warm + dur, f'{n}. {model} {factor}'))
    return found


def pauses(gc_path):
    """(start, end) epoch seconds of every stop-the-world pause in a -Xlog:gc:...:time log."""
    out = []
    for line in open(gc_path, errors='replace'):
        m = re.search(r'\[(\d{4}-\d\d-\d\dT[\d:.]+)([+-]\d{4})\].*Pause .* (\d+\.\d+)ms$', line)
        if m:
            end = datetime.datetime.strptime(m.group(1) + m.group(2), '%Y-%m-%dT%H:%M:%S.%f%z').timestamp()
            out.append((end - float(m.group(3)) / 1000, end))
    return out


def covered(ps, a, b, before, after):
    """The share of [a, b) within the windows [pause start - before, pause end + after], overlaps counted once."""
    t, total = a, 0.0
    for p0, p1 in sorted(ps):
        lo, hi = max(p0 - before, t), min(p1 + after, b)
        if hi > lo:
            total += hi - lo
            t = hi
    return total / (b - a)


def packets(pcap_path):
    """(time, src, sport, dst, dport, seq, ack, payload length, payload head) of each TCP/IPv4 packet with data."""
    with open(pcap_path, 'rb') as f:
        head = f.read(24)
        if len(head) < 24:
            return
        magic = struct.unpack('<I', head[:4])[0]
        if magic not in (0xa1b2c3d4, 0xa1b23c4d):
            sys.exit('wire503: not a little-endian pcap file: ' + pcap_path)
        nano = magic == 0xa1b23c4d
        link = struct.unpack('<I', head[20:24])[0]
        off = {1: 14, 113: 16, 276: 20, 0: 4}.get(link)
        if off is None:
            sys.exit(f'wire503: link type {link} not handled')
        while True:
            rec = f.read(16)
            if len(rec) < 16:
                return
            sec, frac, incl, _ = struct.unpack('<IIII', rec)
            data = f.read(incl)
            ip = data[off:]
            if len(ip) < 20 or ip[0] >> 4 != 4 or ip[9] != 6:
                continue
            ihl = (ip[0] & 15) * 4
            total = struct.unpack('>H', ip[2:4])[0]
            tcp = ip[ihl:]
            if len(tcp) < 20:
                continue
            sport, dport, seq, ack = struct.unpack('>HHII', tcp[:12])
            doff = (tcp[12] >> 4) * 4
            plen = total - ihl - doff
            if plen > 0:
                yield (sec + frac / (1e9 if nano else 1e6), ip[12:16], sport, ip[16:20], dport, seq, ack, plen,
                       tcp[doff:doff + 16])


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    cap, out, gc = sys.argv[1:]
    st = steps(out)
    ps = pauses(gc)
    sent = {}  # (client address, client port, sequence number after the request) -> time on the wire
    lat = collections.defaultdict(lambda: collections.defaultdict(list))
    # label -> slow 503s: [near a pause, up to 600 ms after one, all]
    slow = collections.defaultdict(lambda: [0, 0, 0])
    unmatched = 0
    for t, src, sport, dst, dport, seq, ack, plen, head in packets(cap):
        if head.startswith((b'GET ', b'POST ', b'PUT ', b'HEAD ', b'DELETE ')):
            sent[(src, sport, (seq + plen) & 0xffffffff)] = t
        elif head.startswith(b'HTTP/1.'):
            t0 = sent.pop((dst, dport, ack), None)
            if t0 is None:
                unmatched += 1  # its request was not captured whole, or was in several packets
                continue
            status = head[9:12].decode('ascii', 'replace')
            for a, b, label in st:
                if a <= t0 < b:
                    ms = (t - t0) * 1000
                    lat[label][status].append(ms)
                    if status == '503' and ms > SLOW_MS:
                        slow[label][2] += 1
                        if any(p0 - NEAR_S <= t0 <= p1 + NEAR_S for p0, p1 in ps):
                            slow[label][0] += 1
                        if any(p0 - NEAR_S <= t0 <= p1 + AFTER_S for p0, p1 in ps):
                            slow[label][1] += 1
    print(f'wire503: {len(ps)} collector pauses in the log; {unmatched} answers whose request was not matched')
    print('| step | 503s | wire 503 p50 ms | wire 503 p99 ms | wire 503 max ms | 200s | wire 200 p50 ms '
          f'| wire 200 p99 ms | 503s over {SLOW_MS:.0f} ms | of them near a pause | step time near a pause '
          '| of them up to 600 ms after a pause | step time up to 600 ms after a pause |')
    print('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|')
    for a, b, label in st:
        r, ok = lat[label]['503'], lat[label]['200']
        near, after = (covered(ps, a, b, NEAR_S, end) for end in (NEAR_S, AFTER_S))
        s = slow[label]
        print(f'| {label} | {len(r)} | {pct(r, 50):.1f} | {pct(r, 99):.1f} | {max(r) if r else float("nan"):.1f} '
              f'| {len(ok)} | {pct(ok, 50):.1f} | {pct(ok, 99):.1f} | {s[2]} '
              f'| {s[0]} ({100 * s[0] / s[2] if s[2] else 0:.0f}%) | {100 * near:.1f}% '
              f'| {s[1]} ({100 * s[1] / s[2] if s[2] else 0:.0f}%) | {100 * after:.1f}% |')


if __name__ == '__main__':
    main()
