#!/usr/bin/env python3
"""optloop_ab: time two versions of a kernel in ONE process, ABBA blocks.

    python3 optloop_ab.py --op chunk_linear_attn --base REF [--aa] [--shapes JSON]
    python3 optloop_ab.py --callable MOD:FN --inputs MOD:FN --shapes JSON --base REF
    python3 optloop_ab.py --op chunk_linear_attn --gate tests/ops/test_linear_attn.py

With --gate TEST it is a whole verify: the frozen test runs first (pytest,
unmodified; --gate-k narrows it), printed as FLA's verify.py prints it
(banner, GATE PASSED / GATE FAILED), and only a green gate is followed by
the benchmark.  optloop appends --no-gate for its benchmark-only runs.

The work tree (the candidate) and the tree of commit REF (the best, taken
with `git archive` into a temporary folder) are imported into one Python
process, each under its own copy of the package's modules: while one side
runs, sys.modules holds that side's modules, so a late `import` inside the
code finds its own tree.  Both sides are warmed, then timed in alternating
short blocks A B B A A B B A ... (about 25 ms a block, about 1 s a side),
and each shape is reported with

  - its eager time (back-to-back calls, as a user's code launches them), and
  - its CUDA-graph replay time (the same calls captured once in a
    torch.cuda.CUDAGraph and replayed: the GPU's work without the CPU's
    launch path), where CUDA is there and capture works (else eager, and the
    reason is printed).

Why one process and not two kept alive: on an H200 about a quarter of fresh
processes run FLA's forward in a slow mode, 1.6-2.4x slower, for their whole
life.  Two sides in one process share that mode, so their ratio cancels it;
two processes would each draw their own.

The table is FLA's run.py layout (old and new columns, a speedup), so
`optloop parse` and `confirm --paired` read one run as one pair.  The op
column names the time the row holds: `op` for eager, `op:graph` for graph
replay, so a graph time is never compared with an eager one.  The verdict's
time per shape: graph replay where the eager/graph ratio says the shape is
launch-bound (>= 1.5) and capture worked, else eager; `--timing` fixes it.

--aa measures REF against itself (two copies loaded alike): an A/A run, what
`optloop noise --paired` records to learn the noise of one pair.

Exit status: 0 done; 1 the gate failed, a side failed to import or a
benchmark failed; 2 a usage error (unknown ref, bad shapes, no gate test).
"""

import argparse
import importlib
import io
import json
import math
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
import traceback

LAUNCH_BOUND = 1.5  # eager / graph at or above: the CPU's launch path sets the time
GPU_BOUND = 1.1     # at or below: the GPU's work sets it


def die(code, msg):
    print(f"optloop_ab: {msg}", file=sys.stderr)
    sys.exit(code)


# ---- the two trees ----


def git(tree, *args, binary=False):
    p = subprocess.run(["git", "-C", tree, *args], capture_output=True)
    if p.returncode != 0:
        raise RuntimeError(p.stderr.decode(errors="replace").strip() or f"git {args[0]} failed")
    return p.stdout if binary else p.stdout.decode().strip()


def extract(tree, ref, paths):
    """The tree of commit ref in a new temporary folder (git archive)."""
    try:
        sha = git(tree, "rev-parse", "--verify", "--quiet", ref + "^{commit}")
    except RuntimeError:
        die(2, f"no commit '{ref}' in the repository at {tree}: give --base a commit, "
               "branch or tag that exists there (git log shows them)")
    dest = tempfile.mkdtemp(prefix="optloop-ab-")
    try:
        data = git(tree, "archive", "--format=tar", sha, "--", *paths, binary=True)
        with tarfile.open(fileobj=io.BytesIO(data)) as t:
            for m in t.getmembers():
                if m.name.startswith("/") or ".." in m.name.split("/"):
                    raise RuntimeError(f"unsafe path in the archive: {m.name}")
            t.extractall(dest)
    except Exception:
        shutil.rmtree(dest, ignore_errors=True)
        raise
    return dest, sha


_REAL = {}  # a module's file, resolved once (sys.modules is scanned at every switch)


def under(path, root):
    real = _REAL.get(path)
    if real is None:
        real = _REAL[path] = os.path.realpath(path)
    return real == root or real.startswith(root + os.sep)


def modules_under(root):
    """The loaded modules whose file lies in the tree at root."""
    return {k: m for k, m in list(sys.modules.items())
            if (f := module_root_file(m)) and under(f, root)}


def module_root_file(m):
    f = getattr(m, "__file__", None)
    if f:
        return f
    p = getattr(m, "__path__", None)
    return next(iter(p), None) if p else None


class Side:
    """One version of the code: its tree and its own copy of the modules
    imported from it."""

    def __init__(self, name, root, label):
        self.name, self.root, self.label = name, os.path.realpath(root), label
        self.modules = {}

    def load(self, modnames):
        sys.path.insert(0, self.root)
        importlib.invalidate_caches()
        try:
            got = [importlib.import_module(n) for n in modnames]
            for n, m in zip(modnames, got):
                f = module_root_file(m)
                if not f or not under(f, self.root):
                    raise ImportError(f"{n} came from {f}, not from the {self.name} tree "
                                      f"{self.root}: an installed copy shadows the tree "
                                      "(uninstall it, or run where the tree is first on "
                                      "the path)")
            return got
        finally:
            self.leave()
            sys.path.remove(self.root)

    def enter(self):
        sys.modules.update(self.modules)

    def leave(self):
        mine = modules_under(self.root)
        self.modules.update(mine)
        for k in mine:
            del sys.modules[k]


# ---- timing ----


class Clock:
    """Wall time (perf_counter, with a CUDA sync around each block), or with
    --clock cpu the process's CPU time: for code that runs on the CPU alone,
    on a machine shared with other work, where a block that lost the CPU to
    another process would read slow on wall time."""

    def __init__(self, torch_mod, kind="wall"):
        self.torch = torch_mod
        self.cuda = bool(torch_mod and torch_mod.cuda.is_available())
        self.kind = kind
        self.now = time.process_time if kind == "cpu" else time.perf_counter

    def sync(self):
        if self.cuda:
            self.torch.cuda.synchronize()

    def eager_block(self, fn, k):
        """ms per call of k back-to-back calls."""
        self.sync()
        t0 = self.now()
        for _ in range(k):
            fn()
        self.sync()
        return (self.now() - t0) * 1e3 / k


class Graph:
    """k calls of fn captured in one CUDA graph."""

    def __init__(self, torch_mod, fn, k):
        self.torch, self.k = torch_mod, k
        s = torch_mod.cuda.Stream()
        s.wait_stream(torch_mod.cuda.current_stream())
        with torch_mod.cuda.stream(s):
            for _ in range(3):
                fn()
        torch_mod.cuda.current_stream().wait_stream(s)
        self.g = torch_mod.cuda.CUDAGraph()
        with torch_mod.cuda.graph(self.g):
            for _ in range(k):
                fn()
        torch_mod.cuda.synchronize()

    def block(self, reps):
        t = self.torch
        a, b = t.cuda.Event(enable_timing=True), t.cuda.Event(enable_timing=True)
        a.record()
        for _ in range(reps):
            self.g.replay()
        b.record()
        b.synchronize()
        return a.elapsed_time(b) / (reps * self.k)


def abba(n):
    """A B B A, n blocks a side (n even)."""
    return ("A", "B", "B", "A") * (n // 2)


def summarize(times_a, times_b):
    """Centres, and the log ratio log(a/b) of each A B B A quad: a drift
    that is linear over the quad cancels.  Its median, and the median's
    standard error from the quads' spread (1.2533 * 1.4826 * MAD / sqrt(n))."""
    qs = []
    for i in range(0, min(len(times_a), len(times_b)) - 1, 2):
        la = math.log(times_a[i]) + math.log(times_a[i + 1])
        lb = math.log(times_b[i]) + math.log(times_b[i + 1])
        qs.append(0.5 * (la - lb))
    d = statistics.median(qs)
    mad = statistics.median(abs(q - d) for q in qs)
    se = 1.2533 * 1.4826 * mad / math.sqrt(len(qs)) if len(qs) > 1 else float("nan")
    return statistics.median(times_a), statistics.median(times_b), d, se, len(qs)


def time_pair(clock, fa, fb, sides, args, graphs):
    """Eager (graphs None) or graph replay ABBA series of both sides."""
    one = {}
    for tag, fn in (("A", fa), ("B", fb)):
        sides[tag].enter()
        try:
            if graphs:
                graphs[tag].block(1)
                t = [graphs[tag].block(1) for _ in range(3)]
                one[tag] = min(t) * graphs[tag].k
            else:
                clock.eager_block(fn, 1)
                one[tag] = min(clock.eager_block(fn, 1) for _ in range(3))
        finally:
            sides[tag].leave()
    per = max(1e-6, 0.5 * (one["A"] + one["B"]))
    reps = max(1, round(args.block_ms / per))
    nblocks = max(4, 2 * round(args.side_ms / args.block_ms / 2))
    got = {"A": [], "B": []}
    for tag in abba(nblocks):
        sides[tag].enter()
        try:
            if graphs:
                got[tag].append(graphs[tag].block(reps))
            else:
                got[tag].append(clock.eager_block(fa if tag == "A" else fb, reps))
        finally:
            sides[tag].leave()
    return got


def warm(clock, fn, side, ms):
    side.enter()
    try:
        t0 = time.perf_counter()
        n = 0
        while n < 3 or (time.perf_counter() - t0) * 1e3 < ms:
            fn()
            n += 1
        clock.sync()
    finally:
        side.leave()


# ---- what to run ----


def fla_setup(args, work, torch_mod):
    sys.path.insert(0, work)
    try:
        reg = importlib.import_module("benchmarks.ops.registry")
    except Exception as e:
        die(2, f"--op needs FLA's benchmarks/ops/registry.py in the work tree {work}: {e}")
    finally:
        sys.path.remove(work)
    try:
        cfg = reg.get_op(args.op)
    except KeyError as e:
        die(2, str(e).strip("'\""))
    shapes = args.shapes or getattr(cfg, "default_shapes", None) or reg.SHAPE_CONFIGS
    dtype = {"bf16": torch_mod.bfloat16, "fp16": torch_mod.float16,
             "fp32": torch_mod.float32}[args.dtype]
    device = "cuda" if torch_mod.cuda.is_available() else "cpu"

    def make(shape):
        d = dict(shape)
        b, t, h, dd = d.pop("B"), d.pop("T"), d.pop("H"), d.pop("D")
        return (), reg.generate_inputs(cfg, b, t, h, dd, dtype=dtype, device=device, **d)

    attr = cfg.func_name or cfg.name
    return cfg.import_path, attr, make, shapes, dict(cfg.extra_kwargs), cfg.output_is_tuple


def generic_setup(args, work):
    mod, _, fn = args.callable.partition(":")
    imod, _, ifn = args.inputs.partition(":")
    if not (mod and fn and imod and ifn):
        die(2, "--callable and --inputs take MODULE:FUNCTION")
    if not args.shapes:
        die(2, "--callable needs --shapes '{\"NAME\": {\"B\": 4, ...}}'")
    sys.path.insert(0, work)
    try:
        maker = getattr(importlib.import_module(imod), ifn)
    except ModuleNotFoundError as e:
        die(2, f"--inputs {args.inputs}: no module {e.name} from the work tree {work} "
               "(give MODULE:FUNCTION as imported from the tree's root, e.g. bench.inputs:make)")
    except AttributeError:
        die(2, f"--inputs {args.inputs}: module {imod} has no {ifn} (the function takes the "
               "shape's sizes and returns the arguments: a tuple, or a dict of keywords)")
    except Exception:
        traceback.print_exc()
        die(2, f"--inputs {args.inputs}: module {imod} failed to import (above)")
    finally:
        sys.path.remove(work)

    def make(shape):
        got = maker(**shape)
        if isinstance(got, dict):
            return (), got
        return (tuple(got) if isinstance(got, (tuple, list)) else (got,)), {}

    return mod, fn, make, args.shapes, {}, False


def machine_line(torch_mod, label):
    """verify.py's Machine line, so eager times share its environment."""
    if torch_mod is not None and torch_mod.cuda.is_available():
        dev = torch_mod.cuda.get_device_name(0)
        back = f"CUDA {torch_mod.version.cuda}"
        try:
            import triton
            tv = triton.__version__
        except ImportError:
            tv = "N/A"
        tail = f"PyTorch {torch_mod.__version__} | Triton {tv}"
    else:
        dev = platform.processor() or platform.machine() or "cpu"
        back = "CPU"
        tail = (f"PyTorch {torch_mod.__version__}" if torch_mod is not None
                else f"Python {platform.python_version()}")
    return f"Machine: {dev} | {back} | {tail} | {label}"


def gate(args, work):
    """The frozen test, unmodified, as FLA's verify.py runs it."""
    rel = args.gate
    path = rel if os.path.isabs(rel) else os.path.join(work, rel)
    if not os.path.isfile(path):
        print(f"\n  Gate test not found: {rel}\n  Give --gate the op's pytest file, "
              "relative to the work tree.", file=sys.stderr)
        sys.exit(2)
    cmd = [sys.executable, "-m", "pytest", path, "-q"]
    if args.gate_k:
        cmd += ["-k", args.gate_k]
    scope = f" (-k {args.gate_k})" if args.gate_k else " (full)"
    print(f"\n{'=' * 78}\n  Correctness gate: {rel}{scope}\n{'=' * 78}", flush=True)
    return subprocess.run(cmd, cwd=work).returncode == 0


def parse_shapes(text):
    try:
        v = json.loads(text)
    except json.JSONDecodeError as e:
        die(2, f"--shapes is not JSON ({e}); write it as '{{\"B4_T2048_H16_D64\": "
               "{\"B\": 4, \"T\": 2048, \"H\": 16, \"D\": 64}}'")
    if not isinstance(v, dict) or not v or not all(
            isinstance(s, dict) and all(isinstance(x, int) for x in s.values())
            for s in v.values()):
        die(2, "--shapes must map each shape's name to its integer sizes, "
               "e.g. '{\"B4_T2048_H16_D64\": {\"B\": 4, \"T\": 2048, \"H\": 16, \"D\": 64}}'")
    return v


def main(argv=None):
    ap = argparse.ArgumentParser(prog="optloop_ab", description=__doc__.split("\n")[0])
    ap.add_argument("--op", help="an FLA registry op (benchmarks/ops/registry.py)")
    ap.add_argument("--callable", help="MODULE:FUNCTION timed on each side")
    ap.add_argument("--inputs", help="MODULE:FUNCTION(**shape) -> args tuple or kwargs dict")
    ap.add_argument("--base", help="the best's commit: the other side (without it, only the "
                    "work tree is timed)")
    ap.add_argument("--aa", action="store_true", help="both sides from --base (A/A)")
    ap.add_argument("--shapes", "--custom-shapes", type=parse_shapes, dest="shapes")
    ap.add_argument("--modes", nargs="+", default=["fwd"], choices=["fwd", "fwdbwd"])
    ap.add_argument("--dtype", default="bf16", choices=["bf16", "fp16", "fp32"])
    ap.add_argument("--timing", default="auto", choices=["auto", "eager", "graph"])
    ap.add_argument("--clock", default="wall", choices=["wall", "cpu"],
                    help="eager time by the wall clock (default), or by the process's CPU "
                    "time (all threads) for CPU-only code on a shared machine")
    ap.add_argument("--block-ms", type=float, default=25.0)
    ap.add_argument("--side-ms", type=float, default=1000.0)
    ap.add_argument("--warmup-ms", type=float, default=200.0)
    ap.add_argument("--tree", default=".", help="the work tree (default: here)")
    ap.add_argument("--paths", nargs="*", default=[], help="what to take from --base "
                    "(default: the whole tree)")
    ap.add_argument("--json", dest="json_file")
    ap.add_argument("--gate", metavar="TEST", help="run this pytest file first; benchmark only "
                    "when it passes")
    ap.add_argument("--gate-k", metavar="EXPR", help="the gate on a -k subset (a signal only)")
    ap.add_argument("--no-gate", action="store_true", help="benchmark only (optloop's "
                    "noise and confirm runs)")
    args = ap.parse_args(argv)
    if bool(args.op) == bool(args.callable):
        ap.error("give --op (an FLA op) or --callable with --inputs")
    if args.aa and not args.base:
        ap.error("--aa needs --base: the commit measured against itself")
    if args.block_ms <= 0 or args.side_ms < args.block_ms or args.warmup_ms < 0:
        ap.error("--block-ms must be > 0 and --side-ms at least --block-ms")

    try:
        work = os.path.realpath(git(args.tree, "rev-parse", "--show-toplevel"))
    except RuntimeError as e:
        die(2, f"{args.tree} is not inside a git repository ({e}); run from the work tree")
    try:
        import torch as torch_mod
    except ImportError:
        torch_mod = None
    if args.op and torch_mod is None:
        die(2, "--op needs PyTorch, and this Python has none")
    clock = Clock(torch_mod, args.clock)
    if clock.kind == "cpu" and clock.cuda:
        die(2, "--clock cpu counts the CPU's time only, and with a CUDA device the GPU's work "
               "is what is timed: leave --clock out (wall time)")
    if args.no_gate or not args.gate:
        if args.gate:
            print("\n  *** WARNING: --no-gate set. Correctness is NOT verified; any "
                  "speedup below is meaningless for promotion. ***")
    elif not gate(args, work):
        print("\n  GATE FAILED — correctness regressed. Not benchmarking. "
              "Fix correctness before measuring speed.", file=sys.stderr)
        sys.exit(1)
    else:
        print("\n  GATE PASSED.")

    modname, attr, make, shapes, extra, out_tuple = (
        fla_setup(args, work, torch_mod) if args.op else generic_setup(args, work))
    # what the registry or the inputs module imported from the work tree
    # (the kernel's package, say) must not stand in for the best's side
    keep = ("benchmarks.ops.registry", args.inputs and args.inputs.partition(":")[0])
    for k in modules_under(work):
        if k not in keep:
            del sys.modules[k]
    head = git(work, "rev-parse", "--short", "HEAD")
    if git(work, "status", "--porcelain", "--untracked-files=no"):
        head += "-dirty"  # the work tree is not HEAD: say so, as git describe does
    tmp = None
    try:
        if args.base:
            tmp, sha = extract(work, args.base, args.paths)
            short = sha[:7]
            if args.aa:
                sides = {"A": Side("base", tmp, f"aa-1[{short}]"),
                         "B": Side("base (second copy)", tmp, f"aa-2[{short}]")}
            else:
                sides = {"A": Side("base", tmp, f"base[{short}]"),
                         "B": Side("work", work, f"work[{head}]")}
        else:
            sides = {"B": Side("work", work, f"work[{head}]")}
        fns = {}
        for tag, side in sides.items():
            try:
                (m,) = side.load([modname])
                fns[tag] = getattr(m, attr)
            except Exception:
                traceback.print_exc()
                die(1, f"the {side.name} side ({side.root}) failed to import {modname}:{attr}; "
                       "both versions must import in one process")
        run(args, clock, torch_mod, sides, fns, make, shapes, extra, out_tuple, work)
    finally:
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)


def run(args, clock, torch_mod, sides, fns, make, shapes, extra, out_tuple, work):
    label = "op" if not args.op else args.op
    paired = "A" in sides
    print(machine_line(torch_mod, sides["B"].label))
    print(f"  [{label}] Warming up {len(shapes)} shape(s)...")
    rows, notes, failed = [], [], False
    for name, shape in shapes.items():
        try:
            pargs, kw = make(shape)
        except Exception as e:
            print(f"WARNING:optloop_ab:Input generation failed for {label} @ {name}: {e}")
            continue
        kw = {**kw, **extra}
        for mode in args.modes:
            calls = {}
            for tag in sides:
                f = fns[tag]
                if mode == "fwd":
                    calls[tag] = lambda f=f: f(*pargs, **kw)
                else:
                    out = f(*pargs, **kw)
                    o = out[0] if out_tuple else out
                    do = torch_mod.randn_like(o)

                    def fb(f=f, do=do):
                        r = f(*pargs, **kw)
                        (r[0] if out_tuple else r).backward(do)
                    calls[tag] = fb
            try:
                for tag in sides:
                    warm(clock, calls[tag], sides[tag], args.warmup_ms)
            except Exception as e:
                print(f"WARNING:optloop_ab:Warmup failed for {label} {mode} @ {name}: {e}")
                failed = True
                continue
            fa = calls.get("A", calls["B"])
            one = sides if paired else {"A": sides["B"], "B": sides["B"]}
            res = {"shape": name, "mode": mode, **shape, "clock": clock.kind}
            eager = time_pair(clock, fa, calls["B"], one, args, None)
            res["eager"] = summarize(eager["A"], eager["B"])
            graph_why = None
            if args.timing == "eager":
                graph_why = "eager timing asked for (--timing eager)"
            elif not clock.cuda:
                graph_why = "no CUDA device: graph replay needs one"
            else:
                try:
                    k = max(1, min(64, round(2.0 / max(1e-3, res["eager"][1]))))
                    graphs = {}
                    for tag in one:
                        one[tag].enter()
                        try:
                            graphs[tag] = Graph(torch_mod, fa if tag == "A" else calls["B"], k)
                        finally:
                            one[tag].leave()
                    g = time_pair(clock, fa, calls["B"], one, args, graphs)
                    res["graph"] = summarize(g["A"], g["B"])
                    del graphs
                except Exception as e:
                    graph_why = f"CUDA graph capture failed ({type(e).__name__}: {e})"
            res["graph_why"] = graph_why
            ratio = res["eager"][1] / res["graph"][1] if "graph" in res else float("nan")
            res["eager_graph"] = ratio
            cls = ("launch-bound" if ratio >= LAUNCH_BOUND else
                   "gpu-bound" if ratio <= GPU_BOUND else "mixed") if "graph" in res else "unknown"
            res["class"] = cls
            basis = ("graph" if args.timing == "graph" or
                     (args.timing == "auto" and cls == "launch-bound") else "eager")
            if basis == "graph" and "graph" not in res:
                basis = "eager"
            res["basis"] = basis
            rows.append(res)
            notes.append(note(res, paired))
    print(f"  [{label}] Warmup done.")
    table(rows, label, sides, paired)
    for n in notes:
        print(n)
    if args.json_file:
        with open(args.json_file, "w") as f:
            json.dump({"machine": machine_line(torch_mod, sides["B"].label),
                       "base": sides["A"].label if paired else None,
                       "work": sides["B"].label, "aa": args.aa,
                       "block_ms": args.block_ms, "side_ms": args.side_ms,
                       "results": [json_row(r) for r in rows]}, f, indent=1)
    if not rows:
        die(1, "no shape was timed (the warnings above say why)")
    if failed:
        die(1, "a shape failed to run (the warnings above say which); the table lacks it")


def fmt(ms):
    return f"{ms:.5g}" if ms < 1 else f"{ms:.4f}"


def note(r, paired):
    def part(kind):
        a, b, d, se, nq = r[kind]
        name = "eager (CPU time)" if kind == "eager" and r["clock"] == "cpu" else kind
        s = f"{name} {fmt(a)}" + (f" / {fmt(b)} ms, {100 * -math.expm1(-d):+.2f}% "
                                  f"(± {100 * se:.2f}%, {nq} ABBA quads)" if paired else " ms")
        return s
    parts = [part("eager")]
    if "graph" in r:
        parts.append(part("graph"))
        tail = (f"eager/graph {r['eager_graph']:.2f}: {r['class']}; "
                f"the verdict reads {r['basis']} time")
    else:
        tail = f"graph: none, {r['graph_why']}; the verdict reads eager time"
    return f"  [optloop-ab] {r['shape']} {r['mode']}: " + ", ".join(parts) + "; " + tail


def json_row(r):
    out = {k: r[k] for k in r if k not in ("eager", "graph")}
    for kind in ("eager", "graph"):
        if kind in r:
            a, b, d, se, nq = r[kind]
            out[kind] = {"base_ms": a, "new_ms": b, "log_ratio": d, "se": se, "quads": nq}
    if isinstance(out.get("eager_graph"), float) and math.isnan(out["eager_graph"]):
        out["eager_graph"] = None
    return out


def table(rows, label, sides, paired):
    if not rows:
        print("\n  No results to display.")
        return
    old = f"{sides['A'].label}(ms)" if paired else None
    new = f"{sides['B'].label}(ms)"
    w = max(len(new), len(old or ""), 10)
    hdr = f"{'B':>4s} {'T':>6s} {'H':>4s} {'D':>4s}  {'op':<28s}  " + (
        f"{old:>{w}s} {new:>{w}s} {'speedup':>8s}" if paired else f"{new:>{w}s}")
    inner = len(hdr)
    sep = "=" * (10 + inner)
    print(f"\n{sep}")
    prev = None
    for r in rows:
        if r["mode"] != prev:
            print(sep)
            print(f"  {r['mode']:<7s} {hdr}")
            print(" " * 10 + "-" * inner)
            prev = r["mode"]
        dims = " ".join(f"{r[k]:>{n}d}" if isinstance(r.get(k), int) else f"{'-':>{n}s}"
                        for k, n in (("B", 4), ("T", 6), ("H", 4), ("D", 4)))
        op = label
        if not all(isinstance(r.get(k), int) for k in ("B", "T", "H", "D")):
            op += "/" + r["shape"]  # no B T H D columns: the name tells shapes apart
        op += ":graph" if r["basis"] == "graph" else ""
        a, b = r[r["basis"]][0], r[r["basis"]][1]
        if paired:
            print(f"{' ' * 10}{dims}  {op:<28s}  {fmt(a):>{w}s} {fmt(b):>{w}s} "
                  f"{a / b:>7.3f}x")
        else:
            print(f"{' ' * 10}{dims}  {op:<28s}  {fmt(b):>{w}s}")
    print(sep)


if __name__ == "__main__":
    main()
