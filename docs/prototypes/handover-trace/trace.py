#!/usr/bin/env python3
# trace.py FILE [--strips]: summarises a POLYC_TRACE dump of the flexible wavefront (runtime.patch).
# Events per strip (globaltimer ns): 0 locked, 1 coordinator sees the first step allowed, 2 compute
# threads allowed, 3 entered, 4 first step done, 5/6/7/8/13 steps 64/511/512/1024/1536 done, 9 last
# step done, 10 own progress >= lag published, 11 limit >= 512 seen, 12 own progress >= 512 + lag
# published; 20 SM, 21 block, 22 first step, 23 coordinator polls.
import struct, sys, statistics as st
data = open(sys.argv[1], 'rb').read()
cols, steps, lag, grid = struct.unpack('4i', data[:16])
E = 24
n = min(cols, 1024)
rows = [struct.unpack('%dQ' % E, data[16 + c * E * 8:16 + (c + 1) * E * 8]) for c in range(n)]
t0 = min(r[0] for r in rows if r[0])
def us(x): return x / 1000.0
def med(xs): xs = [x for x in xs if x is not None]; return st.median(xs) if xs else float('nan')
def q(xs, f):
    xs = sorted(x for x in xs if x is not None); return xs[int(f * (len(xs) - 1))] if xs else float('nan')
print(f"columns {cols} steps {steps} lag {lag} grid {grid}; total {us(max(r[9] for r in rows) - t0):.1f} us")
step_ns = med([(r[8] - r[7]) / 512 for r in rows if r[8] and r[7]])
print(f"steady step (512..1024): {step_ns:.0f} ns; lag x step = {us(lag * step_ns):.2f} us")
fields = {
 'finish(c)-finish(c-1)': lambda c: rows[c][9] - rows[c-1][9],
 'step1024(c)-step1024(c-1)': lambda c: rows[c][8] - rows[c-1][8] if rows[c][8] and rows[c-1][8] else None,
 'step64(c)-step64(c-1)': lambda c: rows[c][5] - rows[c-1][5] if rows[c][5] and rows[c-1][5] else None,
 'chosen(c) - pubLag(c-1)': lambda c: rows[c][0] - rows[c-1][10] if rows[c-1][10] else None,
 'pubLag(c-1) -> seen(c)': lambda c: rows[c][1] - rows[c-1][10] if rows[c][1] and rows[c-1][10] else None,
 'seen -> allowed(compute)': lambda c: rows[c][2] - rows[c][1] if rows[c][1] and rows[c][2] else None,
 'allowed -> entered': lambda c: rows[c][3] - rows[c][2] if rows[c][3] and rows[c][2] else None,
 'entered -> first step done': lambda c: rows[c][4] - rows[c][3] if rows[c][4] and rows[c][3] else None,
 'first step(c) - first step(c-1)': lambda c: rows[c][4] - rows[c-1][4] if rows[c][4] and rows[c-1][4] else None,
 'pub512(c-1) -> seen512(c)': lambda c: rows[c][11] - rows[c-1][12] if rows[c][11] and rows[c-1][12] else None,
 'seen512 -> step512 done': lambda c: rows[c][7] - rows[c][11] if rows[c][11] and rows[c][7] else None,
 'step511 done -> seen512 (wait)': lambda c: rows[c][11] - rows[c][6] if rows[c][11] and rows[c][6] else None,
 'step512 -> pub512+lag (own)': lambda c: rows[c][12] - rows[c][7] if rows[c][12] and rows[c][7] else None,
}
print(f"{'interval (us)':34s} {'median':>8s} {'p10':>8s} {'p90':>8s}")
for name, f in fields.items():
    xs = []
    for c in range(1, n):
        try: v = f(c)
        except Exception: v = None
        xs.append(None if v is None else us(v))
    print(f"{name:34s} {med(xs):8.2f} {q(xs,.1):8.2f} {q(xs,.9):8.2f}")
polls = [r[23] for r in rows]
print('coordinator polls per column: median', med(polls), 'steps', steps, '-> ns/poll', f"{us(rows[n//2][9]-rows[n//2][0])*1000/max(1,rows[n//2][23]):.0f}")
sms = {}
for r in rows: sms.setdefault(r[20], 0); sms[r[20]] += 1
print('distinct SMs', len(sms), 'max columns on one SM', max(sms.values()), 'takeovers (first step>0):', sum(1 for r in rows if r[22] > 0))
if len(sys.argv) > 2:
    for c in range(n):
        r = rows[c]; print(c, r[21], r[20], *[f"{us(r[k]-t0):.2f}" if r[k] else '-' for k in (0,1,2,3,4,10,6,11,7,12,8,9)])
