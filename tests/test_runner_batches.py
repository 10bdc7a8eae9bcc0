"""How the runner deals files out to workers: runs of neighbouring paths, each file once, the heaviest run first."""
from ms_lint.runner import BATCHES_PER_WORKER, neighbour_batches


def write_tree(tmp_path, sizes):
    tasks = []
    for name, size in sizes.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x" * size)
        tasks.append((str(path), 0))
    return tasks


def test_batches_are_runs_of_neighbouring_paths_covering_every_file_once(tmp_path):
    sizes = {f"pkg{p}/mod{m:02d}.py": 100 + 37 * ((p * 7 + m) % 11) for p in range(4) for m in range(15)}
    tasks = write_tree(tmp_path, sizes)
    batches = neighbour_batches(list(reversed(tasks)), workers=2)
    flat = [task for batch in batches for task in batch]
    assert sorted(flat) == sorted(tasks)  # every file once
    ordered = sorted(tasks)
    for batch in batches:  # each batch is a contiguous run of the path order
        start = ordered.index(batch[0])
        assert batch == ordered[start:start + len(batch)]
    assert 2 * BATCHES_PER_WORKER <= len(batches) <= 2 * BATCHES_PER_WORKER + 1
    weights = [sum(sizes[p[len(str(tmp_path)) + 1:]] for p, _ in batch) for batch in batches]
    assert weights == sorted(weights, reverse=True)


def test_the_batch_holding_a_large_file_goes_first(tmp_path):
    sizes = {f"a/m{i}.py": 100 for i in range(20)}
    sizes["b/huge.py"] = 50_000
    sizes.update({f"c/n{i}.py": 100 for i in range(20)})
    tasks = write_tree(tmp_path, sizes)
    batches = neighbour_batches(tasks, workers=2)
    assert str(tmp_path / "b/huge.py") in [path for path, _ in batches[0]]
    assert sum(len(batch) for batch in batches) == 41


def test_empty_files_are_still_spread_over_the_workers(tmp_path):
    tasks = write_tree(tmp_path, {f"pkg/m{i:02d}.py": 0 for i in range(30)})
    batches = neighbour_batches(tasks, workers=2)
    assert len(batches) == 2 * BATCHES_PER_WORKER
    assert sorted(task for batch in batches for task in batch) == sorted(tasks)
