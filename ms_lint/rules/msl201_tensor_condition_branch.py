"""MSL201 tensor-condition-branch: an ``if`` / conditional expression on a Tensor value in graph code.

Graph mode folds an ``if`` on a Python value (shapes, dtypes, flags, ``self.training``) at compile time, but an
``if`` on a Tensor becomes control flow: both branches compile as subgraphs and the choice happens at run time.
Measured on MindSpore 2.10 (CPU): an ``if x > y`` in a 200-step graph compiles 3.3x slower and runs 17x slower
than the same code with a select. The fix is ``ops.where(cond, a, b)`` when both sides are cheap, side-effect
free tensors (see :mod:`ms_lint.rewrites.where`). A ``while`` on a Tensor is the intended loop form and is not
flagged.
"""
from __future__ import annotations

from typing import Dict, List, Optional, Set, Tuple

import libcst as cst

from ms_lint.cstutil import code_of, cut, positional_params, short_code, suite_statements
from ms_lint.diagnostics import SAFE, UNSAFE, Fix
from ms_lint.fasttree import parenthesized
from ms_lint.rewrites.where import (
    EFFECT,
    RANDOM,
    boolean_condition,
    branch_problems,
    classify_call,
    comments_inside,
    condition_may_be_shape_one,
    hazard_message,
    shapes_visibly_differ,
    where_call,
)
from ms_lint.rewrites.where_assign import assign_fix
from ms_lint.rewrites.where_flow import flow_fix
from ms_lint.rewrites.where_numbers import number_reason, tensor_constants
from ms_lint.rewrites.where_shapes import names_bound_in, names_read, select_shape_problem
from ms_lint.prefilter import GRAPH_CODE
from ms_lint.rules.base import Invalid, Rule
from ms_lint.analysis.narrowing import is_narrowed_operand, narrowed_names
from ms_lint.analysis.shapes import parents_in
from ms_lint.analysis.training import training_only_tensor
from ms_lint.analysis.values import (
    FunctionValues, Kind, is_literal, never_tensor, optional_member, reads_no_locals, root_param_kinds,
)
from ms_lint.walk import find, run_visitor

WHY = ("graph mode compiles it as control flow, both branches as subgraphs (MindSpore 2.10: 3.3x slower compile, "
       "17x slower run than a select in a 200-step graph)")



class TensorConditionBranch(Rule):
    code = "MSL201"
    name = "tensor-condition-branch"
    summary = "`if` or conditional expression on a Tensor value: control flow in the graph; use ops.where"
    fix_applicability = SAFE
    requires_text = GRAPH_CODE  # check_module only judges the branches the hooks collected in graph code
    skips_never_tensor_tests = True  # check_module passes over tests values.never_tensor clears (analysis/screen.py)

    VALID = [
        """
        import mindspore as ms
        from mindspore import nn, ops


        class Head(nn.Cell):
            def __init__(self, use_bias=True):
                super().__init__()
                self.use_bias = use_bias
                self.bias = ms.Parameter(ms.Tensor(0.0, ms.float32))

            def construct(self, x, mask=None):
                if mask is None:
                    mask = ops.ones_like(x)
                if x.ndim == 3 and x.shape[0] > 1:
                    x = x.reshape(x.shape[0], -1)
                if self.use_bias:
                    x = x + self.bias
                if self.training:
                    x = x * mask
                if x.dtype == ms.float16:
                    x = x.astype(ms.float32)
                return x
        """,
        """
        import mindspore as ms
        from mindspore import ops


        @ms.jit
        def pyramid(features):
            out = ()
            for i in range(4):
                if i == 0:
                    out += (features * 2,)
                else:
                    out += (ops.relu(features),)
            return out
        """,
        """
        import mindspore as ms
        from mindspore import ops


        @ms.jit
        def count_up(x, limit):
            i = ops.zeros((), ms.int32)
            while i < limit:
                x = x * 0.5
                i = i + 1
            return x
        """,
        """
        import mindspore as ms
        from mindspore import Tensor, nn, ops
        from mindspore.numpy.utils_const import _check_same_type


        def to_tensors(*args):
            out = ()
            for arg in args:
                if isinstance(arg, (list, tuple)) and not arg:
                    arg = Tensor(arg)
                out += (arg,)
            return out


        class Agent(nn.Cell):
            def __init__(self, actor, learner):
                super().__init__()
                self.actor = actor
                self.learner = learner

            def construct(self, command, x, y):
                x, y = to_tensors(x, y)
                if not _check_same_type(ops.dtype(x), ops.dtype(y)):
                    y = ops.cast(y, ops.dtype(x))
                if command == 1:
                    return self.actor(x + y)
                return self.learner(x - y)
        """,
        """
        from typing import List

        import mindspore as ms
        from mindspore import mint, nn


        class PatchEmbed(nn.Cell):
            def __init__(self):
                super().__init__()
                self.proj = nn.Dense(8, 8)

            def construct(self, x):
                batch, frames, width = x.shape
                return self.proj(x), frames, width


        class Blend(nn.Cell):
            def __init__(self, blocks, max_len=64):
                super().__init__()
                self.blocks = nn.CellList(blocks)
                self.patch_embed = PatchEmbed()
                self.table = ms.Parameter(mint.zeros((1, 16, 8)))
                self.max_len = max_len

            def clip(self, x, max_len):
                if max_len < 0:
                    max_len = x.max()
                return x[:, :16] * max_len

            def construct(self, x, scales: List[float]):
                embeds, frames, width = self.patch_embed(x)
                if frames != self.table.size(1):
                    embeds = embeds[:, :16]
                for scale, block in zip(scales, self.blocks):
                    if scale == 0.0:
                        continue
                    embeds = block(embeds) * scale
                if not mint.distributed.is_initialized():
                    embeds = embeds * 2
                return self.clip(embeds, self.max_len)
        """,
    ]
    INVALID = [
        Invalid(
            """
            import mindspore as ms


            @ms.jit
            def pick(x, y):
                if x > y:
                    out = x - y
                else:
                    out = y - x
                return out
            """,
            fixed="""
            import mindspore as ms


            @ms.jit
            def pick(x, y):
                out = ms.ops.where(x > y, x - y, y - x)
                return out
            """,
        ),
        Invalid(
            """
            import mindspore as ms
            from mindspore import ops


            @ms.jit
            def clipped(loss, limit):
                scale = ops.ones_like(loss)
                if loss > limit:
                    scale = limit / loss
                return loss * scale
            """,
            fixed="""
            import mindspore as ms
            from mindspore import ops


            @ms.jit
            def clipped(loss, limit):
                scale = ops.ones_like(loss)
                scale = ops.where(loss > limit, limit / loss, scale)
                return loss * scale
            """,
            unsafe=True,
        ),
        Invalid(
            """
            import mindspore as ms
            from mindspore import ops


            @ms.jit
            def keep_finite(x):
                if ops.isfinite(x).all():
                    return x
                return ops.zeros_like(x)
            """,
            fixed="""
            import mindspore as ms
            from mindspore import ops


            @ms.jit
            def keep_finite(x):
                return ops.where(ops.isfinite(x).all(), x, ops.zeros_like(x))
            """,
        ),
        Invalid(
            """
            import mindspore as ms
            from mindspore import ops


            @ms.jit
            def smooth(x, y):
                d = ops.abs(x - y)
                return 0.5 * d * d if d < 1.0 else d - 0.5
            """,
            fixed="""
            import mindspore as ms
            from mindspore import ops


            @ms.jit
            def smooth(x, y):
                d = ops.abs(x - y)
                return ops.where(d < 1.0, 0.5 * d * d, d - 0.5)
            """,
        ),
        Invalid(
            """
            import mindspore as ms
            from mindspore import nn, ops


            class Warmup(nn.Cell):
                def __init__(self, lr=0.1, warmup_lr=0.01, warmup=100):
                    super().__init__()
                    self.lr = ms.Tensor(lr, ms.float32)
                    self.warmup_lr = ms.Tensor(warmup_lr, ms.float32)
                    self.warmup = warmup

                def construct(self, global_step):
                    if global_step < self.warmup:
                        lr = self.warmup_lr
                    else:
                        lr = self.lr
                    return lr
            """,
            fixed="""
            import mindspore as ms
            from mindspore import nn, ops


            class Warmup(nn.Cell):
                def __init__(self, lr=0.1, warmup_lr=0.01, warmup=100):
                    super().__init__()
                    self.lr = ms.Tensor(lr, ms.float32)
                    self.warmup_lr = ms.Tensor(warmup_lr, ms.float32)
                    self.warmup = warmup

                def construct(self, global_step):
                    lr = ops.where(global_step < self.warmup, self.warmup_lr, self.lr)
                    return lr
            """,
            unsafe=True,
        ),
        Invalid(
            """
            import mindspore as ms
            from mindspore import nn, ops


            class CappedLoss(nn.Cell):
                def __init__(self, cap=10.0):
                    super().__init__()
                    self.cap = ms.Tensor(cap, ms.float32)

                def construct(self, logits, labels):
                    loss = ops.reduce_mean(ops.square(logits - labels))
                    if loss > self.cap:
                        loss = loss * 0.1 + self.cap * 0.9
                    return loss
            """,
            fixed="""
            import mindspore as ms
            from mindspore import nn, ops


            class CappedLoss(nn.Cell):
                def __init__(self, cap=10.0):
                    super().__init__()
                    self.cap = ms.Tensor(cap, ms.float32)

                def construct(self, logits, labels):
                    loss = ops.reduce_mean(ops.square(logits - labels))
                    loss = ops.where(loss > self.cap, loss * 0.1 + self.cap * 0.9, loss)
                    return loss
            """,
        ),
        Invalid(
            """
            import mindspore as ms
            from mindspore import nn, ops


            class ScaleUpdate(nn.Cell):
                def __init__(self):
                    super().__init__()
                    self.scale = ms.Parameter(ms.Tensor(1024.0, ms.float32), name="scale")

                def construct(self, loss):
                    if not ops.isfinite(loss):
                        ops.print_("loss overflow: halving the loss scale")
                        ops.assign(self.scale, self.scale * 0.5)
                    return loss * self.scale
            """,
        ),
        Invalid(
            """
            import mindspore as ms
            from mindspore import ops


            @ms.jit
            def masked(x, m):
                if (m == 0).all():
                    return ops.zeros_like(x)
                return x * m
            """,
            fixed="""
            import mindspore as ms
            from mindspore import ops


            @ms.jit
            def masked(x, m):
                return ops.where((m == 0).all(), ops.zeros_like(x), x * m)
            """,
            unsafe=True,
        ),
        # A compile-time test joined to a Tensor test: the dtype test stays a Python ``if`` (folded), the constant
        # stays in place, and only the Tensor test becomes a select.
        Invalid(
            """
            import mindspore as ms
            from mindspore import ops


            @ms.jit
            def clamp_fp16(h):
                if h.dtype == ms.float16 and (ops.isinf(h).any() or ops.isnan(h).any()):
                    c = 65504.0 - 1000
                    h = ops.clamp(h, -c, c)
                return h
            """,
            fixed="""
            import mindspore as ms
            from mindspore import ops


            @ms.jit
            def clamp_fp16(h):
                if h.dtype == ms.float16:
                    c = 65504.0 - 1000
                    h = ops.where(ops.logical_or(ops.isinf(h).any(), ops.isnan(h).any()), ops.clamp(h, -c, c), h)
                return h
            """,
        ),
        # An ``if``/``elif``/``else`` chain: nested selects, inner ``elif`` s inside.
        Invalid(
            """
            import mindspore as ms
            from mindspore import ops


            @ms.jit
            def three_regimes(pred, target):
                err = ops.abs(pred - target).mean()
                if err < 1.0:
                    loss = 0.5 * err * err
                elif err < 4.0:
                    loss = err - 0.5
                else:
                    loss = err * 0.1 + 3.1
                return loss
            """,
            fixed="""
            import mindspore as ms
            from mindspore import ops


            @ms.jit
            def three_regimes(pred, target):
                err = ops.abs(pred - target).mean()
                loss = ops.where(err < 1.0, 0.5 * err * err, ops.where(err < 4.0, err - 0.5, err * 0.1 + 3.1))
                return loss
            """,
        ),
        # Branches that assign several names: one select per name, the condition computed once.
        Invalid(
            """
            import mindspore as ms


            @ms.jit
            def scaled_gap(x, y):
                gap = x - y
                if gap > 0:
                    scale = gap * 2.0
                    shift = gap + 1.0
                else:
                    scale = gap * 0.5
                    shift = gap - 1.0
                return scale * shift
            """,
            fixed="""
            import mindspore as ms


            @ms.jit
            def scaled_gap(x, y):
                gap = x - y
                cond = gap > 0
                scale = ms.ops.where(cond, gap * 2.0, gap * 0.5)
                shift = ms.ops.where(cond, gap + 1.0, gap - 1.0)
                return scale * shift
            """,
        ),
        # An early return and a branch with a temporary, as learning-rate schedules write them: one return. Safe
        # although the branches divide: float math in a learning-rate schedule (no gradient passes through it).
        Invalid(
            """
            import mindspore as ms
            from mindspore import ops
            from mindspore.nn.learning_rate_schedule import LearningRateSchedule


            class WarmupThenLinear(LearningRateSchedule):
                def __init__(self, peak_lr=0.05, end_lr=0.0005, warmup=8, total=40):
                    super().__init__()
                    self.peak_lr = peak_lr
                    self.end_lr = ms.Tensor(end_lr, ms.float32)
                    self.warmup = ms.Tensor(warmup, ms.float32)
                    self.total = ms.Tensor(total, ms.float32)

                def construct(self, global_step):
                    step = ops.cast(global_step, ms.float32)
                    if step >= self.total:
                        return step * 0.0 + self.end_lr
                    if step < self.warmup:
                        percent = step / self.warmup
                        lr = self.peak_lr * percent
                    else:
                        lr = self.end_lr + (self.peak_lr - self.end_lr) * (self.total - step) / (self.total - self.warmup)
                    return lr
            """,
            fixed="""
            import mindspore as ms
            from mindspore import ops
            from mindspore.nn.learning_rate_schedule import LearningRateSchedule


            class WarmupThenLinear(LearningRateSchedule):
                def __init__(self, peak_lr=0.05, end_lr=0.0005, warmup=8, total=40):
                    super().__init__()
                    self.peak_lr = peak_lr
                    self.end_lr = ms.Tensor(end_lr, ms.float32)
                    self.warmup = ms.Tensor(warmup, ms.float32)
                    self.total = ms.Tensor(total, ms.float32)

                def construct(self, global_step):
                    step = ops.cast(global_step, ms.float32)
                    return ops.where(
                        step >= self.total,
                        step * 0.0 + self.end_lr,
                        ops.where(
                            step < self.warmup,
                            self.peak_lr * (step / self.warmup),
                            self.end_lr + (self.peak_lr - self.end_lr) * (self.total - step) / (self.total - self.warmup)))
            """,
        ),
        # Sub-cells in the branches: a select runs both on every call; their purity is not proven, so unsafe.
        Invalid(
            """
            from mindspore import nn, ops


            class Warmup(nn.Cell):
                def construct(self, step):
                    return step * 0.01


            class Decay(nn.Cell):
                def construct(self, step):
                    return 0.1 - step * 0.001


            class Schedule(nn.Cell):
                def __init__(self):
                    super().__init__()
                    self.warmup_lr = Warmup()
                    self.decay_lr = Decay()

                def construct(self, step):
                    if step < 10.0:
                        lr = self.warmup_lr(step)
                    else:
                        lr = self.decay_lr(step)
                    return lr
            """,
            fixed="""
            from mindspore import nn, ops


            class Warmup(nn.Cell):
                def construct(self, step):
                    return step * 0.01


            class Decay(nn.Cell):
                def construct(self, step):
                    return 0.1 - step * 0.001


            class Schedule(nn.Cell):
                def __init__(self):
                    super().__init__()
                    self.warmup_lr = Warmup()
                    self.decay_lr = Decay()

                def construct(self, step):
                    lr = ops.where(step < 10.0, self.warmup_lr(step), self.decay_lr(step))
                    return lr
            """,
            unsafe=True,
        ),
        # Python numbers on a float test: Tensor constants of the tested tensor's dtype (a Tensor, not a number).
        Invalid(
            """
            import mindspore as ms
            from mindspore import ops


            @ms.jit
            def clamp_overflow(h):
                c = 65504.0 - 1000 if ops.isinf(h).any() else 65504.0
                return ops.clamp(h, -c, c)
            """,
            fixed="""
            import mindspore as ms
            from mindspore import ops


            @ms.jit
            def clamp_overflow(h):
                c = ops.where(ops.isinf(h).any(), ms.Tensor(65504.0 - 1000, h.dtype), ms.Tensor(65504.0, h.dtype))
                return ops.clamp(h, -c, c)
            """,
            unsafe=True,
        ),
        # A schedule written like mindformers': constants from `@args_type_check` arguments and a step helper
        # (0-d), a guard against a zero warmup; float divisions in a learning-rate schedule: safe.
        Invalid(
            """
            from mindspore import Tensor, ops
            from mindspore._checkparam import args_type_check
            from mindspore.common import dtype as mstype
            from mindspore.nn.learning_rate_schedule import LearningRateSchedule
            from mindspore.ops import operations as P


            def _phase_steps(steps, ratio, total_steps):
                if ratio is None:
                    if not isinstance(steps, int):
                        raise TypeError("steps must be an int")
                    return steps
                return int(total_steps * ratio)


            class LinearWarmup(LearningRateSchedule):
                @args_type_check(learning_rate=(int, float), total_steps=int, warmup_steps=int, warmup_ratio=float)
                def __init__(self, learning_rate, total_steps, warmup_steps=None, warmup_ratio=None):
                    super().__init__()
                    warmup_steps = _phase_steps(warmup_steps, warmup_ratio, total_steps)
                    linear_steps = max(1, total_steps - warmup_steps)
                    self.learning_rate = learning_rate
                    self.warmup_steps = Tensor(warmup_steps, mstype.float32)
                    self.total_steps = Tensor(total_steps, mstype.float32)
                    self.linear_steps = Tensor(linear_steps, mstype.float32)
                    self.zero_constant = Tensor(0.0, mstype.float32)
                    self.max = P.Maximum()

                def construct(self, global_step):
                    global_step = ops.cast(global_step, mstype.float32)
                    if self.warmup_steps != 0 and global_step < self.warmup_steps:
                        percent = global_step / self.warmup_steps
                    else:
                        percent = self.max(self.zero_constant, (self.total_steps - global_step) / self.linear_steps)
                    return self.learning_rate * percent
            """,
            fixed="""
            from mindspore import Tensor, ops
            from mindspore._checkparam import args_type_check
            from mindspore.common import dtype as mstype
            from mindspore.nn.learning_rate_schedule import LearningRateSchedule
            from mindspore.ops import operations as P


            def _phase_steps(steps, ratio, total_steps):
                if ratio is None:
                    if not isinstance(steps, int):
                        raise TypeError("steps must be an int")
                    return steps
                return int(total_steps * ratio)


            class LinearWarmup(LearningRateSchedule):
                @args_type_check(learning_rate=(int, float), total_steps=int, warmup_steps=int, warmup_ratio=float)
                def __init__(self, learning_rate, total_steps, warmup_steps=None, warmup_ratio=None):
                    super().__init__()
                    warmup_steps = _phase_steps(warmup_steps, warmup_ratio, total_steps)
                    linear_steps = max(1, total_steps - warmup_steps)
                    self.learning_rate = learning_rate
                    self.warmup_steps = Tensor(warmup_steps, mstype.float32)
                    self.total_steps = Tensor(total_steps, mstype.float32)
                    self.linear_steps = Tensor(linear_steps, mstype.float32)
                    self.zero_constant = Tensor(0.0, mstype.float32)
                    self.max = P.Maximum()

                def construct(self, global_step):
                    global_step = ops.cast(global_step, mstype.float32)
                    percent = ops.where(ops.logical_and(self.warmup_steps != 0, global_step < self.warmup_steps), global_step / self.warmup_steps, self.max(self.zero_constant, (self.total_steps - global_step) / self.linear_steps))
                    return self.learning_rate * percent
            """,
        ),
        # A conditional state update: every Parameter is written through a select (its old value when the
        # test is false), in order; the compile-time test stays a Python ``if``.
        Invalid(
            """
            import mindspore as ms
            from mindspore import Parameter, Tensor, nn, ops


            class EmaWeight(nn.Cell):
                def __init__(self, decay=0.75, interval=2, use_ema=True):
                    super().__init__()
                    self.decay = decay
                    self.interval = interval
                    self.use_ema = use_ema
                    self.ema = Parameter(Tensor([0.0, 0.0], ms.float32), name="ema")
                    self.updates = Parameter(Tensor(0, ms.int32), name="updates")

                def construct(self, w, step):
                    if self.use_ema and step % self.interval == 0:
                        ops.assign(self.ema, self.decay * self.ema + (1 - self.decay) * w)
                        ops.assign(self.updates, self.updates + 1)
                    return self.ema
            """,
            fixed="""
            import mindspore as ms
            from mindspore import Parameter, Tensor, nn, ops


            class EmaWeight(nn.Cell):
                def __init__(self, decay=0.75, interval=2, use_ema=True):
                    super().__init__()
                    self.decay = decay
                    self.interval = interval
                    self.use_ema = use_ema
                    self.ema = Parameter(Tensor([0.0, 0.0], ms.float32), name="ema")
                    self.updates = Parameter(Tensor(0, ms.int32), name="updates")

                def construct(self, w, step):
                    if self.use_ema:
                        ops.assign(self.ema, ops.where(ops.reshape(step % self.interval == 0, ()), self.decay * self.ema + (1 - self.decay) * w, self.ema))
                        ops.assign(self.updates, ops.where(ops.reshape(step % self.interval == 0, ()), self.updates + 1, self.updates))
                    return self.ema
            """,
        ),
        # An ``if``/``else`` of updates (ASGD's averaging step): the ``else`` assigns follow with the select's sides
        # swapped; an ``AssignAdd`` of a value cast to the Parameter's dtype becomes ``assign(p, where(c, p + v, p))``.
        Invalid(
            """
            import mindspore as ms
            from mindspore import Parameter, Tensor, nn, ops
            from mindspore.ops import operations as P


            class AverageOrCopy(nn.Cell):
                def __init__(self):
                    super().__init__()
                    self.ax = Parameter(Tensor([0.0, 0.0], ms.float32), name="ax")
                    self.assignadd = P.AssignAdd()
                    self.cast = P.Cast()

                def construct(self, w, mu):
                    if mu != 1:
                        self.assignadd(self.ax, self.cast((w - self.ax) * mu, self.ax.dtype))
                    else:
                        ops.assign(self.ax, w)
                    return self.ax + 0
            """,
            fixed="""
            import mindspore as ms
            from mindspore import Parameter, Tensor, nn, ops
            from mindspore.ops import operations as P


            class AverageOrCopy(nn.Cell):
                def __init__(self):
                    super().__init__()
                    self.ax = Parameter(Tensor([0.0, 0.0], ms.float32), name="ax")
                    self.assignadd = P.AssignAdd()
                    self.cast = P.Cast()

                def construct(self, w, mu):
                    ops.assign(self.ax, ops.where(ops.reshape(mu != 1, ()), self.ax + self.cast((w - self.ax) * mu, self.ax.dtype), self.ax))
                    ops.assign(self.ax, ops.where(ops.reshape(mu != 1, ()), self.ax, w))
                    return self.ax + 0
            """,
        ),
        # A compile-time test joined to a Tensor test with ``or``: where the compile-time test holds the branch always
        # runs, so it stays under ``if <compile-time test>:`` as written; the ``else`` selects on the Tensor test.
        Invalid(
            """
            import mindspore as ms
            from mindspore import nn, ops


            class Rescale(nn.Cell):
                def __init__(self, interval=1, rate=0.1):
                    super().__init__()
                    self.interval = interval
                    self.rate = rate
                    self.target = ms.Tensor(1.0, ms.float32)
                    self.step = ms.Parameter(ms.Tensor(0, ms.int32), name="step")

                def construct(self, velocity):
                    if self.interval == 1 or self.step % self.interval == 0:
                        energy = (velocity * velocity).mean()
                        velocity = velocity * ops.clamp(1.0 + self.rate * (self.target - energy), 0.8, 1.25)
                    ops.assign_add(self.step, 1)
                    return velocity
            """,
            fixed="""
            import mindspore as ms
            from mindspore import nn, ops


            class Rescale(nn.Cell):
                def __init__(self, interval=1, rate=0.1):
                    super().__init__()
                    self.interval = interval
                    self.rate = rate
                    self.target = ms.Tensor(1.0, ms.float32)
                    self.step = ms.Parameter(ms.Tensor(0, ms.int32), name="step")

                def construct(self, velocity):
                    if self.interval == 1:
                        energy = (velocity * velocity).mean()
                        velocity = velocity * ops.clamp(1.0 + self.rate * (self.target - energy), 0.8, 1.25)
                    else:
                        velocity = ops.where(
                            self.step % self.interval == 0,
                            velocity * ops.clamp(1.0 + self.rate * (self.target - (velocity * velocity).mean()), 0.8, 1.25),
                            velocity)
                    ops.assign_add(self.step, 1)
                    return velocity
            """,
        ),
        # The gradient w.r.t. the first input (``GradOperation()``) is a Tensor of that input's shape.
        Invalid(
            """
            from mindspore import nn, ops


            class InputGradient(nn.Cell):
                def __init__(self, network):
                    super().__init__()
                    self.network = network
                    self.grad = ops.GradOperation()

                def construct(self, x, y):
                    g = self.grad(self.network)(x, y)
                    if ops.isnan(g.sum()):
                        g = ops.zeros_like(g)
                    return g
            """,
            fixed="""
            from mindspore import nn, ops


            class InputGradient(nn.Cell):
                def __init__(self, network):
                    super().__init__()
                    self.network = network
                    self.grad = ops.GradOperation()

                def construct(self, x, y):
                    g = self.grad(self.network)(x, y)
                    g = ops.where(ops.isnan(g.sum()), ops.zeros_like(g), g)
                    return g
            """,
        ),
        # A flag stored on self, set only to bool Tensors: the select's condition.
        Invalid(
            """
            import mindspore as ms
            from mindspore import Tensor, nn, ops


            class PaddedEnergy(nn.Cell):
                def __init__(self, atom_mask, padding_energy=1.5):
                    super().__init__()
                    self.atom_mask = Tensor(atom_mask, ms.bool_)
                    self.has_padding = ops.logical_not(self.atom_mask.all())
                    self.padding_energy = Tensor(padding_energy, ms.float32)

                def construct(self, energy):
                    if self.has_padding:
                        energy = energy - self.padding_energy
                    return energy
            """,
            fixed="""
            import mindspore as ms
            from mindspore import Tensor, nn, ops


            class PaddedEnergy(nn.Cell):
                def __init__(self, atom_mask, padding_energy=1.5):
                    super().__init__()
                    self.atom_mask = Tensor(atom_mask, ms.bool_)
                    self.has_padding = ops.logical_not(self.atom_mask.all())
                    self.padding_energy = Tensor(padding_energy, ms.float32)

                def construct(self, energy):
                    energy = ops.where(self.has_padding, energy - self.padding_energy, energy)
                    return energy
            """,
        ),
        Invalid(
            """
            import mindspore as ms
            from mindspore import nn, ops


            class GradAccumulator:
                def __init__(self, steps):
                    self.sync = ms.Parameter(ms.Tensor(True), requires_grad=False)
                    self.count = ms.Parameter(ms.Tensor(0, ms.int32), requires_grad=False)
                    self.steps = steps
                    self.step = self._step if steps > 1 else self._no_step

                def _no_step(self, grads):
                    return grads

                def _step(self, grads):
                    ops.assign_add(self.count, 1)
                    ops.assign(self.sync, self.count % self.steps == 0)
                    return grads


            class TrainStep(nn.Cell):
                def __init__(self, net, optimizer, steps=4):
                    super().__init__()
                    self.net = net
                    self.optimizer = optimizer
                    self.accumulator = GradAccumulator(steps)

                @property
                def sync_gradients(self):
                    return self.accumulator.sync

                def construct(self, x):
                    grads = self.accumulator.step(self.net(x))
                    if self.sync_gradients:
                        self.optimizer(grads)
                    return grads
            """,
        ),
    ]

    def __init__(self, context):
        super().__init__(context)
        self._pending: List[Tuple[cst.CSTNode, cst.FunctionDef]] = []
        self._unsafe: Dict[int, str] = {}  # id(fix) -> why it is unsafe, for the finding's message
        self._python_views: Dict[cst.FunctionDef, Optional[FunctionValues]] = {}
        self._calls_by_name: Optional[Dict[str, List[cst.Call]]] = None
        self._flows: Dict[int, Tuple[Optional[Fix], Optional[str]]] = {}  # id(head if) -> (fix, why not)

    # The analysis runs once the walk has recorded every parent (the ``return`` after an ``if`` is a sibling).
    def visit_If(self, node: cst.If) -> None:
        self._pending.append((node, self.function))

    def visit_IfExp(self, node: cst.IfExp) -> None:
        self._pending.append((node, self.function))

    def check_module(self) -> None:
        for node, func in self._pending:
            if self.context.enclosing_function(node) is not func:
                continue  # inside a nested def: its names are not the graph function's
            if never_tensor(node.test):
                continue  # ``if x is None:``: no value model needed to say so
            if reads_no_locals(node.test) and self.context.class_kinds(func).kind(node.test) is not Kind.TENSOR:
                continue  # ``if self.has_bias:``: the class's attributes say so, for every method alike
            values = self.context.values(func)
            # the argument check is asked after the value model on purpose: the models of helpers that call each
            # other depend on the order they are built in (``ModuleContext._param_kinds`` cuts the recursion), and
            # building this one first is what the findings have always been measured with
            if not self._tensor_condition(values, node.test) or _validation_guard(node):
                continue
            if isinstance(node, cst.If):
                fix, why = self._if_fix(values, node)
                keyword = "elif" if self._is_elif(node) else "if"
            else:
                fix, why = self._ifexp_fix(values, node)
                keyword = "a if c else b"
            head = f"`{keyword}` on a Tensor (`{short_code(node.test)}`): {WHY}"
            if fix is not None and fix.applicability == UNSAFE:
                message = f"{head}; use ops.where(cond, a, b), but check it: {self._unsafe[id(fix)]}"
                cure = "use `ops.where(cond, a, b)` (unsafe: check it)"
            elif fix is not None:
                message = f"{head}; use ops.where(cond, a, b)"
                cure = "use `ops.where(cond, a, b)`"
            else:
                message = f"{head}; no automatic select: {why}"
                cure = "use `ops.where` by hand (no automatic select)"
            short = f"`{keyword}` on a Tensor (`{self._tensor_part(values, node.test)}`): control flow; {cure}"
            self.report(node, short, fix, detail=message)

    def _tensor_part(self, values: FunctionValues, test: cst.BaseExpression) -> str:
        """The operand of ``and``/``or``/``not`` that makes the condition a Tensor, cut to fit one line:
        ``x.sum() > 0`` in ``x.dtype == ms.float16 and x.sum() > 0``, not the dtype test before it."""
        operands = [o for o in _truth_operands(test) if values.kind(o) is Kind.TENSOR]
        part = operands[0] if operands else test
        return cut(code_of(part), 36)

    # -- what is a tensor condition ----------------------------------------------------------------------
    def _tensor_condition(self, values: FunctionValues, test: cst.BaseExpression) -> bool:
        if values.kind(test) is not Kind.TENSOR:
            return False
        scalar_view = self._with_python_arguments(values)
        if scalar_view is not None and scalar_view.kind(test) is not Kind.TENSOR:
            return False  # ``if num_steps > 1`` where a caller passes ``num_steps=3``: a constant, folded
        # ``if is_training:`` / ``x if not maximize else -x`` / ``if flag and self.verbose`` on a construct/jit
        # argument: as often a Python flag the caller passes as a Tensor; call sites in this module decide it.
        operands = [o for o in _truth_operands(test) if values.kind(o) is Kind.TENSOR]
        operands = [o for o in operands
                    if not is_narrowed_operand(o, narrowed_names(self.context, o, values.func))
                    and not training_only_tensor(values, o, parents_in(values.func).get)]
        if not operands:
            return False  # ``isinstance(arg, (list, tuple)) and not arg``: a Python list, whatever callers pass
        return not all(self._python_operand(values, o) for o in operands)

    def _python_operand(self, values: FunctionValues, operand: cst.BaseExpression) -> bool:
        """Maybe a Python value the caller passes: a flag parameter (``if is_training:``), or a command code
        (``if command == 1:``) of the entry point itself; through a helper, the entry point may compute with it
        (``ops.exp(-t)`` then ``self._last(..., t)`` testing ``t == 0``), so a code counts only at the entry."""
        if isinstance(operand, cst.Name):
            return self._flag_parameter(values, operand.value)
        name = _dispatch_name(operand, values.func)
        return (bool(name) and self._untyped_entry_parameter(values, name)
                and not self._called_with_tensors(values, name))

    def _flag_parameter(self, values: FunctionValues, name: str, depth: int = 0) -> bool:
        """An untyped entry-point argument no graph call passes a Tensor for, or a helper argument that every
        call site fills with such an argument (``self._forward(x, is_training)``): maybe a Python flag."""
        if depth > 4 or name not in values.parameters:
            return False
        if self._untyped_entry_parameter(values, name):
            return not self._called_with_tensors(values, name)
        info = self.context.scope.functions.get(values.func)
        sites = self.context.scope.call_sites.get(values.func, [])
        if info is None or info.is_root or not sites:
            return False
        names = [p.name.value for p in positional_params(values.func, self.context.scope.takes_self(values.func))]
        for site in sites:
            arg = next((a.value for a in site.call.args if a.keyword is not None and a.keyword.value == name), None)
            positional = [a for a in site.call.args if a.keyword is None and not a.star]
            if arg is None and name in names and names.index(name) < len(positional):
                arg = positional[names.index(name)].value
            if not (isinstance(arg, cst.Name)
                    and self._flag_parameter(self.context.values(site.caller), arg.value, depth + 1)):
                return False
        return True

    def _with_python_arguments(self, values: FunctionValues) -> Optional[FunctionValues]:
        """The value model of an entry point (``@ms.jit`` function, ``construct``, method called through
        ``self.<name>(...)``) with the parameters some call in this module passes a Python literal for taken as
        constants: graph mode compiles a Python scalar argument into the graph (each new value recompiles), so
        an ``if`` on it is folded. None when no call passes one."""
        func = values.func
        if func in self._python_views:
            return self._python_views[func]
        view = None
        info = self.context.scope.functions.get(func)
        if info is not None and info.is_root:
            scalars = self._literal_arguments(func)
            if scalars:
                bound = self.context.scope.takes_self(func)
                kinds = root_param_kinds(func, self.context.imports, bound, self.context.scope.classes)
                kinds.update({name: Kind.CONST for name in scalars})
                view = FunctionValues(self.context.scope, self.context.imports, self.context.constants,
                                      self.context.attributes, func, kinds)
        self._python_views[func] = view
        return view

    def _literal_arguments(self, func: cst.FunctionDef) -> Set[str]:
        """Parameters of ``func`` that some call in the module passes a literal for (``step(x, 3)``,
        ``self.step(x, flag=True)``), by position or keyword."""
        name = func.name.value
        bound = self.context.scope.takes_self(func)
        names = [p.name.value for p in positional_params(func, bound)]
        found: Set[str] = set()
        if self._calls_by_name is None:  # every call in the module (the scope's walk), by the name it calls
            self._calls_by_name = {}
            for call in (info.call for info in self.context.scope.calls):
                callee = call.func.attr.value if isinstance(call.func, cst.Attribute) else (
                    call.func.value if isinstance(call.func, cst.Name) else None)
                if callee is not None:
                    self._calls_by_name.setdefault(callee, []).append(call)
        for call in self._calls_by_name.get(name, ()):
            target = call.func
            if bound:
                if not (isinstance(target, cst.Attribute) and target.attr.value == name):
                    continue
            elif not (isinstance(target, cst.Name) and target.value == name):
                continue
            if any(a.star for a in call.args):
                continue
            positional = [a for a in call.args if a.keyword is None]
            for index, arg in enumerate(positional[:len(names)]):
                if is_literal(arg.value):
                    found.add(names[index])
            for arg in call.args:
                if arg.keyword is not None and arg.keyword.value in names and is_literal(arg.value):
                    found.add(arg.keyword.value)
        return found

    def _called_with_tensors(self, values: FunctionValues, name: str) -> bool:
        """Graph code in this module calls the function, and every call visibly passes a Tensor for ``name``."""
        sites = self.context.scope.call_sites.get(values.func, [])
        if not sites:
            return False
        names = [p.name.value for p in positional_params(values.func, self.context.scope.takes_self(values.func))]
        for site in sites:
            caller = self.context.values(site.caller)
            arg = next((a.value for a in site.call.args if a.keyword is not None and a.keyword.value == name), None)
            positional = [a for a in site.call.args if a.keyword is None and not a.star]
            if arg is None and name in names and names.index(name) < len(positional):
                arg = positional[names.index(name)].value
            if arg is None or caller.kind(arg) is not Kind.TENSOR:
                return False
        return True

    def _untyped_entry_parameter(self, values: FunctionValues, name: str) -> bool:
        info = self.context.scope.functions.get(values.func)
        if info is None or not info.is_root or name not in values.parameters:
            return False
        params = list(values.func.params.params) + list(values.func.params.kwonly_params) + list(
            values.func.params.posonly_params)
        for param in params:
            if param.name.value == name:  # ``Optional[Tensor] = None`` tested for truth: as often a mistyped flag
                return param.annotation is None or (  # (``output_attentions: Optional[Tensor] = None``)
                    optional_member(param.annotation.annotation) is not param.annotation.annotation)
        return True

    def _is_elif(self, node: cst.If) -> bool:
        parent = self.context.parent(node)
        return isinstance(parent, cst.If) and parent.orelse is node

    # -- fixes --------------------------------------------------------------------------------------------
    def _if_fix(self, values: FunctionValues, node: cst.If) -> Tuple[Optional[Fix], Optional[str]]:
        if not self._is_elif(node):
            update = assign_fix(self.context, values, node)  # a branch that only assigns Parameters
            if update is not None:
                fix, unsafe = update
                if fix is not None and unsafe is not None:
                    self._unsafe[id(fix)] = unsafe
                return (fix, None) if fix is not None else (None, unsafe)
        effect = self._effect_in(values, node)
        if effect is not None:
            return None, effect
        if self._is_elif(node) or isinstance(node.orelse, cst.If):
            return self._chain_fix(values, node)
        split = self._split_fix(values, node)
        if split is not None:
            return split
        split = self._or_split_fix(values, node)
        if split is not None:
            return split
        body = _single(node.body)
        if body is None:
            return self._flow_fix(values, node)
        siblings, index = self._siblings(node)
        if node.orelse is not None:
            other = _single(node.orelse.body)
            if other is None:
                return self._flow_fix(values, node)
            if isinstance(body, cst.Return) and isinstance(other, cst.Return):
                return self._build(values, node, node.test, body.value, other.value, "return", [node])
            target = _assign_target(body)
            if target is not None and target == _assign_target(other):
                return self._build(values, node, node.test, body.value, other.value, target, [node])
            return self._flow_fix(values, node)
        if isinstance(body, cst.Return):
            following = siblings[index + 1] if siblings is not None and index + 1 < len(siblings) else None
            nxt = _single_line(following)
            if isinstance(nxt, cst.Return) and nxt.value is not None and body.value is not None:
                return self._build(values, node, node.test, body.value, nxt.value, "return", [node, following])
            return self._flow_fix(values, node)
        target = _assign_target(body)
        if target is None:
            return self._flow_fix(values, node)
        if not self._bound_before(values, target, siblings, index):
            return None, (f"`{target}` is not bound to a known Tensor before the `if` (a select needs a Tensor for "
                          "the branch that does not assign it)")
        return self._build(values, node, node.test, body.value, cst.Name(target), target, [node],
                           self._previous_value(target, siblings, index))

    def _chain_fix(self, values: FunctionValues, node: cst.If) -> Tuple[Optional[Fix], Optional[str]]:
        """An ``if``/``elif`` chain is rewritten as a whole: every ``elif`` of it offers the fix of its head."""
        head = node
        while self._is_elif(head):
            head = self.context.parent(head)  # type: ignore[assignment]
        effect = self._effect_in(values, head)
        if effect is not None:
            return None, effect
        return self._flow_fix(values, head)

    def _flow_fix(self, values: FunctionValues, node: cst.If) -> Tuple[Optional[Fix], Optional[str]]:
        """Several statements per branch, ``elif`` chains, early returns: :mod:`ms_lint.rewrites.where_flow`."""
        key = id(node)
        if key not in self._flows:
            fix, unsafe = flow_fix(self.context, values, node)
            if fix is not None and unsafe is not None:
                self._unsafe[id(fix)] = unsafe
            self._flows[key] = (fix, unsafe if fix is None else None)
        return self._flows[key]

    def _split_fix(self, values: FunctionValues, node: cst.If) -> Optional[Tuple[Optional[Fix], Optional[str]]]:
        """``if <compile-time test> and <tensor test>:`` with constant-only statements and one ``h = expr`` last,
        no ``else``: keep ``if <compile-time test>:`` (folded at compile time) with the constant statements in
        place, and select on the tensor test: ``h = ops.where(<tensor test>, expr, h)``. None when the ``if`` is
        not of that shape (the other fixes decide)."""
        test = node.test
        if node.orelse is not None or not isinstance(test, cst.BooleanOperation) \
                or not isinstance(test.operator, cst.And) or parenthesized(test):
            return None
        constant, tensor = test.left, test.right
        if any(values.kind(o) is Kind.TENSOR for o in _truth_operands(constant) + [constant]) \
                or values.kind(tensor) is not Kind.TENSOR:
            return None
        if not isinstance(node.body, cst.IndentedBlock) or not node.body.body:
            return None
        lines = list(node.body.body)
        smalls = [_single_line(line) for line in lines]
        target = _assign_target(smalls[-1])
        if target is None or any(_assign_target(small) is None for small in smalls[:-1]):
            return None
        prelude = {_assign_target(small) for small in smalls[:-1]}
        for small in smalls[:-1]:
            if values.kind(small.value) is not Kind.CONST:  # type: ignore[union-attr]
                return None, ("the branch computes more than constants before its one assignment (only "
                              "constant-only statements can stay in place)")
        if target in prelude or prelude & names_read(tensor):
            return None, "the Tensor test reads a name the branch assigns"
        siblings, index = self._siblings(node)
        if not self._bound_before(values, target, siblings, index):
            return None, (f"`{target}` is not bound to a known Tensor before the `if` (a select needs a Tensor for "
                          "the branch that does not assign it)")
        fix, why = self._build(values, node, tensor, smalls[-1].value, cst.Name(target), target,  # type: ignore
                               [node], self._previous_value(target, siblings, index))
        if fix is None:
            return None, why
        replaced = fix.edits[0][1]
        call = replaced.body[0].value  # type: ignore[union-attr]
        last = lines[-1].with_changes(body=[smalls[-1].with_changes(value=call)])  # type: ignore[union-attr]
        new_if = node.with_changes(test=constant, body=node.body.with_changes(body=lines[:-1] + [last]))
        summary = fix.message.replace("replace the branch with ops.where(cond, a, b)",
                                      f"keep `if {short_code(constant)}` (folded at compile time) and select on "
                                      "the Tensor test with ops.where(cond, a, b)", 1)
        split = Fix(fix.applicability, summary, edits=((node, new_if),), imports=fix.imports)
        if id(fix) in self._unsafe:
            self._unsafe[id(split)] = self._unsafe.pop(id(fix))
        return split, None

    def _or_split_fix(self, values: FunctionValues, node: cst.If
                      ) -> Optional[Tuple[Optional[Fix], Optional[str]]]:
        """``if <compile-time test> or <tensor test>:`` with no ``else``: keep ``if <compile-time test>:`` with the
        branch as written (folded at compile time: where the test holds, ``or`` never reads the Tensor test and
        the branch always runs), and put the selects of the branch on the Tensor test alone in its ``else``
        (:func:`flow_fix` run on that test). None when the ``if`` is not of that shape (the other fixes decide)."""
        test = node.test
        if node.orelse is not None or not isinstance(test, cst.BooleanOperation) \
                or not isinstance(test.operator, cst.Or) or parenthesized(test):
            return None
        constant, tensor = test.left, test.right
        if any(values.kind(o) is Kind.TENSOR for o in _truth_operands(constant) + [constant]) \
                or values.kind(tensor) is not Kind.TENSOR:
            return None  # as for ``and``: ``if k:`` runs whatever ``k`` is, before the Tensor test, as ``or`` did
        fix, why = flow_fix(self.context, values, node, test=tensor)
        if fix is None:
            return None, why
        if len(fix.edits) != 1 or not isinstance(fix.edits[0][1], list):
            return None, "the selects would take in the statements after the `if` (a `return` in the branch)"
        statements = list(fix.edits[0][1])
        statements[0] = statements[0].with_changes(leading_lines=[])
        new_if = node.with_changes(test=constant, orelse=cst.Else(body=cst.IndentedBlock(body=statements)))
        summary = fix.message.replace(
            "replace the branches with ",
            f"keep `if {short_code(constant)}` with the branch as written (folded at compile time) and, in its "
            "`else`, select on the Tensor test with ", 1)
        split = Fix(fix.applicability, summary, edits=((node, new_if),), imports=fix.imports)
        if why is not None:
            self._unsafe[id(split)] = why
        return split, None

    def _ifexp_fix(self, values: FunctionValues, node: cst.IfExp) -> Tuple[Optional[Fix], Optional[str]]:
        sides, needed, why = tensor_constants(self.context, values, node.test, node.body, node.orelse)
        if why is not None:
            return None, why
        if sides is None:
            return self._build(values, node, node.test, node.body, node.orelse, None, [node])
        cond, imports, why = boolean_condition(self.context, values, node.test)
        if cond is None:
            return None, why
        built = where_call(self.context, cond, sides[0], sides[1], tuple(imports) + tuple(needed))
        if built is None:
            return None, "cannot spell ops.where in this module"
        reason = number_reason(self.context, values, node.test)
        fix = self._fix(node, built[0], None, [node], UNSAFE,
                        f"replace the conditional expression with ops.where over Tensor constants (unsafe: {reason})",
                        built[1])
        self._unsafe[id(fix)] = reason
        return fix, None

    def _build(self, values: FunctionValues, node: cst.CSTNode, test: cst.BaseExpression,
               a: Optional[cst.BaseExpression], b: Optional[cst.BaseExpression], target: Optional[str],
               replaced: List[cst.CSTNode], b_value: Optional[cst.BaseExpression] = None
               ) -> Tuple[Optional[Fix], Optional[str]]:
        if a is None or b is None:
            return None, "a bare `return`"
        hazards: List[str] = []
        for side in (a, b):
            blocker, hazard = branch_problems(self.context, values, side)
            if blocker is not None and blocker.startswith("a branch indexes with a Tensor") \
                    and isinstance(node, cst.If):
                return self._flow_fix(values, node)  # a table of known length: the flow clamps the index
            if blocker is not None:
                return None, blocker
            if hazard is not None:
                hazards.append(hazard)
        if shapes_visibly_differ(values, a, b):
            return None, "the two sides visibly differ in shape or dtype"
        cond, imports, why = boolean_condition(self.context, values, test)
        if cond is None:
            return None, why
        built = where_call(self.context, cond, a, b, imports)
        if built is None:
            return None, "cannot spell ops.where in this module"
        call, imports = built
        unsafe_reasons = [hazard_message(hazards[0])] if hazards else []
        shape_problem = select_shape_problem(self.context, values, test, a, b, b_value)
        if shape_problem is not None:
            what, why = shape_problem
            shape_one = condition_may_be_shape_one(self.context, values, test) if what == "condition" else None
            if shape_one is not None:
                why = (f"`{shape_one}` may have shape (1,) (e.g. initializer(0, [1], ...)): ops.where would "
                       "broadcast 0-d branches to shape (1,)")
            unsafe_reasons.append(why)
        applicability = UNSAFE if unsafe_reasons else SAFE
        summary = "replace the branch with ops.where(cond, a, b)"
        if unsafe_reasons:
            summary += " (unsafe: " + "; ".join(unsafe_reasons) + ")"
        fix = self._fix(node, call, target, replaced, applicability, summary, imports)
        if unsafe_reasons:
            self._unsafe[id(fix)] = "; ".join(unsafe_reasons)
        return fix, None

    def _fix(self, node: cst.CSTNode, call: cst.Call, target: Optional[str], replaced: List[cst.CSTNode],
             applicability: str, summary: str, imports) -> Fix:
        if isinstance(node, cst.IfExp):
            call = call.with_changes(lpar=node.lpar, rpar=node.rpar)
            return Fix(applicability, summary, edits=((node, call),), imports=imports)
        leading = list(node.leading_lines)
        for extra in replaced:
            leading += comments_inside(extra, extra.leading_lines if extra is node else ())
        if target == "return":
            small: cst.BaseSmallStatement = cst.Return(value=call, whitespace_after_return=cst.SimpleWhitespace(" "))
        else:
            small = cst.Assign(targets=[cst.AssignTarget(target=cst.Name(target))], value=call)
        statement = cst.SimpleStatementLine(body=[small], leading_lines=leading)
        edits = ((node, statement),) + tuple((extra, None) for extra in replaced[1:])
        return Fix(applicability, summary, edits=edits, imports=imports)

    # -- helpers ------------------------------------------------------------------------------------------
    def _effect_in(self, values: FunctionValues, node: cst.If) -> Optional[str]:
        """Why a branch can never be a select: it updates state (``assign``, ``self.x = ...``) or draws random
        numbers. A select runs both sides, so the update would happen whichever way the condition goes."""
        scanner = _EffectScan(self, values)
        run_visitor(node.body, scanner)
        if node.orelse is not None:
            run_visitor(node.orelse, scanner)
        return scanner.found

    def _siblings(self, node: cst.CSTNode):
        parent = self.context.parent(node)
        if isinstance(parent, cst.IndentedBlock):
            body = list(parent.body)
            for index, stmt in enumerate(body):
                if stmt is node:
                    return body, index
        return None, -1

    def _previous_value(self, name: str, siblings, index: int) -> Optional[cst.BaseExpression]:
        """The value of the nearest ``name = value`` before the ``if`` in its block, when nothing between them
        rebinds ``name`` or a name ``value`` reads (so ``name`` still holds that value, computed from the same
        tensors, at the ``if``)."""
        for position in range(index - 1, -1, -1):
            small = _single_line(siblings[position])
            if _assign_target(small) == name:
                between = names_bound_in(siblings[position + 1:index])
                return small.value if not between & (names_read(small.value) | {name}) else None
        return None

    def _bound_before(self, values: FunctionValues, name: str, siblings, index: int) -> bool:
        if values.kind(cst.Name(name)) is not Kind.TENSOR:
            return False
        if name in values.parameters:
            return True
        for stmt in (siblings or [])[:max(index, 0)]:
            small = _single_line(stmt)
            if _assign_target(small) == name and values.kind(small.value) is Kind.TENSOR:
                return True
        return False


class _EffectScan(cst.CSTVisitor):
    def __init__(self, rule: TensorConditionBranch, values: FunctionValues):
        super().__init__()
        self.rule = rule
        self.values = values
        self.found: Optional[str] = None

    def visit_Expr(self, node: cst.Expr) -> None:
        if self.found is None and isinstance(node.value, cst.Call):
            category, _ = classify_call(self.rule.context, self.values, node.value)
            if category in (EFFECT, RANDOM):
                return  # visit_Call says which state it updates
            self.found = (f"a branch calls `{short_code(node.value.func)}` for its effect (e.g. an optimizer step): a "
                          "select would run it whichever way the condition goes")

    def visit_Call(self, node: cst.Call) -> None:
        if self.found is not None:
            return
        category, name = classify_call(self.rule.context, self.values, node)
        if category == EFFECT and name.lower() == "depend":
            self.found = "a branch orders side effects with `depend`: a select would run them either way"
        elif category == EFFECT:
            self.found = f"a branch calls `{name}` (a side effect): a select would run it either way"
        elif category == RANDOM:
            self.found = f"a branch draws random numbers (`{name}`): a select would draw them either way"

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        target = node.target
        if self.found is None and isinstance(target, (cst.Attribute, cst.Subscript)):
            self.found = f"a branch assigns `{short_code(target)}`: a select cannot update state"

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        if self.found is None and isinstance(node.target, (cst.Attribute, cst.Subscript)):
            self.found = f"a branch updates `{short_code(node.target)}`: a select cannot update state"


def _dispatch_name(operand: cst.BaseExpression, func: cst.FunctionDef) -> str:
    """The parameter ``command`` a ``command == 1`` operand tests when ``func`` uses ``command`` only in such
    tests (an agent's ``construct(self, command, batch)`` picking act or learn; ``(w - avg) * mu`` after
    ``if mu != 1`` makes ``mu`` a number it computes with; any other mention, an attribute or keyword of that name
    included, counts as a use); "" otherwise."""
    name = _code_test_name(operand)
    if not name:
        return ""
    uses = [n for n in find(func.body, cst.Name) if n.value == name]
    tests = [c for c in find(func.body, cst.Comparison) if _code_test_name(c) == name]
    return name if len(uses) == len(tests) else ""


def _code_test_name(node: cst.CSTNode) -> str:
    """``name`` for exactly ``name == <int>`` or ``name != <int>``."""
    if (isinstance(node, cst.Comparison) and len(node.comparisons) == 1
            and isinstance(node.comparisons[0].operator, (cst.Equal, cst.NotEqual))
            and isinstance(node.left, cst.Name) and isinstance(node.comparisons[0].comparator, cst.Integer)):
        return node.left.value
    return ""


def _truth_operands(test: cst.BaseExpression) -> List[cst.BaseExpression]:
    """The operands whose truth the condition tests: through ``not``, ``and``, ``or`` and parentheses."""
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        return _truth_operands(test.expression)
    if isinstance(test, cst.BooleanOperation):
        return _truth_operands(test.left) + _truth_operands(test.right)
    return [test]


def _validation_guard(node: cst.CSTNode) -> bool:
    """``if <check>: raise ...`` with no else: an argument check, nearly always on Python values (a Tensor
    parameter default makes ``world_size`` look like one), and with no select form anyway."""
    if not isinstance(node, cst.If) or node.orelse is not None:
        return False
    statements = list(suite_statements(node.body))
    return bool(statements) and all(
        isinstance(s, cst.SimpleStatementLine) and all(isinstance(x, cst.Raise) for x in s.body) for s in statements)


def _single(suite: cst.BaseSuite) -> Optional[cst.BaseSmallStatement]:
    """The only small statement of a block (``x = 1`` or ``return x``), else None."""
    if isinstance(suite, cst.SimpleStatementSuite):
        return suite.body[0] if len(suite.body) == 1 else None
    if isinstance(suite, cst.IndentedBlock) and len(suite.body) == 1:
        return _single_line(suite.body[0])
    return None


def _single_line(stmt: Optional[cst.CSTNode]) -> Optional[cst.BaseSmallStatement]:
    if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1:
        return stmt.body[0]
    return None


def _assign_target(small: Optional[cst.CSTNode]) -> Optional[str]:
    """``name`` for a plain ``name = value`` statement."""
    if isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name):
        return small.targets[0].target.value
    return None
