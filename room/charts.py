"""Server-rendered SVG charts for the monitor (no script, nothing fetched by the browser)."""

from __future__ import annotations

import html

#: Line colours, one per series in order (distinct for the usual colour blindness).
PALETTE = ("#0072b2", "#e69f00", "#009e73", "#cc79a7", "#56b4e9", "#d55e00", "#f0e442", "#999")
#: Room for an x label (px): labels closer than this are thinned (every 2nd, 3rd, ...).
LABEL_WIDTH = 52
#: Legend lines that fit beside the plot; more series are summed up as "+N more".
LEGEND_ROWS = 10


def nice_tick(largest: int) -> int:
    """A grid step giving 3 to 5 lines up to `largest`: 1, 2, 5, 10, 20, 50, ..."""
    raw = max(1.0, largest / 5)
    step = 1
    while True:
        for factor in (1, 2, 5):
            if step * factor >= raw:
                return step * factor
        step *= 10


def line_chart(
    series: dict[str, list[int]],
    labels: list[str],
    *,
    title: str,
    width: int = 720,
    height: int = 280,
) -> str:
    """A line per series over the `labels` (x), the y axis from 0 to the largest value."""
    left, right, top, bottom = 44, 150, 28, 34
    plot_w, plot_h = width - left - right, height - top - bottom
    n = max(1, len(labels))
    largest = max([1, *(v for values in series.values() for v in values)])
    tick = nice_tick(largest)  # whole hands per grid line, a round number
    lines = -(-largest // tick)
    peak = lines * tick
    step = plot_w / max(1, n - 1) if n > 1 else 0.0
    every = max(1, -(-LABEL_WIDTH // int(step))) if n > 1 and step else 1

    def x(i: int) -> float:
        return left + (i * step if n > 1 else plot_w / 2)

    def y(v: float) -> float:
        return top + plot_h - plot_h * v / peak

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" role="img" '
        f'viewBox="0 0 {width} {height}" width="{width}" height="{height}">',
        f"<title>{html.escape(title)}</title>",
        f'<text x="{left}" y="16" class="chart-title">{html.escape(title)}</text>',
    ]
    for k in range(lines + 1):  # horizontal grid, labelled
        value = tick * k
        parts.append(
            f'<line x1="{left}" x2="{left + plot_w}" y1="{y(value):.1f}" y2="{y(value):.1f}" '
            'class="grid"/>'
            f'<text x="{left - 6}" y="{y(value) + 4:.1f}" text-anchor="end">{value:,}</text>'
        )
    for i, label in enumerate(labels):
        if i % every and i != n - 1:
            continue  # thinned: the labels would overlap
        if i != n - 1 and n - 1 - i < every and (n - 1) % every:
            continue  # the last label is drawn: leave room for it
        parts.append(
            f'<text x="{x(i):.1f}" y="{height - 12}" text-anchor="middle">'
            f"{html.escape(label)}</text>"
        )
    for index, (name, values) in enumerate(series.items()):
        colour = PALETTE[index % len(PALETTE)]
        points = " ".join(f"{x(i):.1f},{y(v):.1f}" for i, v in enumerate(values))
        safe = html.escape(name)
        parts.append(
            f'<g class="series" data-name="{safe}">'
            f'<polyline fill="none" stroke="{colour}" stroke-width="2.5" points="{points}"/>'
            + "".join(
                f'<circle cx="{x(i):.1f}" cy="{y(v):.1f}" r="3.5" fill="{colour}">'
                f"<title>{safe}: {v} at {html.escape(labels[i])}</title></circle>"
                for i, v in enumerate(values)
            )
            + "</g>"
        )
        ly = top + 14 + 20 * index
        if index >= LEGEND_ROWS:
            if index == LEGEND_ROWS:
                more = len(series) - LEGEND_ROWS
                parts.append(f'<text x="{left + plot_w + 16}" y="{ly}">+{more} more</text>')
            continue
        parts.append(
            f'<rect x="{left + plot_w + 16}" y="{ly - 10}" width="12" height="12" '
            f'fill="{colour}"/><text x="{left + plot_w + 34}" y="{ly}">{safe}</text>'
        )
    parts.append("</svg>")
    return "".join(parts)
