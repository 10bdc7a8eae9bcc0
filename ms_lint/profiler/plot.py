"""``--plot FILE``: a PNG bar chart of the estimated seconds per finding and blind line (needs matplotlib:
``pip install 'ms-lint[plot]'``)."""
from __future__ import annotations

from ms_lint.profiler.report import rows
from ms_lint.profiler.session import Profile, ProfileError

MAX_BARS = 15


def plot(profile: Profile, path: str) -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise ProfileError("--plot needs matplotlib: pip install matplotlib (or 'ms-lint[plot]')") from None
    table = [r for r in rows(profile) if r["seconds"] > 0 or r["measured"]][:MAX_BARS]
    labels = [f"{r['path']}:{r['line']} {r['code'] or '(no finding)'}" for r in table][::-1]
    estimates = [r["seconds"] for r in table][::-1]
    measured = [(r["measured"] or {}).get("saving_s") for r in table][::-1]
    height = max(2.0, 0.45 * len(table) + 1.2)
    figure, axes = plt.subplots(figsize=(9, height))
    positions = list(range(len(table)))
    if any(m is not None for m in measured):
        axes.barh([p + 0.2 for p in positions], estimates, height=0.4, label="estimated", color="#4c72b0")
        axes.barh([p - 0.2 for p in positions], [m or 0 for m in measured], height=0.4, label="measured saving",
                  color="#dd8452")
        axes.legend(loc="lower right")
    else:
        axes.barh(positions, estimates, color="#4c72b0")
    axes.set_yticks(positions)
    axes.set_yticklabels(labels, fontsize=8)
    axes.set_xlabel("compile seconds")
    axes.set_title(f"{profile.target}: {profile.summary()}", fontsize=9)
    figure.tight_layout()
    try:
        figure.savefig(path, dpi=110)
    except OSError as exc:
        raise ProfileError(f"--plot {path}: cannot write it ({exc.strerror or exc})") from None
    finally:
        plt.close(figure)
