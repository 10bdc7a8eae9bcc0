"""How the runner deals files out to workers: runs of neighbouring paths, each file once, the heaviest run first."""
import os

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
    assert 2 <= len(batches) <= 2 * BATCHES_PER_WORKER + 1
    weights = [sum(sizes[p[len(str(tmp_path)) + 1:]] for p, _ in batch) for batch in batches]
    assert weights == sorted(weights, reverse=True)


def test_a_folder_that_fits_a_batch_is_not_cut_and_a_big_one_is(tmp_path):
    """Modules of one folder ask about each other (a helper's callers, a base class): a folder is cut between two
    batches, which may go to two workers that would both parse its modules, only when it weighs more than two
    batches' share."""
    sizes = {f"small{p}/mod{m:02d}.py": 1_000 for p in range(6) for m in range(5)}  # 5,000 each
    sizes.update({f"big/mod{m:02d}.py": 1_000 for m in range(60)})  # 60,000
    tasks = write_tree(tmp_path, sizes)
    batches = neighbour_batches(tasks, workers=2)
    target = sum(sizes.values()) // (2 * BATCHES_PER_WORKER)  # 15,000
    folders = [{path.rsplit("/", 2)[-2] for path, _ in batch} for batch in batches]
    for folder in [f"small{p}" for p in range(6)]:
        assert sum(folder in names for names in folders) == 1, folder  # 5,000 <= 2 * target: one batch
    assert sum("big" in names for names in folders) >= 60_000 // (2 * target)  # cut: more than one batch
    assert sorted(task for batch in batches for task in batch) == sorted(tasks)


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


def test_files_without_graph_code_weigh_a_fraction_of_their_size(tmp_path):
    from ms_lint.analysis.index import ProjectIndex
    from ms_lint.runner import NO_GRAPH_SHARE, graph_weight

    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "net.py").write_text("from mindspore import nn\n\n\nclass Net(nn.Cell):\n"
                                "    def construct(self, x):\n        return x\n")
    (pkg / "util.py").write_text("def pad(n):\n    return n + 1\n")
    index = ProjectIndex.for_files([str(pkg / "net.py"), str(pkg / "util.py")])
    weigh = graph_weight(index)
    assert weigh(str(pkg / "net.py"), 4000) == 4000  # holds a construct: parsed and analyzed
    assert weigh(str(pkg / "util.py"), 4000) == 4000 // NO_GRAPH_SHARE  # read and screened only
    assert weigh(str(tmp_path / "elsewhere.py"), 4000) == 4000  # not in the index: no telling


def test_batches_balance_the_weights_not_the_sizes(tmp_path):
    sizes = {f"a/big{i:02d}.py": 20_000 for i in range(12)}  # large files without graph code
    sizes.update({f"b/cell{i:02d}.py": 2_000 for i in range(12)})  # small Cells
    tasks = write_tree(tmp_path, sizes)
    batches = neighbour_batches(tasks, workers=2, weigh=lambda path, size: size if "/b/" in path else size // 20)
    cells = [sum("/b/" in path for path, _ in batch) for batch in batches]
    assert sum(cells) == 12 and max(cells) < 12  # the Cells, the real work, are spread over several batches


def test_a_few_heavy_files_go_to_workers_and_a_few_light_ones_stay_in_process(tmp_path, monkeypatch):
    from ms_lint import pool, processes, runner
    from ms_lint.config import Config

    pooled = []
    monkeypatch.setattr(pool, "run_batches", lambda tasks, *args, **kwargs: pooled.append(len(tasks)) or [])
    monkeypatch.setattr(processes, "worker_count", lambda jobs, count: 2)
    monkeypatch.setattr(runner, "_analyze_one", lambda path, config, index=None: (path, [], None))
    light = write_tree(tmp_path, {"light/a.py": 100, "light/b.py": 100})
    assert len(runner.analyze_files([p for p, _ in light], Config(), jobs=2)) == 2 and pooled == []
    heavy = write_tree(tmp_path, {"heavy/a.py": runner.PARALLEL_WEIGHT // 2, "heavy/b.py": runner.PARALLEL_WEIGHT // 2})
    runner.analyze_files([p for p, _ in heavy], Config(), jobs=2)
    assert pooled == [2]  # two files, below PARALLEL_THRESHOLD, but as much work as many


def _die_on_three(item):
    import os

    if item == 3:
        os._exit(7)  # a worker that dies (libcst's parser can crash the process)
    return item * 10


def _finished_marker(path):
    """The initializer of every worker: records whether ``meanwhile`` had finished when the worker was forked."""
    import os

    with open(path + ".forks", "a") as handle:
        handle.write("done\n" if os.path.exists(path) else "running\n")


def test_meanwhile_runs_beside_the_first_workers_and_ends_before_a_replacement_is_forked(tmp_path):
    """``run_batches(meanwhile=...)`` (the parent imports the parser while the index's workers summarize): the
    thread starts once the first workers run, a worker that replaces a dead one is forked only after the thread
    ended (a fork while it holds an import lock would leave the child that lock, held), and every item is done."""
    import threading
    import time

    from ms_lint.pool import run_batches

    marker = str(tmp_path / "meanwhile-done")
    seen = []

    def meanwhile():
        seen.append(threading.current_thread() is not threading.main_thread())
        time.sleep(0.5)
        with open(marker, "w") as handle:
            handle.write("x")

    results = run_batches(list(range(8)), _die_on_three, 2, 4, lambda item, why: ("crashed", item),
                          initializer=_finished_marker, initargs=(marker,), meanwhile=meanwhile)
    assert sorted(r for r in results if not isinstance(r, tuple)) == [0, 10, 20, 40, 50, 60, 70]
    assert ("crashed", 3) in results
    assert seen == [True]
    with open(marker + ".forks") as handle:
        forks = handle.read().split()
    assert forks[:2] == ["running", "running"]  # the first two workers: forked before the thread started
    assert len(forks) > 2 and set(forks[2:]) == {"done"}  # the replacements: after it ended


def test_summary_batches_take_the_longest_files_first_and_cut_them_small():
    """The index's summaries: every file once, the heaviest batches first, at most ``SUMMARY_BATCH`` files and
    about a twentieth of a worker's share of the bytes each, a longer file alone (so that no worker is left with a
    long file at the end while the other waits)."""
    from ms_lint.analysis.index import SUMMARY_BATCH, summary_batches

    sizes = {f"/p/m{i:03d}.py": 1_000 + (i * 7919) % 5_000 for i in range(300)}
    sizes["/p/huge.py"] = 2_000_000
    batches = summary_batches(sizes, workers=2)
    assert sorted(path for batch in batches for path in batch) == sorted(sizes)
    assert batches[0] == ["/p/huge.py"]
    share = sum(sizes.values()) // 40
    for batch in batches[1:]:
        assert len(batch) <= SUMMARY_BATCH
        assert len(batch) == 1 or sum(sizes[p] for p in batch) <= share
    order = [sizes[path] for batch in batches for path in batch]
    assert order == sorted(order, reverse=True)


def test_a_project_of_few_long_files_is_summarized_on_workers(tmp_path, monkeypatch):
    """Workers summarize from ``PARALLEL_SUMMARIES`` files or ``PARALLEL_SUMMARY_BYTES`` bytes on: a few long
    files go to them too, and the summaries are the ones one process makes."""
    from ms_lint import pool, processes
    from ms_lint.analysis import index as index_module

    for i in range(6):
        (tmp_path / f"m{i}.py").write_text("".join(f"def f{j}(x):\n    return g(x, {j})\n" for j in range(40)))
    files = sorted(str(p) for p in tmp_path.glob("*.py"))
    monkeypatch.setattr(processes, "cpu_count", lambda: 2)
    pooled = []
    real = pool.run_batches
    monkeypatch.setattr(pool, "run_batches", lambda items, *args, **kwargs: pooled.append(
        [len(batch) for batch in kwargs["batches"]]) or real(items, *args, **kwargs))
    monkeypatch.setattr(index_module, "PARALLEL_SUMMARY_BYTES", sum(os.path.getsize(p) for p in files) + 1)
    alone = index_module.ProjectIndex.for_files(files, jobs=2)
    assert pooled == []  # below both thresholds: summarized here
    monkeypatch.setattr(index_module, "PARALLEL_SUMMARY_BYTES", sum(os.path.getsize(p) for p in files))
    pooled_index = index_module.ProjectIndex.for_files(files, jobs=2)
    assert len(pooled) == 1 and sum(pooled[0]) == len(files)
    assert pooled_index.modules == alone.modules


def _pid_after(item, marker):
    """The item and the process that did it. ``"b"`` leaves ``marker``; ``"slow"`` waits for it (so the other worker
    is idle by then) and a little longer (the parent's request to share arrives meanwhile)."""
    import time

    if item == "b":
        with open(marker, "w") as handle:
            handle.write("b")
    if item == "slow":
        deadline = time.monotonic() + 60
        while not os.path.exists(marker) and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(0.5)
    return item, os.getpid()


def test_an_idle_worker_takes_half_of_what_a_busy_one_has_left(tmp_path):
    """No batch left to hand out and a worker idle: the busy one is asked to share after its current item, keeps
    the first half of the rest and the idle one does the second (each item once)."""
    import functools

    from ms_lint.pool import run_batches

    long_batch = ["slow"] + [f"a{i}" for i in range(10)]
    work = functools.partial(_pid_after, marker=str(tmp_path / "b-done"))
    results = run_batches([], work, 2, 1, lambda item, why: (item, None), batches=[long_batch, ["b"]])
    assert sorted(item for item, _ in results) == sorted(long_batch + ["b"])
    pids = dict(results)
    # the first half (a0-a4) stays, the second (a5-a9) goes to the idle worker; each begins with its first item
    # (they may share again later, both being idle in turn)
    assert pids["a0"] == pids["slow"] and pids["a5"] != pids["slow"]


def _times_ten(item):
    return item * 10


def test_a_worker_shares_between_items_and_ignores_a_request_that_came_too_late():
    import multiprocessing

    from ms_lint.pool import FINISHED, SHARE, SHARED, _worker_main

    context = multiprocessing.get_context()
    parent, child = context.Pipe()
    parent.send([1, 2, 3, 4, 5])
    parent.send(SHARE)  # already waiting when the first item is done
    worker = context.Process(target=_worker_main, args=(child, _times_ten, None, (), None), daemon=True)
    worker.start()
    try:
        assert parent.poll(30) and parent.recv() == ([10], SHARED)
        parent.send(SHARE)  # the batch it was meant for has ended: ignored
        parent.send([7, 8])
        assert parent.poll(30) and parent.recv() == ([70, 80], FINISHED)
        parent.send([9, 10])
        parent.send(SHARE)  # one item left after the first: not worth sharing, the batch ends as usual
        assert parent.poll(30) and parent.recv() == ([90, 100], FINISHED)
        parent.send(None)
        worker.join(timeout=30)
        assert worker.exitcode == 0
    finally:
        if worker.is_alive():
            worker.kill()
