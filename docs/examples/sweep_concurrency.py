"""Sweeps the closed-loop concurrency of one deployment with the shardwise Python package and
plots p99 TTFT and mean TPOT against it (docs/python.md).

    PYTHONPATH=build/python python3 docs/examples/sweep_concurrency.py --output sweep.png
"""

import argparse

import matplotlib

matplotlib.use("Agg")  # no display needed
import matplotlib.pyplot as plt  # noqa: E402

import shardwise  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="llama-3.1-70b")
    parser.add_argument("--cluster", default="dgx-h100")
    parser.add_argument("--layout", default="tp4")
    parser.add_argument("--engine", default="vllm-0.12")
    parser.add_argument("--concurrency", default="1,4,16,64",
                        help="comma-separated closed-loop client counts")
    parser.add_argument("--output", default="sweep.png", help="the PNG to write")
    args = parser.parse_args()

    clients, ttft_ms, tpot_ms = [], [], []
    for c in (int(x) for x in args.concurrency.split(",")):
        doc = shardwise.simulate(model=args.model, cluster=args.cluster, layout=args.layout,
                                 engine=args.engine, concurrency=c, isl=1024, osl=256)
        clients.append(c)
        ttft_ms.append(doc.ttft_s["p99"] * 1e3)
        tpot_ms.append(doc.tpot_s["mean"] * 1e3)
        print(f"{c:5d} clients: TTFT p99 {ttft_ms[-1]:8.1f} ms, TPOT mean {tpot_ms[-1]:6.2f} ms")

    fig, (left, right) = plt.subplots(1, 2, figsize=(9, 3.5))
    for axis, values, label in ((left, ttft_ms, "TTFT p99 (ms)"), (right, tpot_ms, "TPOT mean (ms)")):
        axis.plot(clients, values, marker="o")
        axis.set_xscale("log", base=2)
        axis.set_xlabel("concurrent clients")
        axis.set_ylabel(label)
        axis.grid(True, alpha=0.3)
    fig.suptitle(f"{args.model} {args.layout} on {args.cluster}, {args.engine}, ISL 1024 / OSL 256")
    fig.tight_layout()
    fig.savefig(args.output, dpi=120)
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
