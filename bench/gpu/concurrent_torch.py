#!/usr/bin/env python3
"""Third reference for "every GPU copies to (from) the host at once" (issue 35), in PyTorch:
each GPU has its own pinned host buffer and its own stream; all copies are queued, then the
whole set is waited for. Two figures a repetition: total bytes over the wall time of the set
(the aggregate), and each GPU's bytes over its own stream's CUDA-event interval (the per-GPU
figures, whose sum is nvbandwidth's "sum"). Prints one JSON object; the median of the
repetitions is reported beside every sample.

  concurrent_torch.py [--size-mib 256] [--loops 4] [--repetitions 5] [--warmups 1]
"""
import argparse
import json
import statistics
import sys
import time

try:
    import torch
except ImportError as e:  # the caller reports the reference as not measured, with this reason
    print(json.dumps({"waived": f"PyTorch not importable: {e}"}))
    sys.exit(0)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--size-mib", type=int, default=256)
    ap.add_argument("--loops", type=int, default=4)
    ap.add_argument("--repetitions", type=int, default=5)
    ap.add_argument("--warmups", type=int, default=1)
    a = ap.parse_args()
    n = torch.cuda.device_count()
    if n < 2:
        print(json.dumps({"waived": f"{n} GPU(s): needs at least 2"}))
        return
    size = a.size_mib << 20
    host = [torch.empty(size, dtype=torch.uint8).pin_memory() for _ in range(n)]
    dev = [torch.empty(size, dtype=torch.uint8, device=f"cuda:{i}") for i in range(n)]
    streams = [torch.cuda.Stream(device=i) for i in range(n)]
    out = {"tool": "torch", "torch": torch.__version__, "cuda": torch.version.cuda, "gpus": n,
           "size_bytes": size, "loops": a.loops, "repetitions": a.repetitions}
    for name in ("h2d", "d2h"):
        agg, per_gpu = [], [[] for _ in range(n)]
        for rep in range(a.warmups + a.repetitions):
            for i in range(n):
                torch.cuda.synchronize(i)
            start = [torch.cuda.Event(enable_timing=True) for _ in range(n)]
            end = [torch.cuda.Event(enable_timing=True) for _ in range(n)]
            t0 = time.perf_counter()
            for i in range(n):
                with torch.cuda.device(i), torch.cuda.stream(streams[i]):
                    start[i].record(streams[i])
                    for _ in range(a.loops):
                        if name == "h2d":
                            dev[i].copy_(host[i], non_blocking=True)
                        else:
                            host[i].copy_(dev[i], non_blocking=True)
                    end[i].record(streams[i])
            for i in range(n):
                streams[i].synchronize()
            wall = time.perf_counter() - t0
            if rep < a.warmups:
                continue
            agg.append(n * size * a.loops / wall / 1e9)
            for i in range(n):
                per_gpu[i].append(size * a.loops / (start[i].elapsed_time(end[i]) / 1e3) / 1e9)
        med = [statistics.median(p) for p in per_gpu]
        out[name] = {"aggregate_gb_s": statistics.median(agg), "aggregate_samples": agg,
                     "per_gpu_gb_s": med, "per_gpu_samples": per_gpu, "sum_of_per_gpu_gb_s": sum(med)}
    print(json.dumps(out))


if __name__ == "__main__":
    main()
