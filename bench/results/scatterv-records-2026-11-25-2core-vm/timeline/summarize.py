import glob, re, statistics, sys, collections, os
d = sys.argv[1]
tl = collections.defaultdict(list)
for f in glob.glob(os.path.join(d, '*.timeline')):
    mode, rest = os.path.basename(f).split('-', 1)
    delays = rest.rsplit('-', 1)[0]
    for line in open(f):
        m = re.match(r'timeline (\w+) (\d+) rank (\d+): starts ([+-][\d.]+) .* takes ([\d.]+) us', line)
        if m:
            tl[(delays, m[1], int(m[2]), int(m[3]), mode)].append((float(m[4]), float(m[5])))
avg = collections.defaultdict(list)
for f in glob.glob(os.path.join(d, '*.csv')):
    mode, rest = os.path.basename(f).split('-', 1)
    delays = rest.rsplit('-', 1)[0]
    for line in open(f):
        p = line.strip().split(',')
        if p[0] in ('native', 'plugin'):
            avg[(delays, p[1], int(p[3]), mode)].append(float(p[5]))
med = statistics.median
for delays in ('none', 'root2-others4'):
    print(f'\n## delays: {delays}\n')
    print('| collective | bytes | rank | starts after the root (Open MPI; plugin) | takes, Open MPI | takes, plugin |')
    print('|---|---|---|---|---|---|')
    for coll in ('scatterv', 'gatherv'):
        for b in (8, 128):
            for r in range(4):
                n = tl.get((delays, coll, b, r, 'native')); p = tl.get((delays, coll, b, r, 'plugin'))
                if not n or not p: continue
                print(f'| {coll} | {b} | {r} | {med(x[0] for x in n):+.2f}; {med(x[0] for x in p):+.2f} | {med(x[1] for x in n):.3f} | {med(x[1] for x in p):.3f} |')
    print('\nMean over ranks (us), median of the runs, and plugin / Open MPI:\n')
    print('| collective | bytes | Open MPI | plugin | ratio |')
    print('|---|---|---|---|---|')
    for coll in ('scatterv', 'gatherv'):
        for b in (8, 16, 32, 64, 128):
            n = avg.get((delays, coll, b, 'native')); p = avg.get((delays, coll, b, 'plugin'))
            if n and p: print(f'| {coll} | {b} | {med(n):.3f} | {med(p):.3f} | {med(p)/med(n):.2f} |')
