#!/usr/bin/env python3
"""Plot estimated against true distance from `beacond-bench ranging-eval`'s samples CSV.

One panel per distance model (rows) and RSSI filter (columns); points coloured by receiving phone,
the running median and 10th-90th percentile of the estimates per 10 cm of true distance, and the
y = x line a perfect estimator would follow.

Usage: python3 scripts/plot-ranging.py [SAMPLES_CSV] [OUTPUT_PNG]
Needs matplotlib; when the running Python lacks it, the script creates .venv-plot at the package
root, installs matplotlib there from PyPI and re-runs itself inside it.
"""
import argparse
import csv
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VENV = ROOT / ".venv-plot"
VENV_PYTHON = VENV / "bin" / "python3"


def ensure_matplotlib():
    """Import matplotlib, or bootstrap .venv-plot and re-run this script inside it."""
    try:
        import matplotlib  # noqa: F401
        return
    except ImportError:
        pass
    if Path(sys.prefix).resolve() == VENV.resolve():
        subprocess.check_call([sys.executable, "-m", "pip", "install", "--quiet", "matplotlib"])
        return
    if not VENV_PYTHON.exists():
        subprocess.check_call([sys.executable, "-m", "venv", str(VENV)])
    os.execv(str(VENV_PYTHON), [str(VENV_PYTHON), str(Path(__file__).resolve()), *sys.argv[1:]])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("samples", nargs="?", default=str(ROOT / ".build-ranging-eval" / "ranging-samples.csv"))
    parser.add_argument("output", nargs="?", default=str(ROOT / "docs" / "ranging-estimated-vs-true.png"))
    parser.add_argument("--y-max", type=float, default=6.0, help="clip estimates above this (m)")
    args = parser.parse_args()
    ensure_matplotlib()

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = {}
    models, filters, receivers = [], [], []
    with open(args.samples, newline="") as handle:
        for row in csv.DictReader(handle):
            key = (row["model"], row["filter"])
            for name, seen in ((row["model"], models), (row["filter"], filters), (row["receiver"], receivers)):
                if name not in seen:
                    seen.append(name)
            rows.setdefault(key, []).append((float(row["true_m"]), float(row["estimated_m"]), row["receiver"]))

    colours = dict(zip(receivers, ["tab:blue", "tab:orange", "tab:green", "tab:purple", "tab:brown"]))
    figure, axes = plt.subplots(len(models), len(filters), figsize=(4.2 * len(filters), 3.6 * len(models)),
                                sharex=True, sharey=True, squeeze=False)
    top = args.y_max
    for r, model in enumerate(models):
        for c, filter_name in enumerate(filters):
            axis = axes[r][c]
            samples = rows.get((model, filter_name), [])
            for receiver in receivers:
                points = [(t, min(e, top)) for t, e, who in samples if who == receiver]
                axis.scatter([p[0] for p in points], [p[1] for p in points], s=2, alpha=0.15,
                             color=colours[receiver], label=receiver, rasterized=True)
            bins = {}
            for t, e, _ in samples:
                bins.setdefault(round(t * 10) / 10, []).append(e)
            centres = sorted(bins)

            def quantile(values, p):
                values = sorted(values)
                return values[min(len(values) - 1, int(p * (len(values) - 1) + 0.5))]

            axis.plot(centres, [min(quantile(bins[x], 0.5), top) for x in centres], color="black", lw=1.6,
                      label="median per 10 cm")
            axis.plot(centres, [min(quantile(bins[x], 0.1), top) for x in centres], color="black", lw=0.8,
                      ls="--", label="10th / 90th percentile")
            axis.plot(centres, [min(quantile(bins[x], 0.9), top) for x in centres], color="black", lw=0.8, ls="--")
            axis.plot([0, 3.5], [0, 3.5], color="red", lw=1.2, ls=":", label="y = x (perfect)")
            axis.set_xlim(0, 3.5)
            axis.set_ylim(0, top)
            axis.grid(True, alpha=0.3)
            axis.set_title(f"{model}\n{filter_name}", fontsize=10)
            if r == len(models) - 1:
                axis.set_xlabel("true distance (m)")
            if c == 0:
                axis.set_ylabel("estimated distance (m)")
    handles, labels = axes[0][0].get_legend_handles_labels()
    legend = figure.legend(handles, labels, loc="lower center", ncol=len(labels), markerscale=6, frameon=False)
    for handle in legend.legend_handles:
        handle.set_alpha(1)
    figure.suptitle(f"Estimated vs true distance, Herald RSSI recordings (estimates above {top:g} m drawn at {top:g} m)",
                    fontsize=12)
    figure.tight_layout(rect=(0, 0.03, 1, 0.97))
    Path(args.output).parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(args.output, dpi=90)
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
