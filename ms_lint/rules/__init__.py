"""Rule registry: every ``Rule`` subclass in the ``ms_lint.rules.msl*`` modules, sorted by code."""
from __future__ import annotations

import importlib
import pkgutil
from typing import Dict, List, Type

from ms_lint.rules.base import Invalid, Rule

__all__ = ["Invalid", "Rule", "all_rules", "rule_by_code"]

_RULES: List[Type[Rule]] = []


def all_rules() -> List[Type[Rule]]:
    if not _RULES:
        found: Dict[str, Type[Rule]] = {}
        for module_info in pkgutil.iter_modules(__path__):
            if not module_info.name.startswith("msl"):
                continue
            module = importlib.import_module(f"{__name__}.{module_info.name}")
            for value in vars(module).values():
                if isinstance(value, type) and issubclass(value, Rule) and value is not Rule and value.code:
                    found[value.code] = value
        _RULES.extend(found[code] for code in sorted(found))
    return list(_RULES)


def rule_by_code(code: str) -> Type[Rule]:
    for rule in all_rules():
        if rule.code == code.upper():
            return rule
    raise KeyError(code)
