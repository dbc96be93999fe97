"""``{{name}}`` placeholders: what a text requires, what a case lacks, the ERROR reason."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from tracereplay.models import EvalCase, EvalSuite
from tracereplay.models.parameters import (
    fill_parameters,
    missing_parameters,
    missing_parameters_reason,
    required_parameters,
    suite_required_parameters,
)

SUITE = EvalSuite(name="s", required_parameters=["tenant"])


def case(parameters: dict[str, str] | None) -> EvalCase:
    return EvalCase(suite_id=SUITE.id, seq=0, query="q", parameters=parameters)


def test_required_parameters_in_order_of_first_use() -> None:
    text = (
        "You help {{customer}} of {{ tenant }}. Greet {{customer}}; ignore {single} and {{ 1bad }}."
    )
    assert required_parameters(text) == ["customer", "tenant"]
    assert required_parameters("") == []


def test_missing_parameters_and_the_reason() -> None:
    required = suite_required_parameters(SUITE, "Hi {{customer}} from {{tenant}}")
    assert required == ["tenant", "customer"]
    assert missing_parameters(case(None), required) == ["tenant", "customer"]
    assert missing_parameters(case({"tenant": "acme"}), required) == ["customer"]
    assert missing_parameters(case({"tenant": "acme", "customer": ""}), required) == []
    reason = missing_parameters_reason(["customer"])
    assert (
        reason
        == "missing required parameter {{customer}}: the case gives no value, so nothing was run"
    )
    assert missing_parameters_reason([]) == ""


def test_fill_parameters_leaves_unknown_placeholders() -> None:
    assert fill_parameters("Hi {{ who }}, {{other}}", {"who": "Ada"}) == "Hi Ada, {{other}}"


@given(
    st.dictionaries(
        st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,8}", fullmatch=True),
        st.text(max_size=5),
        max_size=5,
    )
)
def test_a_template_of_placeholders_requires_exactly_them(values: dict[str, str]) -> None:
    template = " ".join(f"{{{{{k}}}}}" for k in values)
    assert required_parameters(template) == list(values)
    assert missing_parameters(case(values), required_parameters(template)) == []
    assert "{{" not in fill_parameters(template, values) or any("{{" in v for v in values.values())
