"""The result table of the device scripts: one row per check (name, PASS or
FAIL, detail) and `N passed, N failed` as the last line, the line CI-style
readers look for; and `rel`, the normwise relative error they bound."""
from __future__ import annotations


class Checks:
    def __init__(self, width: int = 44):
        self.width = width
        self.results: list[bool] = []

    def report(self, name: str, ok: bool, detail: str = "") -> None:
        self.results.append(bool(ok))
        print(f"{name:{self.width}s} {'PASS' if ok else 'FAIL'}  {detail}", flush=True)

    def summary(self) -> int:
        """Prints `N passed, N failed`; returns the process exit code."""
        passed = sum(self.results)
        print(f"{passed} passed, {len(self.results) - passed} failed", flush=True)
        return 0 if passed == len(self.results) else 1


def rel(a, b) -> float:
    """||a - b|| / ||b|| (Frobenius norms of torch tensors, in float64;
    ||b|| clamped at 1e-30, so b = 0 gives ||a|| * 1e30)."""
    a, b = a.double(), b.double()
    return ((a - b).norm() / b.norm().clamp_min(1e-30)).item()
