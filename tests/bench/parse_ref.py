#!/usr/bin/env python3
"""Reference extraction for bench_parse: the same reading of a verify log as
optloop's C parser with the fla pattern set (gate banner and verdict, test
cases with progress, pytest summary, Machine line, result tables), written
the obvious way in Python: seven anchored `re` patterns tried per line.

usage: parse_ref.py FILE [RUNS]  ->  prints one line of figures and counts
"""
import re
import sys
import time

BANNER = re.compile(rb'\s*Correctness gate:\s*(\S+)\s+\((?:full|-k\s+(.*))\)\s*$')
VERDICT = re.compile(rb'\s*(GATE PASSED|GATE FAILED|Gate test not found)\b')
CASE = re.compile(rb'(?:\S+::\S+\s+)?(PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS)\b.*?\[\s*(\d+)%\]')
SUMMARY = re.compile(rb'=*\s*((?:\d+ [a-z]+)(?:, \d+ [a-z]+)*|no tests ran) in [\d.]+s\b')
ENV = re.compile(rb'\s*Machine:\s*(.*?)\s*$')
HEADER = re.compile(rb'\s*([A-Za-z][\w-]*)\s+(?:(L)\s+)?B\s+T\s+H\s+D\s+op\b\s*(.*?)\s*$')
ROW = re.compile(rb'\s+((?:\d+|-)(?:\s+(?:\d+|-)){3,4})\s+([A-Za-z_][\w.:/-]*)\s+(.*?)\s*$')


def num(tok):
    if tok == b'-':
        return None
    try:
        return float(tok.rstrip(b'x'))
    except ValueError:
        return None


def parse(path):
    res = {'passed': 0, 'failed': 0, 'progress': -1, 'summary': None, 'env': {},
           'rows': [], 'gate': None, 'scope': None, 'lines': 0}
    in_table = False
    ncols = 0
    mode = None
    with open(path, 'rb') as f:
        for line in f:
            res['lines'] += 1
            line = line.rstrip(b'\r\n')
            m = BANNER.match(line)
            if m:
                res['scope'] = 'subset' if m.group(2) else 'full'
                in_table = False
                continue
            m = VERDICT.match(line)
            if m:
                res['gate'] = m.group(1)
                in_table = False
                continue
            m = CASE.match(line)
            if m:
                if m.group(1) in (b'PASSED', b'XPASS'):
                    res['passed'] += 1
                elif m.group(1) in (b'FAILED', b'ERROR'):
                    res['failed'] += 1
                res['progress'] = int(m.group(2))
                in_table = False
                continue
            m = SUMMARY.match(line)
            if m:
                counts = {}
                for part in m.group(1).split(b', '):
                    n, _, word = part.partition(b' ')
                    if n.isdigit():
                        counts[word] = int(n)
                res['summary'] = counts
                in_table = False
                continue
            m = ENV.match(line)
            if m:
                fields = [x.strip() for x in m.group(1).split(b'|')]
                env = res['env']
                for i, fld in enumerate(fields):
                    if i == 0:
                        env['device'] = fld
                    elif fld.startswith(b'PyTorch '):
                        env['pytorch'] = fld[8:]
                    elif fld.startswith(b'Triton '):
                        env['triton'] = fld[7:]
                    elif b'[' in fld:
                        env['branch'], _, sha = fld.partition(b'[')
                        env['sha'] = sha.rstrip(b']')
                    else:
                        env['backend'] = fld
                in_table = False
                continue
            m = HEADER.match(line)
            if m:
                if not in_table:
                    res['rows'] = []
                in_table = True
                mode = m.group(1)
                ncols = sum(1 for t in m.group(3).split() if t.endswith(b'(ms)'))
                continue
            if in_table:
                m = ROW.match(line)
                if m:
                    dims = [None if d == b'-' else int(d) for d in m.group(1).split()]
                    vals = [num(v) for v in m.group(3).split()]
                    if ncols == 1:
                        row = (mode, dims, m.group(2), None, vals[0], None)
                    else:
                        vals += [None] * (3 - len(vals))
                        row = (mode, dims, m.group(2), vals[0], vals[1], vals[2])
                    res['rows'].append(row)
                    continue
                if line.strip().strip(b'=-') == b'':
                    if line.strip():
                        continue
                in_table = False
    return res


def main():
    path = sys.argv[1]
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    best = None
    for _ in range(runs):
        t0 = time.process_time()
        res = parse(path)
        dt = time.process_time() - t0
        best = dt if best is None or dt < best else best
    with open(path, 'rb') as f:
        f.seek(0, 2)
        size = f.tell()
    print('python %.1f MB/s lines=%d passed=%d rows=%d progress=%d' %
          (size / best / 1e6, res['lines'], res['passed'], len(res['rows']), res['progress']))


if __name__ == '__main__':
    main()
