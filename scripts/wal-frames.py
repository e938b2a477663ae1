#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""What a SQLite WAL holds, per commit and per b-tree: which pages each commit wrote.
Run it on copies of a live cache's files (cp cache.sqlite-wal w; cp cache.sqlite d):

  scripts/wal-frames.py d w

Pages are named with the dbstat table of the copy (WAL applied); pointer-map and free
pages have no b-tree and are counted together."""
import collections, shutil, sqlite3, struct, sys, tempfile

db_path, wal_path = sys.argv[1], sys.argv[2]
data = open(wal_path, 'rb').read()
_, _, page_size, _, salt1, salt2 = struct.unpack('>IIIIII', data[:24])
commits, current, offset = [], [], 32
while offset + 24 + page_size <= len(data):
    page, size_after, s1, s2 = struct.unpack('>IIII', data[offset:offset + 16])
    if (s1, s2) != (salt1, salt2):
        break  # frames of an earlier WAL generation
    current.append(page)
    if size_after:
        commits.append(current)
        current = []
    offset += 24 + page_size
work = tempfile.mkdtemp()
shutil.copy(db_path, work + '/c.sqlite')
shutil.copy(wal_path, work + '/c.sqlite-wal')
owner = {page: name for name, page in sqlite3.connect(work + '/c.sqlite').execute('SELECT name, pageno FROM dbstat')}
shutil.rmtree(work)
n = max(len(commits), 1)
frames = sum(len(c) for c in commits)
print(f'page size {page_size}; commits {len(commits)}, frames {frames} ({frames / n:.1f} a commit), '
      f'distinct pages {len({p for c in commits for p in c})}')
per_tree = collections.Counter(owner.get(p, 'pointer-map or free') for c in commits for p in c)
for name, count in per_tree.most_common():
    print(f'  {name:32s} {count:6d}  {count / n:5.2f} a commit')
