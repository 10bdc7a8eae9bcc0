"""The verify seed pairs whose rewritten half is ms-lint's own fix: `ms-lint fix` of NAME_orig.py must write
NAME_rewritten.py byte for byte after the module docstring (each half describes itself there), so `ms-lint verify`
on the pair proves the rewrite users get."""
import ast
import os

import pytest

from ms_lint.testing import fix

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "fixtures", "verify")

# pair name -> (codes the fix applies, whether it needs --unsafe-fixes)
FIXED_BY_MS_LINT = {
    "slice_mask": (["MSL101"], False),
    "fp16_clamp": (["MSL201"], False),
    "number_limit": (["MSL201"], True),
    "subcell_schedule": (["MSL201"], True),
    "typed_schedule": (["MSL201"], False),
    "average_update": (["MSL201"], False),
    "scale_lists": (["MSL101"], False),
    "class_dice": (["MSL101"], True),
    "momentum_update_60": (["MSL102"], False),
    "clip_grads_60": (["MSL102"], False),
    "conv_gru_steps": (["MSL101"], True),
}


def _read(name):
    with open(os.path.join(FIXTURES, name), encoding="utf-8") as handle:
        return handle.read()


def _after_docstring(text):
    """The text after the module docstring (the whole text when there is none)."""
    body = ast.parse(text).body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        return "\n".join(text.splitlines()[body[0].end_lineno:])
    return text


@pytest.mark.parametrize("name", sorted(FIXED_BY_MS_LINT))
def test_rewritten_half_is_what_fix_writes(name):
    codes, unsafe = FIXED_BY_MS_LINT[name]
    outcome = fix(_read(f"{name}_orig.py"), unsafe=unsafe, select=codes)
    assert outcome.error is None and outcome.changed
    assert _after_docstring(outcome.fixed) == _after_docstring(_read(f"{name}_rewritten.py"))


@pytest.mark.parametrize("name", sorted(FIXED_BY_MS_LINT))
def test_the_safe_pairs_need_no_unsafe_fix(name):
    """A pair listed as safe is fixed without --unsafe-fixes; an unsafe one is not."""
    codes, unsafe = FIXED_BY_MS_LINT[name]
    outcome = fix(_read(f"{name}_orig.py"), unsafe=False, select=codes)
    assert outcome.changed is (not unsafe)
