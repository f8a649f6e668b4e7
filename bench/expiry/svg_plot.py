# A small SVG line chart with the standard library only (Debian 12's python3-matplotlib is not
# always installable): panels stacked one above the other, sharing the x axis, one polyline per
# series, a legend, and round ticks.
import math
from xml.sax.saxutils import escape

COLOURS = ['#000000', '#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b', '#e377c2']
WIDTH, PANEL_HEIGHT, LEFT, RIGHT, TOP, GAP, BOTTOM = 760, 260, 80, 190, 30, 60, 40


def nice_ticks(high, count=5):
    """Round tick values from 0 to at least high."""
    if high <= 0:
        return [0, 1]
    raw = high / count
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 2.5, 5, 10) if m * power >= raw)
    return [i * step for i in range(int(math.ceil(high / step)) + 1)]


def fmt(value):
    return f'{value:,.0f}' if value >= 10 or value == 0 else f'{value:g}'


def draw(path, title, x_label, panels):
    """panels: [(y_label, {series name: [(x, y)]})], the series in the same order in each."""
    height = TOP + len(panels) * (PANEL_HEIGHT + GAP) + BOTTOM
    plot_w = WIDTH - LEFT - RIGHT
    x_max = max(x for _, series in panels for points in series.values() for x, _ in points) or 1
    x_ticks = nice_ticks(x_max, 8)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" '
           f'font-family="sans-serif" font-size="11">',
           f'<rect width="{WIDTH}" height="{height}" fill="white"/>',
           f'<text x="{WIDTH / 2}" y="18" text-anchor="middle" font-size="13">{escape(title)}</text>']
    for index, (y_label, series) in enumerate(panels):
        top = TOP + index * (PANEL_HEIGHT + GAP)
        y_max = max((y for points in series.values() for _, y in points), default=1)
        y_ticks = nice_ticks(y_max)
        sx = lambda x: LEFT + plot_w * x / x_ticks[-1]
        sy = lambda y: top + PANEL_HEIGHT - PANEL_HEIGHT * y / y_ticks[-1]
        out.append(f'<rect x="{LEFT}" y="{top}" width="{plot_w}" height="{PANEL_HEIGHT}" '
                   f'fill="none" stroke="#888"/>')
        for y in y_ticks:
            out.append(f'<line x1="{LEFT}" x2="{LEFT + plot_w}" y1="{sy(y):.1f}" y2="{sy(y):.1f}" '
                       f'stroke="#ddd"/><text x="{LEFT - 6}" y="{sy(y) + 4:.1f}" '
                       f'text-anchor="end">{fmt(y)}</text>')
        for x in x_ticks:
            out.append(f'<text x="{sx(x):.1f}" y="{top + PANEL_HEIGHT + 14}" '
                       f'text-anchor="middle">{fmt(x)}</text>')
        out.append(f'<text transform="translate(16,{top + PANEL_HEIGHT / 2}) rotate(-90)" '
                   f'text-anchor="middle">{escape(y_label)}</text>')
        for k, (name, points) in enumerate(series.items()):
            colour = COLOURS[k % len(COLOURS)]
            line = ' '.join(f'{sx(x):.1f},{sy(y):.1f}' for x, y in points)
            out.append(f'<polyline points="{line}" fill="none" stroke="{colour}" stroke-width="1.5"/>')
            ly = top + 14 + 16 * k
            out.append(f'<line x1="{LEFT + plot_w + 10}" x2="{LEFT + plot_w + 30}" y1="{ly - 4}" '
                       f'y2="{ly - 4}" stroke="{colour}" stroke-width="2"/><text '
                       f'x="{LEFT + plot_w + 34}" y="{ly}">{escape(name)}</text>')
    out.append(f'<text x="{LEFT + plot_w / 2}" y="{height - 8}" text-anchor="middle">'
               f'{escape(x_label)}</text></svg>')
    with open(path, 'w') as f:
        f.write('\n'.join(out) + '\n')
