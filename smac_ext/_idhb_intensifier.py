"""SMAC intensifier: Iterative-Deepening Hyperband, continuable with a larger ``max_budget``.

Brandt, Wever, Iliadis, Bengs & Hüllermeier (*Iterative Deepening Hyperband*, Alg. 1-5) make a
finished Hyperband run continuable with a larger maximum budget ``eta * R``: every bracket keeps
its minimum budget and gains one rung, a new bracket at ``eta R`` runs last, and earlier results
are reused -- the variant decides what re-enters (``"efficient"``: eID-HB, ``"preserving"``:
pID-HB, ``"discarding"``: dID-HB). The algorithm is the framework-free core object
:class:`uvp_plugins.hyperband.IterativeDeepeningHyperband`; this module only translates SMAC's
events into it.

How it plugs into SMAC. :class:`IterativeDeepeningHyperbandIntensifier` is given to the facade a
SMAC user already calls for multi-fidelity optimisation, in place of SMAC's ``Hyperband``::

    scenario = Scenario(cs, name="mlp", deterministic=True, min_budget=1, max_budget=9,
                        n_trials=500)
    smac = MultiFidelityFacade(scenario, train,
                               intensifier=IterativeDeepeningHyperbandIntensifier(scenario))
    incumbent = smac.optimize()          # one Hyperband iteration at max_budget=9, then it stops

    # later, same script with max_budget=27: the run continues in the same output directory
    scenario = Scenario(cs, name="mlp", deterministic=True, min_budget=1, max_budget=27,
                        n_trials=500)
    ...

* **Brackets as SMAC's Hyperband.** Budgets are real numbers as in SMAC: with
  ``s_max = floor(log_eta(max_budget / min_budget))`` the rungs are at ``max_budget * eta**-k``
  and bracket ``s`` starts ``ceil((s_max + 1) eta**s / (s + 1))`` configurations, keeping the
  best ``floor(n / eta)`` at each rung -- the numbers of SMAC's ``Hyperband``
  (:mod:`uvp_plugins.hyperband.real_budgets` maps them to the core's integer budgets). Brackets
  run in SMAC's order (most configurations first); new configurations come from the facade's
  config selector (the MultiFidelityFacade's random forest, or random sampling with the
  HyperbandFacade), as in SMAC's ``Hyperband``; trials get the scenario's seed and
  ``budget=`` the rung's budget. Unlike SMAC's ``Hyperband``, which starts bracket after bracket
  until ``n_trials`` or the walltime runs out, the intensifier runs **one** Hyperband iteration
  at ``max_budget`` (all brackets once, as in Li et al. and Brandt et al.) and then stops
  (``optimize`` returns, ``ask`` raises ``StopIteration``): ``n_trials`` is only a cap. Give it
  at least :func:`hyperband_trials` for every ``max_budget`` the run will be continued to.
* **Continuing with a larger max_budget** (SMAC3#898: SMAC's own Hyperband cannot). SMAC treats
  any change of the ``Scenario`` as another run: without a ``name`` the new run gets a new
  hash-named output directory, with a fixed ``name`` SMAC asks on stdin whether to overwrite or
  rename the old run (``EOFError`` without a terminal). So continue the way a SMAC user
  continues a run -- re-run the same script on the same output directory (same ``name``,
  ``output_directory`` and ``seed``) -- with ``max_budget`` multiplied by ``eta**k``. When the
  intensifier is constructed it finds the earlier run in ``scenario.output_directory``; if it is
  an ID-HB run that differs from the new scenario only in ``max_budget`` (``= old * eta**k``) and
  possibly ``n_trials``, ``walltime_limit``, ``cputime_limit``, it records the new values in that
  run's ``scenario.json`` (and clears ``finished`` in ``optimization.json``), so SMAC's own
  continuation check passes and SMAC loads the run history and ``intensifier.json``; the
  intensifier then deepens ``k`` times (Alg. 1/2) and continues. A changed ``min_budget``, a
  ``max_budget`` that is not ``old * eta**k`` or a smaller one is a ``ValueError`` at
  construction. Any other change is left to SMAC (its prompt). ``overwrite=True`` starts afresh
  as usual; ``continue_runs=False`` switches the in-place continuation off. Keep ``n_trials``
  unchanged when you can: the facade's initial design is sized from it, and a different size is
  a different run for SMAC (it then asks again).
* **Results.** A told trial of a scheduled job with status ``SUCCESS`` and a finite cost is the
  job's result (``tell``); any other status or a non-finite cost fails the job (the
  configuration leaves its bracket, the rung completes without it; core ``fail``). Results may
  arrive in any order. A trial the user tells without asking it is recorded by SMAC (run
  history, incumbent) but is not part of the brackets. Incumbents are SMAC's, chosen by
  ``incumbent_selection`` as in SMAC's ``SuccessiveHalving`` (default: the best at the highest
  budget observed so far).
* **Parallel workers** (``n_workers`` or ``dask_client=``): when no bracket has work to hand out
  until running trials finish (Successive Halving needs a complete rung to promote), the
  intensifier's callback waits for the next result of SMAC's runner before SMAC asks (SMAC's
  ``Hyperband`` would open new brackets instead). With ``ask``/``tell`` and no runner, asking in
  that situation raises ``RuntimeError`` (tell the pending results first).
* **Restarts.** The core's JSON state (configurations, brackets, cached results, pending jobs,
  cost ledger) is in ``intensifier.json`` after every ``tell``, replaced atomically (a kill never
  leaves half a file). Restarting on the same output
  directory continues exactly; trials that were running when the previous process stopped
  (``RUNNING`` in the restored run history) are submitted again first, and results the run
  history holds for jobs the saved state still had pending are applied. A trial asked after the
  last saved state (the driver killed between SMAC's writes of ``runhistory.json`` and
  ``intensifier.json``) is submitted again too, and its configuration fills the next new slot
  (the one it was drawn for), so it is not evaluated twice.

Not supported (``ValueError`` at construction): instances (budgets only), multi-objective
scenarios, scenarios without ``min_budget``/``max_budget``.
"""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, ClassVar

from ConfigSpace import Configuration, ConfigurationSpace
from smac.callback.callback import Callback
from smac.intensifier.successive_halving import SuccessiveHalving
from smac.runhistory.dataclasses import TrialInfo, TrialKey, TrialValue
from smac.runhistory.enumerations import StatusType
from smac.scenario import Scenario

from smac_ext._atomic import AtomicSaveMixin, repair_output_directory, write_json_atomic
from smac_ext._cash_space import plain_config
from smac_ext._scenario import check_intensifier_scenario
from uvp_plugins.contract import StateFormat
from uvp_plugins.hyperband import VARIANTS, HyperbandSchedule, IterativeDeepeningHyperband, Job
from uvp_plugins.hyperband.real_budgets import (
    RealBudgetUnits,
    deepening_steps,
    real_budget_units,
)
from uvp_plugins.validation import check_bool, check_choice, check_int, is_finite_number

__all__ = ["IterativeDeepeningHyperbandIntensifier", "hyperband_trials"]

logger = logging.getLogger(__name__)

#: the format of the intensifier's state in ``intensifier.json`` (:mod:`uvp_plugins.contract`);
#: version 1 is the only one written so far
STATE_FORMAT = StateFormat("uvp-smac-idhb", 1)

#: Scenario fields a continued run may change (everything else must equal the stored run's)
_CONTINUABLE_FIELDS = ("max_budget", "n_trials", "walltime_limit", "cputime_limit")


def hyperband_trials(min_budget: float, max_budget: float, eta: int = 3) -> int:
    """Trials of one Hyperband iteration (every bracket once) at ``max_budget``: what a fresh
    run needs, and an upper bound of what continuing to ``max_budget`` adds to an ID-HB run.

    Example:
        >>> hyperband_trials(1, 9, 3), hyperband_trials(1, 27, 3)
        (22, 69)
    """
    units = real_budget_units(min_budget, max_budget, eta)
    return HyperbandSchedule(units.max_budget, units.eta).n_evaluations


class _NoNewConfiguration(Exception):
    """The config selector cannot produce a configuration that is not in the run history."""


def _config_key(config: Mapping[str, Any]) -> tuple[tuple[str, Any], ...]:
    return tuple(sorted(plain_config(config).items()))


def _budget(scenario: Scenario, name: str) -> float:
    value = getattr(scenario, name)
    if value is None:
        raise ValueError(f"scenario.{name} must be set for ID-HB, got None")
    return float(value)


class IterativeDeepeningHyperbandIntensifier(AtomicSaveMixin, SuccessiveHalving):
    """Iterative-Deepening Hyperband in SMAC: Hyperband brackets, continuable with a larger
    ``max_budget`` on the same output directory (see the module docstring).

    Args:
        scenario: the SMAC scenario; needs ``min_budget`` and ``max_budget`` (budgets are real
            numbers, e.g. epochs) and no instances.
        eta: reduction factor (int >= 2), as SMAC's ``Hyperband(eta=3)``.
        variant: what re-enters after a deepening: ``"efficient"`` (eID-HB, default),
            ``"preserving"`` (pID-HB) or ``"discarding"`` (dID-HB); Brandt et al. Sec. 5.
        incumbent_selection: as SMAC's ``SuccessiveHalving``: ``"highest_observed_budget"``
            (default), ``"highest_budget"`` or ``"any_budget"``.
        continue_runs: continue an ID-HB run found in ``scenario.output_directory`` whose
            ``max_budget`` was ``eta**k`` times smaller (module docstring); False leaves the
            output directory alone (SMAC then asks on stdin as for any changed scenario).
        max_incumbents: as in SMAC's intensifiers (kept for the contract).
        seed: the intensifier's seed (default: ``scenario.seed``).

    Example (a run at ``max_budget=9``, then the same run continued at 27; real training in
    ``examples/smac_idhb.py``):
        >>> import tempfile
        >>> from ConfigSpace import ConfigurationSpace
        >>> from smac import HyperbandFacade, Scenario
        >>> cs = ConfigurationSpace({"x": (0.0, 1.0)}, seed=0)
        >>> def train(config, seed: int = 0, budget: float = 1.0) -> float:
        ...     return (config["x"] - 0.3) ** 2 + 1.0 / budget
        >>> out = tempfile.mkdtemp()
        >>> def optimize(max_budget):
        ...     scenario = Scenario(cs, name="doc", output_directory=out, deterministic=True,
        ...                         min_budget=1, max_budget=max_budget, n_trials=100)
        ...     intensifier = IterativeDeepeningHyperbandIntensifier(scenario)
        ...     smac = HyperbandFacade(scenario, train, intensifier=intensifier, logging_level=40)
        ...     smac.optimize()
        ...     return smac, intensifier
        >>> smac, intensifier = optimize(9)
        >>> smac.runhistory.finished, intensifier.idhb.ledger.full_charge
        (22, 78)
        >>> smac, intensifier = optimize(27)      # continued: 47 new trials, nothing repeated
        >>> smac.runhistory.finished, intensifier.idhb.ledger.full_charge
        (69, 423)
    """

    #: the format of its state (``get_state``/``set_state``)
    STATE_FORMAT: ClassVar[StateFormat] = STATE_FORMAT

    def __init__(
        self,
        scenario: Scenario,
        eta: int = 3,
        variant: str = "efficient",
        *,
        incumbent_selection: str = "highest_observed_budget",
        continue_runs: bool = True,
        max_incumbents: int = 10,
        seed: int | None = None,
    ) -> None:
        check_intensifier_scenario(
            "IterativeDeepeningHyperbandIntensifier", scenario, "uses budgets, not instances"
        )
        if scenario.min_budget is None or scenario.max_budget is None:
            raise ValueError("IterativeDeepeningHyperbandIntensifier needs budgets: set "
                             "Scenario(min_budget=..., max_budget=...), got min_budget="
                             f"{scenario.min_budget!r}, max_budget={scenario.max_budget!r}")
        eta = check_int("eta", eta, low=2)
        self._idhb_eta = eta  # reset() runs inside SuccessiveHalving.__init__, before _eta is set
        self._variant = check_choice("variant", variant, VARIANTS)
        check_choice("incumbent_selection", incumbent_selection,
                     ("highest_observed_budget", "highest_budget", "any_budget"))
        self._continue_runs = check_bool("continue_runs", continue_runs)
        self._units: RealBudgetUnits = real_budget_units(
            scenario.min_budget, scenario.max_budget, eta)
        super().__init__(
            scenario,
            eta=eta,
            n_seeds=1,
            instance_seed_order=None,
            max_incumbents=max_incumbents,
            incumbent_selection=incumbent_selection,
            seed=seed,
        )
        if scenario.name is not None and repair_output_directory(scenario.output_directory):
            logger.warning("restored the last complete optimization.json in %s (the previous "
                           "process was killed while SMAC wrote it)", scenario.output_directory)
        if self._continue_runs:
            _accept_larger_max_budget(scenario, eta, self._variant)

    # ------------------------------------------------------------------ contract
    @property
    def meta(self) -> dict[str, Any]:
        """SMAC's ``SuccessiveHalving`` meta plus the variant; no budgets (they live in the
        scenario), so a continued run has the same meta."""
        meta = super().meta
        meta.update({"variant": self._variant})
        return meta

    @property
    def uses_budgets(self) -> bool:  # noqa: D102
        return True

    @property
    def uses_instances(self) -> bool:  # noqa: D102
        return False

    # --------------------------------------------------------------- public facts
    @property
    def idhb(self) -> IterativeDeepeningHyperband:
        """The core ID-HB object (brackets, cached results, cost ledger in core budget units)."""
        return self._core

    @property
    def budget_units(self) -> RealBudgetUnits:
        """The map between SMAC's real budgets and the core's integer budgets."""
        return self._units

    @property
    def variant(self) -> str:
        """``"efficient"``, ``"preserving"`` or ``"discarding"``."""
        return self._variant

    # --------------------------------------------------------------------- state
    def _new_core(self) -> IterativeDeepeningHyperband:
        return IterativeDeepeningHyperband(
            self._units.max_budget, self._idhb_eta, self._variant, min_budget=1, mode="min",
            seed=int(self._seed) if self._seed is not None else 0,
        )

    def reset(self) -> None:
        """Reset SMAC's bookkeeping and the ID-HB state."""
        super().reset()
        self._core = self._new_core()
        self._configs: dict[int, Configuration] = {}
        self._cid_of: dict[tuple[tuple[str, Any], ...], int] = {}
        self._started = False
        self._resubmit: list[TrialInfo] = []
        self._prefetched: Job | None = None
        self._no_new_configs = False
        self._pending_origin: Any = None
        self._adopt: list[dict[str, Any]] = []

    def get_state(self) -> dict[str, Any]:
        """JSON state: the budget map and the core ID-HB state (format :data:`STATE_FORMAT`,
        ``uvp-smac-idhb/1``)."""
        return STATE_FORMAT.stamp({
            "min_budget": _budget(self._scenario, "min_budget"),
            "unit": self._units.unit,
            "idhb": self._core.state_dict(),
        })

    def set_state(self, state: dict[str, Any]) -> None:
        """Restore :meth:`get_state` output (e.g. from ``intensifier.json`` on a restart) and
        deepen it to the scenario's ``max_budget`` (``eta**k`` times the saved one).

        Raises:
            ValueError: the state is not an ID-HB state of this intensifier (format, eta,
                variant), the scenario's ``min_budget`` differs from the run's, or its
                ``max_budget`` is not ``eta**k`` times the run's.
        """
        if not state:
            return
        try:
            state = STATE_FORMAT.read(state)
        except ValueError as exc:
            raise ValueError(f"intensifier.json holds no IterativeDeepeningHyperbandIntensifier "
                             f"run: {exc}") from None
        core = IterativeDeepeningHyperband.from_state_dict(state["idhb"])
        if core.eta != self._eta or core.variant != self._variant:
            raise ValueError(f"the run was made with eta={core.eta}, variant={core.variant!r}; "
                             f"got eta={self._eta}, variant={self._variant!r}")
        if not math.isclose(float(state["min_budget"]), _budget(self._scenario, "min_budget"),
                            rel_tol=1e-9):
            raise ValueError(f"the run was made with min_budget={state['min_budget']!r}; a "
                             f"continued run must keep it, got {self._scenario.min_budget!r}")
        saved_max = core.max_budget * float(state["unit"])
        k = deepening_steps(saved_max, _budget(self._scenario, "max_budget"), self._eta)
        if not math.isclose(float(state["unit"]), self._units.unit, rel_tol=1e-9):
            raise ValueError(f"the run's budget unit is {state['unit']!r} (its max_budget over "
                             f"{self._eta}**s_max); the scenario gives {self._units.unit!r}: "
                             "continue with min_budget unchanged and max_budget * eta**k")
        for _ in range(k):
            core.deepen()
        if k:
            logger.info("ID-HB deepened %d time(s): max_budget %g -> %g", k, saved_max,
                        self._scenario.max_budget)
        self._core = core
        self._configs = {}
        self._cid_of = {_config_key(cfg): cid for cid, cfg in core.configs.items()}

    # ------------------------------------------------------------- translation
    def _configuration(self, cid: int) -> Configuration:
        config = self._configs.get(cid)
        if config is None:
            config = Configuration(self._scenario.configspace, values=self._core.config(cid))
            config.origin = f"ID-HB ({self._variant}) bracket {self._core.bracket_of(cid)}"
            self._configs[cid] = config
        return config

    def _trial(self, job: Job) -> TrialInfo:
        key = self.get_instance_seed_keys_of_interest()[0]
        return TrialInfo(config=self._configuration(job.config_id), instance=key.instance,
                         seed=key.seed, budget=self._units.to_real(job.budget))

    def _sample(self, rng: Any) -> dict[str, Any]:
        """A new configuration from the facade's config selector (as SMAC's Hyperband takes
        it), skipping any already scheduled or in the run history."""
        if self._adopt:  # a configuration drawn before a restart, its trial re-submitted
            self._pending_origin = "drawn before a restart"
            return self._adopt.pop(0)
        rh = self.runhistory
        for _ in range(1000):
            try:
                config = next(self.config_generator)
            except StopIteration:
                raise _NoNewConfiguration from None
            key = _config_key(config)
            if key in self._cid_of or rh.has_config(config):
                continue
            values = plain_config(config)
            self._pending_origin = config.origin
            return values
        raise _NoNewConfiguration

    def _next_job(self) -> Job | None:
        """The core's next job whose trial is not in the run history yet, or None.

        A job whose trial the run history already holds (a trial drawn before a restart and
        re-submitted) is not submitted twice: a finished result is applied at once, a running
        one is applied when it is told."""
        while True:
            self._pending_origin = None
            try:
                job = self._core.ask(self._sample)
            except _NoNewConfiguration:
                self._no_new_configs = True
                return None
            if job is None:
                return None
            if job.config_id not in self._configs:
                self._cid_of.setdefault(_config_key(job.config), job.config_id)
                config = self._configuration(job.config_id)
                if self._pending_origin is not None:
                    config.origin = f"ID-HB ({self._variant}): {self._pending_origin}"
            value = self._rh_value(self._trial(job))
            if value is None:
                return job
            if value.status != StatusType.RUNNING:
                self._apply(job, value)

    def _rh_value(self, info: TrialInfo) -> TrialValue | None:
        """The run history's entry of a trial (finished or ``RUNNING``), or None."""
        rh = self.runhistory
        if not rh.has_config(info.config):
            return None
        key = TrialKey(config_id=rh.get_config_id(info.config), instance=info.instance,
                       seed=info.seed, budget=info.budget)
        return rh[key] if key in rh else None

    def _job_of(self, config: Configuration, budget: float | None) -> Job | None:
        if budget is None:
            return None
        cid = self._cid_of.get(_config_key(config))
        if cid is None:
            return None
        r = self._units.to_core(budget)
        for job in self._core.pending:
            if job.config_id == cid and job.budget == r:
                return job
        return None

    def _apply(self, job: Job, value: TrialValue) -> None:
        if value.status == StatusType.SUCCESS and is_finite_number(value.cost):
            self._core.tell(job, float(value.cost))  # type: ignore[arg-type]
        else:
            logger.info("ID-HB job %d (config %d, budget %g) failed: status %s, cost %r",
                        job.job_id, job.config_id, self._units.to_real(job.budget),
                        StatusType(value.status).name, value.cost)
            self._core.fail(job)

    def _start(self) -> None:
        """First use in this process: SMAC's post-init, then reconcile the restored state
        with the restored run history (module docstring, *Restarts*)."""
        if self._started:
            return
        self.__post_init__()
        self._started = True
        needed = hyperband_trials(_budget(self._scenario, "min_budget"),
                                  _budget(self._scenario, "max_budget"), self._eta)
        if self._scenario.n_trials < needed:
            logger.warning("scenario.n_trials=%d is below the %d trials of one Hyperband "
                           "iteration at max_budget=%g: SMAC will stop the run before ID-HB "
                           "finishes it", self._scenario.n_trials, needed,
                           self._scenario.max_budget)
        rh = self.runhistory
        scheduled = set()
        for job in self._core.pending:
            info = self._trial(job)
            scheduled.add((_config_key(info.config), job.budget))
            value = self._rh_value(info)
            if value is not None and value.status != StatusType.RUNNING:
                self._apply(job, value)  # the result reached the run history, not the state
            else:
                self._resubmit.append(info)
        for info in rh.get_running_trials():
            budget = None if info.budget is None else self._units.to_core(info.budget)
            key = _config_key(info.config)
            if (key, budget) not in scheduled:
                # asked after the saved state (a kill between SMAC's two writes): re-run it so it
                # is not RUNNING forever, and let its configuration fill the next new slot, whose
                # job then is this very trial when the budgets agree
                self._resubmit.append(info)
                if key not in self._cid_of and plain_config(info.config) not in self._adopt:
                    self._adopt.append(plain_config(info.config))
        if self._resubmit:
            logger.info("re-submitting %d trial(s) that were running when the previous "
                        "process stopped", len(self._resubmit))

    def _wait_for_work(self, smbo: Any) -> None:
        """Before SMAC asks: make sure a job is ready, waiting for SMAC's runner if every
        bracket is waiting for running trials (module docstring, *Parallel workers*)."""
        self._start()
        if self._resubmit or self._prefetched is not None:
            return
        self._prefetched = self._next_job()
        while self._prefetched is None and self._core.pending and not self._no_new_configs:
            runner = getattr(smbo, "_runner", None)
            if runner is None or not runner.is_running():
                raise RuntimeError(
                    f"ID-HB has nothing to run until the {len(self._core.pending)} pending "
                    "trial(s) are told (a rung is complete only with all its results); tell "
                    "their results before asking again"
                )
            runner.wait()
            smbo._add_results()
            self._prefetched = self._next_job()

    def get_callback(self) -> Callback:
        """SMAC's run-history callback (incumbents) plus feeding results to the core."""
        intensifier = self

        class _IDHBCallback(Callback):
            def on_ask_start(self, smbo: Any) -> None:
                intensifier._wait_for_work(smbo)

            def on_tell_end(self, smbo: Any, info: TrialInfo, value: TrialValue) -> None:
                intensifier.update_incumbents(info.config)
                job = intensifier._job_of(info.config, info.budget)
                if job is not None and value.status != StatusType.RUNNING:
                    intensifier._apply(job, value)

        return _IDHBCallback()

    def __iter__(self) -> Iterator[TrialInfo]:
        """Yield the trials of one Hyperband iteration at the current ``max_budget``."""
        self._start()
        while True:
            if self._resubmit:
                yield self._resubmit.pop(0)
                continue
            job, self._prefetched = self._prefetched, None
            if job is None:
                job = self._next_job()
            if job is None:
                if self._no_new_configs:
                    logger.warning("ID-HB stops: the config selector has no new configuration")
                elif self._core.pending:
                    raise RuntimeError(
                        f"ID-HB has nothing to run until the {len(self._core.pending)} pending "
                        "trial(s) are told"
                    )
                else:
                    logger.info("ID-HB finished the Hyperband iteration at max_budget=%g",
                                self._scenario.max_budget)
                return
            yield self._trial(job)


# ------------------------------------------------------------------------ continuation
def _accept_larger_max_budget(scenario: Scenario, eta: int, variant: str) -> None:
    """Let SMAC continue the ID-HB run in ``scenario.output_directory`` with the scenario's
    larger ``max_budget`` (module docstring, *Continuing with a larger max_budget*)."""
    if scenario.name is None:
        return  # hash-named: a changed scenario is a new directory, nothing to continue
    directory = Path(scenario.output_directory)
    paths = {n: directory / f"{n}.json"
             for n in ("scenario", "intensifier", "optimization", "runhistory", "configspace")}
    if not all(p.exists() for p in paths.values()):
        return
    try:
        stored = json.loads(paths["scenario"].read_text())
        intensifier = json.loads(paths["intensifier"].read_text())
    except (OSError, ValueError):
        return  # SMAC reports unreadable files itself
    state = intensifier.get("state", {})
    try:
        STATE_FORMAT.version_of(state)
    except ValueError:
        return  # not an ID-HB run: SMAC decides
    new = Scenario.make_serializable(scenario)
    new.pop("_meta", None)
    old = {k: v for k, v in stored.items() if k != "_meta"}
    differing = sorted(k for k in set(new) | set(old) if new.get(k) != old.get(k))
    if "min_budget" in differing and set(differing) <= {"min_budget", *_CONTINUABLE_FIELDS}:
        raise ValueError(f"the ID-HB run in {directory} was made with min_budget="
                         f"{old.get('min_budget')!r}; a continued run must keep it (and multiply "
                         f"max_budget by eta**k), got min_budget={scenario.min_budget!r}")
    if not differing or not set(differing) <= set(_CONTINUABLE_FIELDS):
        return  # same scenario (SMAC continues by itself) or another change (SMAC asks)
    if ConfigurationSpace.from_json(paths["configspace"]) != scenario.configspace:
        return
    idhb = state["idhb"]["params"]
    if int(idhb["eta"]) != eta or idhb["variant"] != variant:
        raise ValueError(f"the run in {directory} was made with eta={idhb['eta']}, variant="
                         f"{idhb['variant']!r}; got eta={eta}, variant={variant!r}")
    saved_max = int(idhb["max_budget"]) * float(state["unit"])
    k = deepening_steps(saved_max, _budget(scenario, "max_budget"), eta)
    for key in differing:
        stored[key] = new[key]
    write_json_atomic(paths["scenario"], stored)
    optimization = json.loads(paths["optimization"].read_text())
    if optimization.get("finished"):
        optimization["finished"] = False  # ID-HB has new work at the larger max_budget
        write_json_atomic(paths["optimization"], optimization)
    logger.warning("continuing the ID-HB run in %s: max_budget %g -> %g (%d deepening(s)); "
                   "updated %s in its scenario.json", directory, saved_max, scenario.max_budget,
                   k, ", ".join(differing))
