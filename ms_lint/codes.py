"""The fixed table of ms-lint codes. Kept free of libcst so selection and the cache need no parser import."""

CODES = {
    "MSL101": "loop-over-tensor-axis",
    "MSL102": "loop-over-tensor-sequence",
    "MSL103": "large-unrolled-loop",
    "MSL201": "tensor-condition-branch",
    "MSL301": "missing-compile-cache",
    "MSL302": "deprecated-compile-cache-context",
    "MSL303": "stale-compile-cache-hazard",
    "MSL900": "unanalyzable-file",
}
UNANALYZABLE = "MSL900"


def matches(code: str, selectors) -> bool:
    """True when ``code`` is named by one of the selectors (a full code or a prefix such as ``MSL1``)."""
    return any(code.startswith(selector) for selector in selectors)


def is_valid_selector(selector: str) -> bool:
    return selector == "ALL" or any(code.startswith(selector) for code in CODES)
