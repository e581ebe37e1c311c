"""The plot: time against nodes, log-log, one line per quantizer, as a standalone SVG.

Written by hand (no plotting library needed): one panel a model family, one
colour a target; the generated class solid, the hand-written one dashed. A
point the benchmark stopped at its time limit is drawn open, at the limit.
"""

from __future__ import annotations

import math
from xml.sax.saxutils import escape

COLOURS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2")
W, H, PAD_L, PAD_R, PAD_T, PAD_B = 330, 280, 52, 12, 28, 40

# One line: (family, target, "generated" or "hand-written") -> [(nodes, seconds, finished)]
# (not finished: stopped at the time limit, ``seconds`` is the limit)
Lines = dict[tuple[str, str, str], list[tuple[int, float, bool]]]


def _ticks(lo: float, hi: float) -> list[float]:
    return [10.0**e for e in range(math.floor(math.log10(lo)), math.ceil(math.log10(hi)) + 1)]


def _label(v: float, unit: str = "") -> str:
    if v >= 1000:
        return f"{v / 1000:g}k{unit}"
    return f"{v:g}{unit}"


def _panel(family: str, lines: Lines, targets: list[str], x0: float, span: tuple) -> list[str]:
    (nlo, nhi), (tlo, thi) = span
    lx0, lx1, ly0, ly1 = math.log10(nlo), math.log10(nhi), math.log10(tlo), math.log10(thi)

    def px(n: float) -> float:
        return x0 + PAD_L + (math.log10(n) - lx0) / (lx1 - lx0) * (W - PAD_L - PAD_R)

    def py(t: float) -> float:
        return PAD_T + (ly1 - math.log10(t)) / (ly1 - ly0) * (H - PAD_T - PAD_B)

    out = [
        f'<text x="{x0 + W / 2}" y="16" text-anchor="middle" font-weight="bold">{escape(family)}</text>'
    ]
    out.append(
        f'<rect x="{px(nlo)}" y="{py(thi)}" width="{px(nhi) - px(nlo)}" '
        f'height="{py(tlo) - py(thi)}" fill="none" stroke="#999"/>'
    )
    for t in _ticks(tlo, thi):
        if tlo <= t <= thi:
            out.append(
                f'<line x1="{px(nlo)}" x2="{px(nhi)}" y1="{py(t)}" y2="{py(t)}" stroke="#eee"/>'
            )
            out.append(
                f'<text x="{px(nlo) - 4}" y="{py(t) + 4}" text-anchor="end">{_label(t, " s")}</text>'
            )
    last = -math.inf  # a node count a label: of counts closer than a label's width, the first
    for n in sorted({n for k, pts in lines.items() if k[0] == family for n, _, _ in pts}):
        if px(n) - last >= 36:
            out.append(
                f'<text x="{px(n)}" y="{H - PAD_B + 14}" text-anchor="middle">{_label(n)}</text>'
            )
            last = px(n)
    for (fam, target, who), pts in sorted(lines.items()):
        if fam != family or not pts:
            continue
        colour = COLOURS[targets.index(target) % len(COLOURS)]
        dash = "" if who == "generated" else ' stroke-dasharray="5,3"'
        path = " ".join(f"{px(n):.1f},{py(t):.1f}" for n, t, _ in sorted(pts))
        out.append(
            f'<polyline points="{path}" fill="none" stroke="{colour}" stroke-width="1.6"{dash}/>'
        )
        out += [
            f'<circle cx="{px(n):.1f}" cy="{py(t):.1f}" r="{2.2 if done else 3.2}" '
            + (f'fill="{colour}"/>' if done else f'fill="white" stroke="{colour}"/>')
            for n, t, done in pts
        ]
    out.append(f'<text x="{x0 + W / 2}" y="{H - 6}" text-anchor="middle">nodes</text>')
    return out


def svg(lines: Lines, title: str, limit: float | None = None) -> str:
    """The plot of ``lines`` as an SVG document (``limit``: the time limit, in the legend)."""
    families = list(dict.fromkeys(k[0] for k in lines))
    targets = list(dict.fromkeys(k[1] for k in lines))
    pts = [p for ps in lines.values() for p in ps]
    span = (
        (min(p[0] for p in pts) / 1.3, max(p[0] for p in pts) * 1.3),
        (min(p[1] for p in pts) / 1.5, max(p[1] for p in pts) * 1.5),
    )
    width, legend = W * len(families), 18 * (len(targets) + 2)
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{H + legend}" '
        f'viewBox="0 0 {width} {H + legend}" font-family="sans-serif" font-size="11">',
        f"<title>{escape(title)}</title>",
        f'<rect width="{width}" height="{H + legend}" fill="white"/>',
    ]
    for i, family in enumerate(families):
        out += _panel(family, lines, targets, i * W, span)
    y = H + 10
    for i, target in enumerate(targets):
        colour = COLOURS[i % len(COLOURS)]
        out.append(
            f'<line x1="20" x2="50" y1="{y + 18 * i}" y2="{y + 18 * i}" stroke="{colour}" stroke-width="2"/>'
        )
        out.append(f'<text x="56" y="{y + 18 * i + 4}">{escape(target)}</text>')
    y += 18 * len(targets)
    out.append(f'<line x1="20" x2="50" y1="{y}" y2="{y}" stroke="#333"/>')
    out.append(f'<text x="56" y="{y + 4}">generated</text>')
    out.append(f'<line x1="140" x2="170" y1="{y}" y2="{y}" stroke="#333" stroke-dasharray="5,3"/>')
    out.append(f'<text x="176" y="{y + 4}">hand-written</text>')
    if limit is not None and any(not p[2] for p in pts):
        out.append(f'<circle cx="290" cy="{y}" r="3.2" fill="white" stroke="#333"/>')
        out.append(f'<text x="298" y="{y + 4}">stopped at {limit:g} s, did not finish</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"
