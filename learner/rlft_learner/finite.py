"""Finite-value guards behind the learner's door (issue 24): an optimiser never steps on a non-finite loss or gradient,
and a network with a non-finite weight is never exported, published, signed, checkpointed or resumed from.

The door (protocol.MAX_ABS_VALUE, online_server.MAX_NORMALISED) keeps values that overflow float32 out; these guards
are the second line for what still goes wrong inside (a diverging critic, a bad learning rate, a corrupt file).
"""

from __future__ import annotations

import logging
from typing import Any, Iterable, Mapping

import torch

log = logging.getLogger("rlft_learner.finite")


def nonfinite_tensors(state: Any, prefix: str = "") -> list[str]:
    """Names of the tensors in `state` (a module, a state_dict, or nested dicts/lists of tensors such as an optimiser
    state) that hold NaN or Inf."""
    if isinstance(state, torch.nn.Module):
        state = state.state_dict()
    if isinstance(state, torch.Tensor):
        return [prefix or "tensor"] if state.is_floating_point() and not bool(torch.isfinite(state).all()) else []
    bad: list[str] = []
    if isinstance(state, Mapping):
        for k, v in state.items():
            bad += nonfinite_tensors(v, f"{prefix}.{k}" if prefix else str(k))
    elif isinstance(state, (list, tuple)):
        for i, v in enumerate(state):
            bad += nonfinite_tensors(v, f"{prefix}[{i}]")
    return bad


class NonFiniteError(ValueError):
    """A network (or optimiser state) holds NaN/Inf: it must not be exported, published, saved or resumed from."""


def require_finite(what: str, **states: Any) -> None:
    """Raise NonFiniteError naming the first non-finite tensors of the named modules/state dicts; nothing was written."""
    bad = [name for key, st in states.items() for name in nonfinite_tensors(st, key)]
    if bad:
        more = f" and {len(bad) - 3} more" if len(bad) > 3 else ""
        raise NonFiniteError(f"{what}: non-finite (NaN/Inf) values in {', '.join(bad[:3])}{more}; nothing was written")


class StepGuard:
    """Takes an optimiser step only when the loss and the gradient norm are finite; otherwise skips it, counts it per
    `what` and logs the first skip and then one line per `log_every` skips (a diverging run must not flood the log)."""

    def __init__(self, name: str, log_every: int = 100):
        self.name, self.log_every = name, log_every
        self.skipped: dict[str, int] = {}

    @property
    def total(self) -> int:
        return sum(self.skipped.values())

    def step(self, what: str, loss: torch.Tensor, opt: torch.optim.Optimizer, params: Iterable[torch.Tensor] | None = None,
             grad_clip: float | None = None) -> bool:
        """zero_grad, backward, clip `params` to `grad_clip` (when given), step; returns whether it stepped."""
        if not bool(torch.isfinite(loss.detach()).all()):
            self._skip(what, f"loss is {loss.detach().flatten()[0].item()}")
            return False
        opt.zero_grad(set_to_none=True)
        loss.backward()
        params = [p for g in opt.param_groups for p in g["params"]] if params is None else list(params)
        norm = torch.nn.utils.clip_grad_norm_(params, grad_clip if grad_clip is not None else float("inf"))
        if not bool(torch.isfinite(norm)):
            opt.zero_grad(set_to_none=True)
            self._skip(what, f"gradient norm is {norm.item()}")
            return False
        opt.step()
        return True

    def _skip(self, what: str, why: str) -> None:
        n = self.skipped[what] = self.skipped.get(what, 0) + 1
        if n == 1 or n % self.log_every == 0:
            log.warning("%s: skipped %s update #%d: %s (the optimiser does not step on non-finite values)", self.name, what, n, why)


def finite_values(values: list[float]) -> list[float]:
    """The finite ones (for progress means: one skipped NaN step must not turn a window's mean, or a JSON line, NaN);
    [nan] when none is, so the mean says so."""
    kept = [v for v in values if v == v and abs(v) != float("inf")]
    return kept or [float("nan")]
