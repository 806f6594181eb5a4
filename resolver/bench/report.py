"""Readable renderings of results: markdown files and `rich` console tables."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

Row = Sequence[str]


def _rate(metric: dict[str, Any]) -> str:
    return f"{metric['value']:.3f}"


def _ci(metric: dict[str, Any]) -> str:
    lo, hi = metric["ci95"]
    return f"[{lo:.3f}, {hi:.3f}]"


def md_table(header: Row, rows: Sequence[Row]) -> str:
    """A GitHub-flavoured markdown table."""
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def summary_rows(arms: Sequence[tuple[str, dict[str, Any]]]) -> tuple[Row, list[Row]]:
    """Metric rows with one value column and one interval column per arm."""
    header: list[str] = ["metric"]
    for label, _ in arms:
        header += [label, "95% CI"]
    rows: list[Row] = []
    for key in ("must_include_accuracy", "avg_recall", "precision", "exact_match"):
        row = [key]
        for _, m in arms:
            row += [_rate(m[key]), _ci(m[key])]
        rows.append(row)
    for key, fmt in (
        ("mean_surface", "{:.2f}"),
        ("mean_candidates", "{:.1f}"),
        ("surface_reduction", "{:.3f}"),
        ("p50_ms", "{:.2f}"),
        ("p95_ms", "{:.2f}"),
        ("errors", "{}"),
        ("cases", "{}"),
    ):
        row = [key]
        for _, m in arms:
            row += [fmt.format(m[key]), ""]
        rows.append(row)
    return header, rows


def category_rows(arms: Sequence[tuple[str, dict[str, dict[str, Any]]]]) -> tuple[Row, list[Row]]:
    """Per-category accuracy (with interval), recall and surface for each arm."""
    header: list[str] = ["category", "n"]
    for label, _ in arms:
        header += [f"{label} accuracy", "95% CI", "recall", "surface"]
    rows: list[Row] = []
    for category in arms[0][1]:
        first = arms[0][1][category]
        row = [category, str(first["cases"])]
        for _, cats in arms:
            m = cats[category]
            row += [
                _rate(m["must_include_accuracy"]),
                _ci(m["must_include_accuracy"]),
                _rate(m["avg_recall"]),
                f"{m['mean_surface']:.2f}",
            ]
        rows.append(row)
    return header, rows


def arms_of(doc: dict[str, Any]) -> list[tuple[str, dict[str, Any], dict[str, Any]]]:
    """(label, metrics, by_category) for the resolver and each baseline in a result."""
    arms = [("resolver", doc["metrics"], doc["by_category"])]
    for name, base in doc.get("baselines", {}).items():
        arms.append((name, base["metrics"], base["by_category"]))
    return arms


def _classifier(config: dict[str, Any]) -> str:
    """The classifier of a run as the header shows it: which, the LLM's model, and why."""
    text = f"`{config['classifier']}`"
    if config["classifier"] == "llm":
        base = config.get("llmApiBase") or "the default OpenAI endpoint"
        text += f" (`{config.get('llmModel')}` at {base})"
    why = config.get("classifierChosenBy")
    return text + (f", chosen by {why}" if why else "")


def run_markdown(doc: dict[str, Any]) -> str:
    """The markdown summary of a run (and its baselines, side by side)."""
    case = doc["caseFile"]
    config = doc["config"]
    arms = arms_of(doc)
    parts = [
        f"# Benchmark: {case['name']} ({config['classifier']} classifier)",
        "",
        f"Command: `{doc['command']}`",
        "",
        f"- Case file: `{case['path']}` (sha256 `{case['sha256'][:16]}…`), {case['cases']} "
        f"cases, {case['candidates']} candidate tools ({case['surface']}); source: "
        f"{case['source']}; license: {case['license']}",
        f"- Classifier: {_classifier(config)}",
        f"- Catalog fingerprint: `{config['catalogFingerprint']}`; config file: "
        f"{config['configFile'] or '(defaults, no override file)'}",
        f"- Generated {doc['generatedAt']}; replay took {doc['elapsed_s']:.1f} s wall, "
        f"{doc['cpu_s']:.1f} s CPU (1-minute load average {doc['load_average_1m']} on a "
        "shared machine)",
    ]
    for name, base in doc.get("baselines", {}).items():
        k = base["k"]
        parts.append(
            f"- Baseline `{name}`: {base['method']}; k per case {k['k_min']}–{k['k_max']} "
            f"(mean {k['k_mean']}), matched to the resolver's mean surface "
            f"{k['target_mean_surface']} (core tools in every surface: {k['core_in_surface']})"
        )
    header, rows = summary_rows([(label, m) for label, m, _ in arms])
    parts += ["", "## Summary", "", md_table(header, rows)]
    header, rows = category_rows([(label, c) for label, _, c in arms])
    parts += ["", "## By category", "", md_table(header, rows)]
    failures = doc.get("failures", [])
    if failures:
        shown = failures[:25]
        parts += [
            "",
            f"## Misses ({len(failures)}; first {len(shown)})",
            "",
            md_table(
                ["case", "category", "missing", "surface"],
                [
                    [f["id"], f["category"], ", ".join(f["missing"]), str(f["surface"])]
                    for f in shown
                ],
            ),
        ]
    return "\n".join(parts) + "\n"


ABBREVIATIONS = {"accuracy": "acc.", "surface": "surf."}
"""Header words shortened when a table is too wide for the terminal."""


def _column_widths(header: Row, rows: Sequence[Row]) -> list[int]:
    """Each column's width with no cell wrapped (a header wraps between words only)."""
    return [
        max([max(len(word) for word in header[i].split() or [""]), *(len(r[i]) for r in rows)])
        for i in range(len(header))
    ]


def _natural_width(header: Row, rows: Sequence[Row]) -> int:
    """The table's width at `_column_widths` (rich's borders and one-space padding added)."""
    return sum(_column_widths(header, rows)) + 3 * len(header) + 1


def fit_columns(
    header: Row, rows: Sequence[Row], width: int
) -> tuple[list[str], list[list[str]], bool]:
    """The columns that fit `width` characters: all; else without the "95% CI" columns (the
    markdown and JSON keep them); else with shortened header words too. True when columns
    were left out."""
    if _natural_width(header, rows) <= width:
        return list(header), [list(r) for r in rows], False
    keep = [i for i, column in enumerate(header) if column != "95% CI"]
    dropped = len(keep) < len(header)
    header, body = [header[i] for i in keep], [[r[i] for i in keep] for r in rows]
    if _natural_width(header, body) > width:
        header = [
            " ".join(ABBREVIATIONS.get(word, word) for word in column.split()) for column in header
        ]
    return header, body, dropped


def print_tables(doc: dict[str, Any], console: Any = None) -> None:
    """Print the summary and per-category tables to the terminal with `rich`. Nothing is cut
    with "…": at a narrow width the interval columns are left out, then cells wrap."""
    from rich.console import Console
    from rich.table import Table

    console = console or Console(stderr=True)
    arms = arms_of(doc)
    dropped = False
    for title, (full_header, full_rows) in (
        ("Summary", summary_rows([(label, m) for label, m, _ in arms])),
        ("By category", category_rows([(label, c) for label, _, c in arms])),
    ):
        header, rows, cut = fit_columns(full_header, full_rows, console.width)
        dropped = dropped or cut
        table = Table(title=f"{title}: {doc['caseFile']['name']}")
        fits = _natural_width(header, rows) <= console.width
        widths = _column_widths(header, rows)
        for i, column in enumerate(header):
            table.add_column(
                column,
                justify="left" if i == 0 else "right",
                overflow="fold",
                width=widths[i] if fits else None,  # else rich shares what there is
            )
        for row in rows:
            table.add_row(*row)
        console.print(table)
    if dropped:
        console.print(
            f"(95% CI columns left out at {console.width} columns; they are in --md-out and "
            "--json-out)"
        )


def gate_markdown(doc: dict[str, Any]) -> str:
    """The markdown verdict of a gate run."""
    gate = doc["gate"]
    rows = []
    for metric, entry in gate["differences"].items():
        lo, hi = entry["ci95"]
        bound = (
            f"-{entry['margin']}"
            if "margin" in entry
            else ("< 0 (claimed)" if entry.get("claimed_reduction") else "(not claimed)")
        )
        rows.append(
            [
                metric,
                f"{entry['difference']:+.4f}",
                f"[{lo:+.4f}, {hi:+.4f}]",
                bound,
                "pass" if entry["pass"] else "FAIL",
            ]
        )
    parts = [
        f"# Gate: {'PASS' if gate['pass'] else 'FAIL'}",
        "",
        f"Command: `{doc['command']}`",
        "",
        f"- Cases: `{doc['caseFile']['path']}` (sha256 `{doc['caseFile']['sha256'][:16]}…`)",
        f"- Margins: `{doc['margins']['path']}` (sha256 `{doc['margins']['sha256']}`)",
        f"- Control: {doc['control']['configFile']}; treatment: {doc['treatment']['configFile']}",
        f"- Task-cluster bootstrap: {gate['clusters']} clusters, {gate['bootstrap']['reps']} "
        f"replicates, seed {gate['bootstrap']['seed']}",
        "",
        md_table(["difference (treatment - control)", "estimate", "95% CI", "bound", ""], rows),
        "",
        *[f"- {check}" for check in gate["checks"]],
    ]
    if "warning" in gate:
        parts += ["", f"Warning: {gate['warning']}"]
    header, summary = summary_rows(
        [("control", doc["control"]["metrics"]), ("treatment", doc["treatment"]["metrics"])]
    )
    parts += ["", "## Arms", "", md_table(header, summary)]
    return "\n".join(parts) + "\n"
