"""The HTML telemetry report (`resolver telemetry report FILE --html OUT`).

One self-contained page: the charts are SVG drawn here in Python, the styles inline, and a few
lines of inline script only check that every chart rendered (they set ``data-rendered="ok"`` on
``<html>``, or ``"error"`` with a message). Nothing is fetched at view time; prompt excerpts
are never included.
"""

from __future__ import annotations

import html
import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from ._event import TelemetryEvent
from ._summary import Summary

W, H = 560, 260
PAD_L, PAD_R, PAD_T, PAD_B = 58, 16, 16, 40
MAX_POINTS = 600
COLORS = {
    "before": "#9aa5b1",
    "after": "#2563eb",
    "bar": "#2563eb",
    "saved": "#059669",
    "llm": "#2563eb",
    "offline": "#7c3aed",
    "keyword": "#d97706",
    "reuse": "#0891b2",
    "full": "#dc2626",
    "abstain": "#6b7280",
    "disabled": "#374151",
    "shadow": "#a16207",
}


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def _fmt(value: float | None, digits: int = 1, suffix: str = "") -> str:
    if value is None:
        return "–"
    if abs(value) >= 1000:
        return f"{value:,.0f}{suffix}"
    return f"{value:,.{digits}f}{suffix}"


def _nice_max(value: float) -> float:
    if value <= 0:
        return 1.0
    magnitude = float(10 ** math.floor(math.log10(value)))
    for step in (1.0, 1.2, 1.6, 2.0, 2.4, 3.2, 4.0, 6.0, 8.0):
        if value <= step * magnitude:
            return step * magnitude
    return 10.0 * magnitude


def _compact(value: float) -> str:
    """Tick labels: 950, 12k, 1.5M."""
    for limit, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= limit:
            text = f"{value / limit:.1f}".removesuffix(".0")
            return f"{text}{suffix}"
    return f"{value:.0f}" if value == int(value) else f"{value:.1f}"


def _axes(y_max: float, y_label: str, x_label: str, *, ticks: int = 4, width: int = W) -> list[str]:
    parts = []
    plot_h = H - PAD_T - PAD_B
    for i in range(ticks + 1):
        value = y_max * i / ticks
        y = PAD_T + plot_h - plot_h * i / ticks
        parts.append(
            f'<line x1="{PAD_L}" x2="{width - PAD_R}" y1="{y:.1f}" y2="{y:.1f}" class="grid"/>'
            f'<text x="{PAD_L - 6}" y="{y + 4:.1f}" class="tick" text-anchor="end">'
            f"{_e(_compact(value))}</text>"
        )
    parts.append(
        f'<text x="14" y="{PAD_T + plot_h / 2:.1f}" class="axis" text-anchor="middle" '
        f'transform="rotate(-90 14 {PAD_T + plot_h / 2:.1f})">{_e(y_label)}</text>'
        f'<text x="{PAD_L + (width - PAD_L - PAD_R) / 2:.1f}" y="{H - 6}" class="axis" '
        f'text-anchor="middle">{_e(x_label)}</text>'
    )
    return parts


def _svg(
    chart: str,
    title: str,
    body: Sequence[str],
    *,
    empty: bool = False,
    width: int = W,
    height: int = H,
) -> str:
    attrs = f'data-chart="{_e(chart)}"' + (' data-empty="true"' if empty else "")
    return (
        f'<svg {attrs} viewBox="0 0 {width} {height}" role="img" aria-label="{_e(title)}" '
        f'xmlns="http://www.w3.org/2000/svg">{"".join(body)}</svg>'
    )


def _empty(chart: str, title: str) -> str:
    return _svg(
        chart,
        title,
        [f'<text x="{W / 2}" y="{H / 2}" class="axis" text-anchor="middle">no data</text>'],
        empty=True,
    )


def _downsample(values: Sequence[float], limit: int = MAX_POINTS) -> list[tuple[float, float]]:
    """(x, y) points; above `limit` values, bucket means (x = bucket centre, 1-based)."""
    n = len(values)
    if n <= limit:
        return [(i + 1, v) for i, v in enumerate(values)]
    points = []
    for b in range(limit):
        lo, hi = b * n // limit, (b + 1) * n // limit
        chunk = values[lo:hi]
        points.append(((lo + hi) / 2 + 0.5, sum(chunk) / len(chunk)))
    return points


def line_chart(
    chart: str,
    title: str,
    series: Sequence[tuple[str, str, Sequence[float]]],
    *,
    y_label: str,
    x_label: str = "turn",
    width: int = W,
) -> str:
    """A line per (label, color, values) over the turn index."""
    n = max((len(v) for _, _, v in series), default=0)
    if n == 0:
        return _empty(chart, title)
    y_max = _nice_max(max((max(v) for _, _, v in series if v), default=1.0))
    plot_w, plot_h = width - PAD_L - PAD_R, H - PAD_T - PAD_B
    body = _axes(y_max, y_label, x_label, width=width)

    def sx(x: float) -> float:
        return PAD_L + (plot_w * (x - 1) / (n - 1) if n > 1 else plot_w / 2)

    def sy(y: float) -> float:
        return PAD_T + plot_h - plot_h * y / y_max

    for i, (label, color, values) in enumerate(series):
        pts = _downsample(values)
        path = " ".join(f"{sx(x):.1f},{sy(y):.1f}" for x, y in pts)
        body.append(
            f'<polyline class="mark" points="{path}" fill="none" stroke="{color}" '
            f'stroke-width="2" stroke-linejoin="round"><title>{_e(label)}</title></polyline>'
        )
        if len(pts) == 1:
            x, y = pts[0]
            body.append(
                f'<circle class="mark" cx="{sx(x):.1f}" cy="{sy(y):.1f}" r="3" fill="{color}"/>'
            )
        lx = PAD_L + 8 + i * 150
        body.append(
            f'<rect x="{lx}" y="{PAD_T + 2}" width="12" height="4" fill="{color}"/>'
            f'<text x="{lx + 16}" y="{PAD_T + 8}" class="legend">{_e(label)}</text>'
        )
    body.append(
        f'<text x="{width - PAD_R}" y="{H - 22}" class="tick" text-anchor="end">{n}</text>'
        f'<text x="{PAD_L}" y="{H - 22}" class="tick">1</text>'
    )
    return _svg(chart, title, body, width=width)


def bar_chart(chart: str, title: str, items: Sequence[tuple[str, float]], *, unit: str = "") -> str:
    """Horizontal bars, one per (label, value), in the given order."""
    if not items:
        return _empty(chart, title)
    height = max(H, PAD_T + 22 * len(items) + 10)
    label_w = 150
    v_max = max(v for _, v in items) or 1.0
    plot_w = W - label_w - 70
    body = []
    for i, (label, value) in enumerate(items):
        y = PAD_T + i * 22
        width = max(1.0, plot_w * value / v_max)
        color = COLORS.get(label, COLORS["bar"])
        body.append(
            f'<text x="{label_w - 6}" y="{y + 13}" class="tick" text-anchor="end">'
            f"{_e(label)}</text>"
            f'<rect class="mark" x="{label_w}" y="{y}" width="{width:.1f}" height="16" rx="2" '
            f'fill="{color}"><title>{_e(label)}: {_e(_fmt(value, 0))}{_e(unit)}</title></rect>'
            f'<text x="{label_w + width + 6:.1f}" y="{y + 13}" class="tick">'
            f"{_e(_fmt(value, 0))}{_e(unit)}</text>"
        )
    return _svg(chart, title, body, height=height)


def histogram(
    chart: str, title: str, values: Sequence[float], *, x_label: str, bins: int = 20
) -> str:
    """Counts of `values` in `bins` equal bins from 0 to (about) the 99th percentile."""
    if not values:
        return _empty(chart, title)
    ordered = sorted(values)
    top = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
    top = _nice_max(top * 1.05 if top > 0 else 1.0)
    width = top / bins
    counts = [0] * bins
    for v in values:
        counts[min(bins - 1, max(0, int(v / width)))] += 1
    y_max = _nice_max(max(counts))
    plot_w, plot_h = W - PAD_L - PAD_R, H - PAD_T - PAD_B
    body = _axes(y_max, "turns", x_label)
    bar_w = plot_w / bins
    for i, count in enumerate(counts):
        if count == 0:
            continue
        h = plot_h * count / y_max
        lo, hi = i * width, (i + 1) * width
        label = f"{_fmt(lo, 0)}–{_fmt(hi, 0)}" + ("+" if i == bins - 1 else "")
        body.append(
            f'<rect class="mark" x="{PAD_L + i * bar_w + 1:.1f}" y="{PAD_T + plot_h - h:.1f}" '
            f'width="{bar_w - 2:.1f}" height="{h:.1f}" fill="{COLORS["bar"]}">'
            f"<title>{_e(label)} ms: {count}</title></rect>"
        )
    for i in (0, bins // 2, bins):
        body.append(
            f'<text x="{PAD_L + i * bar_w:.1f}" y="{H - 22}" class="tick" text-anchor="middle">'
            f"{_e(_fmt(i * width, 0))}</text>"
        )
    return _svg(chart, title, body)


@dataclass(frozen=True)
class Chart:
    key: str
    title: str
    note: str
    svg: str


def charts(events: Sequence[TelemetryEvent]) -> list[Chart]:
    """The five charts of the report."""
    units = Counter(e.tokens_saved_unit for e in events)
    unit = units.most_common(1)[0][0] if units else "tokens:o200k_base"
    running, cumulative = 0, []
    for e in events:
        if e.tokens_saved_unit == unit:
            running += e.tokens_saved
        cumulative.append(float(running))
    allowed: Counter[str] = Counter()
    for e in events:
        allowed.update(e.tools_allow or ())
    sources = Counter(e.source for e in events)
    unit_label = "tokens (o200k_base)" if unit.startswith("tokens") else "bytes"
    return [
        Chart(
            "surface",
            "Surface size over time",
            "Tools offered by the host vs tools the primary model got, per turn.",
            line_chart(
                "surface",
                "Surface size over time",
                [
                    ("offered", COLORS["before"], [float(e.surface_before.tools) for e in events]),
                    ("allowed", COLORS["after"], [float(e.surface_after.tools) for e in events]),
                ],
                y_label="tools",
                width=2 * W,
            ),
        ),
        Chart(
            "latency",
            "Resolution latency",
            "Wall time of each resolution (ms), all sources.",
            histogram(
                "latency", "Resolution latency", [e.latency_ms for e in events], x_label="ms"
            ),
        ),
        Chart(
            "sources",
            "Source mix",
            "Who decided the surface, in turns.",
            bar_chart("sources", "Source mix", sources.most_common()),
        ),
        Chart(
            "tools",
            "Most-allowed tools",
            "Turns in which each tool was in toolsAllow (top 15).",
            bar_chart("tools", "Most-allowed tools", allowed.most_common(15)),
        ),
        Chart(
            "saved",
            "Tokens saved",
            f"Cumulative {unit_label} removed from the primary model's requests.",
            line_chart(
                "saved",
                "Tokens saved",
                [("cumulative saved", COLORS["saved"], cumulative)],
                y_label=unit_label,
            ),
        ),
    ]


def _summary_rows(s: Summary) -> list[tuple[str, str]]:
    rows = [
        ("Turns", f"{s.turns:,} ({s.sessions:,} sessions)"),
        ("Period", f"{s.first_ts or '–'} → {s.last_ts or '–'}"),
        (
            "Mean surface (tools)",
            f"{_fmt(s.mean_tools_before)} → {_fmt(s.mean_tools_after)} "
            f"({_fmt((s.tools_reduction or 0) * 100, 1, '%')} fewer)",
        ),
        (
            "Mean surface (bytes)",
            f"{_fmt(s.mean_bytes_before, 0)} → {_fmt(s.mean_bytes_after, 0)} "
            f"({_fmt((s.bytes_reduction or 0) * 100, 1, '%')} fewer)",
        ),
    ]
    if s.mean_tokens_before is not None:
        rows.append(
            (
                "Mean surface (o200k tokens)",
                f"{_fmt(s.mean_tokens_before, 0)} → {_fmt(s.mean_tokens_after, 0)} "
                f"({_fmt((s.tokens_reduction or 0) * 100, 1, '%')} fewer)",
            )
        )
    for unit, total in s.saved_by_unit.items():
        rows.append(
            (f"Saved ({unit})", f"{total:,} total, {_fmt(total / max(1, s.turns), 0)}/turn")
        )
    rows.append(
        ("Latency p50 / p95 (in-hook)", f"{_fmt(s.latency_p50)} / {_fmt(s.latency_p95)} ms")
    )
    if s.warm_turns:
        rows.append(
            (
                "… warm (index built)",
                f"{_fmt(s.latency_warm_p50)} / {_fmt(s.latency_warm_p95)} ms, "
                f"{s.warm_turns:,} turns",
            )
        )
    if s.cold_turns:
        rows.append(
            (
                "… cold (built the index first)",
                f"{_fmt(s.latency_cold_p50)} / {_fmt(s.latency_cold_p95)} ms, "
                f"{s.cold_turns:,} turns",
            )
        )
    rows += [
        ("LLM latency p50 / p95", f"{_fmt(s.llm_latency_p50)} / {_fmt(s.llm_latency_p95)} ms"),
        ("Confidence mean / median", f"{_fmt(s.confidence_mean, 2)} / {_fmt(s.confidence_p50, 2)}"),
        ("Fallbacks", ", ".join(f"{k} {v}" for k, v in s.fallbacks.items()) or "none"),
    ]
    for m in s.models:
        cost = f", ≈ ${m.cost_usd:.4f} (estimate)" if m.cost_usd is not None else ""
        rows.append(
            (
                f"Classifier {m.model}",
                f"{m.requests:,} requests, {m.prompt_tokens:,} in ({m.cached_tokens:,} cached), "
                f"{m.completion_tokens:,} out{cost}",
            )
        )
    if s.skipped_lines or s.lost_lines:
        rows.append(("Data quality", f"{s.skipped_lines} unreadable lines, {s.lost_lines} lost"))
    return rows


_CSS = """
:root{color-scheme:light;font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}
body{margin:0;background:#f5f7fa;color:#1f2933}
header{padding:24px 32px 8px}h1{font-size:22px;margin:0 0 4px}
.sub{color:#52606d;font-size:13px}
main{display:grid;grid-template-columns:repeat(2,minmax(0,1fr));gap:16px;padding:16px 32px}
section{background:#fff;border:1px solid #e4e7eb;border-radius:8px;padding:14px 16px}
section.wide{grid-column:1/-1}
h2{font-size:15px;margin:0 0 2px}.note{color:#616e7c;font-size:12px;margin:0 0 8px}
table{border-collapse:collapse;width:100%;font-size:13px}
td{padding:5px 8px;border-bottom:1px solid #f0f2f5;vertical-align:top}
td:first-child{color:#52606d;white-space:nowrap;width:30%}
svg{width:100%;height:auto;display:block}
svg .grid{stroke:#e4e7eb;stroke-width:1}svg .tick{font-size:11px;fill:#52606d}
svg .axis{font-size:11px;fill:#7b8794}svg .legend{font-size:11px;fill:#323f4b}
footer{padding:4px 32px 24px;color:#7b8794;font-size:12px}
#render-error{color:#b91c1c;font-weight:600}
"""

_SCRIPT = """
(function(){
  var root=document.documentElement;
  function fail(msg){root.setAttribute('data-rendered','error');
    var e=document.getElementById('render-error');if(e){e.textContent='Chart check failed: '+msg;}}
  window.addEventListener('error',function(ev){fail(ev.message||'script error');});
  try{
    var charts=document.querySelectorAll('svg[data-chart]'),bad=[];
    for(var i=0;i<charts.length;i++){var c=charts[i];
      var box=c.getBoundingClientRect();
      var ok=c.getAttribute('data-empty')==='true'||c.querySelectorAll('.mark').length>0;
      if(!ok||box.width<50||box.height<50){bad.push(c.getAttribute('data-chart'));}}
    root.setAttribute('data-charts',String(charts.length));
    if(charts.length!==EXPECTED){fail('expected '+EXPECTED+' charts, found '+charts.length);}
    else if(bad.length){fail('empty or collapsed: '+bad.join(', '));}
    else{root.setAttribute('data-rendered','ok');
      document.getElementById('render-status').textContent='All charts rendered.';}
  }catch(err){fail(String(err));}
})();
"""


def render_html(events: Sequence[TelemetryEvent], summary: Summary, *, source: str) -> str:
    """The whole report page."""
    chart_list = charts(events)
    rows = "".join(f"<tr><td>{_e(k)}</td><td>{_e(v)}</td></tr>" for k, v in _summary_rows(summary))
    sections = "".join(
        f'<section class="{"wide" if c.key == "surface" else ""}">'
        f'<h2>{_e(c.title)}</h2><p class="note">{_e(c.note)}</p>{c.svg}</section>'
        for c in chart_list
    )
    script = _SCRIPT.replace("EXPECTED", str(len(chart_list)))
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en" data-rendered="pending"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width,initial-scale=1">'
        "<title>Tool resolver telemetry</title>"
        f"<style>{_CSS}</style></head><body>"
        "<header><h1>Tool resolver telemetry</h1>"
        f'<div class="sub">{_e(source)} · {summary.turns:,} turns</div></header>'
        f'<main><section class="wide"><h2>Summary</h2>'
        '<p class="note">Costs are estimates from a built-in price table (see docs/telemetry.md).'
        f"</p><table>{rows}</table></section>{sections}</main>"
        '<footer><span id="render-status">Checking charts…</span> '
        '<span id="render-error"></span></footer>'
        f"<script>{script}</script></body></html>\n"
    )
