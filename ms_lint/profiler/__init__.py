"""``ms-lint profile``: the compile seconds of the user's own program, per source line, function and finding.

    from ms_lint.profiler import profile_function

    profile = profile_function("model.py", "Net", inputs="x=float32[8,4]")
    profile.summary()        # "2 findings explain 1.37 s of 1.39 s compile time (99%)"
    profile.attribution      # lines, functions, findings with estimated seconds

Modules: ``parse`` (MindSpore's timing tree, the backend's ``[PROF]`` steps and ``.ir`` dumps), ``backend`` (the
nesting of those steps), ``runner`` (one profiled process), ``target`` (the verifier's inputs and imports),
``attribution`` (seconds by node share, joined with findings), ``session`` (the two modes), ``confirm`` (measured
savings of fixes, in any of the user's files), ``report``, ``plot``, ``annotate`` (``check --profile-data``).
Nothing here imports MindSpore: only the child process does.
"""

from ms_lint.profiler.session import Profile, ProfileError, profile_function, profile_script

__all__ = ["Profile", "ProfileError", "profile_function", "profile_script"]
