"""The candidate set ``X`` of Enhanced-AdaCent: a finite mesh of the search space.

Bateni et al. (Sec. 4, "Practical Refinements") discretise the continuous space into a finite set
``X = {x_1, ..., x_n}`` with a fine mesh; the authors' code uses ``n = 1000`` scrambled Sobol
points in the normalised space. :class:`CandidateMesh` is one such set with what repeated
Enhanced-KCenter steps need: the configurations, their distance embedding, an index from a
configuration's key to its candidate positions (so a candidate that some trial has taken can be
masked out), and the incremental candidate-to-center distances
(:class:`uvp_plugins.adacent.center_distances.CenterDistances`).

:class:`MeshLadder` grows a Sobol mesh when every candidate is taken: level ``l`` holds the first
``n * 2**l`` points of the same scrambled sequence, so earlier candidates keep their positions
and the distances computed for them are reused. The level depends only on which configurations
are taken, so every process that sees the same trials uses the same candidates.

Example:
    >>> from uvp_plugins.space import FloatParam, SearchSpace
    >>> space = SearchSpace([FloatParam("x", 0.0, 1.0)])
    >>> ladder = MeshLadder.sobol(space, n_candidates=4, seed=0)
    >>> mesh, free = ladder.free_mesh(taken=set())
    >>> len(mesh.configs), int(free.sum())
    (4, 4)
    >>> taken = {mesh.key_of(c) for c in mesh.configs}
    >>> bigger, free = ladder.free_mesh(taken)          # all taken: the mesh doubles
    >>> len(bigger.configs), int(free.sum())
    (8, 4)
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import Any

import numpy as np

from uvp_plugins.adacent.center_distances import CenterDistances
from uvp_plugins.space import SearchSpace, config_key

__all__ = ["CandidateMesh", "MeshLadder", "MAX_MESH_DOUBLINGS"]

#: a Sobol mesh doubles at most this many times when all its candidates are taken
MAX_MESH_DOUBLINGS = 6
#: meshes kept per ladder (different fixed parameters, levels)
_MESH_CACHE_SIZE = 8


class CandidateMesh:
    """One candidate set: configurations, their embedding ``Z`` (rows), an index from
    configuration key to candidate positions, and the incremental center distances.

    Args:
        configs: the candidate configurations (dicts keyed by parameter name).
        Z: their distance embedding, shape ``(len(configs), D)``.
        names: parameter names, in the order used for configuration keys.
        key: a text naming the mesh (stored with a choice so it can be traced).
        distances: reuse stored distances (e.g. of a smaller mesh with the same first rows).
    """

    def __init__(
        self,
        configs: list[dict[str, Any]],
        Z: np.ndarray,
        names: Sequence[str],
        key: str,
        distances: CenterDistances | None = None,
    ) -> None:
        self.configs = configs
        self.Z = np.asarray(Z, dtype=float)
        self.key = key
        self.names = list(names)
        self.index: dict[tuple[Any, ...], list[int]] = {}
        for i, c in enumerate(configs):
            self.index.setdefault(self.key_of(c), []).append(i)
        self.distances = CenterDistances(self.Z) if distances is None else distances
        self._free = np.ones(len(configs), dtype=bool)
        self._marked: set[tuple[Any, ...]] = set()

    def key_of(self, config: Mapping[str, Any]) -> tuple[Any, ...]:
        """The configuration key (:func:`uvp_plugins.space.config_key`) in this mesh's order."""
        return config_key(config, self.names)

    def available(self, taken: set[tuple[Any, ...]]) -> np.ndarray:
        """Mask of the candidates whose configuration is not in ``taken`` (a copy). Taken
        configurations never become free again, so the mask is updated incrementally."""
        for key in taken - self._marked:
            for i in self.index.get(key, ()):
                self._free[i] = False
            self._marked.add(key)
        return self._free.copy()

    def grown(self, configs: list[dict[str, Any]], Z: np.ndarray, key: str) -> CandidateMesh:
        """The mesh of ``configs`` (which extend this mesh's configurations), reusing the stored
        center distances for the shared candidates."""
        n = len(self.configs)
        prefix = [self.key_of(c) for c in configs[:n]]
        if prefix != [self.key_of(c) for c in self.configs]:
            return CandidateMesh(configs, Z, self.names, key)
        return CandidateMesh(configs, Z, self.names, key, self.distances.with_more_candidates(Z[n:]))


class MeshLadder:
    """Candidate meshes by level (Sobol: ``n * 2**level`` points) and fixed parameters.

    Build it with :meth:`sobol` (a growable scrambled Sobol mesh of a :class:`SearchSpace`) or
    :meth:`fixed` (a given candidate set that never grows: the user's candidates, or the offline
    allocators' candidate array). :meth:`free_mesh` returns the smallest level with a candidate
    no trial has taken.
    """

    def __init__(
        self,
        build: Callable[[int], tuple[list[dict[str, Any]], str]],
        embed: Callable[[list[dict[str, Any]]], np.ndarray],
        growable: bool,
        names: Sequence[str],
    ) -> None:
        self._build = build  # level -> (configs, mesh key)
        self.embed = embed  #: configurations -> their distance embedding (rows)
        self.growable = growable
        self.names = list(names)
        self._meshes: OrderedDict[Hashable, CandidateMesh] = OrderedDict()
        self._level: dict[Hashable, int] = {}

    @classmethod
    def sobol(cls, space: SearchSpace, n_candidates: int, seed: int) -> MeshLadder:
        """Scrambled Sobol meshes of ``space`` (:meth:`SearchSpace.sobol_mesh`, deduplicated)."""

        def build(level: int) -> tuple[list[dict[str, Any]], str]:
            n = int(n_candidates) << level
            configs, _ = space.sobol_mesh(n, seed=seed)
            return configs, f"sobol:{seed}:{n}"

        return cls(build, space.embed, growable=True, names=space.names)

    @classmethod
    def fixed(cls, configs: Sequence[Mapping[str, Any]], space: SearchSpace, key: str = "user") -> MeshLadder:
        """A candidate set that never grows: ``configs`` of ``space``."""
        given = [dict(c) for c in configs]
        return cls(lambda level: ([dict(c) for c in given], key), space.embed, False, space.names)

    @classmethod
    def from_array(cls, Z: np.ndarray, key: str = "array") -> MeshLadder:
        """A candidate set given as embedded points ``Z`` (rows); candidate ``i`` is the
        configuration ``{"index": i}`` (the offline allocators' candidate arrays)."""
        Za = np.asarray(Z, dtype=float)
        rows = [{"index": i} for i in range(Za.shape[0])]

        def embed(configs: list[dict[str, Any]]) -> np.ndarray:
            return Za[[int(c["index"]) for c in configs]]

        return cls(lambda level: ([dict(r) for r in rows], key), embed, False, ["index"])

    def mesh(self, level: int, fixed: Mapping[str, Any] | None = None) -> CandidateMesh:
        """The mesh at ``level`` with the ``fixed`` parameter values substituted."""
        fixed = dict(fixed or {})
        fixed_key = tuple(sorted(fixed.items(), key=lambda kv: kv[0]))
        key = (level, fixed_key)
        mesh = self._meshes.get(key)
        if mesh is not None:
            self._meshes.move_to_end(key)
            return mesh
        configs, name = self._build(level)
        if fixed:
            configs = [{**c, **fixed} for c in configs]
        Z = self.embed(configs)
        smaller = self._meshes.get((level - 1, fixed_key))
        if smaller is not None:  # a doubled Sobol mesh: keep the computed distances
            mesh = smaller.grown(configs, Z, name)
        else:
            mesh = CandidateMesh(configs, Z, self.names, name)
        self._meshes[key] = mesh
        while len(self._meshes) > _MESH_CACHE_SIZE:
            self._meshes.popitem(last=False)
        return mesh

    def free_mesh(
        self, taken: set[tuple[Any, ...]], fixed: Mapping[str, Any] | None = None
    ) -> tuple[CandidateMesh, np.ndarray | None]:
        """The smallest mesh level with a candidate no trial has taken, and its availability
        mask (``None`` if every candidate is taken and the mesh cannot grow: a small discrete
        space, ``MAX_MESH_DOUBLINGS`` reached, or a fixed candidate set)."""
        fixed = dict(fixed or {})
        fixed_key = tuple(sorted(fixed.items(), key=lambda kv: kv[0]))
        level = self._level.get(fixed_key, 0)
        mesh = self.mesh(level, fixed)
        available = mesh.available(taken)
        while not available.any():
            if not self.growable or level >= MAX_MESH_DOUBLINGS:
                return mesh, None
            bigger = self.mesh(level + 1, fixed)
            if len(bigger.configs) <= len(mesh.configs):
                return mesh, None
            level, mesh = level + 1, bigger
            available = mesh.available(taken)
            self._level[fixed_key] = level
        return mesh, available
