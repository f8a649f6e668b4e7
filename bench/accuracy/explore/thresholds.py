# For scores saved by explore.py --save-scores: each protocol's FPR, spam called ham and unsure
# share at every pair of thresholds on a grid, and the pairs that meet the targets everywhere.
import json
import sys

import numpy as np

scores = json.load(open(sys.argv[1]))
grid = np.round(np.arange(-1.5, 1.51, 0.05), 2)
rows = []
for ham_t in grid:
    for spam_t in grid[grid >= ham_t]:
        worst = [0, 0, 0]
        cells = []
        for name, pairs in scores.items():
            a = np.array(pairs)
            sp, hm = a[a[:, 0] == 1, 1], a[a[:, 0] == 0, 1]
            fpr = 100 * np.mean(hm > spam_t)
            fnr = 100 * np.mean(sp <= ham_t)
            unsure = 100 * np.mean((a[:, 1] > ham_t) & (a[:, 1] <= spam_t))
            worst = [max(worst[0], fpr), max(worst[1], fnr), max(worst[2], unsure)]
            cells.append(f'{name}:{fpr:.2f}/{fnr:.2f}/{unsure:.2f}')
        rows.append((ham_t, spam_t, worst, cells))
ok = [r for r in rows if r[2][0] <= 0.1 and r[2][1] <= 2 and r[2][2] <= 5]
print(f'{len(ok)} pairs meet FPR<=0.1, FNR<=2, unsure<=5 on every protocol')
for r in sorted(rows, key=lambda r: (r[2][0] > 0.1) * 100 + max(r[2][1] - 2, 0) + max(r[2][2] - 5, 0))[:12]:
    print(r[0], r[1], 'worst FPR/ham-called-spam %.2f spam-called-ham %.2f unsure %.2f' % tuple(r[2]), ' '.join(r[3]))
