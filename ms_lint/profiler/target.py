"""The request for one profiled target: the verifier's inputs, constructor and import-by-package machinery.

``TargetRequest`` builds what ``ms_lint.profiler.child`` needs to call ``--function`` once, from the same sources as
``ms-lint verify`` (``--inputs``, the ``# ms-lint: inputs=`` comment, ``[tool.ms-lint.verify]``, ``--init``,
``--setup``, ``--pythonpath``). The module on disk is imported in place; another text (a rewrite, for ``--confirm``)
as a sibling copy removed by ``cleanup()``.
"""
from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional, Sequence

from ms_lint.verifier.errors import VerifyError
from ms_lint.verifier.inputs import encode_values, generate, required_parameters, resolve_inputs, suggest_types
from ms_lint.verifier.location import ModuleLocation, VersionCopies, disk_text, locate
from ms_lint.verifier.targets import constructor_needs, defined_targets


@dataclass
class TargetRequest:
    path: str
    function: str
    device: str = "CPU"
    inputs: Optional[str] = None
    init: Optional[str] = None
    setup: Optional[str] = None
    setup_name: Optional[str] = None
    pythonpath: Sequence[str] = ()
    verify_config: Optional[Mapping[str, Any]] = None
    location: ModuleLocation = field(init=False)
    _copies: VersionCopies = field(default_factory=VersionCopies, init=False)
    _shared: Optional[str] = field(default=None, init=False)
    _base: Dict[str, Any] = field(default_factory=dict, init=False)

    def __post_init__(self):
        self.location = locate(self.path)

    def prepare(self, source: str) -> None:
        """Resolve the inputs and the constructor; raise VerifyError with the user's next step when they miss."""
        import numpy as np

        function = self.function
        resolved = resolve_inputs(source, function, path=self.path, inputs=self.inputs, init=self.init,
                                  verify_config=self.verify_config)
        if not resolved.specs:
            required = required_parameters(source, function)
            if required is None and function.split(".")[0] not in defined_targets(source):
                known = ", ".join(defined_targets(source)) or "none"
                raise VerifyError(f"{function!r} is not defined at the top level of the module (top-level "
                                  f"functions and classes: {known})")
            if required:
                suggested = suggest_types(source, function, required)
                spec = "; ".join(f"{p}={suggested[p]}" for p in required)
                raise VerifyError(f"{function} takes ({', '.join(required)}) and no inputs were given; pass "
                                  f"--inputs \"{spec}\" (your shapes and dtypes) or put a '# ms-lint: inputs=...' "
                                  "comment above it")
        if resolved.init is None:
            needed = constructor_needs(source, function)
            if needed:
                raise VerifyError(needed)
        self._shared = tempfile.mkdtemp(prefix="ms-lint-profile-inputs-")
        tree, arrays = encode_values(generate(resolved.specs, seed=0))
        inputs_file = None
        if arrays:
            inputs_file = os.path.join(self._shared, "inputs.npz")
            np.savez(inputs_file, **arrays)
        self._base = {
            "function": function, "init": resolved.init, "device": self.device, "inputs_file": inputs_file,
            "input_order": [s.name for s in resolved.specs], "scalars": {}, "inputs_tree": tree,
            "grad": False, "jit": "auto", "setup": self.setup, "setup_name": self.setup_name,
            "display_path": self.path, "module_dir": None, "package": self.location.package,
            "sys_root": self.location.root, "pythonpath": [os.path.abspath(d) for d in self.pythonpath],
            "display_module": self.location.module,
        }
        self.inputs_text = resolved.text

    def request(self, text: Optional[str] = None, label: str = "original") -> Dict[str, Any]:
        """The child request for the file on disk (``text`` None or equal to it), else for a copy holding ``text``."""
        location = self.location
        if text is None or text == disk_text(location.path):
            module = {"module_file": location.path, "module_name": location.module, "in_place": True}
        else:
            module = self._copies.place(location, label, text)
        return dict(self._base, **module)

    def cleanup(self) -> None:
        self._copies.cleanup()
        if self._shared:
            shutil.rmtree(self._shared, ignore_errors=True)
            self._shared = None


def user_file_test(roots: List[str]):
    """Is a path one of the user's files: under one of ``roots`` and not in an installed package or ms_lint."""
    import ms_lint

    own = os.path.realpath(os.path.dirname(ms_lint.__file__)) + os.sep
    prefixes = [os.path.realpath(r).rstrip(os.sep) + os.sep for r in roots if r]
    cache: Dict[str, bool] = {}

    def test(path: str) -> bool:
        if path not in cache:
            real = os.path.realpath(path)
            parts = real.split(os.sep)
            cache[path] = (real.endswith(".py") and not real.startswith(own)
                           and "site-packages" not in parts and "dist-packages" not in parts
                           and any(real.startswith(p) for p in prefixes))
        return cache[path]

    return test
