"""tracereplay.charts without a browser: the y axis, label thinning, escaping.
(What Chromium draws is measured by tests/ui/test_charts_browser.py.)"""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from tracereplay.charts import CHAR_W, Series, chart, y_ticks


@given(st.floats(min_value=1e-6, max_value=1e12), st.booleans())
def test_the_axis_tops_out_at_the_first_round_step_above_the_largest_value(
    largest: float, whole: bool
) -> None:
    if whole:
        largest = float(max(1, round(largest)))
    ticks = y_ticks(largest, whole=whole)
    step = ticks[1] - ticks[0]
    assert ticks[0] == 0 and ticks[-1] >= largest * (1 - 1e-9)
    assert ticks[-1] - step < largest  # no empty step on top
    assert 2 <= len(ticks) <= 6
    if whole:
        assert float(step).is_integer()


@given(st.lists(st.text(min_size=0, max_size=30), min_size=1, max_size=120),
       st.integers(min_value=200, max_value=1400))  # fmt: skip
def test_x_labels_never_overlap_nor_leave_the_chart(labels: list[str], width: int) -> None:
    svg = chart("t", labels, [Series("s", [1.0] * len(labels))], width=width)
    spans = []
    for x, text in re.findall(r'class="trc-label trc-x[^"]*" x="([\d.]+)"[^>]*>([^<]*)<', svg):
        w = len(text.replace("&amp;", "&").replace("&lt;", "<").replace("&gt;", ">")
                .replace("&quot;", '"').replace("&#x27;", "'")) * CHAR_W  # fmt: skip
        spans.append((float(x) - w / 2, float(x) + w / 2))
    assert spans or all(not label for label in labels) or width < 300
    for a, b in spans:
        assert a >= 0 and b <= width
    spans.sort()
    assert all(b1 <= a2 for (_, b1), (a2, _) in zip(spans, spans[1:]))


def test_every_text_is_escaped() -> None:
    svg = chart("<t>", ["<b>&"], [Series("<s>", [1.0], bars=True)], tooltips=["<i>"])
    assert "<b>" not in svg and "<s>" not in svg and "<i>" not in svg and "<t>" not in svg
    assert "&lt;b&gt;&amp;" in svg
