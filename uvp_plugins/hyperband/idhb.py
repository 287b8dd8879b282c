"""Iterative-Deepening Hyperband (Brandt et al., Alg. 1-5) with an ask/tell interface.

The optimiser holds Hyperband's brackets for the current maximum budget ``R`` and asks for one
evaluation at a time. :meth:`IterativeDeepeningHyperband.run` is the offline loop
``ask -> evaluate -> tell``; event-driven adapters (the Ray Tune scheduler) call :meth:`ask`,
:meth:`ask_new`, :meth:`ask_existing`, :meth:`tell` and :meth:`fail` themselves.

Semantics (documented decisions):

* **Bracket order.** Li et al.'s order: largest ``s`` (most configurations, smallest budget)
  first. :meth:`ask` serves the earliest bracket with work; a later bracket is opened only when
  every earlier one is waiting for results (sequentially, brackets run one after another;
  with parallel workers they overlap, which changes no decision).
* **Deepening** (:meth:`deepen`, ``R <- eta R``): every existing bracket keeps its minimum budget
  and gains one rung, its pool is filled up with new configurations to the new size ``n_s``, and
  the rungs are recomputed from rung 0 with the variant's promotion rule, reusing every cached
  result. A new bracket with minimum budget ``eta R`` runs last (authors' reference code).
* **Results** are cached per ``(config_id, rung)``; a configuration belongs to exactly one
  bracket and is never evaluated twice at a rung.
* **Sampling.** Bracket ``j`` samples from its own stream ``SeedSequence(seed, spawn_key=(j,))``.
  A fresh Hyperband at ``eta R`` with the same seed therefore draws, in every bracket, the
  configurations of the ID-HB pool first: both see the same configurations (as in the authors'
  experiments, which seed the sampler per bracket).
* **Failures** (:meth:`fail`): the configuration leaves its bracket for good — it is never
  promoted or evaluated again, is not replaced, and the rung completes without it (promotions take
  ``min(k, #successful)``). Failed jobs are counted but not charged.
* **Incumbent**: the best result at the largest budget evaluated so far (after a finished run:
  the best configuration at ``R``); ties go to the earlier bracket and pool position.
* **Costs** (:class:`CostLedger`): full charge (each evaluation at ``r`` costs ``r``) and
  continuation (``r - previous budget`` of the configuration).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any, ClassVar

import numpy as np

from uvp_plugins.contract import StateFormat
from uvp_plugins.hyperband.bracket import VARIANTS, BracketState, select_promotions
from uvp_plugins.hyperband.records import CostLedger, Incumbent, Job
from uvp_plugins.hyperband.schedule import HyperbandSchedule, check_hyperband_args
from uvp_plugins.validation import check_choice, check_seed

__all__ = ["IterativeDeepeningHyperband", "Sampler", "Evaluator"]

#: ``sample(rng) -> config``: draws one configuration from the given generator
Sampler = Callable[[np.random.Generator], Any]
#: ``evaluate(config, budget) -> value`` (a loss for ``mode="min"``, a score for ``mode="max"``)
Evaluator = Callable[[Any, int], float]

#: the state format (:mod:`uvp_plugins.contract`); version 1 is the only one written so far
STATE_FORMAT = StateFormat("uvp-idhb", 1)


class IterativeDeepeningHyperband:
    """Hyperband whose maximum budget can be increased later without starting over.

    An ask/tell object of the core contract (:class:`uvp_plugins.contract.AskTell`): its state
    is :data:`STATE_FORMAT` (``"uvp-idhb/1"``).

    Args:
        max_budget: the initial maximum budget ``R`` (int >= ``eta * min_budget``).
        eta: reduction factor (int >= 2).
        variant: ``"efficient"`` (eID-HB), ``"preserving"`` (pID-HB) or ``"discarding"``
            (dID-HB), Brandt et al. Sec. 5. Before the first :meth:`deepen` all three are plain
            Hyperband.
        min_budget: the smallest budget (int >= 1).
        mode: ``"min"`` if smaller values are better (losses), ``"max"`` otherwise.
        seed: seed of the per-bracket sampling streams.

    Configurations are stored as given; :meth:`state_dict` is JSON-serialisable when they are
    (e.g. dicts of numbers and strings).

    Example:
        >>> hb = IterativeDeepeningHyperband(max_budget=4, eta=2, variant="efficient", seed=0)
        >>> sample = lambda rng: {"x": float(rng.uniform())}
        >>> evaluate = lambda cfg, b: (cfg["x"] - 0.3) ** 2 + 1.0 / b
        >>> inc = hb.run(sample, evaluate)
        >>> hb.deepen()          # R: 4 -> 8
        >>> inc = hb.run(sample, evaluate)
        >>> hb.ledger.full_charge == HyperbandSchedule(8, 2).total_budget
        True
    """

    #: the format of :meth:`state_dict` (``"uvp-idhb/1"``)
    STATE_FORMAT: ClassVar[StateFormat] = STATE_FORMAT

    def __init__(
        self,
        max_budget: int,
        eta: int = 3,
        variant: str = "efficient",
        min_budget: int = 1,
        mode: str = "min",
        seed: int = 0,
    ) -> None:
        r, e, rmin = check_hyperband_args(max_budget, eta, min_budget)
        check_choice("variant", variant, VARIANTS)
        check_choice("mode", mode, ("min", "max"))
        seed_i = check_seed("seed", seed)
        assert seed_i is not None
        self.eta = e
        self.min_budget = rmin
        self.variant = variant
        self.mode = mode
        self.seed = seed_i
        self.initial_max_budget = r
        self._R = r
        self._schedule = HyperbandSchedule(r, e, rmin)
        self.ledger = CostLedger()
        self._configs: dict[int, Any] = {}
        self._where: dict[int, tuple[int, int]] = {}  # config id -> (bracket, pool index)
        self._results: dict[tuple[int, int], tuple[float, int]] = {}  # -> (value, budget)
        self._top_budget: dict[int, int] = {}
        self._pending: dict[int, Job] = {}
        self._pending_keys: set[tuple[int, int]] = set()
        self._next_config_id = 0
        self._next_job_id = 0
        self._brackets: list[BracketState] = [
            BracketState(pos, self._bracket_rng(pos)) for pos in range(self._schedule.s_max + 1)
        ]
        self._configure_brackets()

    # ------------------------------------------------------------------ facts
    @property
    def max_budget(self) -> int:
        """The current maximum budget ``R``."""
        return self._R

    @property
    def schedule(self) -> HyperbandSchedule:
        """The Hyperband schedule at the current ``R``."""
        return self._schedule

    @property
    def n_deepenings(self) -> int:
        """How many times :meth:`deepen` was called."""
        initial = HyperbandSchedule(self.initial_max_budget, self.eta, self.min_budget)
        return len(self._brackets) - 1 - initial.s_max

    @property
    def finished(self) -> bool:
        """All brackets at the current ``R`` are complete and no job is pending."""
        return not self._pending and all(b.opened and b.done for b in self._brackets)

    @property
    def pending(self) -> list[Job]:
        """Jobs asked for but not yet told or failed."""
        return list(self._pending.values())

    @property
    def results(self) -> dict[tuple[int, int], float]:
        """Told values keyed by ``(config_id, rung)`` (a copy)."""
        return {k: v for k, (v, _) in self._results.items()}

    @property
    def configs(self) -> dict[int, Any]:
        """All configurations by id (a copy of the mapping; the objects are the stored ones)."""
        return dict(self._configs)

    def config(self, config_id: int) -> Any:
        return self._configs[config_id]

    def bracket_of(self, config_id: int) -> int:
        """Position of the bracket a configuration belongs to."""
        return self._where[config_id][0]

    def evaluated_budget(self, config_id: int) -> int:
        """The largest budget ``config_id`` has a result at (0 if none)."""
        return self._top_budget.get(config_id, 0)

    def rung_budget(self, bracket: int, rung: int) -> int:
        """Budget of ``rung`` in bracket position ``bracket`` at the current ``R``."""
        return self._schedule.budget(self._brackets[bracket].s, rung)

    def rung_members(self, bracket: int) -> list[list[int]]:
        """Members of every rung reached so far in ``bracket`` at the current ``R``."""
        return [list(m) for m in self._brackets[bracket].members]

    @property
    def incumbent(self) -> Incumbent | None:
        """Best configuration at the largest budget evaluated so far (None before any result)."""
        if not self._results:
            return None
        top = max(b for _, b in self._results.values())
        best: tuple[Any, ...] | None = None
        for (cid, _rung), (v, b) in self._results.items():
            if b != top:
                continue
            key = (self._loss(v), self._where[cid])
            if best is None or key < best[0]:
                best = (key, cid, v)
        assert best is not None
        _, cid, v = best
        return Incumbent(cid, self._configs[cid], v, top)

    def summary(self) -> list[dict[str, Any]]:
        """One dict per bracket: position, s, min budget, pool size/target, active rung, rung
        sizes and budgets, done (for logs and ``debug_string``)."""
        out = []
        for b in self._brackets:
            out.append(
                {
                    "bracket": b.position,
                    "s": b.s,
                    "min_budget": self._schedule.budget(b.s, 0),
                    "n": b.n_target,
                    "sampled": len(b.pool),
                    "opened": b.opened,
                    "rung": b.rung,
                    "rung_budget": self._schedule.budget(b.s, b.rung),
                    "rung_sizes": [len(m) for m in b.members],
                    "failed": len(b.failed),
                    "done": b.done,
                }
            )
        return out

    def status(self, config_id: int) -> str:
        """Where a configuration stands at the current ``R`` (for event translators):

        * ``"pending"``: a job for it is running;
        * ``"ready"``: it is in its bracket's active rung without a result: :meth:`ask_existing`
          will hand out its job;
        * ``"waiting"``: it has its result at the active rung, which is not complete yet (pause);
        * ``"finished"``: it reached the last rung (``R``) and has its result there;
        * ``"stopped"``: eliminated (not in the active rung of its bracket);
        * ``"failed"``: a job of it failed (see :meth:`fail`).

        A ``"stopped"`` or ``"finished"`` configuration can become ``"ready"`` again after
        :meth:`deepen` (its bracket gains a rung; with ``"preserving"`` it may be re-admitted).
        """
        if config_id not in self._where:
            raise ValueError(f"unknown config_id {config_id!r}")
        b = self._brackets[self._where[config_id][0]]
        if config_id in b.failed:
            return "failed"
        if any(j.config_id == config_id for j in self._pending.values()):
            return "pending"
        i = b.rung
        if config_id not in b.members[i]:
            return "stopped"
        if (config_id, i) not in self._results:
            return "ready"
        return "finished" if b.done else "waiting"

    def describe(self) -> str:
        """A compact multi-line description of the brackets and the budget spent."""
        lines = [
            f"ID-HB({self.variant}) R={self._R} eta={self.eta} min_budget={self.min_budget} "
            f"deepenings={self.n_deepenings} pending={len(self._pending)} "
            f"spent: full={self.ledger.full_charge} continuation={self.ledger.continuation} "
            f"evaluations={self.ledger.n_evaluations} failures={self.ledger.n_failures}"
        ]
        for d in self.summary():
            budgets = [self._schedule.budget(d["s"], i) for i in range(d["s"] + 1)]
            state = "done" if d["done"] else ("open" if d["opened"] else "waiting")
            lines.append(
                f"  bracket {d['bracket']} s={d['s']} n={d['n']} sampled={d['sampled']} "
                f"budgets={budgets} rung={d['rung']} sizes={d['rung_sizes']} "
                f"failed={d['failed']} {state}"
            )
        return "\n".join(lines)

    # --------------------------------------------------------------- ask/tell
    def ask(self, sample: Sampler) -> Job | None:
        """The next evaluation, or None if nothing can run until pending jobs are told (or the
        run at the current ``R`` is :attr:`finished`).

        ``sample(rng)`` is called only when a new configuration is needed, with the bracket's
        own generator.
        """
        for b in self._brackets:
            if not b.opened:
                self._open(b)
            cid = self._ready_existing(b)
            if cid is not None:
                return self._make_job(b, cid)
            if b.free_slots > 0:
                return self._make_job(b, self._add_config(b, sample(b.rng)))
        return None

    def ask_existing(self) -> Job | None:
        """The next evaluation of an already known configuration (a promotion, or a rung job
        after deepening), in bracket order; never samples, never opens a bracket."""
        for b in self._brackets:
            if b.opened:
                cid = self._ready_existing(b)
                if cid is not None:
                    return self._make_job(b, cid)
        return None

    def ask_new(self, config: Any) -> Job | None:
        """Place ``config`` (e.g. a Ray trial's config) into the first free slot for a new
        configuration, opening the next bracket if needed; returns its rung-0 job, or None if no
        bracket at the current ``R`` needs a new configuration (the caller keeps it waiting or
        stops it)."""
        for b in self._brackets:
            if not b.opened:
                self._open(b)
            if b.free_slots > 0:
                return self._make_job(b, self._add_config(b, config))
        return None

    @property
    def free_slots(self) -> int:
        """New configurations the current ``R`` still needs (open and unopened brackets)."""
        total = 0
        for b in self._brackets:
            total += b.free_slots if b.opened else b.n_target
        return total

    def tell(self, job: Job | int, value: float) -> bool:
        """Record the result of a pending job; completes rungs and promotes when possible.

        Returns whether a rung or a bracket was completed: only then can :meth:`ask_existing`
        hand out new jobs or :attr:`finished` change (event-driven adapters skip asking
        otherwise)."""
        j = self._pop_pending(job)
        v = float(value)
        if math.isnan(v):
            self._pending[j.job_id] = j
            self._pending_keys.add((j.config_id, j.rung))
            raise ValueError(
                f"value of job {j.job_id} is NaN; report a failure with fail() instead"
            )
        self._results[(j.config_id, j.rung)] = (v, j.budget)
        self.ledger.charge(j.budget, self._top_budget.get(j.config_id, 0))
        self._top_budget[j.config_id] = max(self._top_budget.get(j.config_id, 0), j.budget)
        return self._advance(self._brackets[j.bracket])

    def fail(self, job: Job | int) -> bool:
        """A pending job errored or was removed: its configuration leaves the bracket for good
        (never promoted nor evaluated again, not replaced); the rung completes without it.
        Returns whether a rung or a bracket was completed (as :meth:`tell`)."""
        j = self._pop_pending(job)
        b = self._brackets[j.bracket]
        b.failed.add(j.config_id)
        self.ledger.n_failures += 1
        return self._advance(b)

    # ------------------------------------------------------------ offline use
    def run(self, sample: Sampler, evaluate: Evaluator) -> Incumbent | None:
        """Run every remaining bracket at the current ``R`` sequentially; returns the incumbent.

        Exceptions of ``evaluate`` propagate; the job stays pending (tell or fail it to go on).
        """
        while True:
            job = self.ask(sample)
            if job is None:
                if self._pending:
                    raise RuntimeError(
                        f"run() cannot go on: {len(self._pending)} job(s) were asked but not "
                        "told; tell() or fail() them first"
                    )
                return self.incumbent
            self.tell(job, evaluate(job.config, job.budget))

    def deepen(self, new_max_budget: int | None = None) -> None:
        """``R <- eta R`` (Brandt et al., Alg. 1/2). Existing brackets keep their minimum budget
        and gain one rung; their pools grow to the new ``n_s``; a new bracket at ``eta R`` runs
        last. Allowed at any time: unfinished brackets continue at the new ``R`` from their
        cached results (pending jobs stay pending).

        Raises:
            ValueError: ``new_max_budget`` is given and is not ``eta * R``.
        """
        target = self.eta * self._R
        if new_max_budget is not None:
            if isinstance(new_max_budget, bool) or not isinstance(
                new_max_budget, (int, np.integer)
            ):
                raise TypeError(f"new_max_budget must be an int, got {new_max_budget!r}")
            if int(new_max_budget) != target:
                raise ValueError(
                    f"new_max_budget must be eta * max_budget = {self.eta} * {self._R} = {target} "
                    f"(ID-HB deepens by a factor eta), got {new_max_budget}"
                )
        self._R = target
        self._schedule = HyperbandSchedule(target, self.eta, self.min_budget)
        pos = len(self._brackets)
        self._brackets.append(BracketState(pos, self._bracket_rng(pos)))
        assert len(self._brackets) == self._schedule.s_max + 1
        self._configure_brackets()

    # ------------------------------------------------------------ persistence
    def state_dict(self) -> dict[str, Any]:
        """The complete state as plain Python data (JSON-serialisable if the configs are)."""
        return STATE_FORMAT.stamp({
            "params": {
                "initial_max_budget": self.initial_max_budget,
                "max_budget": self._R,
                "eta": self.eta,
                "min_budget": self.min_budget,
                "variant": self.variant,
                "mode": self.mode,
                "seed": self.seed,
            },
            "next_config_id": self._next_config_id,
            "next_job_id": self._next_job_id,
            "configs": [[cid, cfg] for cid, cfg in self._configs.items()],
            "brackets": [b.to_dict() for b in self._brackets],
            "results": [[cid, rung, v, bud] for (cid, rung), (v, bud) in self._results.items()],
            "pending": [j.to_dict() for j in self._pending.values()],
            "ledger": self.ledger.to_dict(),
        })

    @classmethod
    def from_state_dict(cls, state: Mapping[str, Any]) -> IterativeDeepeningHyperband:
        """Rebuild an optimiser from :meth:`state_dict` (also mid-bracket, with pending jobs)."""
        state = STATE_FORMAT.read(state)
        p = state["params"]
        hb = cls(
            max_budget=int(p["initial_max_budget"]),
            eta=int(p["eta"]),
            variant=str(p["variant"]),
            min_budget=int(p["min_budget"]),
            mode=str(p["mode"]),
            seed=int(p["seed"]),
        )
        hb._R = int(p["max_budget"])
        hb._schedule = HyperbandSchedule(hb._R, hb.eta, hb.min_budget)
        hb._next_config_id = int(state["next_config_id"])
        hb._next_job_id = int(state["next_job_id"])
        hb._configs = {int(cid): cfg for cid, cfg in state["configs"]}
        hb._brackets = [BracketState.from_dict(d) for d in state["brackets"]]
        hb._where = {cid: (b.position, i) for b in hb._brackets for i, cid in enumerate(b.pool)}
        hb._results = {}
        hb._top_budget = {}
        for cid, rung, v, bud in state["results"]:
            hb._results[(int(cid), int(rung))] = (float(v), int(bud))
            hb._top_budget[int(cid)] = max(hb._top_budget.get(int(cid), 0), int(bud))
        hb._pending = {}
        hb._pending_keys = set()
        for d in state["pending"]:
            j = Job.from_dict(d)
            hb._pending[j.job_id] = j
            hb._pending_keys.add((j.config_id, j.rung))
        hb.ledger = CostLedger.from_dict(state["ledger"])
        return hb

    # -------------------------------------------------------------- internals
    def _bracket_rng(self, position: int) -> np.random.Generator:
        return np.random.default_rng(np.random.SeedSequence(self.seed, spawn_key=(position,)))

    def _loss(self, value: float) -> float:
        return value if self.mode == "min" else -value

    def _configure_brackets(self) -> None:
        for b in self._brackets:
            spec = self._schedule.brackets[b.position]
            b.s = spec.s
            b.n_target = spec.n
            if b.opened:
                b.restart()
                self._advance(b)

    def _open(self, b: BracketState) -> None:
        b.opened = True
        b.restart()
        self._advance(b)

    def _add_config(self, b: BracketState, config: Any) -> int:
        cid = self._next_config_id
        self._next_config_id += 1
        self._configs[cid] = config
        self._where[cid] = (b.position, len(b.pool))
        b.pool.append(cid)
        b.members[0].append(cid)
        return cid

    def _make_job(self, b: BracketState, cid: int) -> Job:
        job = Job(
            job_id=self._next_job_id,
            config_id=cid,
            config=self._configs[cid],
            bracket=b.position,
            rung=b.rung,
            budget=self._schedule.budget(b.s, b.rung),
            previous_budget=self._top_budget.get(cid, 0),
        )
        self._next_job_id += 1
        self._pending[job.job_id] = job
        self._pending_keys.add((cid, b.rung))
        return job

    def _pop_pending(self, job: Job | int) -> Job:
        jid = job.job_id if isinstance(job, Job) else job
        if isinstance(jid, bool) or not isinstance(jid, (int, np.integer)):
            raise TypeError(f"job must be a Job or a job id (int), got {job!r}")
        j = self._pending.pop(int(jid), None)
        if j is None:
            raise ValueError(f"job {jid} is not pending (unknown, or already told/failed)")
        self._pending_keys.discard((j.config_id, j.rung))
        return j

    def _settled(self, b: BracketState, cid: int, rung: int) -> bool:
        return cid in b.failed or (cid, rung) in self._results

    def _ready_existing(self, b: BracketState) -> int | None:
        """The first member of the active rung without a result and without a pending job.

        Scans from ``b.ready_from`` (members before it can never be ready again), so handing
        out a whole rung costs time linear in its size."""
        if not b.opened or b.done:
            return None
        i = b.rung
        members = b.members[i]
        c = b.ready_from
        while c < len(members):
            cid = members[c]
            if not self._settled(b, cid, i) and (cid, i) not in self._pending_keys:
                b.ready_from = c
                return cid
            c += 1
        b.ready_from = c
        return None

    def _rung_settled(self, b: BracketState) -> bool:
        """Every member of the active rung has its result or failed (scans from
        ``b.settled_from``: a settled member stays settled)."""
        i = b.rung
        members = b.members[i]
        c = b.settled_from
        while c < len(members) and self._settled(b, members[c], i):
            c += 1
        b.settled_from = c
        return c == len(members)

    def _advance(self, b: BracketState) -> bool:
        """Complete rungs and promote (Successive Halving, variant rule) while possible;
        returns whether a rung (or the bracket) was completed."""
        advanced = False
        while b.opened and not b.done:
            i = b.rung
            if b.free_slots > 0:
                return advanced
            if not self._rung_settled(b):
                return advanced
            if i == b.s:
                b.done = True
                return True
            k = b.n_target // self.eta ** (i + 1)
            promoted = self._promote(b, i, k)
            b.enter_rung(sorted(promoted, key=lambda c: self._where[c][1]))
            advanced = True
        return advanced

    def _promote(self, b: BracketState, i: int, k: int) -> list[int]:
        def ok(c: int) -> bool:
            return c not in b.failed and (c, i) in self._results

        members = [c for c in b.members[i] if ok(c)]
        extra = [c for c in b.pool if ok(c)] if self.variant == "preserving" else []
        before = (
            {c for c in members if (c, i + 1) in self._results or (c, i + 1) in self._pending_keys}
            if self.variant == "efficient"
            else set()
        )

        def key(c: int) -> tuple[float, int]:
            return (self._loss(self._results[(c, i)][0]), self._where[c][1])

        return select_promotions(self.variant, k, members, extra, before, key)
