"""Algorithm configuration of a real solver: OR-Tools CP-SAT on generated instance families.

The problem the Tobit paper is about (Eggensperger et al., "Model-based Optimization"): minimise a
solver's runtime over a distribution of instances with a cutoff per run. Here the solver is
Google OR-Tools' CP-SAT (``ortools``, PyPI wheels), run with one worker so that it is
deterministic, with 23 of its parameters to configure (:func:`configspace`: linearisation level
and the LP/cut parameters active under it, search branching, presolve, probing, symmetry, SAT
restarts, polarity, clause clean-up, core-based optimisation, ...).

**Runtime** is CP-SAT's *deterministic time* (``CpSolverResponse.deterministic_time``, a count of
the solver's work in roughly second-sized units) and a run's cutoff is its
``max_deterministic_time``: the same configuration on the same instance with the same cutoff
gives the same result on any machine under any load. A run that proves optimality (or
infeasibility) within its cutoff is solved; any other run is a TIMEOUT at its cutoff. Runtimes
are floored at :data:`RESOLUTION` (instances presolve can finish in "0" deterministic time).

**Instance families** (:data:`FAMILIES`), each a list of generated instances of graded hardness
(sizes rise along the list) with instance features computed from the instance data alone:

* ``jobshop`` -- job-shop scheduling: ``n`` jobs, each a random order of the ``m`` machines with
  integer durations in [1, 50]; minimise the makespan (interval variables, no-overlap).
* ``facility`` -- capacitated facility location: ``f`` facilities, ``c`` customers in the unit
  square, costs from distances, integer demands and capacities, fixed opening costs; minimise
  opening + assignment cost (a MIP in CP-SAT's linear constraints).

:meth:`ACProblem.split` gives the training and test instances (alternate instances along the
hardness order: both halves span the same sizes). The score of a configuration is PAR10 over a
set of instances: the mean runtime with every TIMEOUT at ``kappa_max`` counted as ``10 *
kappa_max`` (:func:`par10`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import numpy as np

__all__ = [
    "ACProblem",
    "FAMILIES",
    "Instance",
    "RESOLUTION",
    "RunResult",
    "configspace",
    "par10",
]

#: smallest runtime reported (deterministic seconds): presolve alone can take "0"
RESOLUTION = 1e-3


@dataclass(frozen=True)
class Instance:
    """One generated instance: family, size parameters and generator seed."""

    family: str
    size: tuple[int, ...]
    seed: int

    @property
    def name(self) -> str:
        return f"{self.family}-{'x'.join(map(str, self.size))}-s{self.seed}"


@dataclass(frozen=True)
class RunResult:
    """``runtime``: deterministic seconds (the cutoff if not solved); ``solved``: optimality or
    infeasibility proven within the cutoff; ``status``: CP-SAT's status name."""

    runtime: float
    solved: bool
    status: str


# ----------------------------------------------------------------------------- job shop
def _jobshop_data(inst: Instance) -> tuple[np.ndarray, np.ndarray]:
    """(machine order, durations), each of shape (n_jobs, n_machines)."""
    n, m = inst.size
    rng = np.random.default_rng(inst.seed)
    order = np.array([rng.permutation(m) for _ in range(n)])
    durations = rng.integers(1, 51, size=(n, m))
    return order, durations


def _jobshop_model(inst: Instance) -> Any:
    from ortools.sat.python import cp_model

    order, durations = _jobshop_data(inst)
    n, m = order.shape
    model = cp_model.CpModel()
    horizon = int(durations.sum())
    on_machine: list[list[Any]] = [[] for _ in range(m)]
    ends: list[Any] = []
    for j in range(n):
        previous: Any = None
        for t in range(m):
            d = int(durations[j, t])
            start = model.new_int_var(0, horizon, f"s{j}_{t}")
            end = model.new_int_var(0, horizon, f"e{j}_{t}")
            on_machine[int(order[j, t])].append(model.new_interval_var(start, d, end, f"i{j}_{t}"))
            if previous is not None:
                model.add(start >= previous)
            previous = end
        ends.append(previous)
    for intervals in on_machine:
        model.add_no_overlap(intervals)
    makespan = model.new_int_var(0, horizon, "makespan")
    model.add_max_equality(makespan, ends)
    model.minimize(makespan)
    return model


def _jobshop_features(inst: Instance) -> list[float]:
    order, durations = _jobshop_data(inst)
    n, m = order.shape
    load = np.zeros(m)
    np.add.at(load, order.ravel(), durations.ravel())
    job_len = durations.sum(axis=1)
    lower = max(load.max(), job_len.max())
    return [
        float(n), float(m), math.log(n * m), n / m,
        float(durations.mean()), float(durations.std() / durations.mean()),
        float(load.max() / job_len.max()), float(load.max() / load.mean()),
        float(durations.sum() / (m * lower)),
    ]


# ----------------------------------------------------------------------------- facility location
def _facility_data(inst: Instance) -> dict[str, np.ndarray]:
    f, c = inst.size
    rng = np.random.default_rng(inst.seed)
    fpos, cpos = rng.random((f, 2)), rng.random((c, 2))
    dist = (np.linalg.norm(fpos[:, None] - cpos[None], axis=2) * 100).astype(int) + 1
    demand = rng.integers(5, 36, size=c)
    raw = rng.integers(10, 161, size=f).astype(float)
    cap = (raw * demand.sum() * 3.0 / raw.sum()).astype(int) + 1  # capacity 3x the demand
    fixed = rng.integers(100, 401, size=f)
    return {"dist": dist, "demand": demand, "cap": cap, "fixed": fixed}


def _facility_model(inst: Instance) -> Any:
    from ortools.sat.python import cp_model

    d = _facility_data(inst)
    f, c = inst.size
    model = cp_model.CpModel()
    opened = [model.new_bool_var(f"o{i}") for i in range(f)]
    assign = [[model.new_bool_var(f"a{i}_{j}") for j in range(c)] for i in range(f)]
    for j in range(c):
        model.add_exactly_one(assign[i][j] for i in range(f))
    for i in range(f):
        model.add(
            sum(int(d["demand"][j]) * assign[i][j] for j in range(c)) <= int(d["cap"][i]) * opened[i]
        )
    model.minimize(
        sum(int(d["fixed"][i]) * opened[i] for i in range(f))
        + sum(int(d["dist"][i, j]) * assign[i][j] for i in range(f) for j in range(c))
    )
    return model


def _facility_features(inst: Instance) -> list[float]:
    d = _facility_data(inst)
    f, c = inst.size
    dist, demand, cap, fixed = d["dist"], d["demand"], d["cap"], d["fixed"]
    return [
        float(f), float(c), math.log(f * c), c / f,
        float(cap.sum() / demand.sum()), float(demand.sum() / cap.max()),
        float(fixed.mean() / (dist.min(axis=0).mean() * 1.0)),
        float(demand.std() / demand.mean()), float(cap.std() / cap.mean()),
    ]


@dataclass(frozen=True)
class _Family:
    sizes: tuple[tuple[int, ...], ...]
    model: Any
    features: Any
    feature_names: tuple[str, ...]
    description: str


#: instance families: sizes in hardness order (an instance list cycles through them)
FAMILIES: dict[str, _Family] = {
    "jobshop": _Family(
        sizes=((10, 6), (12, 6), (10, 8), (14, 6), (12, 8), (14, 8), (15, 8), (15, 10)),
        model=_jobshop_model,
        features=_jobshop_features,
        feature_names=(
            "jobs", "machines", "log_ops", "jobs_per_machine", "mean_duration", "cv_duration",
            "machine_vs_job_bound", "machine_load_imbalance", "density_at_bound",
        ),
        description="job-shop scheduling, minimise the makespan",
    ),
    "facility": _Family(
        sizes=((8, 30), (10, 30), (10, 40), (12, 40), (12, 50), (14, 50), (15, 60), (16, 70)),
        model=_facility_model,
        features=_facility_features,
        feature_names=(
            "facilities", "customers", "log_pairs", "customers_per_facility", "capacity_ratio",
            "min_open", "fixed_vs_assignment", "cv_demand", "cv_capacity",
        ),
        description="capacitated facility location, minimise opening + assignment cost",
    ),
}


@lru_cache(maxsize=512)
def _built(inst: Instance) -> Any:
    return FAMILIES[inst.family].model(inst)


def solve(inst: Instance, params: Mapping[str, Any], cutoff: float, wall_limit: float = 600.0) -> RunResult:
    """Run CP-SAT (one worker) on ``inst`` with the parameter values ``params`` (names of
    ``SatParameters`` fields; enum values by name) and a deterministic-time cutoff."""
    from ortools.sat import sat_parameters_pb2
    from ortools.sat.python import cp_model

    if not cutoff > 0:
        return RunResult(max(float(cutoff), 0.0), False, "NO_TIME")
    solver = cp_model.CpSolver()
    p = solver.parameters
    fields = sat_parameters_pb2.SatParameters.DESCRIPTOR.fields_by_name
    for name, value in params.items():
        if value is None:
            continue
        fd = fields[name]
        if fd.enum_type is not None and isinstance(value, str):
            value = fd.enum_type.values_by_name[value].number
        setattr(p, name, value)
    p.num_workers = 1
    p.random_seed = 1
    p.max_deterministic_time = float(cutoff)
    p.max_time_in_seconds = float(wall_limit)  # a guard only; never reached at our cutoffs
    status = solver.solve(_built(inst))
    dtime = float(solver.response_proto.deterministic_time)
    proven = status in (cp_model.OPTIMAL, cp_model.INFEASIBLE)
    if proven and dtime <= cutoff:
        return RunResult(max(dtime, RESOLUTION), True, solver.status_name(status))
    return RunResult(float(cutoff), False, solver.status_name(status))


def par10(results: Sequence[RunResult], kappa_max: float) -> float:
    """PAR10: mean runtime with every unsolved run counted as ``10 * kappa_max``."""
    return float(np.mean([r.runtime if r.solved else 10.0 * kappa_max for r in results]))


#: CP-SAT parameters whose effect needs the LP relaxation (active for linearization_level >= 1)
LP_PARAMETERS = (
    "add_cg_cuts", "add_mir_cuts", "add_zero_half_cuts", "add_clique_cuts",
    "max_cut_rounds_at_level_zero", "root_lp_iterations", "exploit_all_lp_solution",
    "add_lp_constraints_lazily",
)


def configspace(seed: int = 0) -> Any:
    """The 23 CP-SAT parameters as a ConfigSpace (defaults = CP-SAT 9.x defaults; the 8 LP
    parameters conditional on ``linearization_level`` in {1, 2})."""
    from ConfigSpace import Categorical, ConfigurationSpace, Float, InCondition, Integer

    def flag(name: str, default: bool) -> Any:
        return Categorical(name, [True, False], default=default)

    cs = ConfigurationSpace(seed=seed)
    lin = Integer("linearization_level", (0, 2), default=1)
    lp = [
        flag("add_cg_cuts", True), flag("add_mir_cuts", True), flag("add_zero_half_cuts", True),
        flag("add_clique_cuts", True),
        Integer("max_cut_rounds_at_level_zero", (1, 5), default=1),
        Integer("root_lp_iterations", (100, 20000), log=True, default=2000),
        flag("exploit_all_lp_solution", True), flag("add_lp_constraints_lazily", True),
    ]
    assert tuple(h.name for h in lp) == LP_PARAMETERS
    other = [
        Categorical(
            "search_branching",
            ["AUTOMATIC_SEARCH", "FIXED_SEARCH", "PORTFOLIO_SEARCH", "LP_SEARCH",
             "PSEUDO_COST_SEARCH", "PORTFOLIO_WITH_QUICK_RESTART_SEARCH"],
            default="AUTOMATIC_SEARCH",
        ),
        Integer("cp_model_probing_level", (0, 3), default=2),
        Integer("symmetry_level", (0, 4), default=2),
        Integer("max_presolve_iterations", (1, 10), default=3),
        flag("cp_model_presolve", True),
        Categorical(
            "preferred_variable_order", ["IN_ORDER", "IN_REVERSE_ORDER", "IN_RANDOM_ORDER"],
            default="IN_ORDER",
        ),
        Categorical(
            "initial_polarity", ["POLARITY_TRUE", "POLARITY_FALSE", "POLARITY_RANDOM"],
            default="POLARITY_FALSE",
        ),
        flag("use_phase_saving", True),
        Integer("restart_period", (10, 1000), log=True, default=50),
        Float("random_polarity_ratio", (0.0, 0.1), default=0.0),
        Float("clause_cleanup_ratio", (0.1, 0.9), default=0.5),
        Categorical("use_objective_lb_search", [False, True], default=False),
        Categorical("optimize_with_core", [False, True], default=False),
        Integer("boolean_encoding_level", (0, 3), default=1),
    ]
    cs.add([lin, *lp, *other])
    for h in lp:
        cs.add(InCondition(h, lin, [1, 2]))
    return cs


def config_params(config: Any) -> dict[str, Any]:
    """A ConfigSpace configuration as CP-SAT parameter values (inactive ones left out; numpy
    scalars as Python values)."""
    out: dict[str, Any] = {}
    for name, value in dict(config).items():
        if isinstance(value, np.generic):
            value = value.item()
        out[name] = value
    return out


#: generator-seed offsets of the instance sets
INSTANCE_SETS = {"main": 0, "dev": 500}


@dataclass
class ACProblem:
    """One algorithm-configuration task: CP-SAT on ``n_instances`` of a family.

    Args:
        family: a key of :data:`FAMILIES`.
        n_instances: instances generated (graded: instance ``k`` has size ``sizes[k * S // n]``,
            generator seed ``1000 * family index + k``); half for training, half for testing.
        kappa_max: the per-run cutoff in deterministic seconds (PAR10 counts 10x it).
        instance_set: ``"main"`` (the reported instances) or ``"dev"`` (other generator seeds,
            ``+500``: instances of the same sizes for developing and sizing the benchmark, so
            that nothing is chosen on the reported test instances).
    """

    family: str
    n_instances: int = 40
    kappa_max: float = 1.0
    instance_set: str = "main"
    instances: list[Instance] = field(init=False)

    def __post_init__(self) -> None:
        if self.family not in FAMILIES:
            raise ValueError(f"family must be one of {sorted(FAMILIES)}, got {self.family!r}")
        if isinstance(self.n_instances, bool) or not isinstance(self.n_instances, int) or self.n_instances < 2:
            raise ValueError(f"n_instances must be an int >= 2, got {self.n_instances!r}")
        if not (isinstance(self.kappa_max, (int, float)) and math.isfinite(self.kappa_max) and self.kappa_max > 0):
            raise ValueError(f"kappa_max must be a finite number > 0, got {self.kappa_max!r}")
        if self.instance_set not in INSTANCE_SETS:
            raise ValueError(f"instance_set must be one of {sorted(INSTANCE_SETS)}, got {self.instance_set!r}")
        fam = FAMILIES[self.family]
        base = 1000 * sorted(FAMILIES).index(self.family) + INSTANCE_SETS[self.instance_set]
        n_sizes = len(fam.sizes)
        self.instances = [
            Instance(self.family, fam.sizes[k * n_sizes // self.n_instances], base + k)
            for k in range(self.n_instances)
        ]

    def split(self) -> tuple[list[Instance], list[Instance]]:
        """(training, test): even and odd positions along the hardness order."""
        return self.instances[0::2], self.instances[1::2]

    def features(self, instances: Sequence[Instance]) -> dict[str, list[float]]:
        """Instance features by instance name (SMAC's ``instance_features``)."""
        fam = FAMILIES[self.family]
        return {inst.name: fam.features(inst) for inst in instances}

    def by_name(self, name: str) -> Instance:
        for inst in self.instances:
            if inst.name == name:
                return inst
        raise KeyError(f"no instance {name!r} in {self.family}")

    def run(self, config: Any, instance: Instance, cutoff: float | None = None) -> RunResult:
        """One run with the cutoff ``min(cutoff, kappa_max)``."""
        cap = self.kappa_max if cutoff is None else min(float(cutoff), self.kappa_max)
        return solve(instance, config_params(config), cap)

    def evaluate(self, config: Any, instances: Sequence[Instance]) -> dict[str, Any]:
        """PAR10 and the runs of ``config`` on ``instances`` at ``kappa_max``."""
        results = [self.run(config, inst) for inst in instances]
        return {
            "par10": par10(results, self.kappa_max),
            "solved": int(sum(r.solved for r in results)),
            "runtimes": [r.runtime for r in results],
        }
