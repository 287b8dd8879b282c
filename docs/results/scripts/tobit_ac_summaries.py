"""Issue 31: how the configurators of ``uvp-bench tobit-ac`` spent their budget, from the run
summaries alone (no solver run).

Input: the JSON that ``uvp-bench tobit-ac ... --json FILE`` writes (one summary per configurator
run). Per family and method, medians over the seeds of

* ``configs``: configurations SMAC evaluated; ``runs/config``: target runs per configuration
  (racing takes a configuration to more instances only while it is not beaten);
* ``capped``: share of the target runs stopped at their cutoff (adaptive capping or kappa_max);
* ``det-s/config``: deterministic seconds of solver time per configuration;
* ``inc. at bound``: share of the final incumbent's active numeric parameters at the lower or
  upper bound of their range (within 0.5 % of the range for floats);
* ``inc. = default``: runs whose final incumbent is CP-SAT's default configuration.

Usage::

    python docs/results/scripts/tobit_ac_summaries.py docs/results/smac_tobit_ac_runs.json
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from typing import Any

import numpy as np
from ConfigSpace.hyperparameters import NumericalHyperparameter

from uvp_plugins.bench.methods.tobit_ac import AC_METHODS
from uvp_plugins.bench.problems.cpsat_ac import config_params, configspace


def at_bound(incumbent: dict[str, Any]) -> float:
    """Share of the incumbent's active numeric parameters at a bound of their range."""
    cs = configspace(0)
    hits = []
    for name, value in incumbent.items():
        hp = cs[name]
        if isinstance(hp, NumericalHyperparameter):
            tol = 0.005 * (hp.upper - hp.lower) if hp.__class__.__name__.endswith("Float") else 0.0
            hits.append(value <= hp.lower + tol or value >= hp.upper - tol)
    return float(np.mean(hits)) if hits else float("nan")


def table(rows: list[dict[str, Any]]) -> str:
    default = config_params(configspace(0).get_default_configuration())
    by: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        if r["method"] != "ac-default":
            by[(r["family"], r["method"])].append(r)
    lines = [
        "| family | method | runs | configs | runs/config | capped | det-s/config | inc. at bound | inc. = default |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for family in sorted({f for f, _ in by}, reverse=True):
        for method in [m for m in AC_METHODS if (family, m) in by]:
            rs = by[(family, method)]

            def med(values: list[float]) -> float:
                return float(np.median(values))

            lines.append(
                f"| {family} | {method} | {len(rs)} | {med([r['configs'] for r in rs]):.0f} | "
                f"{med([r['target_runs'] / r['configs'] for r in rs]):.2f} | "
                f"{med([r['capped_runs'] / r['target_runs'] for r in rs]):.2f} | "
                f"{med([r['spent'] / r['configs'] for r in rs]):.3f} | "
                f"{med([at_bound(r['incumbent']) for r in rs]):.2f} | "
                f"{sum(r['incumbent'] == default for r in rs)}/{len(rs)} |"
            )
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("runs", help="the --json file of 'uvp-bench tobit-ac'")
    args = ap.parse_args()
    with open(args.runs) as fh:
        print(table(json.load(fh)))


if __name__ == "__main__":
    main()
