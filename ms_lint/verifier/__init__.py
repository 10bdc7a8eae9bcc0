"""The verifier: run an original and a rewritten module in fresh processes and prove (or refute) the rewrite.

Public API::

    from ms_lint.verifier import verify_pair, Verification, VerifyError

    v = verify_pair(original_source, rewritten_source, function="func",
                    inputs="input_x=float32[2,2]; input_y=float32[2,2]", device="CPU", repeat=3)
    v.verdict        # verified | tradeoff | slower | mismatch | original-failed | rewrite-failed | error
    v.to_json()

Nothing here imports MindSpore: it runs only in the child processes. The verifier never runs during ``check``.
"""

from ms_lint.verifier.errors import VerifyError
from ms_lint.verifier.inputs import parse_spec, resolve_inputs
from ms_lint.verifier.report import render_json, render_text, render_text_all
from ms_lint.verifier.runner import ACCEPTED, VERDICTS, Verification, VersionStats, verify_finding, verify_pair
from ms_lint.verifier.targets import enclosing_target

__all__ = [
    "ACCEPTED",
    "VERDICTS",
    "Verification",
    "VersionStats",
    "VerifyError",
    "parse_spec",
    "render_json",
    "render_text",
    "render_text_all",
    "resolve_inputs",
    "enclosing_target",
    "verify_finding",
    "verify_pair",
]
