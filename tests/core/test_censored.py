"""Core tests of the Tobit-loss neural ensemble (uvp_plugins.censored)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from scipy import stats

from uvp_plugins.censored import (
    MLPEnsembleNet,
    TobitEnsemble,
    censor_at_cutoffs,
    censor_nonfinite,
    gaussian_nll,
    inverse_mills_ratio,
    marginal_over_instances,
    pair_rows,
    schmee_hahn_fit,
    tobit_nll,
    tobit_nll_grad,
    truncated_normal_mean,
)

HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)


# ---------------------------------------------------------------- loss


def test_tobit_nll_hand_computed_values() -> None:
    # uncensored: log(sigma) + z^2/2 + log(2 pi)/2 with z = (1 - 0) / 2
    assert tobit_nll([1.0], [0.0], [2.0], [False]) == pytest.approx(
        math.log(2.0) + 0.125 + HALF_LOG_2PI, rel=1e-12
    )
    # censored: -log(1 - Phi(0.5)) = -log(erfc(0.5 / sqrt 2) / 2)
    assert tobit_nll([1.0], [0.0], [2.0], [True]) == pytest.approx(
        -math.log(0.5 * math.erfc(0.5 / math.sqrt(2.0))), rel=1e-12
    )
    # censored exactly at the mean: -log(1/2)
    assert tobit_nll([3.0], [3.0], [0.7], [True]) == pytest.approx(math.log(2.0), rel=1e-12)
    # Eq. 4 sums the two kinds of terms
    total = tobit_nll([1.0, 1.0], [0.0, 0.0], [2.0, 2.0], [False, True])
    parts = tobit_nll([1.0, 1.0], [0.0, 0.0], [2.0, 2.0], [False, True], reduction="none")
    assert isinstance(parts, np.ndarray) and total == pytest.approx(parts.sum())


def test_tobit_nll_is_stable_far_in_the_tails() -> None:
    # a censored value 40 sigmas above the mean: 1 - Phi(40) underflows in double precision
    value = tobit_nll([40.0], [0.0], [1.0], [True])
    assert np.isfinite(value) and value > 800.0
    # far below the mean the censored term vanishes
    assert tobit_nll([-40.0], [0.0], [1.0], [True]) == pytest.approx(0.0, abs=1e-12)
    assert np.isfinite(inverse_mills_ratio(np.array([-40.0, 0.0, 40.0]))).all()


def test_tobit_without_censoring_is_the_gaussian_nll() -> None:
    rng = np.random.default_rng(1)
    y, mu = rng.normal(size=50), rng.normal(size=50)
    sigma = rng.uniform(0.2, 3.0, size=50)
    expected = -stats.norm.logpdf(y, loc=mu, scale=sigma).sum()
    assert tobit_nll(y, mu, sigma, np.zeros(50, dtype=bool)) == pytest.approx(expected, rel=1e-10)
    assert tobit_nll(y, mu, sigma, None) == pytest.approx(expected, rel=1e-10)
    assert gaussian_nll(y, mu, sigma) == pytest.approx(expected, rel=1e-10)
    # with censoring the likelihood of the censored rows uses the survival function instead
    c = y > 0.5
    mixed = -(stats.norm.logpdf(y, mu, sigma)[~c].sum() + stats.norm.logsf(y, mu, sigma)[c].sum())
    assert tobit_nll(y, mu, sigma, c) == pytest.approx(mixed, rel=1e-10)


@pytest.mark.parametrize("censored", [False, True])
def test_tobit_gradient_matches_finite_differences(censored: bool) -> None:
    rng = np.random.default_rng(2)
    n = 40
    y = rng.normal(size=n) * 3
    mu = rng.normal(size=n)
    sigma = rng.uniform(0.3, 2.0, size=n)
    c = np.full(n, censored)
    c[::3] = not censored  # a mix of both kinds
    dmu, dsigma = tobit_nll_grad(y, mu, sigma, c)
    eps = 1e-6
    for i in range(n):
        e = np.zeros(n)
        e[i] = eps
        fd_mu = (tobit_nll(y, mu + e, sigma, c) - tobit_nll(y, mu - e, sigma, c)) / (2 * eps)
        fd_sigma = (tobit_nll(y, mu, sigma + e, c) - tobit_nll(y, mu, sigma - e, c)) / (2 * eps)
        assert dmu[i] == pytest.approx(fd_mu, rel=1e-5, abs=1e-7)
        assert dsigma[i] == pytest.approx(fd_sigma, rel=1e-5, abs=1e-7)


def test_tobit_loss_input_errors() -> None:
    with pytest.raises(ValueError, match="sigma"):
        tobit_nll([1.0], [0.0], [0.0], [False])
    with pytest.raises(TypeError, match="censored"):
        tobit_nll([1.0], [0.0], [1.0], [0.5])
    with pytest.raises(ValueError, match="reduction"):
        tobit_nll([1.0], [0.0], [1.0], [False], reduction="max")  # type: ignore[arg-type]


def test_truncated_normal_mean_matches_scipy_and_respects_the_bound() -> None:
    mu = np.array([0.0, 1.0, -2.0, 5.0])
    sd = np.array([1.0, 0.5, 2.0, 0.1])
    lower = np.array([0.5, 0.0, 10.0, 4.0])
    a = (lower - mu) / sd
    expected = stats.truncnorm.mean(a, np.inf, loc=mu, scale=sd)
    got = truncated_normal_mean(mu, sd, lower)
    np.testing.assert_allclose(got, expected, rtol=1e-8)
    assert np.all(got >= lower)


def test_censor_nonfinite() -> None:
    y, c = censor_nonfinite([1.0, np.inf, 3.0, np.nan], [False, False, True, False])
    np.testing.assert_array_equal(y, [1.0, 3.0, 3.0, 3.0])
    np.testing.assert_array_equal(c, [False, True, True, True])
    y, c = censor_nonfinite([1.0, np.inf], None, cap=10.0)
    np.testing.assert_array_equal(y, [1.0, 10.0])
    assert c.tolist() == [False, True]
    with pytest.raises(ValueError, match="length"):
        censor_nonfinite([1.0, 2.0], [True])


# ---------------------------------------------------------------- network


def test_backprop_matches_finite_differences() -> None:
    rng = np.random.default_rng(3)
    net = MLPEnsembleNet(3, 4, (6, 5), rng, dtype=np.float64)
    net.theta[...] = rng.normal(0, 0.5, size=net.theta.size)  # non-trivial biases too
    X = rng.uniform(size=(7, 4))
    weights = rng.normal(size=(3, 7, 2))

    def objective() -> float:
        out, _ = net.forward(X)
        return float(np.sum(weights * out))

    out, acts = net.forward(X)
    net.backward(X, acts, weights)
    analytic = net.grad.copy()
    eps = 1e-6
    for k in rng.choice(net.theta.size, size=60, replace=False):
        old = net.theta[k]
        net.theta[k] = old + eps
        up = objective()
        net.theta[k] = old - eps
        down = objective()
        net.theta[k] = old
        assert analytic[k] == pytest.approx((up - down) / (2 * eps), rel=1e-5, abs=1e-8)


# ---------------------------------------------------------------- ensemble


def _capped_data(n: int = 150, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """A smooth 2-d function observed with noise and capped at its 50th percentile."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n, 2))
    f = 4.0 * X[:, 0] + 2.0 * np.sin(3.0 * X[:, 1])
    y = f + 0.1 * rng.normal(size=n)
    cap = float(np.percentile(y, 50))
    censored = y > cap
    return X, np.minimum(y, cap), censored, f


def test_censored_predictions_exceed_the_cap_only_with_the_tobit_loss() -> None:
    X, y, censored, f = _capped_data()
    kw: dict[str, Any] = dict(n_members=3, n_steps=300, seed=0)
    tobit = TobitEnsemble(loss="tobit", **kw).fit(X, y, censored)
    ignore = TobitEnsemble(loss="gaussian", **kw).fit(X, y, censored)
    gap_tobit = tobit.predict(X[censored])[0] - y[censored]
    gap_ignore = ignore.predict(X[censored])[0] - y[censored]
    assert gap_tobit.mean() > 0.0  # above the censoring value on average
    assert gap_ignore.mean() < 0.0  # a model ignoring censoring predicts below it
    # and the Tobit model is closer to the true function on the censored region
    err_t = np.abs(tobit.predict(X[censored])[0] - f[censored]).mean()
    err_i = np.abs(ignore.predict(X[censored])[0] - f[censored]).mean()
    assert err_t < err_i


def test_eq5_mean_and_variance_of_the_members() -> None:
    X, y, censored, _ = _capped_data(60)
    model = TobitEnsemble(n_members=4, n_steps=50, seed=1).fit(X, y, censored)
    members = model.predict_members(X[:10])
    mean, var = model.predict(X[:10])
    assert members.shape == (4, 10)
    np.testing.assert_allclose(mean, members.mean(axis=0))
    np.testing.assert_allclose(var, ((members - mean) ** 2).mean(axis=0))
    assert np.all(var > 0)
    single = TobitEnsemble(n_members=1, n_steps=50, seed=1).fit(X, y, censored)
    assert np.all(single.predict(X[:10])[1] == 0.0)
    assert np.all(model.predict_noise(X[:10]) > 0)


def test_thompson_sample_is_one_members_mean_function() -> None:
    X, y, censored, _ = _capped_data(60)
    model = TobitEnsemble(n_members=3, n_steps=50, seed=2).fit(X, y, censored)
    members = model.predict_members(X)
    draws = set()
    rng = np.random.default_rng(0)
    for _ in range(20):
        sample = model.sample_thompson(X, rng)
        match = [m for m in range(3) if np.allclose(sample, members[m])]
        assert len(match) == 1
        draws.add(match[0])
    assert len(draws) > 1


def test_seeds_make_fits_reproducible() -> None:
    X, y, censored, _ = _capped_data(80)
    a = TobitEnsemble(n_members=2, n_steps=80, seed=5).fit(X, y, censored).predict(X)
    b = TobitEnsemble(n_members=2, n_steps=80, seed=5).fit(X, y, censored).predict(X)
    c = TobitEnsemble(n_members=2, n_steps=80, seed=6).fit(X, y, censored).predict(X)
    np.testing.assert_array_equal(a[0], b[0])
    np.testing.assert_array_equal(a[1], b[1])
    assert not np.allclose(a[0], c[0])
    # mini-batch training is reproducible too
    kw: dict[str, Any] = dict(n_members=2, n_steps=40, batch_size=16, seed=5)
    d = TobitEnsemble(**kw).fit(X, y, censored).predict(X)[0]
    e = TobitEnsemble(**kw).fit(X, y, censored).predict(X)[0]
    np.testing.assert_array_equal(d, e)


def test_log_y_models_the_log_of_positive_targets() -> None:
    X, y, censored, _ = _capped_data(80)
    runtime = np.exp(y)
    model = TobitEnsemble(n_members=2, n_steps=300, seed=0, log_y=True).fit(X, runtime, censored)
    mean, _ = model.predict(X)
    # predictions are in log space, close to log(runtime) on the uncensored rows
    assert np.abs(mean[~censored] - y[~censored]).mean() < 0.3
    # and fitting log(runtime) directly gives the same model
    direct = TobitEnsemble(n_members=2, n_steps=300, seed=0).fit(X, y, censored)
    np.testing.assert_allclose(direct.predict(X)[0], mean, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(model.predict_median(X), np.exp(mean))
    with pytest.raises(ValueError, match="> 0"):
        TobitEnsemble(log_y=True).fit(X, y - 10.0, censored)


def test_inputs_are_scaled_by_the_model() -> None:
    X, y, censored, _ = _capped_data(60)
    kw: dict[str, Any] = dict(n_members=2, n_steps=60, seed=0)
    a = TobitEnsemble(**kw).fit(X, y, censored).predict(X)[0]
    b = TobitEnsemble(**kw).fit(100.0 * X - 7.0, y, censored).predict(100.0 * X - 7.0)[0]
    np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-4)
    bounded = TobitEnsemble(input_bounds=([0.0, 0.0], [1.0, 1.0]), **kw).fit(X, y, censored)
    assert bounded.predict(X)[0].shape == (60,)
    with pytest.raises(ValueError, match="input_bounds"):
        TobitEnsemble(input_bounds=([0.0], [1.0]), **kw).fit(X, y, censored)


def test_schmee_hahn_imputation_lifts_censored_predictions() -> None:
    X, y, censored, _ = _capped_data()
    kw: dict[str, Any] = dict(n_members=2, n_steps=200, seed=0)
    sh = schmee_hahn_fit(X, y, censored, n_iter=3, **kw)
    ignore = TobitEnsemble(loss="gaussian", **kw).fit(X, y, censored)
    assert sh.loss == "gaussian"
    assert sh.predict(X[censored])[0].mean() > ignore.predict(X[censored])[0].mean()
    with pytest.raises(ValueError, match="n_iter"):
        schmee_hahn_fit(X, y, censored, n_iter=0)


# ---------------------------------------------------------------- bad input


def test_bad_targets_and_flags_raise_clear_errors() -> None:
    X, y, censored, _ = _capped_data(20)
    model = TobitEnsemble(n_members=1, n_steps=5)
    for bad in (np.nan, np.inf, -np.inf):
        y_bad = y.copy()
        y_bad[3] = bad
        with pytest.raises(ValueError, match="NaN or inf"):
            model.fit(X, y_bad, censored)
    with pytest.raises(ValueError, match="censored must be a 1-d boolean array of length 20"):
        model.fit(X, y, censored[:-1])
    with pytest.raises(TypeError, match="censored"):
        model.fit(X, y, np.full(20, 0.5))
    with pytest.raises(ValueError, match="length 20"):
        model.fit(X, y[:-1], censored)
    X_bad = X.copy()
    X_bad[0, 0] = np.nan
    with pytest.raises(ValueError, match="impute"):
        model.fit(X_bad, y, censored)
    with pytest.raises(ValueError, match="2-d"):
        model.fit(X[:, 0], y, censored)
    with pytest.raises(RuntimeError, match="not fitted"):
        TobitEnsemble().predict(X)
    fitted = TobitEnsemble(n_members=1, n_steps=5).fit(X, y, censored)
    with pytest.raises(ValueError, match="features"):
        fitted.predict(np.zeros((2, 3)))


def test_all_censored_raises_or_falls_back_as_documented() -> None:
    X, y, _, _ = _capped_data(20)
    all_c = np.ones(20, dtype=bool)
    with pytest.raises(ValueError, match="all observations are censored"):
        TobitEnsemble(n_members=1, n_steps=5).fit(X, y, all_c)
    with pytest.warns(RuntimeWarning, match="all observations are censored"):
        model = TobitEnsemble(n_members=1, n_steps=50, all_censored="gaussian").fit(X, y, all_c)
    assert np.all(np.isfinite(model.predict(X)[0]))
    # the Gaussian baseline ignores flags and never complains
    TobitEnsemble(n_members=1, n_steps=5, loss="gaussian").fit(X, y, all_c)


def test_a_single_observation_is_fitted() -> None:
    model = TobitEnsemble(n_members=2, n_steps=100, seed=0).fit([[0.3, 0.7]], [2.5], [False])
    mean, var = model.predict([[0.3, 0.7]])
    assert mean[0] == pytest.approx(2.5, abs=0.2)
    assert np.isfinite(var).all()


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"n_members": 0}, "n_members"),
        ({"n_steps": -1}, "n_steps"),
        ({"lr": 0.0}, "lr"),
        ({"hidden": (50, 0)}, "hidden"),
        ({"weight_decay": -1.0}, "weight_decay"),
        ({"loss": "l2"}, "loss"),
        ({"all_censored": "drop"}, "all_censored"),
        ({"min_std": float("nan")}, "min_std"),
    ],
)
def test_constructor_validates_parameters(kwargs: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        TobitEnsemble(**kwargs)


# ---------------------------------------------------------------- Table 1 benchmark protocol


def test_benchmark_functions_have_their_known_minima() -> None:
    from uvp_plugins.bench.censored_quality import FUNCTIONS

    branin = FUNCTIONS["branin"][1]
    u = np.array([[(np.pi + 5.0) / 15.0, 2.275 / 15.0]])
    assert branin(u)[0] == pytest.approx(0.397887, abs=1e-5)
    camel = FUNCTIONS["camel"][1]
    assert camel(np.array([[(0.0898 + 3.0) / 6.0, (-0.7126 + 2.0) / 4.0]]))[0] == pytest.approx(
        -1.0316, abs=1e-3
    )
    hart3 = FUNCTIONS["hart3"][1]
    assert hart3(np.array([[0.114614, 0.555649, 0.852547]]))[0] == pytest.approx(-3.86278, abs=1e-4)
    hart6 = FUNCTIONS["hart6"][1]
    x6 = np.array([[0.20169, 0.150011, 0.476874, 0.275332, 0.311652, 0.6573]])
    assert hart6(x6)[0] == pytest.approx(-3.32237, abs=1e-4)


def test_randomised_censoring_gives_lower_bounds_above_the_threshold() -> None:
    from uvp_plugins.bench.censored_quality import make_dataset

    fractions = []
    for pct in (10, 40, 80):
        d = make_dataset("branin", pct, seed=0, n_copies=3)
        assert d.y.shape == d.censored.shape == d.loc.shape == (600,)
        assert np.all(d.y[d.censored] >= d.gamma)
        assert np.all(d.f[d.loc][d.censored] >= d.gamma)
        fractions.append(d.censored.mean())
    assert fractions[0] > fractions[1] > fractions[2] > 0  # lower threshold, more censoring
    with pytest.raises(ValueError, match="function"):
        make_dataset("rosenbrock", 10, 0)


def test_censoring_caps_at_the_threshold_like_a_cutoff() -> None:
    """Protocol: a selected observation is run with the cutoff gamma, i.e. recorded as
    min(y, gamma) and flagged iff y > gamma (the paper's "use a threshold gamma and censor").
    The earlier reading recorded a value drawn in [gamma, y]; it stays available as "uniform"."""
    from uvp_plugins.bench.censored_quality import make_dataset

    d = make_dataset("hart3", 20, seed=1, n_copies=4)
    assert d.censored.any()
    np.testing.assert_array_equal(d.y[d.censored], d.gamma)  # failed before: values in [gamma, y]
    u = make_dataset("hart3", 20, seed=1, n_copies=4, censor_value="uniform")
    np.testing.assert_array_equal(u.censored, d.censored)  # same selection, only the value differs
    np.testing.assert_array_equal(u.y[~u.censored], d.y[~d.censored])
    assert np.all(u.y[u.censored] >= u.gamma) and np.any(u.y[u.censored] > u.gamma)
    with pytest.raises(ValueError, match="censor_value"):
        make_dataset("hart3", 20, seed=1, censor_value="random")


def test_tobit_mle_is_consistent_under_the_benchmark_censoring() -> None:
    """With cutoffs independent of the noise, the Tobit likelihood is the right model: its
    maximum recovers the true mean and noise at a location. The earlier "uniform" censoring
    value (always below y, dependent on y) is not a cutoff and biases the Tobit fit upwards --
    the overshoot that made T lose to I on the Hartmann functions."""
    from scipy.optimize import minimize

    from uvp_plugins.bench.censored_quality import censor_randomly

    n = 20_000
    f = np.repeat([-1.0, 0.0, 0.5, 1.0], n)  # gamma = 0.25; selection prob 1/3 at 0.5, 1 at 1.0
    fits = {}
    for mode in ("threshold", "uniform"):
        rng = np.random.default_rng(0)
        y = f + rng.normal(size=f.size)
        obs, cens, gamma = censor_randomly(f, y, 50, rng, censor_value=mode)
        assert gamma == pytest.approx(0.25)
        for value in (0.5, 1.0):
            m = f == value
            res = minimize(
                lambda p, o=obs[m], c=cens[m]: tobit_nll(o, p[0], np.exp(p[1]), c),
                [0.0, 0.0],
                method="Nelder-Mead",
                options={"xatol": 1e-6, "fatol": 1e-6},
            )
            fits[mode, value] = (res.x[0], float(np.exp(res.x[1])))
    for value in (0.5, 1.0):
        mu, sd = fits["threshold", value]
        assert mu == pytest.approx(value, abs=0.05) and sd == pytest.approx(1.0, abs=0.05)
        assert fits["uniform", value][0] > value + 0.05


def test_table1_runner_produces_rows_and_targets() -> None:
    from uvp_plugins.bench.censored_quality import check_targets, format_table, run_censored_quality

    rows = run_censored_quality(
        seeds=[0], functions=["branin"], percentiles=[40], n_copies=1, n_members=2, n_steps=60,
        n_folds=2, methods=["I", "T"],
    )
    assert [r["method"] for r in rows] == ["I", "T"]
    assert all(np.isfinite(r["rmse"]) and r["rmse"] > 0 for r in rows)
    assert all(r["rmse"] == pytest.approx(np.mean(r["rmse_folds"])) for r in rows)
    assert all(len(r["rmse_folds"]) == 2 and r["censor_value"] == "threshold" for r in rows)
    assert "p40 T" in format_table(rows, methods=["I", "T"])
    assert check_targets(rows)["settings"] == 1


def test_targets_are_counted_on_seed_means_and_per_seed() -> None:
    from uvp_plugins.bench.censored_quality import check_targets, check_targets_per_seed

    def row(fn: str, method: str, seed: int, rmse: float) -> dict[str, Any]:
        return {"function": fn, "percentile": 10, "method": method, "seed": seed, "rmse": rmse}

    rows = [
        # setting a: T beats I on the mean (1.5 < 1.6) but not on seed 1; D is best (1.0)
        row("a", "I", 0, 2.0), row("a", "T", 0, 1.0), row("a", "D", 0, 1.0),
        row("a", "I", 1, 1.2), row("a", "T", 1, 2.0), row("a", "D", 1, 1.0),
        # setting b: T within 10 % of the best on both seeds and the mean
        row("b", "I", 0, 3.0), row("b", "T", 0, 1.05), row("b", "D", 0, 1.0),
        row("b", "I", 1, 3.0), row("b", "T", 1, 1.0), row("b", "D", 1, 1.1),
    ]
    res = check_targets(rows)
    assert (res["settings"], res["T_below_I"], res["T_best_or_within_10pct"]) == (2, 2, 1)
    assert res["target_T_below_I_all"] and res["misses_T_near_best"] == ["a p10"]
    per_seed = check_targets_per_seed(rows)
    assert per_seed[0]["T_below_I"] == 2 and per_seed[0]["T_best_or_within_10pct"] == 2
    assert per_seed[1]["misses_T_below_I"] == ["a p10"]
    assert per_seed[1]["T_best_or_within_10pct"] == 1


def test_cli_merges_json_rows_and_reports_per_seed(tmp_path: Any, capsys: Any) -> None:
    import json

    from uvp_plugins.bench.censored_quality import main

    def row(seed: int, method: str, rmse: float) -> dict[str, Any]:
        return {"function": "hart3", "percentile": 40, "method": method, "seed": seed,
                "rmse": rmse, "censored_fraction": 0.3, "censor_value": "threshold",
                "n_steps": 10}

    for seed in (0, 1):
        (tmp_path / f"s{seed}.json").write_text(json.dumps([row(seed, "I", 0.4), row(seed, "T", 0.2)]))
    # a leading "--" (as forwarded by `uvp-bench censored-quality -- ...`) is accepted
    assert main(["--", "--from-json", str(tmp_path / "s0.json"), str(tmp_path / "s1.json")]) == 0
    out = capsys.readouterr().out
    assert '"T_below_I": 1' in out and "seed 1: T<I in 1/1" in out
    (tmp_path / "other.json").write_text(json.dumps([{**row(2, "T", 0.1), "n_steps": 99}]))
    assert main(["--from-json", str(tmp_path / "s0.json"), str(tmp_path / "other.json")]) == 2
    assert "mix protocols" in capsys.readouterr().err


# ----------------------------------------------------------------------------------- state
@pytest.mark.parametrize(
    "kwargs",
    [
        {"n_members": 3},
        {"n_members": 1, "log_y": True, "loss": "gaussian", "grad_clip": None},
        {"n_members": 2, "input_bounds": ([0.0, 0.0], [2.0, 1.0]), "hidden": (8, 4), "seed": None},
    ],
)
def test_state_dict_round_trip_predicts_bit_for_bit(kwargs: dict) -> None:
    import json

    X, y, censored, _ = _capped_data(60)
    if kwargs.get("log_y"):
        y = np.exp(y / 4.0)
    model = TobitEnsemble(n_steps=40, **kwargs)
    unfitted = TobitEnsemble.from_state_dict(json.loads(json.dumps(model.state_dict())))
    assert unfitted.state_dict() == model.state_dict()
    with pytest.raises(RuntimeError, match="not fitted"):
        unfitted.predict(X)
    model.fit(X, y, censored)
    text = json.dumps(model.state_dict(), allow_nan=False)  # strict JSON
    twin = TobitEnsemble.from_state_dict(json.loads(text))
    assert twin.state_dict() == model.state_dict()
    for a, b in zip(model.predict(X), twin.predict(X), strict=True):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(model.predict_noise(X), twin.predict_noise(X))
    # a restored model refits like the original (same parameters, same seed)
    if kwargs.get("seed", 0) is not None:
        np.testing.assert_array_equal(
            twin.fit(X, y, censored).predict(X)[0], model.fit(X, y, censored).predict(X)[0]
        )


@pytest.mark.parametrize(
    ("path", "value", "message"),
    [
        (("format",), "uvp-tobit-ensemble/0", "state format must be 'uvp-tobit-ensemble/1'"),
        (("fit", "theta"), [0.0, 1.0], r"state\['fit'\]\['theta'\] must hold \d+ finite weights"),
        (("fit", "x_low"), [0.0], r"state\['fit'\]\['x_low'\] must be 2 finite floats"),
        (("fit", "y_std"), 0.0, r"state\['fit'\]\['y_std'\] must be > 0"),
        (("fit", "y_mean"), float("nan"), r"state\['fit'\]\['y_mean'\] must be a finite float"),
        (("fit", "n_features"), 0, r"state\['fit'\]\['n_features'\] must be an int >= 1"),
        (("params", "n_members"), 0, "n_members must be an integer >= 1"),
    ],
)
def test_corrupt_state_is_rejected_naming_the_field(path: tuple, value: object, message: str) -> None:
    X, y, censored, _ = _capped_data(30)
    state = TobitEnsemble(n_members=2, n_steps=10).fit(X, y, censored).state_dict()
    target = state
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    with pytest.raises((ValueError, TypeError), match=message):
        TobitEnsemble.from_state_dict(state)


# ---------------------------------------------------------------- instances (issue 31)


def test_pair_rows_and_the_cost_over_instances() -> None:
    configs = np.array([[0.1, 0.2], [0.3, 0.4], [0.5, 0.6]])
    feats = np.array([[1.0], [2.0]])
    rows = pair_rows(configs, feats)
    assert rows.shape == (6, 3)
    for j in range(3):
        for i in range(2):
            np.testing.assert_array_equal(rows[j * 2 + i], np.r_[configs[j], feats[i]])
    logs = np.log(np.array([[[1.0, 3.0], [2.0, 2.0]]]))  # (members, configs, instances)
    # the mean runtime over instances, in log units with log_y: not the mean of the logs
    np.testing.assert_allclose(marginal_over_instances(logs, log_y=True), np.log([[2.0, 2.0]]))
    np.testing.assert_allclose(marginal_over_instances(logs, log_y=False), logs.mean(axis=-1))
    # stable far out (exp would overflow)
    assert np.isfinite(marginal_over_instances(np.array([[800.0, 801.0]]), log_y=True)).all()
    with pytest.raises(ValueError, match="at least one instance"):
        pair_rows(configs, np.zeros((0, 1)))


@pytest.mark.parametrize("log_y", [False, True])
def test_members_over_instances_equal_the_explicit_rows(log_y: bool) -> None:
    rng = np.random.default_rng(5)
    configs, feats = rng.uniform(size=(7, 3)), rng.normal(size=(4, 2))
    X = pair_rows(rng.uniform(size=(30, 3)), feats)
    y = np.exp(X[:, 0] + 0.3 * X[:, 3]) if log_y else X[:, 0] + 0.3 * X[:, 3]
    model = TobitEnsemble(n_members=3, n_steps=40, log_y=log_y).fit(X, y)
    got = model.predict_members_over_instances(configs, feats, max_rows=5)  # chunks of 1 config
    per_row = model.predict_members(pair_rows(configs, feats)).reshape(3, 7, 4)
    expected = np.log(np.exp(per_row).mean(-1)) if log_y else per_row.mean(-1)
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-9)
    with pytest.raises(ValueError, match="add up"):
        model.predict_members_over_instances(configs, feats[:, :1])


def test_log_y_leaves_out_censored_bounds_at_or_below_zero_and_refuses_exact_ones() -> None:
    X, y, censored, _ = _capped_data(30)
    y = np.exp(y)
    y2, c2 = y.copy(), censored.copy()
    y2[:3], c2[:3] = 0.0, True  # e.g. runs handed a cutoff of 0: no information
    a = TobitEnsemble(n_members=1, n_steps=30, log_y=True, seed=1).fit(X[3:], y[3:], censored[3:])
    b = TobitEnsemble(n_members=1, n_steps=30, log_y=True, seed=1).fit(X, y2, c2)
    np.testing.assert_array_equal(a.predict(X)[0], b.predict(X)[0])
    y2[5], c2[5] = 0.0, False
    with pytest.raises(ValueError, match=r"log_y=True.*log_y=False"):
        TobitEnsemble(n_members=1, n_steps=5, log_y=True).fit(X, y2, c2)
    with pytest.raises(ValueError, match="every row was a censored value <= 0"):
        TobitEnsemble(n_members=1, n_steps=5, log_y=True).fit(X[:2], [0.0, 0.0], [True, True])


def test_censor_at_cutoffs_is_eq2() -> None:
    y, c = censor_at_cutoffs([1.0, 3.0, 4.0, 9.0, 2.0], [3.0, 3.0, 3.0, np.inf, np.nan], [False, False, False, False, True])
    np.testing.assert_array_equal(y, [1.0, 3.0, 3.0, 9.0, 2.0])
    np.testing.assert_array_equal(c, [False, True, True, False, True])
    with pytest.raises(ValueError, match="cutoffs must have length 2"):
        censor_at_cutoffs([1.0, 2.0], [1.0])


def test_docstring_examples_run() -> None:
    import doctest

    from uvp_plugins.censored import instances, tobit

    for module in (instances, tobit):
        assert doctest.testmod(module, raise_on_error=True).attempted >= 1
