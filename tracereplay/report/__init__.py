"""The HTML report of an eval run: ``load_report`` reads it from the store, ``render_report``
turns it into one self-contained page.

Internal: not a public API, it changes whenever the code needs it (docs/python-api.md says
what is public).
"""

from tracereplay.report.data import ReportData, load_report, pick_eval_run
from tracereplay.report.html import render_report

__all__ = ["ReportData", "load_report", "pick_eval_run", "render_report"]
