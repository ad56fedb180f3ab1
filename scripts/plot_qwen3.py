"""Decode tokens/s against batch size, one line per stack, as an SVG (no plotting library: the
figure is a few lines and points).

    python3 scripts/plot_qwen3.py docs/qwen3_decode.csv > docs/qwen3_decode.svg

The CSV's rows are stack,model,batch,context,step_ms,tokens_per_s, as cutejit_qwen3_bench and
tests/apps/qwen3_peers_transformers.py print them after "csv," (from a run_gpu.sh log:
grep '^csv,' LOG | cut -d, -f2-); lines starting with # are the source, the first shown as the caption.
"""
import csv
import math
import sys

W, H, LEFT, RIGHT, TOP, BOTTOM = 640, 400, 70, 180, 40, 60
COLOURS = ["#1f77b4", "#d62728", "#7f7f7f", "#2ca02c", "#9467bd"]


def main():
    with open(sys.argv[1]) as f:
        lines = f.read().splitlines()
    caption = next((l.lstrip("# ") for l in lines if l.startswith("#")), "")
    rows = list(csv.DictReader(l for l in lines if not l.startswith("#")))
    stacks = {}
    for r in rows:
        stacks.setdefault(r["stack"], []).append((int(r["batch"]), float(r["tokens_per_s"])))
    batches = sorted({b for points in stacks.values() for b, _ in points})
    top = max(t for points in stacks.values() for _, t in points)
    step = 10 ** math.floor(math.log10(top))
    top = math.ceil(top / step) * step
    x_span = math.log2(max(batches)) or 1

    def x(b):
        return LEFT + (W - LEFT - RIGHT) * math.log2(b) / x_span

    def y(t):
        return H - BOTTOM - (H - TOP - BOTTOM) * t / top

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-family="sans-serif" font-size="12">',
           f'<rect width="{W}" height="{H}" fill="white"/>',
           f'<text x="{LEFT}" y="20" font-size="14">Qwen3 decode: tokens/s against batch size</text>']
    for i in range(0, 6):
        t = top * i / 5
        out.append(f'<line x1="{LEFT}" x2="{W - RIGHT}" y1="{y(t):.1f}" y2="{y(t):.1f}" stroke="#ddd"/>')
        out.append(f'<text x="{LEFT - 6}" y="{y(t) + 4:.1f}" text-anchor="end">{t:.0f}</text>')
    for b in batches:
        out.append(f'<text x="{x(b):.1f}" y="{H - BOTTOM + 16}" text-anchor="middle">{b}</text>')
    out.append(f'<text x="{(LEFT + W - RIGHT) / 2}" y="{H - BOTTOM + 34}" text-anchor="middle">batch (sequences decoding together)</text>')
    out.append(f'<line x1="{LEFT}" x2="{W - RIGHT}" y1="{H - BOTTOM}" y2="{H - BOTTOM}" stroke="black"/>')
    out.append(f'<line x1="{LEFT}" x2="{LEFT}" y1="{TOP}" y2="{H - BOTTOM}" stroke="black"/>')
    for i, (stack, points) in enumerate(stacks.items()):
        colour = COLOURS[i % len(COLOURS)]
        points.sort()
        path = " ".join(f"{x(b):.1f},{y(t):.1f}" for b, t in points)
        out.append(f'<polyline points="{path}" fill="none" stroke="{colour}" stroke-width="2"/>')
        out += [f'<circle cx="{x(b):.1f}" cy="{y(t):.1f}" r="3.5" fill="{colour}"/>' for b, t in points]
        ly = TOP + 20 * i + 10
        out.append(f'<line x1="{W - RIGHT + 12}" x2="{W - RIGHT + 32}" y1="{ly}" y2="{ly}" stroke="{colour}" stroke-width="2"/>')
        out.append(f'<text x="{W - RIGHT + 38}" y="{ly + 4}">{stack}</text>')
    out.append(f'<text x="{LEFT}" y="{H - 8}" font-size="10" fill="#555">{caption}</text>')
    out.append("</svg>")
    print("\n".join(out))


if __name__ == "__main__":
    main()
