"""Whether a change in a case's pass count over repetitions is more than noise: Fisher's exact
test on a 2x2 table of passes and fails (``diff`` and the ``--max-regressions`` gate)."""

from __future__ import annotations

from collections.abc import Sequence
from math import comb


def fisher_exact(table: Sequence[Sequence[int]]) -> float:
    """The two-sided p-value of Fisher's exact test on the 2x2 ``table`` [[a, b], [c, d]]:
    the sum of the hypergeometric probabilities of every table with the same margins that is
    no more likely than the observed one."""
    (a, b), (c, d) = table
    if min(a, b, c, d) < 0:
        raise ValueError("fisher_exact: counts must be 0 or more")
    row1, col1, n = a + b, a + c, a + b + c + d
    if n == 0:
        return 1.0
    total = comb(n, col1)

    def prob(x: int) -> float:
        return comb(row1, x) * comb(n - row1, col1 - x) / total

    observed = prob(a)
    low, high = max(0, col1 - (n - row1)), min(row1, col1)
    # a relative tolerance, as scipy: tables as likely as the observed one count
    p = sum(q for x in range(low, high + 1) if (q := prob(x)) <= observed * (1 + 1e-7))
    return min(1.0, p)
