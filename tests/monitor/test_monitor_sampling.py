"""The sample is a pure function of the run id and the rate (hypothesis)."""

from __future__ import annotations

import uuid

from hypothesis import given
from hypothesis import strategies as st

from tracereplay.monitor.selection import in_sample, sample_point

rates = st.floats(min_value=0.0, max_value=1.0, exclude_min=True)


@given(st.text(min_size=1, max_size=64), rates, rates)
def test_a_run_in_a_smaller_sample_is_in_every_larger_one(run_id: str, a: float, b: float) -> None:
    low, high = sorted((a, b))
    assert 0.0 <= sample_point(run_id) < 1.0
    assert sample_point(run_id) == sample_point(str(run_id))
    if in_sample(run_id, low):
        assert in_sample(run_id, high)
    assert in_sample(run_id, 1.0)


def test_the_sample_takes_about_its_share() -> None:
    ids = [str(uuid.UUID(int=i * 7919 + 1)) for i in range(4000)]
    for rate in (0.1, 0.5, 0.9):
        share = sum(in_sample(i, rate) for i in ids) / len(ids)
        assert abs(share - rate) < 0.04
